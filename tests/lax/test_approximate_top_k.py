"""lax.approx_max_k / approx_min_k (toolkit/lax/approximate_top_k.py) against JAX in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 50)).astype(np.float32)


@pytest.mark.parametrize("fn", ["approx_max_k", "approx_min_k"])
@pytest.mark.parametrize("dim", [-1, 0])
def test_values_indices_and_lowering_like_jax(fn, dim):
    k = 3
    ours = toolkit.jit(lambda x: getattr(lax, fn)(x, k, reduction_dimension=dim))
    theirs = jax.jit(lambda x: getattr(jlax, fn)(x, k, reduction_dimension=dim))
    for o, t in zip(ours(X), theirs(X)):
        assert_same(o, t)
    line = lambda text: [s.strip() for s in text.splitlines() if "ApproxTopK" in s or "comparator" in s]  # noqa: E731
    assert line(ours.lower(X).as_text()) == line(theirs.lower(X).as_text())


def test_grad_and_vmap_like_jax():
    f = lambda L: lambda x: (L.approx_max_k(x, 4)[0] ** 2).sum()  # noqa: E731
    assert_same(toolkit.jit(toolkit.grad(f(lax)))(X), jax.grad(f(jlax))(X))
    x3 = RNG.standard_normal((2, 4, 9)).astype(np.float32)
    ours = toolkit.vmap(lambda x: lax.approx_min_k(x, 2, reduction_dimension=0), in_axes=1)(x3)
    theirs = jax.vmap(lambda x: jlax.approx_min_k(x, 2, reduction_dimension=0), in_axes=1)(x3)
    for o, t in zip(ours, theirs):
        assert_same(o, t)


def test_errors_like_jax():
    for bad, exc, message in ((lambda L: L.approx_max_k(X, 0), ValueError, "k must be positive"),
                              (lambda L: L.approx_max_k(X, 60), ValueError, "k must be smaller"),
                              (lambda L: L.approx_max_k(X.astype(np.int32), 2), ValueError,
                               "operand must be a floating type")):
        with pytest.raises(exc, match=message):
            bad(jlax)
        with pytest.raises(exc, match=message):
            bad(lax)
    with pytest.raises(NotImplementedError, match="aggregate_to_topk=False"):
        lax.approx_max_k(X, 2, aggregate_to_topk=False)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.approx_max_k(X, 2, reduction_dimension=2)
