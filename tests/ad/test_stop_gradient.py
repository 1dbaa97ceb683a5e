"""stop_gradient (toolkit/lax/autodiff.py) against jax.lax.stop_gradient: values, every differentiation, vmap, jit."""

import numpy as np
import pytest

import toolkit

jax = pytest.importorskip("jax")
stop_gradient = toolkit.lax.stop_gradient

X = np.linspace(-1.0, 2.0, 6, dtype=np.float32).reshape(2, 3)


def make(lib, stop):
    def f(x):
        target = stop(lib.numpy.tanh(x) * 3)
        return ((x - target) ** 2).sum() + stop(x).sum() * x.sum()
    return f


def close(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)


def test_identity_on_values_and_pytrees():
    tree = {"a": X, "b": (np.int32(3), np.ones(2, np.float32))}
    close(stop_gradient(tree), tree)
    close(toolkit.jit(stop_gradient)(tree), tree)
    assert "stop_gradient" in str(toolkit.make_jaxpr(stop_gradient)(X))


def test_gradients_match_jax():
    ours, theirs = make(toolkit, stop_gradient), make(jax, jax.lax.stop_gradient)
    close(toolkit.grad(ours)(X), jax.grad(theirs)(X))
    close(toolkit.jit(toolkit.grad(ours))(X), jax.grad(theirs)(X))
    close(toolkit.jvp(ours, (X,), (np.ones_like(X),)), jax.jvp(theirs, (X,), (np.ones_like(X),)))
    close(toolkit.hessian(ours)(X), jax.hessian(theirs)(X))
    close(toolkit.vmap(toolkit.grad(ours))(X[:, None]), jax.vmap(jax.grad(theirs))(X[:, None]))


def test_nested_differentiation_stops_at_every_level():
    def inner(lib, stop):
        return lambda x: lib.grad(lambda y: stop(y * x) * y)(2.0)
    close(toolkit.grad(inner(toolkit, stop_gradient))(3.0), jax.grad(inner(jax, jax.lax.stop_gradient))(3.0))


def test_integer_operands_pass_through():
    out = toolkit.jit(lambda i: stop_gradient(i) + 1)(np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])
