"""Every rule family against central finite differences (float64 numpy of the float32 result) and, when jax
is importable, against jax.grad / jax.jvp on the same data."""

import numpy as np
import pytest

import toolkit
from toolkit.ad import grad, jvp

from _ad_cases import cases, forward_only_cases

X = (np.random.default_rng(0).standard_normal((5, 6)) * 0.7).astype(np.float32)
ALL = {**cases(toolkit), **forward_only_cases(toolkit)}


def _directional_fd(f, x, v, eps=1e-2):
    # f is evaluated in float32; a large step keeps rounding noise small against the curvature error.
    return (float(f(x + eps * v)) - float(f(x - eps * v))) / (2 * eps)


@pytest.mark.parametrize("name", sorted(ALL))
def test_jvp_matches_finite_differences(name):
    f = toolkit.jit(ALL[name])
    v = np.random.default_rng(1).standard_normal(X.shape).astype(np.float32)
    _, t = toolkit.jit(lambda x, v: jvp(ALL[name], (x,), (v,)))(X, v)
    fd = _directional_fd(f, X, v)
    assert abs(float(t) - fd) <= 2e-2 * max(1.0, abs(fd)), (float(t), fd)


@pytest.mark.parametrize("name", sorted(cases(toolkit)))
def test_grad_agrees_with_jvp(name):
    f = cases(toolkit)[name]
    v = np.random.default_rng(2).standard_normal(X.shape).astype(np.float32)
    g = np.asarray(toolkit.jit(grad(f))(X))
    _, t = jvp(f, (X,), (v,))
    np.testing.assert_allclose(np.sum(g * v), float(t), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name", sorted(cases(toolkit)))
def test_grad_matches_jax(name):
    jax = pytest.importorskip("jax")
    got = np.asarray(toolkit.jit(grad(cases(toolkit)[name]))(X))
    want = np.asarray(jax.grad(cases(jax)[name])(X))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.max(np.abs(want)))


@pytest.mark.parametrize("name", sorted(ALL))
def test_jvp_matches_jax(name):
    jax = pytest.importorskip("jax")
    jax_fun = {**cases(jax), **forward_only_cases(jax)}[name]
    v = np.ones_like(X)
    _, got = jvp(ALL[name], (X,), (v,))
    _, want = jax.jvp(jax_fun, (X,), (v,))
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5, atol=1e-5)
