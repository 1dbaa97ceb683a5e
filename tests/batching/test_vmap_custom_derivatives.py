"""vmap of functions with custom derivatives and checkpoints (when toolkit has them), compared with JAX.

``vmap(grad(f))`` uses the custom rule (grad runs first); ``vmap(f)`` batches the primal program.
"""

import numpy as np
import pytest

import toolkit

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.skipif(not all(hasattr(toolkit, n) for n in ("custom_jvp", "custom_vjp", "checkpoint")),
                                reason="toolkit.custom_jvp/custom_vjp/checkpoint not available")

XS = np.array([[1.0, 2.0, 1000.0], [0.3, -1.2, 0.5]], np.float32)


def make_lse(lib):
    @lib.custom_jvp
    def lse(x):
        m = lib.numpy.max(x)
        return m + lib.numpy.log(lib.numpy.sum(lib.numpy.exp(x - m)))

    @lse.defjvp
    def lse_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = lse(x)
        return y, lib.numpy.sum(lib.numpy.exp(x - y) * t)
    return lse


def make_ste(lib):
    @lib.custom_vjp
    def round_ste(x):
        return lib.numpy.round(x)
    round_ste.defvjp(lambda x: (lib.numpy.round(x), None), lambda _, g: (g,))
    return round_ste


def close(a, b, tol=1e-5):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def test_vmap_of_custom_jvp_and_of_its_gradient():
    close(toolkit.vmap(make_lse(toolkit))(XS), jax.vmap(make_lse(jax))(XS))
    close(toolkit.jit(toolkit.vmap(toolkit.grad(make_lse(toolkit))))(XS), jax.vmap(jax.grad(make_lse(jax)))(XS))


def test_vmap_of_straight_through_gradient():
    f_tk = lambda x: toolkit.numpy.sum(make_ste(toolkit)(x) * x)
    f_jx = lambda x: jax.numpy.sum(make_ste(jax)(x) * x)
    close(toolkit.vmap(make_ste(toolkit))(XS * 1.3), jax.vmap(make_ste(jax))(XS * 1.3))
    close(toolkit.vmap(toolkit.grad(f_tk))(XS * 1.3), jax.vmap(jax.grad(f_jx))(XS * 1.3))


def test_vmap_of_checkpoint_and_grad():
    def f(lib):
        return lib.checkpoint(lambda x: lib.numpy.sum(lib.numpy.sin(lib.numpy.sin(x)) * x))
    close(toolkit.vmap(f(toolkit))(XS), jax.vmap(f(jax))(XS))
    close(toolkit.vmap(toolkit.grad(f(toolkit)))(XS), jax.vmap(jax.grad(f(jax)))(XS))
    g_tk = toolkit.grad(lambda x: toolkit.vmap(f(toolkit))(x).sum())(XS)
    close(g_tk, jax.grad(lambda x: jax.vmap(f(jax))(x).sum())(XS))
