"""toolkit.numpy's histogram_bin_edges, histogram, histogram2d, histogramdd, cov, corrcoef and gradient against
jax.numpy 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check

RNG = np.random.default_rng(0)
X = RNG.standard_normal(50).astype(np.float32)
Y = RNG.standard_normal(50).astype(np.float32)


def test_bin_edges_and_histogram():
    check(lambda m: (m.histogram_bin_edges(X, 5), m.histogram_bin_edges(np.ones(3), 2),
                     m.histogram_bin_edges(np.arange(10), 3), m.histogram_bin_edges(X, np.array([0.0, 1, 2]))),
          tol=1e-6)
    check(lambda m, x, y: (m.histogram(x, 5), m.histogram(x, 4, range=(-1, 1)),
                           m.histogram(x, 5, weights=y, density=True)), X, Y, tol=1e-5, only_jit=True)


def test_histogram_multidimensional():
    check(lambda m, x, y: (m.histogram2d(x, y, bins=4), m.histogram2d(x, y, bins=(3, 5), density=True),
                           m.histogramdd(m.stack([x, y, x * y], 1), bins=3),
                           m.histogramdd(m.stack([x, y], 1), bins=[2, 3], weights=y, range=[(-1, 1), None])),
          X, Y, tol=1e-5, only_jit=True)


def test_histogram_errors():
    check(lambda m: m.histogram(X, "auto"))
    check(lambda m: m.histogram(X, 3, weights=Y[:3]))
    check(lambda m: m.histogram_bin_edges(X, 3, range=(0, 1, 2)))
    check(lambda m: m.histogramdd(np.stack([X, Y], 1), bins=[2, 3, 4]))
    check(lambda m: m.histogramdd(np.stack([X, Y], 1), range=[(0, 1)]))
    check(lambda m: m.histogramdd(np.stack([X, Y], 1), weights=np.ones(3)))
    check(lambda m: m.histogram([1.0, 2.0]))
    with pytest.raises(toolkit.ConcretizationTypeError):
        toolkit.jit(lambda b: tnp.histogram(X, b))(3)


def test_cov_corrcoef():
    rows = np.stack([X, Y, X + Y])
    check(lambda m: (m.cov(rows), m.cov(X, Y), m.cov(X), m.cov(np.arange(6).reshape(2, 3)),
                     m.corrcoef(rows), m.corrcoef(X)), tol=1e-5)
    check(lambda m, r, x: (m.cov(r.T, rowvar=False, bias=True), m.cov(r, ddof=0),
                           m.cov(r, fweights=np.arange(50) % 3, aweights=m.abs(x)), m.corrcoef(r, dtype=np.float32)),
          rows, X, tol=1e-4, only_jit=True)
    check(lambda m: m.corrcoef(np.stack([X + 1j * Y, Y])), tol=1e-4)
    check(lambda m: (m.cov(np.zeros((0, 3))), m.cov(np.zeros((2, 0)))))


@pytest.mark.x64
def test_cov_x64():
    check(lambda m: m.cov(np.stack([X, Y]).astype(np.float64)), tol=1e-12)


def test_cov_errors():
    check(lambda m: m.cov(np.ones((2, 2, 2))))
    check(lambda m: m.cov(X, np.ones((2, 2, 2))))
    check(lambda m: m.cov(X, dtype=np.int32))
    check(lambda m: m.cov(X, fweights=np.ones(50)))
    check(lambda m: m.cov(X, fweights=np.ones(3, np.int32)))
    check(lambda m: m.cov(X, aweights=np.ones((2, 2))))
    check(lambda m: m.corrcoef(X, dtype=np.int32))


def test_gradient():
    two = np.stack([X[:5], Y[:5]])
    check(lambda m: (m.gradient(X[:10]), m.gradient(np.array([1, 4, 9, 16]))), tol=1e-6)
    check(lambda m, t: (m.gradient(t, 2.0), m.gradient(t, axis=1), m.gradient(t, 1.0, 2.0),
                        m.gradient(t[0], np.array([0.0, 1, 3, 4, 7], np.float32))), two, tol=1e-5, only_jit=True)
    assert tnp.gradient(two, axis=()) == []


def test_gradient_errors():
    check(lambda m: m.gradient(np.array([1.0])))
    check(lambda m: m.gradient(X, edge_order=1))
    check(lambda m: m.gradient(X[:5], np.ones(3)))
    check(lambda m: m.gradient(X[:5], np.ones((5, 1))))
    check(lambda m: m.gradient(np.ones((3, 3)), 1.0, 2.0, 3.0))
