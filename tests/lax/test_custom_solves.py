"""lax.custom_linear_solve and lax.custom_root: values and implicit gradients against JAX in the same run."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jnp = jax.numpy
jlax = jax.lax

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.1, 0.3, 2.0]], np.float32)
S = A @ A.T  # symmetric positive definite
B = np.array([1.0, 2.0, -1.0], np.float32)


def _linear_loss(L, np_, symmetric=False, iterative=False):
    """sum(x²) for x solving A x = b, with the solve either direct or a fixed-point loop (not differentiable
    through as written: the implicit rule must be used)."""
    def loss(a, b):
        matvec = lambda x: a @ x  # noqa: E731

        def direct(m, y):
            return np_.linalg.solve(a, y)

        def richardson(m, y):
            # x ← x + ω (y - m(x)): converges for these well-conditioned matrices; a while loop
            return L.fori_loop(0, 400, lambda i, x: x + 0.05 * (y - m(x)), np_.zeros_like(y))

        solve = richardson if iterative else direct
        tsolve = (lambda m, y: np_.linalg.solve(a.T, y)) if not symmetric else solve
        x = L.custom_linear_solve(matvec, b, solve, tsolve, symmetric=symmetric)
        return (x ** 2).sum()
    return loss


@pytest.mark.parametrize("symmetric,iterative", [(False, False), (True, False), (True, True)])
def test_linear_solve_values_and_grads(symmetric, iterative):
    a = S if symmetric else A
    ours = toolkit.jit(toolkit.value_and_grad(_linear_loss(lax, tnp, symmetric, iterative), (0, 1)))(a, B)
    theirs = jax.jit(jax.value_and_grad(_linear_loss(jlax, jnp, symmetric, iterative), (0, 1)))(a, B)
    assert_same(ours[0], theirs[0], rtol=1e-4)
    for o, t in zip(ours[1], theirs[1]):
        assert_same(o, t, rtol=1e-3, atol=1e-5)


def test_linear_solve_pytree_has_aux_and_vmap():
    def solve_tree(L, np_):
        def f(a, b):
            matvec = lambda t: {"u": a @ t["u"], "v": 2.0 * t["v"]}  # noqa: E731
            solve = lambda m, t: ({"u": np_.linalg.solve(a, t["u"]), "v": t["v"] / 2.0}, np_.float32(7))  # noqa: E731
            tsolve = lambda m, t: ({"u": np_.linalg.solve(a.T, t["u"]), "v": t["v"] / 2.0}, 0)  # noqa: E731
            x, aux = L.custom_linear_solve(matvec, b, solve, tsolve, has_aux=True)
            return (x["u"] ** 3).sum() + (x["v"] * aux).sum()
        return f
    b = {"u": B, "v": np.array([1.0, -4.0], np.float32)}
    ours = toolkit.jit(toolkit.grad(solve_tree(lax, tnp), (0, 1)))(A, b)
    theirs = jax.grad(solve_tree(jlax, jnp), (0, 1))(A, b)
    assert_same(ours[0], theirs[0], rtol=1e-4, atol=1e-6)
    for k in b:
        assert_same(ours[1][k], theirs[1][k], rtol=1e-4, atol=1e-6)
    bs = np.stack([B, 2 * B, -B])
    vm = toolkit.jit(toolkit.vmap(lambda v: toolkit.grad(_linear_loss(lax, tnp), 1)(A, v)))(bs)
    jvm = jax.vmap(lambda v: jax.grad(_linear_loss(jlax, jnp), 1)(A, v))(bs)
    assert_same(vm, jvm, rtol=1e-4, atol=1e-6)


def test_linear_solve_errors():
    matvec = lambda x: A @ x  # noqa: E731
    solve = lambda m, y: tnp.linalg.solve(A, y)  # noqa: E731
    with pytest.raises(TypeError, match="transpose_solve required"):
        toolkit.grad(lambda b: lax.custom_linear_solve(matvec, b, solve).sum())(B)
    with pytest.raises(TypeError, match="matvec\\(\\) output pytree structure must match"):
        lax.custom_linear_solve(lambda x: x[:2], B, solve)
    with pytest.raises(TypeError, match="solve\\(\\) output pytree structure must match"):
        toolkit.jit(lambda b: lax.custom_linear_solve(matvec, b, lambda m, y: y[:2]))(B)
    with pytest.raises(TypeError, match="matvec must be callable"):
        lax.custom_linear_solve(A, B, solve)
    with pytest.raises(TypeError, match="forward-mode|jvp"):
        toolkit.jvp(lambda b: lax.custom_linear_solve(matvec, b, solve, solve), (B,), (B,))


def _sqrt_newton(L, np_):
    def sqrt(a):
        f = lambda x: x * x - a  # noqa: E731

        def solve(f, x0):
            return L.while_loop(lambda x: np_.abs(f(x)) > 1e-6, lambda x: x - f(x) / (2 * x), x0)

        return L.custom_root(f, np.float32(1.0), solve, lambda g, y: y / g(1.0))
    return sqrt


def test_root_scalar_value_and_grad():
    for a in (np.float32(2.0), np.float32(9.0)):
        assert_same(toolkit.jit(_sqrt_newton(lax, tnp))(a), jax.jit(_sqrt_newton(jlax, jnp))(a), rtol=1e-6)
        assert_same(toolkit.jit(toolkit.grad(_sqrt_newton(lax, tnp)))(a), jax.grad(_sqrt_newton(jlax, jnp))(a),
                    rtol=1e-5)


def test_root_vector_with_jacobian_tangent_solve_and_aux():
    def make(L, np_, jacobian):
        def g(params):
            m, c = params["m"], params["c"]
            f = lambda x: m @ x + 0.1 * x ** 3 - c  # noqa: E731

            def solve(f, x0):
                def body(i, x):
                    return x - np_.linalg.solve(jacobian(f)(x), f(x))
                return L.fori_loop(0, 20, body, x0), np_.float32(20)

            tangent_solve = lambda lin, y: np_.linalg.solve(jacobian(lin)(y), y)  # noqa: E731
            root, iterations = L.custom_root(f, np_.zeros(3, np.float32), solve, tangent_solve, has_aux=True)
            return (root ** 2).sum() + 0.0 * iterations
        return g
    params = {"m": A, "c": B}
    ours = toolkit.jit(toolkit.grad(make(lax, tnp, toolkit.jacfwd)))(params)
    theirs = jax.jit(jax.grad(make(jlax, jnp, jax.jacfwd)))(params)
    for k in params:
        assert_same(ours[k], theirs[k], rtol=1e-3, atol=1e-5)


def test_root_guess_gets_zero_gradient_and_errors():
    def g(x0):
        return lax.custom_root(lambda x: x - 3.0, x0, lambda f, x: x0 * 0 + 3.0, lambda lin, y: y)
    assert float(toolkit.grad(g)(np.float32(1.0))) == 0.0
    assert float(jax.grad(lambda x0: jlax.custom_root(lambda x: x - 3.0, x0, lambda f, x: x0 * 0 + 3.0,
                                                      lambda lin, y: y))(np.float32(1.0))) == 0.0
    with pytest.raises(TypeError, match="f\\(\\) output pytree structure must match"):
        lax.custom_root(lambda x: (x, x), np.float32(1.0), lambda f, x: x, lambda lin, y: y)
    with pytest.raises(TypeError, match="tangent_solve must be callable"):
        lax.custom_root(lambda x: x, np.float32(1.0), lambda f, x: x, None)
    with pytest.raises(TypeError, match="with has_aux=True must return a pair"):
        lax.custom_root(lambda x: x, np.float32(1.0), lambda f, x: x, lambda lin, y: y, has_aux=True)
