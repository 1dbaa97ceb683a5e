"""vmap of functions with custom derivatives and checkpoints (when toolkit has them), compared with JAX.

``vmap(grad(f))`` and ``grad(vmap(f))`` both use the custom rule: ``vmap`` keeps the custom-derivative
call, with its primal and its rule batched (a rule that differs from the primal's derivative shows it).
"""

import numpy as np
import pytest
from _custom_derivative_programs import close, make_lse, make_ste

import toolkit

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.skipif(not all(hasattr(toolkit, n) for n in ("custom_jvp", "custom_vjp", "checkpoint")),
                                reason="toolkit.custom_jvp/custom_vjp/checkpoint not available")

XS = np.array([[1.0, 2.0, 1000.0], [0.3, -1.2, 0.5]], np.float32)


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


def make_scaled_jvp(lib, symbolic_zeros=False):
    """round(x) * w whose JVP rule says d/dx = 3 w (not the primal's 0): only the rule gives non-zeros."""
    @lib.custom_jvp
    def f(x, w):
        return lib.numpy.round(x) * w

    def rule(primals, tangents):
        (x, w), (tx, tw) = primals, tangents
        out = f(x, w)
        tangent = 3.0 * tx * w if not _is_symbolic_zero(lib, tx) else lib.numpy.zeros_like(out)
        if not _is_symbolic_zero(lib, tw):
            tangent = tangent + lib.numpy.round(x) * tw
        return out, tangent
    f.defjvp(rule, symbolic_zeros=symbolic_zeros)
    return f


def _is_symbolic_zero(lib, t):
    return type(t).__name__ == "SymbolicZero"


def make_scaled_vjp(lib):
    """round(x) * w with a bwd that says d/dx = 3 w g and d/dw = round(x) g."""
    @lib.custom_vjp
    def f(x, w):
        return lib.numpy.round(x) * w

    def fwd(x, w):
        return f(x, w), (lib.numpy.round(x), w)

    def bwd(res, g):
        rounded, w = res
        return 3.0 * w * g, rounded * g
    f.defvjp(fwd, bwd)
    return f


W = np.array([0.5, -2.0, 1.5], np.float32)


@pytest.mark.parametrize("symbolic_zeros", [False, True])
def test_grad_of_vmap_uses_the_custom_jvp_rule(symbolic_zeros):
    """The straight-through rule survives vmap under grad (it used to differentiate round: zeros)."""
    f_tk, f_jx = make_scaled_jvp(toolkit, symbolic_zeros), make_scaled_jvp(jax, symbolic_zeros)
    for argnums in (0, 1, (0, 1)):
        def loss(lib, f):
            return lambda x, w: lib.numpy.sum(lib.vmap(f, in_axes=(0, None))(x, w) ** 2)
        want = jax.grad(loss(jax, f_jx), argnums=argnums)(XS, W)
        close(toolkit.grad(loss(toolkit, f_tk), argnums=argnums)(XS, W), want)
        close(toolkit.jit(toolkit.grad(loss(toolkit, f_tk), argnums=argnums))(XS, W), want)
    # Both inputs batched, and forward mode through the vmap.
    ws = np.stack([W, W * 2])
    close(toolkit.jvp(toolkit.vmap(f_tk), (XS, ws), (np.ones_like(XS), np.zeros_like(ws))),
          jax.jvp(jax.vmap(f_jx), (XS, ws), (np.ones_like(XS), np.zeros_like(ws))))


def test_grad_of_vmap_uses_the_custom_vjp_rule_and_sums_unbatched_cotangents():
    f_tk, f_jx = make_scaled_vjp(toolkit), make_scaled_vjp(jax)

    def loss(lib, f):
        return lambda x, w: lib.numpy.sum(lib.vmap(f, in_axes=(0, None))(x, w) ** 2)
    want = jax.grad(loss(jax, f_jx), argnums=(0, 1))(XS * 1.3, W)
    close(toolkit.grad(loss(toolkit, f_tk), argnums=(0, 1))(XS * 1.3, W), want)
    close(toolkit.jit(toolkit.grad(loss(toolkit, f_tk), argnums=(0, 1)))(XS * 1.3, W), want)
    # Only w differentiated: x's cotangent is a zero the batched bwd must accept.
    close(toolkit.grad(loss(toolkit, f_tk), argnums=1)(XS * 1.3, W), jax.grad(loss(jax, f_jx), argnums=1)(XS * 1.3, W))


def test_grad_of_vmap_of_custom_rules_closing_over_batched_values():
    """A custom_jvp function that closes over a value batched by an outer vmap."""
    def outer(lib, f):
        def per_row(x, w):
            g = lib.custom_jvp(lambda v: lib.numpy.round(v) * w)
            g.defjvp(lambda p, t: (g(p[0]), 3.0 * t[0] * w))
            return lib.numpy.sum(g(x))
        return lambda x, ws: lib.numpy.sum(lib.vmap(per_row)(x, ws))
    ws = np.stack([W, W * 2])
    close(toolkit.grad(outer(toolkit, None))(XS, ws), jax.grad(outer(jax, None))(XS, ws))


def test_vmap_of_custom_vjp_with_non_array_residual_is_a_clear_error():
    @toolkit.custom_vjp
    def f(x):
        return x * 2
    f.defvjp(lambda x: (x * 2, "not an array"), lambda res, g: (g * 2,))
    with pytest.raises(TypeError, match="residuals fwd returns are batched, so they must be arrays, but one is a str"):
        toolkit.grad(lambda x: toolkit.vmap(f)(x).sum())(XS)
