"""reduce_precision, optimization_barrier and rng_uniform (toolkit/lax/compiler_controls.py) against JAX."""

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jlax = jax.lax

X = np.array([1.0001, 3.14159, 7e5, -2.5e-8, 65504.0, 1e-3], np.float32)


@pytest.mark.parametrize("bits", [(5, 10), (8, 7), (4, 3), (8, 23), (2, 0)])
def test_reduce_precision_values(bits):
    assert_same(toolkit.jit(lambda x: lax.reduce_precision(x, *bits))(X), jax.jit(lambda x: jlax.reduce_precision(x, *bits))(X))


@pytest.mark.x64
def test_reduce_precision_float64():
    x = X.astype(np.float64)
    assert_same(lax.reduce_precision(x, 11, 30), jlax.reduce_precision(x, 11, 30))


def test_reduce_precision_lowering_grad_vmap():
    text = toolkit.jit(lambda x: lax.reduce_precision(x, 5, 10)).lower(X).as_text()
    assert "stablehlo.reduce_precision %arg0, format = e5m10 : tensor<6xf32>" in text
    f = lambda x: (lax.reduce_precision(x, 5, 2) * x).sum()  # noqa: E731
    jf = lambda x: (jlax.reduce_precision(x, 5, 2) * x).sum()  # noqa: E731
    assert_same(toolkit.jit(toolkit.grad(f))(X), jax.grad(jf)(X), rtol=1e-6)
    m = X.reshape(2, 3)
    assert_same(toolkit.vmap(lambda r: lax.reduce_precision(r, 4, 3), 1)(m),
                jax.vmap(lambda r: jlax.reduce_precision(r, 4, 3), 1)(m))


def test_reduce_precision_errors():
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype int32"):
        lax.reduce_precision(np.ones(2, np.int32), 5, 10)
    with pytest.raises(TypeError, match="must be Python integers"):
        lax.reduce_precision(X, 5.5, 10)
    with pytest.raises(ValueError, match="exponent_bits must be at least 1"):
        lax.reduce_precision(X, 0, 10)


def test_optimization_barrier_values_tree_and_lowering():
    tree = {"a": X, "b": (np.arange(3, dtype=np.int32),)}
    out = toolkit.jit(lax.optimization_barrier)(tree)
    assert set(out) == {"a", "b"}
    assert_same(out["a"], X)
    assert_same(out["b"][0], tree["b"][0])
    f = lambda x: lax.optimization_barrier(lax.sin(x)) + lax.sin(x)  # noqa: E731
    text = toolkit.jit(f).lower(X).as_text()
    assert text.count("stablehlo.sine") == 2 and "stablehlo.optimization_barrier" in text
    assert lax.optimization_barrier(()) == ()


def test_optimization_barrier_grad_jvp_vmap_like_jax():
    f = lambda x: lax.optimization_barrier((x * 2, x))[0].sum() * 3  # noqa: E731
    jf = lambda x: jlax.optimization_barrier((x * 2, x))[0].sum() * 3  # noqa: E731
    assert_same(toolkit.jit(toolkit.grad(f))(X), jax.grad(jf)(X))
    _, t = toolkit.jvp(lambda x: lax.optimization_barrier(x * x), (X,), (np.ones_like(X),))
    _, jt = jax.jvp(lambda x: jlax.optimization_barrier(x * x), (X,), (np.ones_like(X),))
    assert_same(t, jt)
    grad_text = toolkit.jit(toolkit.grad(f)).lower(X).as_text()
    assert grad_text.count("stablehlo.optimization_barrier") >= 2  # primal, then the cotangents'
    m = X.reshape(2, 3)
    out = toolkit.vmap(lambda r, c: lax.optimization_barrier((r, c)), (0, None))(m, np.float32(2))
    assert_same(out[0], m)
    assert_same(out[1], np.full(2, 2, np.float32))


@pytest.mark.parametrize("bounds", [(np.float32(-2), np.float32(3)), (np.int32(5), np.int32(9))])
def test_rng_uniform_range_dtype_and_lowering(bounds):
    a, b = bounds
    out = toolkit.jit(lambda: lax.rng_uniform(a, b, (1000,)))()
    theirs = jax.jit(lambda: jlax.rng_uniform(a, b, (1000,)))()
    assert out.shape == theirs.shape == (1000,) and out.dtype == theirs.dtype
    values = np.asarray(out)
    assert values.min() >= a and values.max() < b and len(np.unique(values)) > 3
    text = toolkit.jit(lambda: lax.rng_uniform(a, b, (2, 3))).lower().as_text()
    jtext = jax.jit(lambda: jlax.rng_uniform(a, b, (2, 3))).lower().as_text()
    line = [s.strip() for s in text.splitlines() if "stablehlo.rng " in s][0]
    jline = [s.strip() for s in jtext.splitlines() if "stablehlo.rng " in s][0]
    assert line.split("=", 1)[1] == jline.split("=", 1)[1]


def test_rng_uniform_errors():
    with pytest.raises(ValueError, match="identical dtypes"):
        lax.rng_uniform(np.float32(0), np.int32(1), (2,))
    with pytest.raises(ValueError, match="must be scalars"):
        lax.rng_uniform(np.zeros(2, np.float32), np.float32(1), (2,))
    with pytest.raises(Exception, match="rng_uniform"):
        toolkit.grad(lambda a: lax.rng_uniform(a, np.float32(1), (2,)).sum())(np.float32(0))


def test_rng_uniform_vmap_draws_the_batched_shape():
    out = toolkit.vmap(lambda _: lax.rng_uniform(np.float32(0), np.float32(1), (3,)))(np.zeros(4, np.float32))
    assert out.shape == (4, 3)
    with pytest.raises(NotImplementedError, match="batched bounds"):
        toolkit.vmap(lambda a: lax.rng_uniform(a, np.float32(1), (3,)))(np.zeros(4, np.float32))
