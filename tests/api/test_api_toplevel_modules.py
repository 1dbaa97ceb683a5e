"""toolkit's counterparts of JAX's small top-level modules, beside JAX's (issue 23): dtypes, errors, ops, dlpack,
monitoring, sharding, typing, custom_derivatives, and jax.debug's sharding inspection and visualization."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap
import typing
import warnings

import ml_dtypes
import numpy as np
import pytest

import toolkit
import toolkit.dtypes as tdt
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jdt = jax.dtypes


def _outcome(fn):
    try:
        return repr(fn())
    except Exception as error:  # the kind of error, compared by name
        return type(error).__name__


# --- toolkit.dtypes -----------------------------------------------------------------------------------------------

TYPES = ["bool", "int8", "uint8", "int4", "uint4", "int16", "int32", "int64", "uint32", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2"]
ABSTRACT = [np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger, np.inexact, np.floating,
            np.complexfloating, np.bool_]


def test_issubdtype_as_jax():
    wrong = [(a, b) for a in TYPES for b in ABSTRACT + TYPES if tdt.issubdtype(a, b) != jdt.issubdtype(a, b)]
    assert not wrong
    assert tdt.issubdtype(None, np.floating) == jdt.issubdtype(None, np.floating)
    ours, theirs = toolkit.random.key(0).dtype, jax.random.key(0).dtype
    for b in (tdt.prng_key, tdt.extended, np.floating, np.generic):
        jb = {tdt.prng_key: jdt.prng_key, tdt.extended: jdt.extended}.get(b, b)
        assert tdt.issubdtype(ours, b) == jdt.issubdtype(theirs, jb), b
    assert tdt.issubdtype(ours, ours) and not tdt.issubdtype("float32", ours)
    # Key dtypes of two implementations are not subtypes of each other, as JAX's.
    rbg, j_rbg = toolkit.random.key_dtype("rbg"), jax.random.key_dtype("rbg")
    assert [tdt.issubdtype(rbg, ours), tdt.issubdtype(rbg, rbg)] == [jdt.issubdtype(j_rbg, theirs),
                                                                    jdt.issubdtype(j_rbg, j_rbg)] == [False, True]
    with pytest.raises(TypeError, match="issubdtype"):
        tdt.issubdtype(object(), np.floating)


@pytest.mark.parametrize("name", TYPES)
def test_canonicalize_itemsize_and_limits_as_jax(name):
    assert tdt.canonicalize_dtype(name) == jdt.canonicalize_dtype(name)
    assert tdt.itemsize_bits(name) == jdt.itemsize_bits(name)
    if tdt.issubdtype(name, np.floating):
        assert tdt.finfo(name).eps == jdt.finfo(name).eps and tdt.finfo(name).max == jdt.finfo(name).max
    elif tdt.issubdtype(name, np.integer):
        assert (tdt.iinfo(name).min, tdt.iinfo(name).max) == (jdt.iinfo(name).min, jdt.iinfo(name).max)


def test_canonicalize_dtype_edges_as_jax():
    assert tdt.canonicalize_dtype(None) == jdt.canonicalize_dtype(None)
    with toolkit.enable_x64(), jax.enable_x64():
        assert tdt.canonicalize_dtype("float64") == jdt.canonicalize_dtype("float64") == np.float64
    key = toolkit.random.key(0).dtype
    assert tdt.canonicalize_dtype(key, allow_extended_dtype=True) is key
    with pytest.raises(ValueError, match="extended dtype"):
        tdt.canonicalize_dtype(key)
    with pytest.raises(TypeError, match="foo"):
        tdt.canonicalize_dtype("foo")
    with pytest.raises(ValueError, match="None"):
        tdt.itemsize_bits(None)
    assert tdt.itemsize_bits(tdt.float0) == 0


@pytest.mark.parametrize("args", [(1, 2.0), (np.int8, 1.0), (np.int8, np.uint8), ("float64",), (np.int32, np.int64),
                                  (1,), (np.ones(2, np.float16), 2.0), (True, 1), (np.complex64, 1.0)], ids=str)
def test_result_type_as_jax(args):
    ours = tdt.result_type(*args, return_weak_type_flag=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX warns about the 64-bit request it truncates
        theirs = jdt.result_type(*args, return_weak_type_flag=True)
    assert ours == theirs
    assert tdt.result_type(*args) == theirs[0]


def test_result_type_errors():
    with pytest.raises(ValueError, match="at least one"):
        tdt.result_type()
    with pytest.raises(tdt.TypePromotionError):
        tdt.result_type(ml_dtypes.float8_e4m3fn, np.float32)


@pytest.mark.parametrize("value", [1, True, 1.0, 1j, np.int8(1), np.ones(2, "int16"), np.float64(2),
                                   np.ones(2, ml_dtypes.bfloat16), np.ones(2, np.uint8)], ids=repr)
def test_scalar_type_of_as_jax(value):
    assert tdt.scalar_type_of(value) is jdt.scalar_type_of(value)


def test_dtype_objects_as_jax():
    assert tdt.float0 == jdt.float0 and toolkit.float0 == jax.float0
    assert tdt.bfloat16 is jdt.bfloat16
    assert tdt.finfo is jdt.finfo and tdt.iinfo is jdt.iinfo
    assert issubclass(tdt.TypePromotionError, ValueError) and issubclass(jdt.TypePromotionError, ValueError)
    with pytest.raises(TypeError, match="Invalid scalar"):
        tdt.scalar_type_of(np.zeros(1, tdt.float0))


# --- toolkit.errors -----------------------------------------------------------------------------------------------

ERROR_NAMES = ["ConcretizationTypeError", "InconclusiveDimensionOperation", "JAXIndexError", "JAXTypeError",
               "JaxRuntimeError", "JaxprTypeError", "KeyReuseError", "NonConcreteBooleanIndexError",
               "TracerArrayConversionError", "TracerBoolConversionError", "TracerIntegerConversionError",
               "UnexpectedTracerError"]


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_error_classes_have_jax_bases(name):
    ours, theirs = getattr(toolkit.errors, name), getattr(jax.errors, name)
    builtin = [c for c in theirs.__mro__ if c.__module__ == "builtins" and c is not object]
    assert builtin[0] in ours.__mro__, (ours.__mro__, theirs.__mro__)


def test_jax_runtime_error_is_jaxlibs_class():
    assert toolkit.errors.JaxRuntimeError is jax.errors.JaxRuntimeError
    assert issubclass(toolkit.errors.NonConcreteBooleanIndexError, toolkit.errors.JAXIndexError)
    assert issubclass(toolkit.errors.KeyReuseError, toolkit.errors.JAXTypeError)


def test_boolean_mask_of_a_traced_value_raises_as_jax():
    with pytest.raises(toolkit.errors.NonConcreteBooleanIndexError, match="concrete mask"):
        toolkit.jit(lambda x: x[x > 0])(np.ones(3, np.float32))
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x: x[x > 0])(np.ones(3, np.float32))
    assert toolkit.numpy.asarray(np.array([1.0, -1.0]))[np.array([True, False])].shape == (1,)


def test_inconclusive_dimension_operation_is_shape_polys():
    from toolkit.core.shape_poly import InconclusiveDimensionOperation
    assert toolkit.errors.InconclusiveDimensionOperation is InconclusiveDimensionOperation
    from toolkit import export
    assert export.InconclusiveDimensionOperation is InconclusiveDimensionOperation


# --- toolkit.ops --------------------------------------------------------------------------------------------------

SEGMENT_IDS = np.array([0, 0, 1, 3, 3, 3, -1, 7, 2, 0])


@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max", "segment_min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("kwargs", [{"num_segments": 5}, {}, {"num_segments": 5, "bucket_size": 3},
                                    {"num_segments": 4, "indices_are_sorted": False}], ids=str)
def test_segment_ops_as_jax(name, dtype, kwargs):
    data = np.random.default_rng(0).normal(size=(10, 3)).astype(dtype) if dtype == np.float32 \
        else np.random.default_rng(0).integers(-5, 5, size=10).astype(dtype)
    ours = getattr(toolkit.ops, name)(data, SEGMENT_IDS, **kwargs)
    theirs = getattr(jax.ops, name)(data, SEGMENT_IDS, **kwargs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5)


def test_segment_sum_under_jit_and_grad_as_jax():
    data = np.arange(6, dtype=np.float32)
    ids = np.array([0, 1, 0, 2, 1, 0])
    f = toolkit.jit(lambda d, i: toolkit.ops.segment_sum(d, i, num_segments=3))
    np.testing.assert_allclose(f(data, ids), jax.ops.segment_sum(data, ids, num_segments=3))
    g = toolkit.grad(lambda d: (toolkit.ops.segment_sum(d, ids, num_segments=3) ** 2).sum())(data)
    h = jax.grad(lambda d: (jax.ops.segment_sum(d, ids, num_segments=3) ** 2).sum())(data)
    np.testing.assert_allclose(g, h)


def test_segment_op_errors():
    with pytest.raises(ValueError, match="num_segments must be given"):
        toolkit.jit(lambda d, i: toolkit.ops.segment_sum(d, i))(np.ones(2, np.float32), np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="non-negative"):
        toolkit.ops.segment_sum(np.ones(2), np.zeros(2, np.int32), num_segments=-1)
    with pytest.raises(TypeError, match="integers"):
        toolkit.ops.segment_sum(np.ones(2), np.zeros(2, np.float32), num_segments=1)
    with pytest.raises(ValueError, match="leading dimension"):
        toolkit.ops.segment_sum(np.ones(3), np.zeros(2, np.int32), num_segments=1)
    with pytest.raises(ValueError, match="bucket_size"):
        toolkit.ops.segment_sum(np.ones(2), np.zeros(2, np.int32), num_segments=1, bucket_size=0)


# --- toolkit.dlpack -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16, np.bool_, np.complex64])
def test_from_dlpack_as_jax(dtype):
    host = (np.arange(6) % 2).astype(dtype).reshape(2, 3)
    ours = toolkit.dlpack.from_dlpack(host)
    theirs = jax.dlpack.from_dlpack(host)
    assert isinstance(ours, toolkit.Array) and ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    back = toolkit.dlpack.from_dlpack(ours)  # a toolkit Array is a DLPack producer too
    np.testing.assert_array_equal(np.asarray(back), host)
    assert toolkit.dlpack.is_supported_dtype(dtype) == jax.dlpack.is_supported_dtype(dtype)


def test_from_dlpack_errors():
    with pytest.raises(TypeError, match="__dlpack__"):
        toolkit.dlpack.from_dlpack([1, 2])
    with pytest.raises(ValueError, match="copy=False"):
        toolkit.dlpack.from_dlpack(np.ones(2), copy=False)
    with pytest.raises(TypeError, match="dtype-like"):
        toolkit.dlpack.is_supported_dtype(None)
    assert toolkit.dlpack.from_dlpack(np.ones(2), device=toolkit.devices()[-1]).devices() == {toolkit.devices()[-1]}


# --- toolkit.monitoring ------------------------------------------------------------------------------------------

def test_monitoring_listeners_and_jit_events():
    events, durations, spans, scalars = [], [], [], []

    def on_event(event, **kw):
        events.append((event, kw))

    def on_duration(event, secs, **kw):
        durations.append((event, kw))

    def on_span(event, start, end, **kw):
        spans.append((event, end >= start))

    def on_scalar(event, value, **kw):
        scalars.append(event)

    toolkit.monitoring.register_event_listener(on_event)
    toolkit.monitoring.register_event_duration_secs_listener(on_duration)
    toolkit.monitoring.register_event_time_span_listener(on_span)
    toolkit.monitoring.register_scalar_listener(on_scalar)
    try:
        def monitored(x):
            return x * 7
        toolkit.jit(monitored)(np.ones(3, np.float32))
        toolkit.monitoring.record_event("/my/event", size=3)
    finally:
        toolkit.monitoring.unregister_event_listener(on_event)
        toolkit.monitoring.unregister_event_duration_listener(on_duration)
        toolkit.monitoring.unregister_event_time_span_listener(on_span)
        toolkit.monitoring.unregister_scalar_listener(on_scalar)
    assert events == [("/my/event", {"size": 3})]
    names = [e for e, _ in durations]
    assert names == ["/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
                     "/jax/core/compile/backend_compile_duration"]
    assert durations[0][1] == {"fun_name": "monitored"} and durations[2][1] == {"fun_name": "jit(monitored)"}
    assert [e for e, ok in spans if ok] == names and scalars == names
    assert toolkit.monitoring.get_event_listeners() == []  # unregistered
    # JAX records the same three events for the same jit.
    jax_events = []

    def on_jax(event, secs, **kw):
        jax_events.append(event)
    jax.monitoring.register_event_duration_secs_listener(on_jax)
    try:
        jax.jit(lambda x: x * 7)(np.ones(3, np.float32))
    finally:
        jax.monitoring.unregister_event_duration_listener(on_jax)
    assert set(names) <= set(jax_events)


def test_monitoring_errors():
    with pytest.raises(TypeError, match="callable"):
        toolkit.monitoring.register_event_listener(3)
    with pytest.raises(ValueError, match="not a registered"):
        toolkit.monitoring.unregister_scalar_listener(print)


# --- toolkit.sharding, typing, custom_derivatives, stages ------------------------------------------------------

def test_sharding_module_names_are_toolkits_objects():
    from toolkit import shard
    for name in ("Mesh", "AbstractMesh", "AxisType", "NamedSharding", "PartitionSpec", "SingleDeviceSharding",
                 "Sharding", "get_abstract_mesh", "get_mesh", "make_single_device_sharding", "set_mesh"):
        assert getattr(toolkit.sharding, name) is getattr(shard, name)
        assert hasattr(jax.sharding, name)
    for name in ("auto_axes", "explicit_axes", "reshard"):
        assert getattr(toolkit.sharding, name) is getattr(toolkit, name)
        assert hasattr(jax.sharding, name)


def test_typing_names():
    assert set(typing.get_args(toolkit.typing.DTypeLike)) >= {str, np.dtype}
    assert toolkit.Array in typing.get_args(toolkit.typing.ArrayLike)
    assert isinstance(tnp.float32, toolkit.typing.SupportsDType) or hasattr(tnp.float32, "dtype")


def test_custom_derivatives_module_is_toolkit_ad():
    cd = toolkit.custom_derivatives
    assert cd.custom_jvp is toolkit.custom_jvp and cd.custom_vjp is toolkit.custom_vjp
    assert cd.custom_jvp_call_p.name == "custom_jvp_call" and cd.custom_vjp_call_p.name == "custom_vjp_call"
    for name in ("SymbolicZero", "CustomVJPPrimal", "zero_from_primal"):
        assert hasattr(cd, name) and hasattr(jax.custom_derivatives, name)
    for name in ("closure_convert", "custom_gradient"):  # also jax.custom_derivatives' names, as JAX's top level
        assert getattr(cd, name) is getattr(toolkit, name) and hasattr(jax.custom_derivatives, name)


def test_compiler_options_alias():
    assert toolkit.stages.CompilerOptions == jax.stages.CompilerOptions


# --- toolkit.debug: inspect_array_sharding, visualize_sharding -------------------------------------------------

VIS_CASES = [((8, 8), ("x", "y")), ((8, 8), ("x", None)), ((8,), ("y",)), ((8, 8), ()), ((8, 8), (None, "y")),
             ((16, 4), ("y", "x")), ((8,), (("x", "y"),)), ((4, 12), (None, ("y",))), ((8, 8), ("y", None))]

_JAX_VIS = textwrap.dedent("""
    import contextlib, io, jax
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    for shape, spec in {cases!r}:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            jax.debug.visualize_sharding(shape, NamedSharding(mesh, P(*spec)), use_color=False)
        print(repr(buf.getvalue()))
""")


def test_visualize_sharding_prints_jaxs_table(mesh):
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", _JAX_VIS.format(cases=VIS_CASES)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = proc.stdout.splitlines()
    from toolkit.shard import NamedSharding, PartitionSpec as P
    ours = []
    for shape, spec in VIS_CASES:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            toolkit.debug.visualize_sharding(shape, NamedSharding(mesh, P(*spec)))
        ours.append(repr(buf.getvalue()))
    assert ours == theirs


def test_visualize_array_sharding_and_inspect(mesh):
    from toolkit.shard import NamedSharding, PartitionSpec as P
    sharding = NamedSharding(mesh, P("x", "y"))
    x = toolkit.device_put(np.zeros((8, 8), np.float32), sharding)
    seen = []
    toolkit.debug.inspect_array_sharding({"a": x, "b": [x]}, callback=seen.append)
    assert seen == [sharding, sharding]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        toolkit.debug.visualize_array_sharding(x)
    assert "│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │" in buf.getvalue()
    with pytest.raises(ValueError, match="1 and 2 dimensions"):
        toolkit.debug.visualize_sharding((2, 2, 2), sharding)
    with pytest.raises(TypeError, match="callable"):
        toolkit.debug.inspect_array_sharding(x, callback=None)
    with pytest.raises(TypeError, match="not an array"):
        toolkit.debug.inspect_array_sharding("text", callback=print)


def test_inspect_array_sharding_inside_jit():
    seen = []

    @toolkit.jit
    def f(x):
        toolkit.debug.inspect_array_sharding(x * 2, callback=seen.append)
        return x
    with pytest.raises(NotImplementedError, match="partitioner"):
        f(np.ones(4, np.float32))


# --- toolkit.ffi ----------------------------------------------------------------------------------------------

SPD = np.array([[4.0, 2.0, 0.0], [2.0, 5.0, 1.0], [0.0, 1.0, 3.0]], np.float32)


def _cholesky_call(module, name, layout):
    specs = (module.ShapeDtypeStruct((3, 3), np.float32), module.ShapeDtypeStruct((), np.int32))
    out_layouts = None if layout is None else [layout, ()]
    call = module.ffi.ffi_call(name, specs, input_layouts=None if layout is None else [layout],
                               output_layouts=out_layouts)
    return module.jit(lambda x: call(x, uplo=np.uint8(ord("L"))))(SPD)


@pytest.mark.parametrize("layout", [None, (1, 0), (0, 1)], ids=str)
def test_ffi_call_as_jax(layout):
    import toolkit.ffi  # noqa: F401
    ours = _cholesky_call(toolkit, "lapack_spotrf_ffi", layout)
    theirs = _cholesky_call(jax, "lapack_spotrf_ffi", layout)
    np.testing.assert_array_equal(np.asarray(ours[0]), np.asarray(theirs[0]))
    assert int(ours[1]) == int(theirs[1]) == 0


def test_register_ffi_target_shares_jaxlibs_registry():
    import toolkit.ffi
    from jaxlib import lapack
    capsule = next(c for name, c, _ in lapack.registrations()["cpu"] if name == "lapack_spotrf_ffi")
    toolkit.ffi.register_ffi_target("toolkit_test_spotrf", capsule, platform="cpu", api_version=1)
    ours = _cholesky_call(toolkit, "toolkit_test_spotrf", None)
    theirs = _cholesky_call(jax, "toolkit_test_spotrf", None)  # registered by toolkit, called by JAX
    np.testing.assert_array_equal(np.asarray(ours[0]), np.asarray(theirs[0]))
    assert os.path.isfile(os.path.join(toolkit.ffi.include_dir(), "xla", "ffi", "api", "ffi.h"))
    assert toolkit.ffi.include_dir() == jax.ffi.include_dir()


def test_ffi_errors():
    import ctypes

    import toolkit.ffi
    spec = toolkit.ShapeDtypeStruct((2,), np.float32)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        toolkit.ffi.ffi_call("t", spec, vmap_method="expand_dims")
    with pytest.raises(NotImplementedError, match="input_output_aliases"):
        toolkit.ffi.ffi_call("t", spec, input_output_aliases={0: 0})
    with pytest.raises(ValueError, match="legacy_backend_config"):
        toolkit.ffi.ffi_call("t", spec, legacy_backend_config="x")
    with pytest.raises(ValueError, match="permutation"):
        toolkit.ffi.ffi_call("t", spec, input_layouts=[(0, 1)])(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="platform"):
        toolkit.ffi.register_ffi_target("t", None, platform="cuda")
    with pytest.raises(TypeError, match="name"):
        toolkit.ffi.register_ffi_target("", None)
    assert type(toolkit.ffi.pycapsule(ctypes.cast(ctypes.pythonapi.Py_IncRef, ctypes.c_void_p))).__name__ == \
        "PyCapsule"


def test_experimental_compilation_cache_path(tmp_path):
    from toolkit.experimental.compilation_cache import compilation_cache as cc
    from jax.experimental.compilation_cache import compilation_cache as jcc
    assert {"set_cache_dir", "reset_cache"} <= {n for n in dir(jcc) if not n.startswith("_")}
    before = toolkit.compilation_cache.cache_dir()
    try:
        cc.set_cache_dir(str(tmp_path))
        assert toolkit.compilation_cache.cache_dir() == str(tmp_path)
        cc.reset_cache()
        assert toolkit.compilation_cache.cache_dir() == str(tmp_path)  # the setting stays, as JAX's
    finally:
        cc.set_cache_dir(before)


def test_integer_tangents_differ_from_jax_as_documented():
    # docs/differences-from-jax.md: toolkit.float0 is JAX's dtype, but toolkit's AD gives integer inputs
    # zero cotangents of their own dtype where JAX gives float0 zeros, and takes integer tangents in jvp.
    def f(x, n):
        return x * n
    ours = toolkit.grad(f, argnums=(0, 1), allow_int=True)(np.float32(2.0), np.int32(3))
    theirs = jax.grad(f, argnums=(0, 1), allow_int=True)(np.float32(2.0), np.int32(3))
    assert np.asarray(theirs[1]).dtype == jax.dtypes.float0 == toolkit.dtypes.float0
    assert np.asarray(ours[1]).dtype == np.int32 and int(ours[1]) == 0
    primal, tangent = toolkit.jvp(f, (np.float32(2.0), np.int32(3)), (np.float32(1.0), np.zeros((), toolkit.float0)))
    assert float(tangent) == 3.0  # a float0 tangent is accepted, as in JAX
