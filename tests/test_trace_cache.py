"""jit caches traces and lowerings by the function (``toolkit.core.trace_cache``), as ``jax.jit`` does.

A fresh ``jit(f)`` of an ``f`` traced before reuses the trace and the lowering
when everything they depend on is the same, and never otherwise: these tests
count traces (a side effect in ``f``) and lowerings (``lowering.lower_program``)
for each part of the keys, check that entries go with the function, that
functions which cannot be keyed still work, threads, and that an export made
from the cache is byte for byte the export made without it.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import threading
import weakref
from typing import ClassVar

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core import trace_cache
from toolkit.core.avals import ShapeDtypeStruct
from toolkit.export import export, symbolic_shape
from toolkit.ir.builders import build, insert_before
from toolkit.lowering import registry
from toolkit.passes import PatternPass, default_pipeline, pattern, register_pass
from toolkit.shard import NamedSharding, PartitionSpec as P, SingleDeviceSharding

X = np.arange(4, dtype=np.float32)


@pytest.fixture(autouse=True)
def empty_cache():
    trace_cache.clear_caches()
    yield
    trace_cache.clear_caches()


def counted(body=lambda x: tnp.sin(x) * 2):
    """``(f, traces)``: a new function applying ``body`` and a list whose [0] counts its traces."""
    traces = [0]

    def f(*args, **kwargs):
        traces[0] += 1
        return body(*args, **kwargs)

    return f, traces


# --- hits ----------------------------------------------------------------------------------------


def test_fresh_jits_of_one_function_trace_and_lower_once(lowerings):
    f, traces = counted()
    for _ in range(3):
        toolkit.jit(f).trace(X).lower()
    assert traces[0] == 1 and lowerings[0] == 1
    for _ in range(3):
        export(toolkit.jit(f))(X)
    assert traces[0] == 1 and lowerings[0] == 2  # export lowers with its own options (dimension variables)
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), np.sin(X) * 2, rtol=1e-6)
    assert traces[0] == 1 and lowerings[0] == 2  # a call lowers as trace(x).lower() does


def test_numpy_inputs_and_arrays_share_a_trace():
    f, traces = counted()
    toolkit.jit(f).trace(X)
    toolkit.jit(f).trace(toolkit.device_put(X))
    toolkit.jit(f).trace(ShapeDtypeStruct(X.shape, X.dtype))
    assert traces[0] == 1


def test_the_same_jit_object_traces_once_per_signature_too():
    f, traces = counted()
    g = toolkit.jit(f)
    g.trace(X)
    g.trace(X)
    g.lower(X)
    assert traces[0] == 1


# --- one fast path per function and jit options -------------------------------------------------


def test_a_fresh_jit_of_a_function_called_before_takes_the_fast_path_its_calls_filled(compilations):
    f, traces = counted()
    x = tnp.asarray(X)
    first = toolkit.jit(f)
    first(x)
    lookups = trace_cache.TRACES.hits + trace_cache.TRACES.misses
    fresh = toolkit.jit(f)
    np.testing.assert_allclose(np.asarray(fresh(x)), np.sin(X) * 2, rtol=1e-6)
    # One lookup (the shared fast path); none of the trace, the lowering or the executable.
    assert trace_cache.TRACES.hits + trace_cache.TRACES.misses == lookups + 1
    assert fresh._fast_path is first._fast_path and traces[0] == 1 and compilations[0] == 1
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), np.sin(X) * 2, rtol=1e-6)  # numpy: the general path
    assert traces[0] == 1 and compilations[0] == 1


def test_other_jit_options_have_fast_paths_of_their_own():
    f, traces = counted(lambda x, n=1: x * n)
    plain = toolkit.jit(f)
    plain(tnp.asarray(X))
    others = [toolkit.jit(f, static_argnums=1), toolkit.jit(f, donate_argnums=0), toolkit.jit(f, keep_unused=True),
              toolkit.jit(f, in_shardings=SingleDeviceSharding(toolkit.devices()[0]))]
    for other in others:
        np.testing.assert_allclose(np.asarray(other(tnp.asarray(X), 2)), X * 2)
        assert other._fast_path is not plain._fast_path
    assert toolkit.jit(f)._fast_path is not plain._fast_path  # joined at its first call, not before
    again = toolkit.jit(f, static_argnums=1)
    np.testing.assert_allclose(np.asarray(again(tnp.asarray(X), 3)), X * 3)  # another static value: traced
    assert again._fast_path is others[0]._fast_path


def test_a_shared_fast_path_keys_the_x64_mode():
    f, traces = counted(lambda x: x.astype(float) * 2)
    x = tnp.asarray(X)
    assert toolkit.jit(f)(x).dtype == np.float32
    with toolkit.enable_x64():
        assert toolkit.jit(f)(x).dtype == np.float64
    assert toolkit.jit(f)(x).dtype == np.float32 and traces[0] == 2


def test_a_called_functions_shared_fast_path_does_not_keep_it_alive():
    f, _ = counted()
    x = tnp.asarray(X)
    toolkit.jit(f)(x)
    toolkit.jit(f)(X)  # a general entry too
    toolkit.jit(f)(x)
    alive = weakref.ref(f)
    del f
    gc.collect()
    assert alive() is None  # its entries hold executables without their lowerings (dispatch.detached)


def test_clearing_one_jit_objects_cache_leaves_the_others_right(compilations):
    f, traces = counted()
    x = tnp.asarray(X)
    a, b = toolkit.jit(f), toolkit.jit(f)
    a(x)
    b(x)
    b.clear_cache()  # the shared fast path too: a's next call takes jit's full path
    np.testing.assert_allclose(np.asarray(a(x)), np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b(x)), np.sin(X) * 2, rtol=1e-6)
    assert traces[0] == 1 and compilations[0] == 1


# --- misses --------------------------------------------------------------------------------------


@pytest.mark.parametrize("first, second", [
    ((X,), (np.arange(5, dtype=np.float32),)),                      # shape
    ((X,), (X.astype(np.float16),)),                                # dtype (float64 is float32 with x64 off)
    ((np.float32(1.0),), (1.0,)),                                   # weak type
    (((X, X),), ([X, X],)),                                         # tree: tuple vs list
    (({"a": X},), ({"b": X},)),                                     # tree: dict keys
], ids=["shape", "dtype", "weak-type", "tuple-list", "dict-keys"])
def test_other_argument_types_trace_again(first, second):
    f, traces = counted(lambda x: toolkit.tree_util.tree_map(lambda v: v * 2, x))
    out1 = toolkit.jit(f).trace(*first).out_info
    out2 = toolkit.jit(f).trace(*second).out_info
    assert traces[0] == 2
    assert toolkit.jit(f).trace(*second).out_info == out2 and toolkit.jit(f).trace(*first).out_info == out1
    assert traces[0] == 2


def test_weak_type_is_kept_apart():
    f, _ = counted(lambda x: x + 1)
    weak = toolkit.jit(f).trace(1.0).out_info
    strong = toolkit.jit(f).trace(np.float32(1.0)).out_info
    assert weak.weak_type and not strong.weak_type


def test_static_arguments_by_value_and_type():
    f, traces = counted(lambda x, n: x * n)
    jf = functools.partial(toolkit.jit, static_argnums=1)
    assert jf(f).trace(X, 2).out_info.dtype == np.float32
    jf(f).trace(X, 2)
    assert traces[0] == 1
    jf(f).trace(X, 3)
    assert traces[0] == 2
    # 2 == 2.0 and they hash alike, but the traces differ (x * 2.0 is not x * 2 for integers)
    xi = np.arange(4, dtype=np.int32)
    assert jf(f).trace(xi, 2).out_info.dtype == np.int32
    assert jf(f).trace(xi, 2.0).out_info.dtype != np.int32
    # by keyword: static_argnames
    g = toolkit.jit(f, static_argnames="n")
    g.trace(X, n=2)
    toolkit.jit(f, static_argnames="n").trace(X, n=2)
    assert traces[0] == 5  # (X, 2), (X, 3), (xi, 2), (xi, 2.0), (X, n=2) once


def test_static_argnums_themselves_are_part_of_the_key():
    f, traces = counted(lambda x, y: x + y)
    toolkit.jit(f).trace(X, 1.0)
    out = toolkit.jit(f, static_argnums=1).trace(X, 1.0)
    assert traces[0] == 2 and len(out.flat_in_avals) == 1


def test_unhashable_static_arguments_fail_as_before():
    f, _ = counted(lambda x, n: x)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        toolkit.jit(f, static_argnums=1).trace(X, np.ones(2))
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        toolkit.jit(f, static_argnums=1).trace(X, [1, 2])


def test_donation_reuses_the_trace_but_not_the_lowering(lowerings):
    f, traces = counted(lambda x: x * 2)
    plain = toolkit.jit(f).trace(X).lower().as_text()
    donated = toolkit.jit(f, donate_argnums=0).trace(X).lower().as_text()
    assert traces[0] == 1 and lowerings[0] == 2
    assert "tf.aliasing_output" in donated and "tf.aliasing_output" not in plain
    assert toolkit.jit(f).trace(X).lower().as_text() == plain


def test_keep_unused_and_the_name_are_part_of_the_lowering_key(lowerings):
    f, traces = counted(lambda x, y: x * 2)
    kept_all = toolkit.jit(f, keep_unused=True).trace(X, X).lower()
    pruned = toolkit.jit(f).trace(X, X).lower()
    assert kept_all.kept_var_idx == (0, 1) and pruned.kept_var_idx == (0,)
    f.__name__ = "renamed"
    assert "@jit_renamed" in toolkit.jit(f).trace(X, X).lower().as_text()
    assert traces[0] == 1 and lowerings[0] == 3


def test_argument_placements_and_shardings_are_keys(mesh, lowerings):
    f, traces = counted(lambda x: x * 2)
    devices = toolkit.devices()
    on0 = toolkit.device_put(X, SingleDeviceSharding(devices[0]))
    on1 = toolkit.device_put(X, SingleDeviceSharding(devices[1]))
    assert toolkit.jit(f).trace(on0).lower()._plan.devices == (devices[0],)
    assert toolkit.jit(f).trace(on1).lower()._plan.devices == (devices[1],)
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(on1)), X * 2)
    assert toolkit.jit(f)(on1).sharding.device_set == {devices[1]}
    spec_x = ShapeDtypeStruct((8,), np.float32, sharding=NamedSharding(mesh, P("x")))
    spec_y = ShapeDtypeStruct((8,), np.float32, sharding=NamedSharding(mesh, P("y")))
    text_x = toolkit.jit(f).trace(spec_x).lower().as_text()
    text_y = toolkit.jit(f).trace(spec_y).lower().as_text()
    assert text_x != text_y
    assert toolkit.jit(f).trace(spec_x).lower().as_text() == text_x
    assert traces[0] == 4  # on0, on1 (committed placements differ), spec_x, spec_y
    assert lowerings[0] == 4


def test_in_and_out_shardings_are_lowering_keys(mesh, lowerings):
    f, traces = counted(lambda x: x * 2)
    spec = ShapeDtypeStruct((8,), np.float32)
    by_x = toolkit.jit(f, in_shardings=NamedSharding(mesh, P("x"))).trace(spec).lower().as_text()
    by_y = toolkit.jit(f, in_shardings=NamedSharding(mesh, P("y"))).trace(spec).lower().as_text()
    out_y = toolkit.jit(f, in_shardings=NamedSharding(mesh, P("x")),
                        out_shardings=NamedSharding(mesh, P("y"))).trace(spec).lower().as_text()
    assert len({by_x, by_y, out_y}) == 3
    # a list of shardings (unhashable) is keyed by its contents
    as_list = toolkit.jit(f, in_shardings=[NamedSharding(mesh, P("x"))]).trace(spec).lower().as_text()
    assert as_list == by_x
    assert toolkit.jit(f, in_shardings=[NamedSharding(mesh, P("x"))]).trace(spec).lower().as_text() == by_x
    assert traces[0] == 1 and lowerings[0] == 4


def test_the_current_mesh_is_a_trace_key(mesh):
    def f(x):
        return toolkit.lax.with_sharding_constraint(x, P("x"))

    spec = ShapeDtypeStruct((8,), np.float32)
    with toolkit.set_mesh(mesh):
        inside = toolkit.jit(f).trace(spec).lower().as_text()
    # Auto, as the fixture's: under an all-Explicit mesh the constraint of an unsharded value is an assertion
    # that fails (JAX's rule), whatever the cache.
    other = toolkit.make_mesh((8,), ("x",), axis_types=(toolkit.AxisType.Auto,))
    with toolkit.set_mesh(other):
        elsewhere = toolkit.jit(f).trace(spec).lower().as_text()
    assert inside != elsewhere
    with pytest.raises(Exception):  # no mesh: a bare PartitionSpec means nothing, as before
        toolkit.jit(f).trace(spec)


def test_the_partitioner_is_a_lowering_key(mesh, monkeypatch, lowerings):
    f, traces = counted(lambda x: x * 2)
    spec = ShapeDtypeStruct((8,), np.float32, sharding=NamedSharding(mesh, P("x")))
    shardy = toolkit.jit(f).trace(spec).lower().as_text()
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "gspmd")
    gspmd = toolkit.jit(f).trace(spec).lower().as_text()
    assert "sdy.sharding" in shardy and "mhlo.sharding" in gspmd
    assert toolkit.jit(f).trace(spec).lower(partitioner="shardy").as_text() == shardy
    assert traces[0] == 1 and lowerings[0] == 2


def test_platforms_are_a_lowering_key(lowerings):
    f, traces = counted(lambda x: x * 2)
    one = export(toolkit.jit(f))(X)
    two = export(toolkit.jit(f), platforms=("cpu", "cuda"))(X)
    assert one.platforms == ("cpu",) and two.platforms == ("cpu", "cuda")
    assert one.mlir_module_serialized != two.mlir_module_serialized
    assert traces[0] == 1 and lowerings[0] == 2


@register_pass
@dataclasses.dataclass(frozen=True)
class _AddToMultiply(PatternPass):
    """Turns stablehlo.add into stablehlo.multiply (a probe of which pipeline compiled)."""

    name: ClassVar[str] = "test-trace-cache-add-to-multiply"
    description: ClassVar[str] = "Replace add by multiply."

    def patterns(self):
        @pattern("stablehlo.add")
        def rewrite(op, rewriter):
            with insert_before(op):
                product = build("stablehlo.multiply", list(op.operands), [op.results[0].type])
            rewriter.replace_op(op, product)
            return True
        return [rewrite]


def test_a_cached_lowering_compiles_with_the_current_pipeline():
    saved = default_pipeline.JIT_PIPELINE
    f, traces = counted(lambda x, y: x + y)
    y = np.full(4, 3.0, np.float32)
    try:
        np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X, y)), X + y)
        default_pipeline.set_jit_pipeline("test-trace-cache-add-to-multiply")
        np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X, y)), X * y)
        np.testing.assert_allclose(np.asarray(toolkit.jit(f).trace(X, y).lower().compile()(X, y)), X * y)
    finally:
        default_pipeline.set_jit_pipeline(saved)
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X, y)), X + y)
    assert traces[0] == 1


def test_fresh_jits_of_one_function_compile_once(compilations):
    f, traces = counted()
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), np.sin(X) * 2, rtol=1e-6)
    compiled = toolkit.jit(f).trace(X).lower().compile()
    np.testing.assert_allclose(np.asarray(compiled(X)), np.sin(X) * 2, rtol=1e-6)
    assert traces[0] == 1 and compilations[0] == 1
    toolkit.jit(f)(X.reshape(2, 2))  # another signature compiles
    assert compilations[0] == 2


def test_a_compile_cache_hit_is_a_compiled_of_its_own_lowering(compilations):
    f, _ = counted()
    first_lowered = toolkit.jit(f).trace(X).lower()
    first = first_lowered.compile(compiler_options={"xla_cpu_enable_fast_math": False})
    np.testing.assert_allclose(np.asarray(first(X)), np.sin(X) * 2, rtol=1e-6)
    lowered = toolkit.jit(f).trace(X).lower()
    second = lowered.compile(compiler_options={"xla_cpu_enable_fast_math": False})
    assert compilations[0] == 1
    assert second is not first and second._lowered is lowered and first._lowered is first_lowered
    assert second.runtime_executable() is first.runtime_executable()  # one XLA executable
    assert second.in_tree == first.in_tree and second.args_info == first.args_info
    assert second._compiler_options == {"xla_cpu_enable_fast_math": False}  # part of serialize()'s key
    np.testing.assert_allclose(np.asarray(second(X)), np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(first(X)), np.sin(X) * 2, rtol=1e-6)  # called after the copy, too


def test_the_pipeline_and_compiler_options_are_compile_keys(compilations):
    saved = default_pipeline.JIT_PIPELINE
    f, _ = counted(lambda x, y: x + y)
    y = np.full(4, 3.0, np.float32)
    toolkit.jit(f)(X, y)
    lowered = toolkit.jit(f).trace(X, y).lower()
    lowered.pipeline = lowered.pipeline + default_pipeline.parse_pipeline(  # a pipeline of this Lowered only
        "builtin.module(test-trace-cache-add-to-multiply)")
    np.testing.assert_allclose(np.asarray(lowered.compile()(X, y)), X * y)
    assert compilations[0] == 2
    options = {"xla_cpu_enable_fast_math": False}
    toolkit.jit(f).trace(X, y).lower().compile(options)
    toolkit.jit(f).trace(X, y).lower().compile(dict(options))
    assert compilations[0] == 3
    try:
        default_pipeline.set_jit_pipeline("test-trace-cache-add-to-multiply")
        np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X, y)), X * y)
        assert compilations[0] == 3  # the same pipeline text as the Lowered's above: its executable
        default_pipeline.extend_jit_pipeline("cse")
        np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X, y)), X * y)
        assert compilations[0] == 4
    finally:
        default_pipeline.set_jit_pipeline(saved)
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X, y)), X + y)
    assert compilations[0] == 4  # the first executable again


def test_a_module_handed_out_is_compiled_as_it_is(compilations):
    f, _ = counted(lambda x: x + 1)
    toolkit.jit(f)(X)
    lowered = toolkit.jit(f).trace(X).lower()
    module = lowered.compiler_ir()  # may be changed in place: compile() must compile what it holds
    with module.context:
        for op in module.body.operations[0].regions[0].blocks[0].operations:
            if op.operation.name == "stablehlo.add":
                op.operation.attributes["test.touched"] = op.operation.attributes.get("test.touched") \
                    if "test.touched" in op.operation.attributes else module.operation.attributes["mhlo.num_partitions"]
    lowered.compile()
    assert compilations[0] == 2


def test_dumping_compiles_every_time(compilations, tmp_path, monkeypatch):
    f, _ = counted()
    toolkit.jit(f)(X)
    monkeypatch.setenv("TOOLKIT_DUMP_IR_TO", str(tmp_path))
    toolkit.jit(f)(X)
    toolkit.jit(f)(X)
    assert compilations[0] == 3 and len(list(tmp_path.iterdir())) == 2  # one timeline per compilation


def test_registering_a_lowering_rule_again_lowers_again(lowerings):
    from toolkit.lax import elementwise
    f, traces = counted(lambda x: tnp.sin(x))
    assert "stablehlo.sine" in toolkit.jit(f).trace(X).lower().as_text()
    saved = dict(registry.LOWERINGS[elementwise.sin_p])
    try:
        registry.register_lowering(elementwise.sin_p)(
            lambda ctx, x: __import__("jaxlib.mlir.dialects.stablehlo", fromlist=["cosine"]).cosine(x))
        assert "stablehlo.cosine" in toolkit.jit(f).trace(X).lower().as_text()
    finally:
        registry.LOWERINGS[elementwise.sin_p] = saved
    assert "stablehlo.sine" in toolkit.jit(f).trace(X).lower().as_text()
    assert traces[0] == 1 and lowerings[0] == 3


def test_symbolic_shapes_are_not_cached():
    f, traces = counted(lambda x: x * 2)
    (b,) = symbolic_shape("b")
    spec = ShapeDtypeStruct((b,), np.float32)
    # From one line: locations name the frames outside the trace (its call site), as JAX's.
    first, second = [export(toolkit.jit(f))(spec) for _ in range(2)]
    assert traces[0] == 2 and first.mlir_module_serialized == second.mlir_module_serialized


def test_traces_inside_a_trace_are_not_cached():
    g, traces = counted(lambda y: y + 1)

    def outer(x):
        toolkit.jit(g).trace(x)  # a trace of g inside outer's trace may capture outer's values
        return x

    toolkit.jit(outer).trace(X)
    assert traces[0] == 1 and trace_cache.TRACES.entries(g) == 0


# --- what is cached is not shared ------------------------------------------------------------------


def test_eager_operations_leave_the_cache_alone():
    x = toolkit.device_put(np.arange(13, dtype=np.float32))
    before = len(trace_cache.TRACES)
    # Operations bound eagerly (toolkit.numpy's ufuncs are jitted library functions, cached as JAX's are).
    out = toolkit.lax.add(toolkit.lax.mul(x, x), x)
    np.testing.assert_allclose(np.asarray(out), np.arange(13) ** 2 + np.arange(13))
    assert len(trace_cache.TRACES) == before


def test_a_lowered_module_changed_in_place_stays_its_own():
    f, _ = counted()
    module = toolkit.jit(f).trace(X).lower().compiler_ir()
    with module.context:
        module.operation.attributes["test.changed"] = toolkit.jit(f).trace(X).lower().compiler_ir() \
            .operation.attributes["mhlo.num_partitions"]
    assert "test.changed" in str(module)
    assert "test.changed" not in toolkit.jit(f).trace(X).lower().as_text()
    fresh = toolkit.jit(f).trace(X).lower()
    changed = fresh.compiler_ir()
    with changed.context:
        changed.operation.attributes["test.changed"] = changed.operation.attributes["mhlo.num_partitions"]
    assert "test.changed" in fresh.as_text()  # the Lowered's own module, as changed
    assert b"test.changed" in fresh._bytecode()
    assert b"test.changed" not in export(toolkit.jit(f))(X).mlir_module_serialized


def _fields(exp):
    return (exp.fun_name, exp.in_tree, exp.in_avals, exp.out_tree, exp.out_avals, exp.nr_devices, exp.platforms,
            exp.mlir_module_serialized, exp.module_kept_var_idx, exp.uses_global_constants,
            exp.in_shardings_hlo, exp.out_shardings_hlo, exp._in_named_shardings, exp._out_named_shardings)


@pytest.mark.parametrize("name", ["elementwise", "transformer"])
def test_exports_from_the_cache_are_byte_identical(name, monkeypatch):
    from toolkit.examples.reference_programs import PROGRAMS
    from toolkit.export import provenance
    monkeypatch.setattr(provenance, "current", lambda **extra: {"producer": "toolkit", **extra})
    if name == "elementwise":
        def fun(x, y):
            return tnp.sin(x) * 2 + y
        args = (X, X)
    else:
        fun, args = PROGRAMS["transformer"].build(toolkit), PROGRAMS["transformer"].make_inputs(np.random.default_rng(0))
    def exported():
        # One call site: the transformer's code lives in toolkit/, so its ops are located at the caller.
        return export(toolkit.jit(fun))(*args)

    results = []
    for i in range(3):  # from one line: locations name the frames outside the trace too, as JAX's
        if i == 2:
            trace_cache.clear_caches()
        results.append(exported())
    cold, warm, again = results
    assert _fields(cold) == _fields(warm) == _fields(again)
    assert bytes(cold.serialize()) == bytes(warm.serialize()) == bytes(again.serialize())
    np.testing.assert_allclose(np.asarray(warm.call(*args)), np.asarray(cold.call(*args)))


def test_a_global_changed_after_the_first_trace_is_not_seen_as_in_jax():
    # The documented caveat (docs/architecture.md): the trace is cached by the function, so a fresh jit
    # reuses it; JAX behaves the same way.
    namespace = {"tnp": tnp, "SCALE": 2.0}
    exec("def f(x):\n    return x * SCALE\n", namespace)
    f = namespace["f"]
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), X * 2)
    namespace["SCALE"] = 3.0
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), X * 2)
    trace_cache.clear_caches()
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), X * 3)

    jax = pytest.importorskip("jax")
    jnamespace = {"SCALE": 2.0}
    exec("def f(x):\n    return x * SCALE\n", jnamespace)
    np.testing.assert_allclose(np.asarray(jax.jit(jnamespace["f"])(X)), X * 2)
    jnamespace["SCALE"] = 3.0
    np.testing.assert_allclose(np.asarray(jax.jit(jnamespace["f"])(X)), X * 2)


# --- what can be keyed ----------------------------------------------------------------------------


def test_entries_go_with_the_function():
    f, traces = counted()
    export(toolkit.jit(f))(X)
    toolkit.jit(f).trace(X).lower()
    assert trace_cache.TRACES.entries(f) == 3  # the trace, the export's lowering and the plain lowering
    size = len(trace_cache.TRACES)
    alive = weakref.ref(f)
    del f
    gc.collect()
    assert alive() is None  # the cache held neither the function nor anything keeping it alive
    assert len(trace_cache.TRACES) == size - 3


def test_partial_objects_are_keyed_by_identity_as_in_jax():
    f, traces = counted(lambda x, s: x * s)
    p1, p2 = functools.partial(f, s=2.0), functools.partial(f, s=2.0)
    toolkit.jit(p1).trace(X)
    toolkit.jit(p1).trace(X)
    toolkit.jit(p2).trace(X)
    assert traces[0] == 2
    np.testing.assert_allclose(np.asarray(toolkit.jit(p2)(X)), X * 2)


def test_callable_objects():
    class Scale:
        def __init__(self):
            self.traces = 0

        def __call__(self, x):
            self.traces += 1
            return x * 3

    class Slotted:  # no __weakref__: cannot be keyed weakly, traced every time
        __slots__ = ("traces",)

        def __init__(self):
            self.traces = 0

        def __call__(self, x):
            self.traces += 1
            return x * 4

    @dataclasses.dataclass
    class Unhashable:  # eq without hash
        traces: int = 0

        def __call__(self, x):
            self.traces += 1
            return x * 5

    for make, factor, expected in [(Scale, 3, 1), (Slotted, 4, 2), (Unhashable, 5, 2)]:
        obj = make()
        np.testing.assert_allclose(np.asarray(toolkit.jit(obj)(X)), X * factor)
        np.testing.assert_allclose(np.asarray(export(toolkit.jit(obj))(X).call(X)), X * factor)
        assert obj.traces == expected, make.__name__


def test_the_cache_is_bounded_least_recently_used_first():
    cache = trace_cache.FunctionCache(maxsize=3)

    def f():
        pass

    def g():
        pass

    for i in range(3):
        assert cache.put(f, i, f"f{i}")
    assert cache.get(f, 0) == "f0"  # now the most recently used
    cache.put(g, 0, "g0")  # evicts f's 1
    assert cache.get(f, 1) is None and cache.get(f, 0) == "f0" and cache.get(g, 0) == "g0"
    assert len(cache) == 3 and cache.entries(f) == 2
    assert not cache.put(f, [1], "unhashable key") and cache.get(f, [1]) is None
    del g
    gc.collect()
    assert len(cache) == 2


# --- threads --------------------------------------------------------------------------------------


def _run_threads(target, n=8):
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    if errors:
        raise errors[0]


def export_module_text(serialized: bytes) -> str:
    """The module of a serialized export as text, without locations."""
    from toolkit.ir.serialization import parse_module
    return str(parse_module(bytes(serialized)))


def test_threads_exporting_one_function_agree():
    f, traces = counted()
    expected = export(toolkit.jit(f))(X).mlir_module_serialized
    trace_cache.clear_caches()
    blobs = [None] * 8

    def work(i):
        for _ in range(5):
            blobs[i] = export(toolkit.jit(f))(X).mlir_module_serialized
            np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), np.sin(X) * 2, rtol=1e-6)

    _run_threads(work)
    # The threads' exports are byte-identical; the first one's (traced from this test's frame, which the
    # locations name, as JAX's) differs from theirs in locations only.
    assert len(set(blobs)) == 1 and blobs[0] != expected
    assert export_module_text(blobs[0]) == export_module_text(expected)
    assert traces[0] <= 1 + 8  # at most one trace per thread racing on the first fill


def test_threads_filling_a_small_cache_while_functions_die(monkeypatch):
    monkeypatch.setattr(trace_cache, "TRACES", trace_cache.FunctionCache(maxsize=5))

    def work(i):
        for k in range(20):
            scale = float(i * 100 + k)
            f, _ = counted(lambda x, s=scale: x * s)
            traced = toolkit.jit(f).trace(X)
            # A hit (or, evicted by the other threads meanwhile, a new trace) of the same program.
            assert str(toolkit.jit(f).trace(X).program) == str(traced.program)
            if k % 5 == 0:  # compiling (and running) every function would take most of the test's time
                np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), X * scale)
            del f, traced
            if k % 5 == 0:
                gc.collect()

    # gc.collect() scans every object of the process: in an xdist worker that ran a thousand tests before, ~1 s a
    # call, 32 calls. Frozen, the worker's older objects are left out; this test's functions and traces are new, so
    # they are collected as before.
    gc.freeze()
    try:
        _run_threads(work)
    finally:
        gc.unfreeze()
    assert len(trace_cache.TRACES) <= 5


# --- the serializer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["elementwise", "chlo", "gspmd", "shardy"])
def test_serialize_module_gives_the_bytes_of_jaxlibs_plain_serializer(case, mesh, monkeypatch):
    # serialize_module hands jaxlib the module and asks for mixed serialization (as JAX does): the same
    # bytes as serializing the module's bytecode, without the Shardy round-trip export for modules without Shardy.
    from jaxlib import _jax

    from toolkit.export.exporting import portable_artifact_target, serialize_module
    spec = ShapeDtypeStruct((8,), np.float32)
    if case == "elementwise":
        lowered = toolkit.jit(lambda x: tnp.sin(x) * 2).trace(spec).lower()
    elif case == "chlo":
        lowered = toolkit.jit(lambda x: toolkit.lax.erf_inv(x)).trace(spec).lower()
    else:
        monkeypatch.setenv("TOOLKIT_PARTITIONER", case)
        sharded = ShapeDtypeStruct((8,), np.float32, sharding=NamedSharding(mesh, P("x")))
        lowered = toolkit.jit(lambda x: x * 2).trace(sharded).lower()
    module = lowered.compiler_ir()
    text = str(module)
    assert ("chlo." in text) == (case == "chlo") and ("sdy.mesh" in text) == (case == "shardy")
    plain = _jax.mlir.serialize_portable_artifact(lowered._bytecode(), portable_artifact_target(), case == "shardy")
    assert serialize_module(module) == plain
    assert str(module) == text  # left unchanged


# --- when a collected function's entries go ----------------------------------------------------------


def test_a_collected_functions_entries_are_dropped_when_it_goes_not_at_the_next_trace():
    cache = trace_cache.FunctionCache(maxsize=8)
    freed = []

    class Payload:  # stands for a trace's program and executables: what freeing costs
        def __del__(self):
            freed.append(1)

    def f(x):
        return x

    cache.put(f, ("sig",), Payload())
    del f  # a plain function goes at its last reference: the weakref callback runs now
    assert freed == [1] and not cache._dead and len(cache._order) == 0


def test_a_collection_during_an_operation_is_purged_by_the_next_one():
    cache = trace_cache.FunctionCache(maxsize=8)

    def f(x):
        return x

    def g(x):
        return x

    cache.put(f, ("sig",), "f")
    cache.put(g, ("sig",), "g")
    ref = cache._tables[weakref.ref(f)][0]
    with cache._lock, cache._operation():  # as if the collector ran inside get()/put()
        cache._collected(ref)
        assert cache._dead == [ref]
    assert len(cache._order) == 2  # still there: purging mid-operation could corrupt it
    assert cache.get(g, ("sig",)) == "g"  # the next operation purges
    assert not cache._dead and len(cache._order) == 1 and cache.get(f, ("sig",)) is None


def test_a_collection_while_another_thread_operates_is_deferred_to_it():
    cache = trace_cache.FunctionCache(maxsize=8)

    def f(x):
        return x

    cache.put(f, ("sig",), "f")
    ref = cache._tables[weakref.ref(f)][0]
    held, release = threading.Event(), threading.Event()

    def hold():
        with cache._lock:
            held.set()
            release.wait(timeout=10)

    other = threading.Thread(target=hold)
    other.start()
    try:
        assert held.wait(timeout=10)
        cache._collected(ref)  # the lock is another thread's: only recorded
        assert cache._dead == [ref]
    finally:
        release.set()
        other.join(timeout=10)
    assert len(cache) == 0 and not cache._dead
