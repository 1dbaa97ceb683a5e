"""The rest of jax.nn's activations beside JAX's: values, dtypes, weak types, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.nn as tnn

jax = pytest.importorskip("jax")

# Not -3.0: toolkit's relu6 (so hard_sigmoid, hard_silu) lacks JAX's custom JVP at its kinks (0 there).
X = np.array([-2.75, -1.0, -0.5, 0.0, 0.25, 1.0, 2.5], np.float32)
POS = np.array([0.01, 0.5, 0.69, 0.7, 1.0, 5.0, 30.0], np.float32)
NAMES = ["identity", "tanh", "hard_silu", "mish", "squareplus", "sparse_plus", "sparse_sigmoid"]


@pytest.mark.parametrize("name", NAMES)
def test_values_dtypes_and_gradients_match_jax(name):
    tk, jx = getattr(tnn, name), getattr(jax.nn, name)
    # Jitted on both sides: one compilation each instead of one per eager op (the file stays fast).
    got, want = toolkit.jit(tk)(X), jax.jit(jx)(X)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-7)
    g = toolkit.jit(toolkit.grad(lambda x: toolkit.numpy.sum(tk(x))))(X)
    w = jax.jit(jax.grad(lambda x: jax.numpy.sum(jx(x))))(X)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_python_scalars_stay_weak_as_jax():
    for name in NAMES + ["log1mexp"]:
        got, want = toolkit.jit(getattr(tnn, name))(0.5), jax.jit(getattr(jax.nn, name))(0.5)
        assert got.dtype == want.dtype and got.weak_type == want.weak_type, name
        np.testing.assert_allclose(float(got), float(want), rtol=1e-6)


def test_squareplus_b_and_jit():
    got = toolkit.jit(lambda x: tnn.squareplus(x, b=1.5))(X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.nn.squareplus(X, b=1.5)), rtol=1e-6)


def test_log1mexp_values_and_custom_jvp_match_jax():
    np.testing.assert_allclose(np.asarray(tnn.log1mexp(POS)), np.asarray(jax.nn.log1mexp(POS)), rtol=1e-6)
    g = toolkit.jit(toolkit.grad(lambda x: toolkit.numpy.sum(tnn.log1mexp(x))))(POS)
    w = jax.jit(jax.grad(lambda x: jax.numpy.sum(jax.nn.log1mexp(x))))(POS)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)


@pytest.mark.parametrize("kw", [{}, dict(axis=1), dict(axis=0, keepdims=True), dict(axis=(0, 1))])
def test_logmeanexp_matches_jax(kw):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    got = toolkit.jit(lambda a: tnn.logmeanexp(a, **kw))(x)
    want = jax.jit(lambda a: jax.nn.logmeanexp(a, **kw))(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    where = (np.arange(12).reshape(3, 4) % 3) != 0
    got = toolkit.jit(lambda a, w: tnn.logmeanexp(a, where=w, **kw))(x, where)
    want = jax.jit(lambda a, w: jax.nn.logmeanexp(a, where=w, **kw))(x, where)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_lists_are_refused_as_jax():
    for name in ["identity", "hard_silu", "mish", "squareplus", "sparse_plus", "log1mexp", "logmeanexp"]:
        with pytest.raises(TypeError, match=name):
            getattr(tnn, name)([1.0, 2.0])
        with pytest.raises(TypeError):
            getattr(jax.nn, name)([1.0, 2.0])
