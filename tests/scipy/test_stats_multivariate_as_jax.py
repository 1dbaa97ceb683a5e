"""``toolkit.scipy.stats``'s multivariate distributions (``multivariate_normal``, ``dirichlet``), its statistics
(``mode``, ``rankdata``, ``sem``) and ``gaussian_kde`` against ``jax.scipy.stats`` in the same run: values, dtypes
and weak types, out-of-support points and nan, broadcasting, integer and Python-scalar arguments, eagerly and under
``jit``, gradients, JAX's errors; ``gaussian_kde.resample`` bit for bit with the same key."""

from __future__ import annotations

import types

import numpy as np
import pytest

import toolkit
from toolkit.scipy.stats import dirichlet, multivariate_normal
from toolkit.scipy.stats.kde import gaussian_kde
from toolkit.scipy.stats.statistics import mode, rankdata, sem

jax = pytest.importorskip("jax")
jstats = pytest.importorskip("jax.scipy.stats")

# toolkit's modules under jax.scipy.stats's names, so one lambda runs against both.
tstats = types.SimpleNamespace(multivariate_normal=multivariate_normal, dirichlet=dirichlet, mode=mode,
                               rankdata=rankdata, sem=sem, gaussian_kde=gaussian_kde)

RNG = np.random.default_rng(0)
F = np.float32
_A = RNG.normal(size=(3, 3)).astype(F)
COV = (_A @ _A.T + np.eye(3, dtype=F)).astype(F)
MEAN = RNG.normal(size=3).astype(F)
POINTS = np.concatenate([RNG.normal(size=(4, 3)), [[np.nan, 0.0, 1.0], [1e3, -1e3, 0.0]]]).astype(F)
ALPHA = np.array([1.5, 2.0, 0.5], F)
# Points on axis 0: inside the simplex, on its boundary (a zero, a one), off it (negative, sum != 1), nan.
SIMPLEX = np.array([[0.2, 0.5, 0.0, 1.0, -0.1, 0.3, np.nan],
                    [0.3, 0.25, 0.4, 0.0, 0.6, 0.3, 0.5],
                    [0.5, 0.25, 0.6, 0.0, 0.5, 0.3, 0.5]], F)
TIES = np.array([3.0, 1.0, 2.0, 3.0, 1.0, 5.0, 2.0, 3.0], F)
INTS = np.array([[3, 1, 2, 3, 1, 1], [1, 1, 2, 2, 2, 0], [0, 4, 4, 1, 1, 4]], np.int32)
FLOATS = np.array([[3.0, 1.5, 2.0, 3.0, -1.0, 1.5], [0.5, np.nan, 2.0, 2.0, 7.0, 0.0]], F)
DATA = RNG.normal(size=(2, 12)).astype(F)
WEIGHTS = RNG.uniform(0.1, 1.0, size=12).astype(F)
EVAL_AT = np.concatenate([RNG.normal(size=(2, 4)), [[30.0], [-30.0]]], axis=1).astype(F)


def _weak(x):
    return x.aval.weak_type if hasattr(x, "aval") else None


def _close(ours, theirs, rtol=2e-6, atol=1e-6, exact=False):
    if isinstance(theirs, tuple):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _close(o, t, rtol, atol, exact)
        return
    assert _weak(ours) == _weak(theirs), (_weak(ours), _weak(theirs))
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype, ours.shape,
                                                                       theirs.shape)
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def _both(f, **tolerance):
    """``f(stats)`` with toolkit's and JAX's, eagerly, compared."""
    _close(f(tstats), f(jstats), **tolerance)


def _jit_both(f, *args, **tolerance):
    """``jit(f(stats, ...))(*args)`` with toolkit's and JAX's, compared: one program per side for many cases."""
    _close(toolkit.jit(lambda *a: f(tstats, *a))(*args), jax.jit(lambda *a: f(jstats, *a))(*args), **tolerance)


def _grad_both(f, argnums, *args):
    """``jit(grad(sum(f(stats, ...))))`` for toolkit's and JAX's, compared."""
    ours = toolkit.jit(toolkit.grad(lambda *a: f(tstats, *a).sum(), argnums))(*args)
    theirs = jax.jit(jax.grad(lambda *a: f(jstats, *a).sum(), argnums))(*args)
    _close(ours, theirs, rtol=2e-5, atol=1e-5)


MVN_CASES = [
    (POINTS, MEAN, COV),
    (POINTS[:, None, :], MEAN, np.stack([COV, 2 * COV])),  # a batch of covariances, broadcast against x
    (POINTS[0], POINTS[:4], COV),  # broadcast x against a batch of means
    (POINTS, MEAN, F(2.5)),  # a scalar cov: cov * I
    (POINTS[:, 0], F(0.5), F(2.0)),  # a scalar mean: univariate
    (1.0, 0.0, 2.0),  # Python scalars: weakly typed float32
    (np.arange(3), np.zeros(3, np.int32), 2 * np.eye(3, dtype=np.int32)),  # integers promote to float32
    (POINTS[:2], MEAN, -COV),  # not positive definite: nan, as JAX's Cholesky gives
]


def test_multivariate_normal():
    for x, mean, cov in (MVN_CASES[0], MVN_CASES[5]):
        _both(lambda s: (s.multivariate_normal.logpdf(x, mean, cov), s.multivariate_normal.pdf(x, mean, cov)),
              rtol=1e-5)
    _jit_both(lambda s: tuple(f(*case) for case in MVN_CASES for f in (s.multivariate_normal.logpdf,
                                                                        s.multivariate_normal.pdf)), rtol=1e-5)

    def logpdfs(s, x, mean, cov, scalar_cov):
        return s.multivariate_normal.logpdf(x, mean, cov) + s.multivariate_normal.logpdf(x, mean, scalar_cov)
    _grad_both(logpdfs, (0, 1, 2, 3), POINTS[:4], MEAN, COV, F(1.5))


DIRICHLET_CASES = [
    (SIMPLEX, ALPHA),
    (SIMPLEX[:2], ALPHA),  # the last component is 1 - sum
    (SIMPLEX[:, 0], ALPHA),
    (SIMPLEX.reshape(3, 7, 1), ALPHA),
    (np.array([0, 1]), np.array([1, 2])),  # integers
    (np.array([0.5]), np.array([2, 3])),  # float64 x (float32 without x64), int alpha
]


def test_dirichlet():
    _both(lambda s: (s.dirichlet.logpdf(SIMPLEX, ALPHA), s.dirichlet.pdf(SIMPLEX, ALPHA)))
    _jit_both(lambda s: tuple(f(*case) for case in DIRICHLET_CASES for f in (s.dirichlet.logpdf, s.dirichlet.pdf)))

    def logpdf(s, x, alpha):
        return s.dirichlet.logpdf(x, alpha)
    _grad_both(logpdf, (0, 1), SIMPLEX[:, :3], ALPHA)


def test_mode_rankdata_sem():
    # Eagerly (each call one program, as JAX jits them), then many more cases in one jit.
    _both(lambda s: s.mode(INTS), exact=True)
    _both(lambda s: s.mode(np.zeros((0,), F)), exact=True)  # empty: (nan, 0.0), float32 as JAX's
    _both(lambda s: s.rankdata(TIES), exact=True)
    _both(lambda s: s.rankdata(FLOATS, "min", axis=0), exact=True)  # nan anywhere along the axis: all nan
    _both(lambda s: s.sem(FLOATS.astype(np.float64), 1))
    _both(lambda s: s.sem(INTS, None, nan_policy="omit", keepdims=True))

    def under_jit(s, ints, floats, ddof, nans, empty):
        return (s.mode(ints, axis=1), s.mode(floats, axis=-1, keepdims=True), s.mode(ints, axis=None),
                s.mode(ints.astype(bool)), s.mode(nans), s.mode(empty), s.mode(2.5), s.mode(3),
                *(s.rankdata(TIES, method) for method in ("average", "min", "max", "dense", "ordinal")),
                s.rankdata(ints, "min", axis=0), s.rankdata(ints, "average", axis=1), s.rankdata(floats, "dense"),
                s.rankdata(ints, "max"), s.rankdata(ints.astype(bool), "ordinal"), s.rankdata(empty),
                s.rankdata(2.0),
                s.sem(floats, 1, ddof), s.sem(ints, None), s.sem(floats, 0, 0, keepdims=True),
                s.sem(floats, 0, nan_policy="omit"), s.sem(2.0, None), s.sem(floats, 1, 7),  # nan: ddof >= n
                s.sem(np.array([1 + 1j, 2, 3j], np.complex64)))
    _jit_both(under_jit, INTS, FLOATS, 2, np.array([1, np.nan, np.nan, 2], F), np.zeros((0, 2), F), rtol=1e-6)
    _grad_both(lambda s, a: s.sem(a, 1), 0, FLOATS[:, [0, 2, 3, 5]])


def _kde_fields(k):
    return (k.neff, k.dataset, k.weights, k.covariance, k.inv_cov)


BW_METHODS = [None, "silverman", 0.4, lambda kde: 0.5 * kde.neff ** -0.2]


def test_gaussian_kde():
    _both(lambda s: tuple(_kde_fields(s.gaussian_kde(DATA, bw, WEIGHTS)) for bw in BW_METHODS), rtol=1e-5)
    _jit_both(lambda s, data, weights: tuple(_kde_fields(s.gaussian_kde(d, bw, w))
                                             for d, w, bw in ((data, None, None), (data[0], weights, "silverman"),
                                                              (data[0], weights, BW_METHODS[-1]),
                                                              (np.arange(5), None, 0.4),  # integers
                                                              (np.arange(5), np.arange(1, 6), None))),
              DATA, WEIGHTS, rtol=1e-5)

    ours, theirs = gaussian_kde(DATA, None, WEIGHTS), jstats.gaussian_kde(DATA, None, WEIGHTS)
    assert (ours.d, ours.n) == (theirs.d, theirs.n) == (2, 12)
    for name in ("evaluate", "logpdf"):
        _close(getattr(ours, name)(EVAL_AT), getattr(theirs, name)(EVAL_AT), rtol=1e-5)
    _close(ours.resample(toolkit.random.key(7), (2, 2)), theirs.resample(jax.random.key(7), (2, 2)), exact=True)

    one_d, one_d_jax = gaussian_kde(DATA[0]), jstats.gaussian_kde(DATA[0])
    _close(one_d.integrate_box_1d(-0.5, 1.0), one_d_jax.integrate_box_1d(-0.5, 1.0), rtol=1e-5)
    _close(one_d(1.5), one_d_jax(1.5), rtol=1e-5)

    # The estimators pass through jit as pytrees of arrays.
    def methods(k, k1, small, points, cov, key):
        # points[:, 0]: one point of shape (d,); integrate_kde with the smaller data set on either side.
        return (k.evaluate(points), k.logpdf(points.astype(np.int32)), k(points[:, 0]), k.pdf(points[:, :1]),
                k.integrate_gaussian(points[:, 0], cov), k.integrate_kde(small), small.integrate_kde(k),
                k1.integrate_box_1d(0, 1), k1.integrate_box_1d(2.0, -1.0), k1.integrate_box_1d(-np.inf, np.inf),
                k1.pdf(1.5), k.resample(key), k.resample(key, (3,)))
    _close(toolkit.jit(methods)(ours, one_d, gaussian_kde(DATA[:, :5]), EVAL_AT, COV[:2, :2],
                                toolkit.random.PRNGKey(1)),
           jax.jit(methods)(theirs, one_d_jax, jstats.gaussian_kde(DATA[:, :5]), EVAL_AT, COV[:2, :2],
                            jax.random.PRNGKey(1)), rtol=1e-5)
    _close(toolkit.jit(toolkit.grad(lambda p: ours.logpdf(p).sum()))(EVAL_AT[:, :4]),
           jax.jit(jax.grad(lambda p: theirs.logpdf(p).sum()))(EVAL_AT[:, :4]), rtol=2e-5, atol=1e-5)


def test_gaussian_kde_is_a_frozen_pytree():
    kde = gaussian_kde(DATA[0])
    leaves, treedef = toolkit.tree_util.tree_flatten(kde)
    assert len(leaves) == 5 and leaves[1] is kde.dataset
    rebuilt = toolkit.tree_util.tree_unflatten(treedef, leaves)
    assert type(rebuilt) is gaussian_kde and rebuilt.covariance is kde.covariance and rebuilt.n == kde.n
    with pytest.raises(AttributeError):
        kde.dataset = DATA  # frozen, as JAX's dataclass


def _kde_2d(s):
    return s.gaussian_kde(DATA)


ERRORS = [
    (lambda s: s.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(2)), ValueError, "incompatible shapes"),
    (lambda s: s.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.ones(3)), ValueError, "incompatible shapes"),
    (lambda s: s.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2), allow_singular=True),
     NotImplementedError, "allow_singular"),
    (lambda s: s.multivariate_normal.logpdf([0.0, 1.0], np.zeros(2), np.eye(2)), TypeError, "Cannot determine dtype"),
    (lambda s: s.dirichlet.logpdf(np.ones(3) / 3, np.ones((3, 1))), ValueError, "must be one-dimensional"),
    (lambda s: s.dirichlet.logpdf(np.ones(5) / 5, np.ones(3)), ValueError, "or one entry fewer; got x.shape=.5,"),
    (lambda s: s.dirichlet.logpdf(F(0.5), np.ones(3)), IndexError, "out of range"),
    (lambda s: s.mode([1, 2]), TypeError, "mode requires ndarray or scalar arguments"),
    (lambda s: s.mode(np.ones(3), nan_policy="x"), ValueError, "Illegal nan_policy value 'x'"),
    (lambda s: s.mode(np.ones(3), nan_policy="omit"), NotImplementedError, "`nan_policy` of omit"),
    (lambda s: s.mode(np.ones(3), nan_policy="raise"), NotImplementedError, "best JIT compile `mode`"),
    (lambda s: s.mode(np.ones(3), axis=1), ValueError, "axis 1 is out of bounds for array of dimension 1"),
    (lambda s: s.rankdata([1, 2]), TypeError, "rankdata requires ndarray or scalar arguments"),
    (lambda s: s.rankdata(np.ones(3), "foo"), ValueError, "unknown method 'foo'"),
    (lambda s: s.rankdata(np.ones(3), nan_policy="raise"), NotImplementedError, "best JIT compile `rankdata`"),
    (lambda s: s.rankdata(np.ones(3), nan_policy="omit"), NotImplementedError, "`nan_policy` of omit"),
    (lambda s: s.sem([1.0, 2.0]), TypeError, "sem requires ndarray or scalar arguments"),
    (lambda s: s.sem(np.ones(3), nan_policy="raise"), ValueError, "raise is not supported"),
    (lambda s: s.gaussian_kde([1.0, 2.0]), TypeError, "gaussian_kde requires ndarray"),
    (lambda s: s.gaussian_kde(np.ones(3, np.complex64)), NotImplementedError, "does not support complex data"),
    (lambda s: s.gaussian_kde(np.ones(1)), ValueError, "should have multiple elements"),
    (lambda s: s.gaussian_kde(np.arange(4.0), weights=np.ones((2, 2))), ValueError, "should be one-dimensional"),
    (lambda s: s.gaussian_kde(np.arange(4.0), weights=np.ones(3)), ValueError, "should be of length n"),
    (lambda s: s.gaussian_kde(np.arange(4.0), bw_method="foo"), ValueError, "`bw_method` should be 'scott'"),
    (lambda s: _kde_2d(s).evaluate(np.ones((3, 2))), ValueError, "points have dimension 3, dataset has dimension 2"),
    (lambda s: _kde_2d(s).evaluate([1.0, 2.0]), TypeError, "evaluate requires ndarray"),
    (lambda s: _kde_2d(s).logpdf(np.ones(2, np.complex64)), NotImplementedError, "complex coordinates"),
    (lambda s: _kde_2d(s).integrate_gaussian(np.zeros(3), np.eye(2)), ValueError, "mean does not have dimension 2"),
    (lambda s: _kde_2d(s).integrate_gaussian(np.zeros(2), np.eye(3)), ValueError, "covariance does not have dim"),
    (lambda s: _kde_2d(s).integrate_box_1d(0.0, 1.0), ValueError, "only handles 1D pdfs"),
    (lambda s: s.gaussian_kde(np.arange(4.0)).integrate_box_1d(np.zeros(2), 1.0), ValueError, "must be scalars"),
    (lambda s: _kde_2d(s).integrate_kde(s.gaussian_kde(np.arange(4.0))), ValueError, "not the same dimensionality"),
    (lambda s: _kde_2d(s).integrate_box(0.0, 1.0), NotImplementedError, "use `integrate_box_1d`"),
    (lambda s: _kde_2d(s).set_bandwidth("scott"), NotImplementedError, "changing the bandwidth method"),
]


def test_errors_match_jax():
    for f, error, fragment in ERRORS:
        for module in (tstats, jstats):
            with pytest.raises(error, match=fragment):
                f(module)
