"""toolkit.numpy.sorting against numpy (``sort``, ``argsort``, ``lexsort``, ``searchsorted``; NaNs, ties,
``descending``, ``jit``, errors) and ``argsort`` with NaNs and signed zeros against ``jax.numpy``."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _vs_jax import same_values
from _vs_numpy import RNG, X, check


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort(axis):
    check(tnp.sort(X, axis=axis), np.sort(X, axis=axis))
    check(tnp.argsort(X, axis=axis), np.argsort(X, axis=axis, kind="stable"))


def test_sort_nan_last_and_stable_ties():
    x = np.array([3.0, np.nan, 1.0, -0.0, 0.0, 2.0, np.nan, 1.0], np.float32)
    check(tnp.sort(x), np.sort(x))
    check(tnp.argsort(x), np.argsort(x, kind="stable"))
    ties = np.array([2, 1, 2, 1, 0, 1], np.int32)
    check(tnp.argsort(ties), np.argsort(ties, kind="stable"))


def test_sort_descending_stable():
    ties = np.array([2, 1, 2, 1, 0, 1], np.int32)
    check(tnp.sort(ties, descending=True), np.sort(ties)[::-1])
    expected = np.argsort(-ties.astype(np.int64), kind="stable")
    check(tnp.argsort(ties, descending=True), expected)


def test_sort_under_jit_and_integer_dtypes():
    x = RNG.integers(-50, 50, (5, 7)).astype(np.int8)
    check(toolkit.jit(lambda v: tnp.sort(v, axis=0))(x), np.sort(x, axis=0))
    u = RNG.integers(0, 200, (9,)).astype(np.uint8)
    check(tnp.sort(u), np.sort(u))


def test_sort_errors():
    with pytest.raises(ValueError, match="out of bounds for an array of rank 0"):
        tnp.sort(np.float32(1.0))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        tnp.sort(X, axis=2)


def test_lexsort():
    k1 = np.array([1, 0, 1, 0, 1, 0])
    k2 = np.array([5.0, 3.0, 1.0, 4.0, 1.0, 3.0], np.float32)
    check(tnp.lexsort((k2, k1)), np.lexsort((k2, k1)))
    m = RNG.integers(0, 3, (2, 7))
    check(tnp.lexsort(m), np.lexsort(m))
    with pytest.raises(ValueError, match="same shape"):
        tnp.lexsort((k1, k2[:3]))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
    v = np.array([[0, 2, 2.5], [3, 9, np.nan]], np.float32)
    check(tnp.searchsorted(a, v, side), np.searchsorted(a, v, side))
    ints = np.array([1, 3, 3, 7])
    check(tnp.searchsorted(ints, 3, side), np.searchsorted(ints, 3, side))
    check(tnp.searchsorted(np.array([3, 1, 2]), np.array([2]), side, sorter=np.array([1, 2, 0])),
          np.searchsorted(np.array([3, 1, 2]), [2], side, sorter=[1, 2, 0]))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_complex_in_jaxs_order(side, jnp):
    """Complex values sort by real part, then imaginary part, NaNs last: JAX's searchsorted and digitize take
    them (toolkit's refused them: lt has no complex comparison)."""
    a = np.sort(np.array([0, 1 + 1j, -1j, 2.5, np.inf, np.nan, -3, 1e-30j, 7, 1j, 1 - 1j, 1 + 1j], np.complex64))
    v = np.array([[1 + 0j, 1 + 1j, np.nan], [-1j, 0, 7 + 1j]], np.complex64)
    same_values(tnp.searchsorted(a, v, side), jnp.searchsorted(a, v, side))
    same_values(toolkit.jit(tnp.searchsorted, static_argnums=2)(a, v, side), jnp.searchsorted(a, v, side))
    same_values(tnp.digitize(v, a[:-1], right=side == "left"), jnp.digitize(v, a[:-1], right=side == "left"))


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
def test_searchsorted_methods_are_jaxs_algorithms(method, jnp):
    """Each method computes as JAX's does, so even an unsorted ``a`` (with NaN and -0.0) gives JAX's indices,
    eagerly and under jit, for both sides; empty ``a`` too."""
    rng = np.random.default_rng(0)
    queries = np.concatenate([rng.normal(size=7), [np.nan, 0.0, -0.0]]).astype(np.float32).reshape(2, 5)
    for n in (0, 1, 5, 17):
        for ordered in (True, False):
            a = rng.normal(size=n).astype(np.float32)
            a = np.sort(a) if ordered else a
            if n > 3:
                a[1], a[2] = np.nan, -0.0
            for side in ("left", "right"):
                theirs = jnp.searchsorted(a, queries, side=side, method=method)
                same_values(tnp.searchsorted(a, queries, side=side, method=method), theirs)
                same_values(toolkit.jit(lambda x, q: tnp.searchsorted(x, q, side=side, method=method))(a, queries),
                            theirs)


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="side must be"):
        tnp.searchsorted(np.arange(3), 1, side="middle")
    with pytest.raises(ValueError, match="1-D sorted array"):
        tnp.searchsorted(np.zeros((2, 2)), 1)


def test_argsort_matches_jax(jnp):
    v = np.array([3.0, np.nan, -0.0, 0.0, 1.0, np.nan], np.float32)
    same_values(tnp.argsort(v), jnp.argsort(v))
