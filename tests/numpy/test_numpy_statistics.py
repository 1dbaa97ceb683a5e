"""toolkit.numpy.statistics against ``jax.numpy`` 0.10.2: quantiles, percentiles, medians, ``average``,
``ptp``, ``bincount``, ``digitize``, with JAX's errors."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import F, H, S, S_NAN, U, XI, assert_like_jax, compare_with_jax, jax_tol


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(name, method, jnp):
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0], np.float32)
    # all-NaN and partly NaN slices along every reduced axis set below
    compare_with_jax(name, S_NAN, q, axis=1, method=method, keepdims=True, tol=1e-6)
    compare_with_jax(name, S_NAN, 0.3, axis=(0, 2), method=method, tol=1e-6)
    compare_with_jax(name, S, q, axis=None, method=method, tol=1e-6)


def test_percentile_median_and_dtypes(jnp):
    for x in (S_NAN, XI, H):
        compare_with_jax("percentile", x, np.array([10, 50, 90]), axis=0, tol=jax_tol(x))
        compare_with_jax("nanpercentile", x, 25.0, axis=-1, tol=jax_tol(x))
        compare_with_jax("median", x, axis=0, tol=jax_tol(x))
        compare_with_jax("nanmedian", x, axis=None, keepdims=True, tol=jax_tol(x))
    raises_like(lambda: tnp.quantile(S, 0.5, method="foo"), lambda: jnp.quantile(S, 0.5, method="foo"))
    raises_like(lambda: tnp.quantile(S, np.ones((2, 2)) / 2), lambda: jnp.quantile(S, np.ones((2, 2)) / 2))
    f = toolkit.jit(lambda x: tnp.nanquantile(x, tnp.asarray([0.1, 0.9]), axis=1))
    assert_like_jax(f(S_NAN), jnp.nanquantile(S_NAN, jnp.asarray([0.1, 0.9]), axis=1), tol=1e-6)


@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
def test_inverted_cdf_with_and_without_weights(name, jnp):
    # JAX 0.10's 'inverted_cdf', the only method taking weights: negative and NaN weights and NaN values weigh
    # nothing, and make the slice NaN as JAX's do; weights shaped as the array or as its reduced axes.
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 7, 5)).astype(np.float32)
    a[0, 2, 1] = np.nan
    w = rng.uniform(0, 2, a.shape).astype(np.float32)
    w[1, 3, 2] = -1.0
    scale = 100 if "percentile" in name else 1
    q = np.array([0.0, 0.25, 0.5, 1.0], np.float32) * scale
    cases = [dict(axis=None), dict(axis=1, keepdims=True), dict(axis=(0, 2)), dict(axis=None, weights=w),
             dict(axis=-1, weights=w, keepdims=True), dict(axis=1, weights=w[0, :, 0]),
             dict(axis=(0, 2), weights=w[:, 0, :])]
    for kwargs in cases:
        for qs in (q, 0.3 * scale):
            ours = getattr(tnp, name)(a, qs, method="inverted_cdf", **kwargs)
            theirs = getattr(jnp, name)(a, qs, method="inverted_cdf", **kwargs)
            assert_like_jax(ours, theirs, tol=0)
    jitted = toolkit.jit(lambda x, v: getattr(tnp, name)(x, q, axis=0, method="inverted_cdf", weights=v))
    assert_like_jax(jitted(a, w), getattr(jnp, name)(a, q, axis=0, method="inverted_cdf", weights=w), tol=0)
    for kwargs in [dict(method="linear", weights=w), dict(method="inverted_cdf", weights=w.astype(np.complex64)),
                   dict(method="inverted_cdf", weights=w[0]), dict(axis=1, method="inverted_cdf", weights=w[0])]:
        raises_like(lambda: getattr(tnp, name)(a, q, **kwargs), lambda: getattr(jnp, name)(a, q, **kwargs))


@pytest.mark.parametrize("case", [
    dict(), dict(axis=1), dict(axis=0, keepdims=True), dict(weights=np.abs(F) + 0.1),
    dict(axis=1, weights=np.arange(1, 6, dtype=np.float32)), dict(axis=0, weights=np.arange(1, 5), returned=True),
    dict(axis=None, returned=True), dict(axis=(0, 1), returned=True),
])
def test_average(case, jnp):
    for x in (F, XI):
        compare_with_jax("average", x, tol=1e-5, **case)


def test_average_errors_ptp_bincount_digitize(jnp):
    raises_like(lambda: tnp.average(F, weights=np.ones(5)), lambda: jnp.average(F, weights=np.ones(5)))
    raises_like(lambda: tnp.average(F, axis=0, weights=np.ones(5)), lambda: jnp.average(F, axis=0, weights=np.ones(5)))
    for x in (F, XI, U):
        compare_with_jax("ptp", x)
        compare_with_jax("ptp", x, axis=1, keepdims=True)
    labels = np.array([0, 3, 3, 1, 7, -2, 3], np.int32)
    compare_with_jax("bincount", labels, length=5)
    compare_with_jax("bincount", labels, length=9, weights=np.linspace(0, 1, 7).astype(np.float32), tol=1e-6)
    compare_with_jax("bincount", np.abs(labels), minlength=10)
    compare_with_jax("bincount", np.array([True, False, True]), length=3)
    assert_like_jax(toolkit.jit(lambda v: tnp.bincount(v, length=8))(labels), jnp.bincount(labels, length=8))
    raises_like(lambda: tnp.bincount(F[0], length=3), lambda: jnp.bincount(F[0], length=3))
    bins = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], np.float32)
    for b in (bins, bins[::-1]):
        for right in (False, True):
            compare_with_jax("digitize", F, b, right=right)
            compare_with_jax("digitize", np.array([-0.5, 0.0, 3.0, 10.0], np.float32), b, right=right)
