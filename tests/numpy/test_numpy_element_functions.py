"""toolkit.numpy's angle, frexp, ldexp, spacing, i0, isposinf/isneginf, iscomplex/isreal, sort_complex and the
host-side predicates (iscomplexobj, isscalar, issubdtype, can_cast, iterable, ndim, shape, size) against
jax.numpy 0.10.2."""

import ml_dtypes
import numpy as np
import pytest

import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check

X = np.array([8.0, 0.3, -2.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 100.0, 1e-30, 3e38], np.float32)
Z = np.array([1 + 1j, -1j, 0j, -2 + 0.5j], np.complex64)


def test_angle():
    check(lambda m, z: m.angle(z), Z, tol=2e-6, jit=True)
    check(lambda m, z: m.angle(z, deg=True), Z, tol=2e-5)
    check(lambda m: m.angle(3))
    check(lambda m: m.angle(2.0))
    check(lambda m: m.angle(np.array([-1, 2], np.int32)))
    check(lambda m: m.angle(np.array(-1.0, np.float16)))
    check(lambda m: m.angle([1.0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_frexp(dtype):
    check(lambda m, x: m.frexp(x), X.astype(dtype), jit=True)


@pytest.mark.x64
def test_frexp_ldexp_x64():
    check(lambda m, x: m.frexp(x), X.astype(np.float64))
    check(lambda m, x: m.ldexp(x, np.int64(5)), X.astype(np.float64))


def test_frexp_errors_and_integers():
    check(lambda m: m.frexp(np.array([1, 8, -3], np.int32)))
    check(lambda m: m.frexp(Z))
    check(lambda m: m.frexp([1.0]))


def test_ldexp():
    check(lambda m, x, e: m.ldexp(x, e), X, np.array([3, -2, 1, 5, 0, 1, 2, 3, -200, 120, 1], np.int32), jit=True)
    check(lambda m: m.ldexp(np.array([1, 2], np.int32), 3))
    check(lambda m: m.ldexp(np.float16(1.5), np.int8(4)))
    check(lambda m: m.ldexp(X, 1.5))
    check(lambda m: m.ldexp(Z, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_spacing(dtype):
    check(lambda m, x: m.spacing(x), X.astype(dtype), jit=True)


def test_spacing_errors():
    check(lambda m: m.spacing(np.array([1, 2], np.int32)))
    check(lambda m: m.spacing(Z))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_i0(dtype):
    x = np.array([0.0, 0.5, -1.0, 3.0, 7.9, 8.0, 8.1, 20.0, -30.0, np.inf, np.nan], dtype)
    check(lambda m, a: m.i0(a), x, tol=2e-6 if dtype == np.float32 else 2e-3, jit=True)
    check(lambda m: m.i0(np.array([1, 2], np.int32)), tol=2e-6)
    check(lambda m: m.i0(2.0), tol=2e-6)
    check(lambda m: m.i0(Z))


@pytest.mark.x64
def test_i0_x64():
    check(lambda m, a: m.i0(a), np.linspace(-40, 40, 33), tol=1e-12)


def test_isposinf_isneginf():
    for name in ("isposinf", "isneginf"):
        check(lambda m, x: getattr(m, name)(x), X, jit=True)
        check(lambda m: getattr(m, name)(np.array([1, 2], np.int32)))
        check(lambda m: getattr(m, name)(Z))
        check(lambda m: getattr(m, name)([1.0]))
    with pytest.raises(NotImplementedError):
        tnp.isposinf(X, out=X)


def test_iscomplex_isreal():
    for name in ("iscomplex", "isreal"):
        check(lambda m, z: getattr(m, name)(z), Z, jit=True)
        check(lambda m: getattr(m, name)(X))
        # JAX's comparison of weak operands is a weak bool; toolkit's comparisons are strong (lax's rule here)
        check(lambda m: getattr(m, name)(3.0), weak=False)


def test_sort_complex():
    check(lambda m, z: m.sort_complex(z), Z, jit=True)
    check(lambda m: m.sort_complex(np.array([3, 1, 2], np.int32)))
    check(lambda m: m.sort_complex(np.array([3.0, 1.0], np.float16)))
    check(lambda m: m.sort_complex([1.0]))


@pytest.mark.x64
def test_sort_complex_x64():
    check(lambda m: m.sort_complex(np.array([3.0, 1.0])))
    check(lambda m: m.sort_complex(np.array([3, 1], np.int64)))


@pytest.mark.parametrize("value", [1, 1.5, 1j, True, None, "s", np.float32(1), np.complex64(1), [1, 2], [1j],
                                   np.ones(2), np.ones(2, np.complex64), (1.0,)])
def test_object_predicates(value):
    import jax.numpy as jnp
    if isinstance(value, (list, tuple)):
        assert tnp.iscomplexobj(value) == jnp.iscomplexobj(value)
    else:
        assert tnp.iscomplexobj(value) == jnp.iscomplexobj(value)
        assert tnp.isrealobj(value) == jnp.isrealobj(value)
    assert tnp.isscalar(value) == jnp.isscalar(value)
    assert tnp.iterable(value) == jnp.iterable(value)


def test_predicates_of_arrays():
    import jax.numpy as jnp
    for ours, theirs in ((tnp.asarray(1.0), jnp.asarray(1.0)), (tnp.ones(3), jnp.ones(3)),
                         (tnp.asarray(1j), jnp.asarray(1j))):
        assert tnp.isscalar(ours) == jnp.isscalar(theirs)
        assert tnp.iscomplexobj(ours) == jnp.iscomplexobj(theirs)
        assert tnp.iterable(ours) == jnp.iterable(theirs)
        assert tnp.ndim(ours) == jnp.ndim(theirs) and tnp.shape(ours) == jnp.shape(theirs)
        assert tnp.size(ours) == jnp.size(theirs)


@pytest.mark.parametrize("a,b", [(np.float32, np.floating), ("bfloat16", np.floating), ("bfloat16", np.inexact),
                                 ("int4", np.signedinteger), ("uint4", np.unsignedinteger), ("int4", np.floating),
                                 (np.int8, np.integer), (np.complex64, np.floating), (np.float32, np.float32),
                                 (np.bool_, np.number), ("float8_e4m3fn", np.number), (np.uint8, np.signedinteger)])
def test_issubdtype(a, b):
    import jax.numpy as jnp
    assert tnp.issubdtype(a, b) == jnp.issubdtype(a, b)


def test_issubdtype_of_toolkit_scalar_types():
    assert tnp.issubdtype(tnp.float32, tnp.floating)
    assert tnp.issubdtype(tnp.bfloat16, tnp.inexact)
    assert not tnp.issubdtype(tnp.int8, tnp.floating)
    assert tnp.issubdtype(tnp.asarray(1).dtype, tnp.integer)


@pytest.mark.parametrize("a,b,casting", [(np.int32, np.float32, "safe"), (np.int8, np.int16, "safe"),
                                         (np.float64, np.float32, "same_kind"), (np.float64, np.int32, "same_kind"),
                                         (np.float32, np.float16, "unsafe")])
def test_can_cast(a, b, casting):
    import jax.numpy as jnp
    assert tnp.can_cast(a, b, casting) == jnp.can_cast(a, b, casting)


def test_ndim_shape_size():
    import jax.numpy as jnp
    x = np.ones((2, 3, 4))
    for a in (x, 3.0, [[1, 2]], tnp.asarray(x)):
        assert tnp.ndim(a) == jnp.ndim(a if not hasattr(a, "_impl") else x)
        assert tnp.shape(a) == jnp.shape(a if not hasattr(a, "_impl") else x)
    assert tnp.size(x) == jnp.size(x) == 24
    assert tnp.size(x, 1) == jnp.size(x, 1)
    assert tnp.size(x, (0, 2)) == jnp.size(x, (0, 2))
    assert tnp.size(x, -1) == jnp.size(x, -1)
    with pytest.raises(ValueError):
        tnp.size(x, (0, 0))
    with pytest.raises(ValueError):
        tnp.size(x, 3)


def test_numpy_reexports():
    import jax.numpy as jnp
    assert tnp.euler_gamma == jnp.euler_gamma
    assert tnp.dtype is jnp.dtype is np.dtype
    assert tnp.ComplexWarning is jnp.ComplexWarning
