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
    for kwargs in (dict(recall_target=1.5), dict(reduction_input_size_override=100)):  # XLA's own errors
        with pytest.raises(jax.errors.JaxRuntimeError) as want:
            jlax.approx_max_k(np.ones(2000, np.float32), 5, aggregate_to_topk=False, **kwargs)
        with pytest.raises(toolkit.errors.JaxRuntimeError) as got:
            lax.approx_max_k(np.ones(2000, np.float32), 5, aggregate_to_topk=False, **kwargs)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.approx_max_k(X, 2, reduction_dimension=2)


@pytest.mark.parametrize("shape, k, kwargs", [
    ((4, 50), 2, {}), ((2, 300), 5, {}), ((2000,), 10, {}), ((4, 3000), 50, dict(recall_target=0.9)),
    ((5000,), 1, {}), ((3, 2048), 8, dict(reduction_input_size_override=8192)),
])
def test_unaggregated_candidates_like_jax(shape, k, kwargs):
    # aggregate_to_topk=False keeps XLA's ApproxTopKReductionOutputSize candidates (on CPU: that many sorted values).
    x = RNG.standard_normal(shape).astype(np.float32)
    for fn in ("approx_max_k", "approx_min_k"):
        theirs = getattr(jlax, fn)(x, k, aggregate_to_topk=False, **kwargs)
        for ours in (getattr(lax, fn)(x, k, aggregate_to_topk=False, **kwargs),
                     toolkit.jit(lambda v: getattr(lax, fn)(v, k, aggregate_to_topk=False, **kwargs))(x)):
            for o, t in zip(ours, theirs):
                assert_same(o, t)
