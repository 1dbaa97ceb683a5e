"""``toolkit.lax``'s special functions (``toolkit/lax/special_functions.py``) against ``jax.lax`` in the same run:
values on grids with edge cases (zeros, negatives, NaN, infinities), dtypes, JVPs, ``jit`` and ``vmap``."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit import lax

jax = pytest.importorskip("jax")
jlax = pytest.importorskip("jax.lax")

# (a, x) pairs: both branches of igamma (series for x < max(1, a), continued fraction above), a = 0, x = 0,
# the domain errors and NaN/inf.
A = np.array([0.5, 1.0, 2.0, 5.0, 10.0, 0.1, 30.0, 3.0, 0.0, 0.0, -1.0, 2.0, np.nan, 2.0, 1e-3, 50.0], np.float32)
X = np.array([0.3, 1.0, 3.0, 2.0, 12.0, 5.0, 25.0, 0.0, 1.0, 0.0, 1.0, -1.0, 1.0, np.inf, 1e-4, 60.0], np.float32)
UNARY_X = np.concatenate([np.linspace(-30, 30, 25), [0.0, -0.0, 1e-8, 7.99, 8.0, 8.01, np.nan, np.inf, -np.inf]])


def _close(ours, theirs, rtol=1e-5, atol=1e-6):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype, ours.shape)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
def test_incomplete_gamma_family(name):
    _close(getattr(lax, name)(A, X), getattr(jlax, name)(A, X), rtol=2e-5)


@pytest.mark.x64
@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a"])
def test_incomplete_gamma_float64(name):
    a, x = A.astype(np.float64), X.astype(np.float64)
    _close(getattr(lax, name)(a, x), getattr(jlax, name)(a, x), rtol=1e-12, atol=1e-14)


def test_betainc_grid_and_edges():
    a = np.array([0.5, 1.0, 2.0, 5.0, 0.0, 1.0, 2.0, -1.0, 1.0, 3.0, 30.0, np.inf], np.float32)
    b = np.array([0.5, 3.0, 2.0, 1.0, 1.0, 0.0, 2.0, 1.0, 1.0, 3.0, 20.0, 1.0], np.float32)
    x = np.array([0.2, 0.5, 0.9, 0.999, 0.3, 0.3, 0.0, 0.5, 1.5, np.nan, 0.6, 0.5], np.float32)
    _close(lax.betainc(a, b, x), jlax.betainc(a, b, x), rtol=2e-5)


def test_polygamma_and_zeta():
    m = np.array([0.0, 1.0, 2.0, 3.0, 1.5, -1.0, 1.0, 4.0], np.float32)
    x = np.array([0.5, 2.0, 3.5, -1.5, 2.0, 2.0, 0.0, 10.0], np.float32)
    _close(lax.polygamma(m, x), jlax.polygamma(m, x))
    s = np.array([2.0, 3.0, 1.0, 0.5, 4.5, 2.0, np.nan], np.float32)
    q = np.array([1.0, 2.5, 1.0, 1.0, 0.5, -1.5, 1.0], np.float32)
    _close(lax.zeta(s, q), jlax.zeta(s, q))


@pytest.mark.parametrize("name", ["bessel_i0e", "bessel_i1e"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16"])
def test_scaled_bessel(name, dtype):
    x = UNARY_X.astype(dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-2
    _close(getattr(lax, name)(x), getattr(jlax, name)(x), rtol=tol, atol=tol)


@pytest.mark.x64
@pytest.mark.parametrize("name", ["bessel_i0e", "bessel_i1e"])
def test_scaled_bessel_float64(name):
    _close(getattr(lax, name)(UNARY_X), getattr(jlax, name)(UNARY_X), rtol=1e-13, atol=1e-15)


def test_half_precision_is_computed_in_float32():
    a, x = np.array([2.0, 0.5], np.float16), np.array([1.0, 3.0], np.float16)
    _close(lax.igammac(a, x), jlax.igammac(a, x), rtol=1e-3)


def test_scalars_broadcast_and_weak_types():
    # Same shapes as the grids above: the compiled programs are reused.
    _close(lax.igamma(A, 2.0), jlax.igamma(A, 2.0))
    _close(lax.zeta(2.0, X), jlax.zeta(2.0, X))
    assert lax.zeta(2.0, 1.5).weak_type == jlax.zeta(2.0, 1.5).weak_type


def test_bad_operands_are_errors():
    with pytest.raises(TypeError, match="igamma"):
        lax.igamma(np.ones(3, np.int32), np.ones(3, np.int32))
    with pytest.raises(TypeError):
        lax.igamma(np.ones(3, np.float32), np.ones(2, np.float32))
    with pytest.raises(TypeError):
        lax.betainc(np.ones(3, np.float32), np.ones(3, np.float32), np.ones(3, np.float16))
    with pytest.raises(TypeError, match="random_gamma_grad"):
        lax.random_gamma_grad(np.ones(3, np.int32), np.ones(3, np.int32))


POS_A = np.array([0.5, 1.0, 2.0, 5.0, 0.3], np.float32)
POS_X = np.array([0.3, 1.0, 3.0, 2.0, 4.0], np.float32)


def _every_gradient(lax_module):
    """One program holding every JVP rule (one compilation per side instead of one per function)."""
    def total(a, x, m, u):
        return (lax_module.igamma(a, x) + 2 * lax_module.igammac(a, x) + lax_module.bessel_i0e(x - 2)
                + lax_module.bessel_i1e(x - 2) + lax_module.digamma(x) + lax_module.polygamma(m, x)
                + lax_module.betainc(m, m + 1, u))
    return total


def test_gradients():
    m, u = np.full(5, 2.0, np.float32), POS_X / 5
    ours = toolkit.vmap(toolkit.grad(_every_gradient(lax), argnums=(0, 1, 3)))(POS_A, POS_X, m, u)
    theirs = jax.vmap(jax.grad(_every_gradient(jlax), argnums=(0, 1, 3)))(POS_A, POS_X, m, u)
    for o, t in zip(ours, theirs):
        _close(o, t, rtol=1e-4)


def test_bessel_i1e_gradient_near_zero():
    x = np.array([-3.0, -0.5, 0.0, 1e-9, 0.7], np.float32)
    _close(toolkit.vmap(toolkit.grad(lax.bessel_i1e))(x), jax.vmap(jax.grad(jlax.bessel_i1e))(x))


def test_gradients_jax_refuses_are_refused():
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        toolkit.grad(lax.betainc)(1.0, 2.0, 0.3)
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        toolkit.grad(lax.polygamma)(1.0, 2.0)
    with pytest.raises(Exception, match="zeta"):
        toolkit.grad(lax.zeta, argnums=1)(2.0, 2.0)


def test_jit_and_vmap_agree_with_eager():
    a2, x2 = A[:12].reshape(3, 4), X[:12].reshape(3, 4)
    for name in ("igamma", "zeta"):
        fn = getattr(lax, name)
        eager = fn(a2, x2)
        _close(eager, getattr(jlax, name)(a2, x2), rtol=2e-5)
        _close(toolkit.jit(fn)(a2, x2), eager)
        _close(toolkit.vmap(fn, in_axes=(1, 1), out_axes=1)(a2, x2), eager)
    _close(toolkit.vmap(lax.polygamma, in_axes=(None, 0))(np.float32(1), x2), lax.polygamma(np.ones_like(x2), x2))
