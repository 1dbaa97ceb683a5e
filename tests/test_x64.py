"""64-bit types as JAX has them (issue 23 item 1), side by side with JAX in the same run.

Every case runs twice: JAX's default config (x64 off: 64-bit inputs become
32-bit) and with x64 on (``jax.enable_x64(True)`` beside ``toolkit.enable_x64()``).
A case is a function of the numpy-like module (``toolkit.numpy`` or
``jax.numpy``) and its top-level package; the results' dtypes, weak types and
values must agree, and so must the warnings for truncated dtype requests.
"""

import warnings

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import export as texport
from toolkit import random as trandom
from toolkit.core import trace_cache

jax = pytest.importorskip("jax")
jnp = jax.numpy
from jax import export as jexport  # noqa: E402


class Api:
    """What a case uses of one implementation."""

    def __init__(self, np_module, top, random, export):
        self.np, self.top, self.random, self.export = np_module, top, random, export


TOOLKIT = Api(tnp, toolkit, trandom, texport)
JAX = Api(jnp, jax, jax.random, jexport)


@pytest.fixture(params=[False, True], ids=["x64_off", "x64_on"])
def x64(request):
    with jax.enable_x64(request.param), toolkit.enable_x64(request.param):
        yield request.param


def _run(case, api):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = case(api)
    messages = sorted({str(w.message).split(". ")[0] for w in caught if issubclass(w.category, UserWarning)
                       and "Explicitly requested dtype" in str(w.message)})
    return out, messages


def _describe(x):
    return (np.dtype(x.dtype).name, bool(getattr(x, "weak_type", False)))


CASES = {
    # numpy values and Python scalars entering toolkit.numpy
    "asarray_int64_array": lambda a: a.np.asarray(np.arange(3)),
    "asarray_float64_array": lambda a: a.np.asarray(np.arange(3.0)),
    "asarray_uint64_array": lambda a: a.np.asarray(np.arange(3, dtype=np.uint64)),
    "asarray_complex128_array": lambda a: a.np.asarray(np.ones(2, np.complex128)),
    "asarray_float64_scalar": lambda a: a.np.asarray(np.float64(1.5)),
    "asarray_int64_scalar": lambda a: a.np.asarray(np.int64(7)),
    "asarray_python_int": lambda a: a.np.asarray(3),
    "asarray_python_float": lambda a: a.np.asarray(1.5),
    "asarray_python_complex": lambda a: a.np.asarray(1 + 2j),
    "asarray_float_list": lambda a: a.np.asarray([1.0, 2.0]),
    "asarray_int_list": lambda a: a.np.asarray([1, 2]),
    "array_float64_array": lambda a: a.np.array(np.arange(3.0)),
    "asarray_dtype_float64": lambda a: a.np.asarray([1, 2], dtype=np.float64),
    # creation with explicit 64-bit dtypes, and without a dtype
    "zeros_float64": lambda a: a.np.zeros(3, dtype=np.float64),
    "ones_int64": lambda a: a.np.ones(3, dtype=np.int64),
    "full_int64": lambda a: a.np.full(3, 2, dtype=np.int64),
    "arange_float64": lambda a: a.np.arange(3, dtype=np.float64),
    "arange_int64": lambda a: a.np.arange(3, dtype=np.int64),
    "zeros_default": lambda a: a.np.zeros(3),
    "arange_default_int": lambda a: a.np.arange(3),
    "arange_default_float": lambda a: a.np.arange(3.0),
    "linspace_default": lambda a: a.np.linspace(0, 1, 3),
    "eye_float64": lambda a: a.np.eye(2, dtype=np.float64),
    "astype_float64": lambda a: a.np.arange(3).astype(np.float64),
    "convert_element_type_float64": lambda a: a.top.lax.convert_element_type(a.np.arange(3), np.float64),
    "sum_dtype_int64": lambda a: a.np.sum(a.np.arange(3), dtype=np.int64),
    "sum_int8": lambda a: a.np.sum(a.np.arange(3, dtype=np.int8)),
    "sum_int32": lambda a: a.np.sum(a.np.arange(3, dtype=np.int32)),
    "mean_int32": lambda a: a.np.mean(a.np.arange(3, dtype=np.int32)),
    "mean_int64": lambda a: a.np.mean(a.np.asarray(np.arange(3))),
    "sum_uint8": lambda a: a.np.sum(a.np.arange(3, dtype=np.uint8)),
    "prod_bool": lambda a: a.np.prod(a.np.ones(3, dtype=bool)),
    # promotion
    "uint32_plus_int32": lambda a: a.np.arange(3, dtype=np.uint32) + a.np.arange(3, dtype=np.int32),
    "uint16_plus_int16": lambda a: a.np.arange(3, dtype=np.uint16) + a.np.arange(3, dtype=np.int16),
    "int64_array_plus_float32": lambda a: a.np.asarray(np.arange(3)) + a.np.ones(3, np.float32),
    "numpy_int64_plus_float32": lambda a: np.arange(3) + a.np.ones(3, np.float32),
    "numpy_float64_times_int32": lambda a: a.np.arange(3, dtype=np.int32) * np.arange(3.0),
    "int32_plus_python_float": lambda a: a.np.arange(3, dtype=np.int32) + 1.5,
    "float16_plus_python_float": lambda a: a.np.ones(3, np.float16) + 1.5,
    "int8_plus_numpy_int64_scalar": lambda a: a.np.arange(3, dtype=np.int8) + np.int64(2),
    "python_int_plus_python_float": lambda a: a.np.add(1, 2.5),
    "true_divide_ints": lambda a: a.np.arange(1, 4) / 2,
    # jit and device_put of numpy 64-bit values
    "jit_float64_array": lambda a: a.top.jit(lambda x: x * 2)(np.arange(3.0)),
    "jit_int64_array": lambda a: a.top.jit(lambda x: x + 1)(np.arange(3)),
    "jit_float64_scalar": lambda a: a.top.jit(lambda x: x * 2)(np.float64(1.5)),
    "jit_python_float": lambda a: a.top.jit(lambda x: x * 2)(1.5),
    "jit_captured_float64_constant": lambda a: a.top.jit(lambda x: x + np.arange(3.0))(a.np.ones(3, np.float32)),
    "jit_numpy_float64_scalar_inside": lambda a: a.top.jit(lambda x: x * np.float64(2.0))(a.np.arange(3)),
    "jit_zeros_float64_inside": lambda a: a.top.jit(lambda x: x + a.np.zeros(3, np.float64))(a.np.ones(3, np.int32)),
    "device_put_float64": lambda a: a.top.device_put(np.arange(3.0)),
    "device_put_int64_scalar": lambda a: a.top.device_put(np.int64(5)),
    "device_put_python_float": lambda a: a.top.device_put(1.5),
    # random
    "uniform_float64": lambda a: a.random.uniform(a.random.PRNGKey(0), (3,), dtype=np.float64),
    "normal_default": lambda a: a.random.normal(a.random.PRNGKey(1), (3,)),
    "randint_int64": lambda a: a.random.randint(a.random.PRNGKey(2), (3,), 0, 10, dtype=np.int64),
    "key_of_a_large_seed": lambda a: a.random.key_data(a.random.PRNGKey(2 ** 40 + 5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dtypes_weak_types_values_and_warnings(name, x64):
    case = CASES[name]
    expected, expected_warnings = _run(case, JAX)
    got, got_warnings = _run(case, TOOLKIT)
    assert _describe(got) == _describe(expected), name
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)
    # A truncated request warns where JAX's does (JAX may warn twice, e.g. in sum and convert_element_type).
    assert bool(got_warnings) == bool(expected_warnings) and set(got_warnings) <= set(expected_warnings)


def test_warning_text_matches_jax():
    with jax.enable_x64(False), toolkit.enable_x64(False):
        with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in zeros is not "
                                             "available, and will be truncated to dtype float32"):
            tnp.zeros(3, dtype=np.float64)
        with pytest.warns(UserWarning, match="requested in astype") as caught:
            tnp.ones(2).astype(np.int64)
        assert caught[0].filename == __file__  # the warning points at the user's line


_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
           jnp.bfloat16, np.float16, np.float32, np.float64, np.complex64, np.complex128]


def test_promotion_lattice_matches_jax(x64):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jnp.result_type warns for 64-bit dtype arguments with x64 off
        for a in _DTYPES:
            for b in _DTYPES:
                assert tnp.promote_types(a, b) == jnp.promote_types(a, b), (a, b)
                assert tnp.result_type(a, b) == jnp.result_type(a, b), (a, b)
        for a in _DTYPES:
            for scalar in (True, 1, 1.0, 1j):
                assert tnp.result_type(a, scalar) == jnp.result_type(a, scalar), (a, scalar)


def test_export_of_a_float64_spec(x64):
    def f(x):
        return x * 2

    exp_jax = jexport.export(jax.jit(f))(jax.ShapeDtypeStruct((3,), np.float64))
    exp = texport.export(toolkit.jit(f))(toolkit.ShapeDtypeStruct((3,), np.float64))
    assert [a.dtype for a in exp.in_avals] == [a.dtype for a in exp_jax.in_avals]
    assert [a.dtype for a in exp.out_avals] == [a.dtype for a in exp_jax.out_avals]
    lowered = toolkit.jit(f).lower(toolkit.ShapeDtypeStruct((3,), np.float64))
    expected = "f64" if x64 else "f32"
    assert f"tensor<3x{expected}>" in lowered.as_text()


def test_a_float64_export_called_with_x64_off_is_refused_as_in_jax():
    with toolkit.enable_x64():
        blob = texport.export(toolkit.jit(lambda x: x * 2))(toolkit.ShapeDtypeStruct((3,), np.float64)).serialize()
    restored = texport.deserialize(blob)
    assert restored.in_avals[0].dtype == np.float64  # the artifact's types are kept, as in JAX
    with pytest.raises((TypeError, ValueError), match="f64"):
        restored.call(np.arange(3.0))  # becomes float32 on the way in
    with toolkit.enable_x64():
        np.testing.assert_array_equal(np.asarray(restored.call(np.arange(3.0))), [0.0, 2.0, 4.0])


def test_a_64_bit_array_keeps_its_type_after_x64_is_turned_off():
    with toolkit.enable_x64():
        x = tnp.asarray(np.arange(3.0))
    assert x.dtype == np.float64  # as JAX: an array made 64-bit stays so
    assert toolkit.jit(lambda v: v)(x).dtype == np.float64


def test_caches_are_separate_for_x64_off_and_on(compilations):
    calls = []

    def f(x):
        calls.append(1)
        return x + np.float64(1.0)  # float32 with x64 off, float64 with it on

    g = toolkit.jit(f)
    x = tnp.ones(3, np.float32)
    before = compilations[0]  # making x may compile the eager broadcast, if no earlier test did
    assert g(x).dtype == np.float32
    assert g(x).dtype == np.float32  # the fast path
    with toolkit.enable_x64():
        assert g(x).dtype == np.float64
        assert g(x).dtype == np.float64
    assert g(x).dtype == np.float32
    toolkit.config.update("jax_enable_x64", True)
    try:
        assert g(x).dtype == np.float64
    finally:
        toolkit.config.update("jax_enable_x64", False)
    assert g(x).dtype == np.float32
    assert len(calls) == 2  # one trace per mode
    assert compilations[0] - before == 2
    # A new jit object of the same function: the trace cache by function, keyed on the mode too.
    with toolkit.enable_x64():
        assert toolkit.jit(f)(x).dtype == np.float64
    assert toolkit.jit(f)(x).dtype == np.float32
    assert len(calls) == 2


def test_eager_primitives_are_keyed_on_the_mode():
    trace_cache.clear_caches()
    x = tnp.arange(3)
    assert tnp.sum(x).dtype == np.int32
    with toolkit.enable_x64():
        assert tnp.sum(x).dtype == np.int64
    assert tnp.sum(x).dtype == np.int32


def test_environment_variable_turns_x64_on_in_a_subprocess():
    import os
    import subprocess
    import sys

    code = ("import numpy as np, toolkit, toolkit.numpy as tnp; "
            "print(tnp.asarray(np.arange(3.0)).dtype, toolkit.jit(lambda x: x)(np.arange(3)).dtype)")
    env = dict(os.environ, TOOLKIT_ENABLE_X64="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["float64", "int64"], out.stderr


def test_a_jax_spec_is_canonicalized_a_jax_array_keeps_its_type():
    text = toolkit.jit(lambda x: x * 2).lower(jax.ShapeDtypeStruct((3,), np.float64)).as_text()
    assert "tensor<3xf32>" in text and "f64" not in text
    with jax.enable_x64(True):
        made_64 = jnp.arange(3.0)
    assert toolkit.jit(lambda x: x)(made_64).dtype == np.float64  # made under x64: kept, as JAX keeps it


def test_arrays_made_under_x64_promote_as_in_jax():
    with toolkit.enable_x64():
        tf, ti = tnp.arange(3.0), tnp.arange(3)
    # What JAX 0.10.2 gives with x64 off for arrays it made under x64 (measured; not run on JAX here: its
    # eager path fails on them after other cases compiled, RuntimeProgramInputMismatch). One strong type,
    # or one operand: kept 64-bit (JAX's trivial cases); promoted with a Python scalar: canonical.
    assert _describe(tf + tf) == ("float64", False)
    assert _describe(tnp.sin(tf)) == ("float64", False)
    assert _describe(ti * ti) == ("int64", False)
    assert _describe(tf * 2) == ("float32", False)
    assert _describe(ti + 1) == ("int32", False)
