"""toolkit.numpy.creation's matrix builders: ``tril``/``triu`` against numpy, ``vander`` against ``jax.numpy``."""

import numpy as np
import pytest

import toolkit.numpy as tnp

from _vs_jax import F, compare_with_jax
from _vs_numpy import C, X, check


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_triu_tril(k):
    check(tnp.triu(X, k), np.triu(X, k))
    check(tnp.tril(C, k), np.tril(C, k))


def test_vander(jnp):
    for x in (np.arange(1, 5, dtype=np.int32), F[0]):
        compare_with_jax("vander", x, tol=1e-4)
        compare_with_jax("vander", x, 3, increasing=True, tol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, np.float16])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander_bits_and_derivative_as_jax(jnp, dtype, increasing):
    # JAX's: one pow against exponents of x's dtype (not repeated products): the same bits, and the same
    # derivative at 0 (NaN, from x ** 0.0).
    import jax
    import toolkit

    x = (np.random.default_rng(0).normal(size=40) * 3).astype(dtype)
    _same_bits(tnp.vander(x, 6, increasing=increasing), jnp.vander(x, 6, increasing=increasing))
    if dtype == np.float32:
        v = np.array([0.0, 1.0, -2.0], np.float32)
        np.testing.assert_array_equal(toolkit.grad(lambda v: tnp.sum(tnp.vander(v, increasing=increasing)))(v),
                                      jax.grad(lambda v: jnp.sum(jnp.vander(v, increasing=increasing)))(v))


def test_vander_and_iota_of_bools_raise_as_jax(jnp):
    import jax
    import toolkit
    from _oracle import raises_like

    for increasing in (False, True):
        with pytest.raises(TypeError):
            jnp.vander(np.array([True, False]), 3, increasing=increasing)
        with pytest.raises(TypeError):  # was an XLA verifier error with increasing=True
            tnp.vander(np.array([True, False]), 3, increasing=increasing)
    raises_like(lambda: toolkit.lax.iota(np.bool_, 3), lambda: jax.lax.iota(np.bool_, 3))


ARANGE_CASES = [(5,), (0, 1, 0.1), (1.5, 7), (-3, 3, 0.7), (0, 10, 3), (np.float16(0), 2, 0.3), (2**31 - 2, 2**31 - 1),
                (0.1, 0.9, 0.1), (10, 0, -1.5), (np.int8(5),), (2.5,), (np.float32(0.5), 3), (True, 5), (3, 1),
                (-1.7, 2.2, 0.3), (np.uint8(3), 10, 2), (1, 7.5, 0.5)]


def _same_bits(ours, theirs):
    assert (ours.dtype, ours.shape, bool(ours.weak_type)) == (theirs.dtype, theirs.shape, bool(theirs.aval.weak_type))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("args", ARANGE_CASES, ids=str)
@pytest.mark.parametrize("dtype", [None, np.float16, np.int32])
def test_arange_is_jaxs_bit_for_bit(args, dtype, jnp):
    """JAX's arange is start + step * iota in the result type (float32 for a narrower float) and takes its type
    from the arguments (np.int8(5) gives int8); toolkit rounded numpy's float64 values and typed by int or not
    (13 of these 51 differed: a last bit, float16's type, int8's)."""
    kwargs = {} if dtype is None else {"dtype": dtype}
    _same_bits(tnp.arange(*args, **kwargs), jnp.arange(*args, **kwargs))


@pytest.mark.x64
@pytest.mark.parametrize("args", [(5,), (0, 1, 0.1), (np.float32(0.5), 3), (np.int8(5),)], ids=str)
def test_arange_x64_is_jaxs(args, jnp):
    _same_bits(tnp.arange(*args), jnp.arange(*args))


def test_arange_errors_as_jax(jnp):
    for args in [(1j,), (0, 2 + 1j), (np.arange(3),), (0, np.arange(3))]:
        with pytest.raises(ValueError) as theirs:
            jnp.arange(*args)
        with pytest.raises(ValueError) as ours:
            tnp.arange(*args)
        assert str(ours.value) == str(theirs.value)


def test_full_of_a_python_bool_is_a_strong_bool(jnp):
    _same_bits(tnp.full((2,), True), jnp.full((2,), True))
    _same_bits(tnp.full_like(np.arange(3), True), jnp.full_like(np.arange(3), True))


@pytest.mark.x64
def test_tri_defaults_to_float32_even_with_x64(jnp):
    _same_bits(tnp.tri(3, 4, 1), jnp.tri(3, 4, 1))
