"""fori_loop with static bounds is a scan (as in JAX), so reverse mode works through it; with traced bounds it
stays a while_loop and reverse mode is a clear error, as JAX's."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.ad import DifferentiationError

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.linspace(0.1, 1.0, 4).astype(np.float32)


def _body(lib):
    return lambda i, v: lib.numpy.sin(v) * X + i * 0.1


@pytest.mark.parametrize("bounds", [(0, 3), (2, 7), (np.int32(1), np.int32(4)), (5, 5)])
def test_grad_through_static_fori_loop_matches_jax(bounds):
    lo, hi = bounds
    f = lambda x: tnp.sum(lax.fori_loop(lo, hi, _body(toolkit), x) ** 2)
    jf = lambda x: jnp.sum(jax.lax.fori_loop(lo, hi, _body(jax), x) ** 2)
    want = jax.grad(jf)(X)
    np.testing.assert_allclose(toolkit.grad(f)(X), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(toolkit.jit(toolkit.grad(f))(X), want, rtol=1e-5, atol=1e-6)


def test_fori_loop_is_a_scan_like_jax():
    f = lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2.0, x)
    text = str(toolkit.make_jaxpr(f)(X))
    assert "scan[" in text and "while[" not in text
    assert "scan[" in str(jax.make_jaxpr(lambda x: jax.lax.fori_loop(0, 3, lambda i, v: v * 2.0, x))(X))
    np.testing.assert_allclose(toolkit.jit(f)(X), X * 8)


def test_fori_loop_pytree_carry_and_closure_gradients():
    w = np.array([0.5, -0.3, 0.2, 0.1], np.float32)

    def make(lib):
        def f(x, w):
            def body(i, c):
                a, b = c
                return lib.numpy.tanh(a * w + b), b * 0.9 + a
            a, b = lib.lax.fori_loop(0, 4, body, (x, x * 0.5))
            return lib.numpy.sum(a * b)
        return f
    got = toolkit.grad(make(toolkit), argnums=(0, 1))(X, w)
    want = jax.grad(make(jax), argnums=(0, 1))(X, w)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_traced_bounds_stay_a_while_loop_and_refuse_reverse_mode():
    f = lambda x, n: tnp.sum(lax.fori_loop(0, n, lambda i, v: tnp.sin(v), x))
    assert "while[" in str(toolkit.make_jaxpr(f)(X, 3))
    _, t = toolkit.jvp(lambda x: f(x, np.int32(3)), (X,), (np.ones_like(X),))
    _, jt = jax.jvp(lambda x: jnp.sum(jax.lax.fori_loop(0, 3, lambda i, v: jnp.sin(v), x)), (X,), (np.ones_like(X),))
    np.testing.assert_allclose(t, jt, rtol=1e-5)
    with pytest.raises(DifferentiationError, match="while_loop"):
        toolkit.jit(toolkit.grad(f))(X, 3)


def test_unroll_needs_static_bounds():
    assert float(lax.fori_loop(0, 4, lambda i, v: v + i, np.float32(0), unroll=2)) == 6.0
    with pytest.raises(ValueError, match="statically known"):
        toolkit.jit(lambda n: lax.fori_loop(0, n, lambda i, v: v + i, 0, unroll=2))(4)
