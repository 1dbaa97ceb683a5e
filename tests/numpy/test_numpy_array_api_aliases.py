"""toolkit.numpy's Array API names (acos ... unique_values) against jax.numpy 0.10.2."""

import numpy as np
import pytest

import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check

X = np.array([0.25, -0.5, 0.75], np.float32)
BIG = np.array([1.5, 2.0, 3.0], np.float32)
INTS = np.array([3, -1, 0, 7, 255], np.int32)
U8 = np.array([0, 1, 255], np.uint8)


@pytest.mark.parametrize("name,arg", [("acos", X), ("asin", X), ("atan", X), ("atanh", X), ("acosh", BIG),
                                      ("asinh", X), ("acos", 0.5), ("atan", np.array([1, 2], np.int32))])
def test_trigonometric_aliases(name, arg):
    check(lambda m, a: getattr(m, name)(a), arg, tol=2e-6, jit=True)


def test_trigonometric_aliases_refuse_lists():
    check(lambda m: m.acos([0.5]))
    check(lambda m: m.atan2([1.0], [2.0]))


def test_atan2():
    check(lambda m, a, b: m.atan2(a, b), X, BIG, tol=2e-6, jit=True)
    check(lambda m: m.atan2(1.0, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, bool, np.complex64, np.float16, None, "bfloat16"])
def test_astype(dtype):
    check(lambda m, x: m.astype(x, dtype), np.array([1.5, -2.0, 0.0], np.float32))


def test_astype_complex_to_bool_and_weak_input():
    check(lambda m: m.astype(m.asarray([0j, 1 + 0j, 1j]), bool))
    check(lambda m: m.astype(m.asarray(2.0), np.float32))   # weak in, strong out
    check(lambda m: m.astype([1, 2], np.float32))            # a list is a TypeError


@pytest.mark.x64
def test_astype_x64():
    check(lambda m: m.astype(np.arange(3), None))
    check(lambda m: m.astype(np.arange(3, dtype=np.int64), np.float64))


@pytest.mark.parametrize("x", [INTS, U8, np.array([True, False]), np.array([-128, 127], np.int8)])
def test_bitwise_count(x):
    check(lambda m, a: m.bitwise_count(a), x, jit=True)


def test_bitwise_count_refuses_floats():
    with pytest.raises(TypeError):
        tnp.bitwise_count(np.array([1.0]))


def test_bitwise_invert_and_shifts():
    check(lambda m, a: m.bitwise_invert(a), INTS, jit=True)
    check(lambda m, a: m.bitwise_invert(a), U8)
    check(lambda m, a: m.bitwise_left_shift(a, 2), INTS, jit=True)
    check(lambda m, a: m.bitwise_right_shift(a, 1), INTS, jit=True)
    check(lambda m, a: m.bitwise_right_shift(a, np.uint8(1)), U8)
    check(lambda m: m.bitwise_left_shift(np.array([1.0]), 1))


def test_concat():
    a, b = np.ones((2, 3), np.float32), np.zeros((1, 3), np.int32)
    check(lambda m: m.concat([a, b]))
    check(lambda m: m.concat([a, a], axis=1))
    check(lambda m: m.concat([a, b], axis=None))
    check(lambda m: m.concat([a, np.ones((2, 2))]))


@pytest.mark.parametrize("kind", ["bool", "signed integer", "unsigned integer", "integral", "real floating",
                                  "complex floating", "numeric", ("bool", "real floating"), np.float32, np.int8])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.float16, np.float32, np.complex64, "bfloat16",
                                   "int4", "uint4", "float8_e4m3fn"])
def test_isdtype(dtype, kind):
    import jax.numpy as jnp
    assert tnp.isdtype(dtype, kind) == jnp.isdtype(dtype, kind)


def test_isdtype_errors():
    check(lambda m: m.isdtype(np.float32, "no such kind"))
    check(lambda m: m.isdtype(np.float32, 3.5))
    assert tnp.isdtype(tnp.float32, "real floating")


def test_unique_family():
    x = np.array([3, 1, 3, 2, 1, 1], np.int32)
    check(lambda m, a: tuple(m.unique_all(a)), x)
    check(lambda m, a: tuple(m.unique_inverse(a)), x)
    nans = np.array([[2.0, np.nan], [np.nan, 2.0]], np.float32)  # NaNs are each unique (equal_nan=False)
    check(lambda m, a: tuple(m.unique_counts(a)), nans)
    check(lambda m, a: m.unique_values(a), nans)
    check(lambda m, a: m.unique_values(a), np.zeros((0,), np.float32))


def test_unique_family_named_fields_and_size():
    x = np.array([3, 1, 3, 2], np.int32)
    r = tnp.unique_all(x)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    assert tnp.unique_counts(x)._fields == ("values", "counts")
    assert tnp.unique_inverse(x)._fields == ("values", "inverse_indices")
    check(lambda m, a: tuple(m.unique_all(a, size=5, fill_value=-1)), x, only_jit=True)
    check(lambda m, a: tuple(m.unique_counts(a, size=2)), x, only_jit=True)
    check(lambda m, a: m.unique_values(a, size=4), x, only_jit=True)
    check(lambda m: m.unique_values([1, 2]))


def _namespace_info_as_jax():
    import toolkit
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    ours, theirs = tnp.__array_namespace_info__(), jnp.__array_namespace_info__()
    assert tnp.__array_api_version__ == jnp.__array_api_version__ == "2024.12"
    kinds = [None, "bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
             "numeric", ("bool", "real floating"), ("integral", "complex floating")]
    for kind in kinds:
        assert ours.dtypes(kind=kind) == theirs.dtypes(kind=kind), kind
    assert ours.default_dtypes() == theirs.default_dtypes() == ours.default_dtypes(device=tnp.ones(1).device)
    assert ours.capabilities() == theirs.capabilities() and ours.default_device() is theirs.default_device() is None
    # (None, then the devices: this process gives toolkit 8 CPU devices and JAX 1)
    assert ours.devices() == [None, *toolkit.devices()] and theirs.devices() == [None, *jax.devices()]
    with pytest.raises(ValueError, match="unknown dtype kind 'floating'"):
        ours.dtypes(kind="floating")  # JAX: a KeyError
    with pytest.raises(KeyError):
        theirs.dtypes(kind="floating")


def test_array_namespace_and_its_info_as_jax():
    import toolkit
    jnp = pytest.importorskip("jax.numpy")
    x = tnp.ones(3)
    assert x.__array_namespace__() is tnp and x.__array_namespace__(api_version="2024.12") is tnp
    with pytest.raises(ValueError, match="'2021.12' is not available"):
        x.__array_namespace__(api_version="2021.12")
    with pytest.raises(ValueError, match="'2021.12' is not available"):
        jnp.ones(3).__array_namespace__(api_version="2021.12")
    seen = []
    toolkit.jit(lambda v: seen.append(v.__array_namespace__()) or v)(x)  # traced values have it too, as JAX's
    assert seen == [tnp]
    _namespace_info_as_jax()


@pytest.mark.x64
def test_array_namespace_info_with_x64_as_jax():
    _namespace_info_as_jax()
    assert "float64" in tnp.__array_namespace_info__().dtypes(kind="real floating")


def test_isdtype_of_float0_as_jax():
    # float0 (the tangent type of integers) is of no kind, as in JAX; toolkit called every kind-"V" dtype floating.
    import jax
    from toolkit.core import dtypes
    for kind in ("real floating", "numeric", "bool", "integral"):
        assert tnp.isdtype(dtypes.float0, kind) == jax.numpy.isdtype(jax.dtypes.float0, kind) is False
