"""toolkit.numpy.reductions: cumulative sums and products and ``count_nonzero`` against numpy, the
array-API ``cumulative_sum``/``cumulative_prod`` against ``jax.numpy`` 0.10.2."""

import numpy as np

import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import BOOL, F, H, XI, compare_with_jax
from _vs_numpy import X, check


def test_cumsum_cumprod():
    check(tnp.cumsum(X, axis=1), np.cumsum(X, axis=1), rtol=1e-5, atol=1e-5)
    check(tnp.cumsum(X), np.cumsum(X), rtol=1e-5, atol=1e-5)
    check(tnp.cumprod(X[:2], axis=0), np.cumprod(X[:2], axis=0), rtol=1e-5)
    got = tnp.cumsum(np.array([True, True, False]))
    check(got, [1, 2, 2])
    assert got.dtype == np.int32
    check(tnp.cumsum(np.arange(5, dtype=np.int32), dtype=np.float32), np.arange(5).cumsum().astype(np.float32))


def test_count_nonzero():
    x = np.array([[0, 1, 2], [0, 0, 3]], np.int32)
    assert int(tnp.count_nonzero(x)) == 3
    check(tnp.count_nonzero(x, axis=1), np.count_nonzero(x, axis=1))
    check(tnp.count_nonzero(x, axis=0, keepdims=True), np.count_nonzero(x, axis=0, keepdims=True))


def test_cumulative_sum_and_prod(jnp):
    for name in ("cumulative_sum", "cumulative_prod"):
        compare_with_jax(name, XI[0] % 4, include_initial=True)
        compare_with_jax(name, F, axis=1, include_initial=True, tol=1e-5)
        compare_with_jax(name, BOOL, axis=0)
        compare_with_jax(name, H, axis=-1, dtype=np.float32, tol=1e-2)
        raises_like(lambda n=name: getattr(tnp, n)(F), lambda n=name: getattr(jnp, n)(F))
