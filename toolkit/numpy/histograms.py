"""Histograms as ``jax.numpy`` has them: ``histogram_bin_edges``, ``histogram``, ``histogram2d`` and
``histogramdd`` (a static number of bins or explicit edges; counts are scatter-adds, so they trace under
``jit``), and the covariance statistics ``cov`` and ``corrcoef``.

Example::

    counts, edges = tnp.histogram(x, bins=5, range=(0.0, 1.0))
    tnp.corrcoef(tnp.stack([a, b]))        # 2 x 2
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.core.compiled_whole import compiled_whole
from toolkit.numpy import (
    creation, diagonals, index_tricks, reductions, scatter, shapes, signal, sorting, statistics, tensor_contractions,
    ufuncs,
)
from toolkit.numpy._core import asarray, check_arraylike, convert, is_array, promote_inexact
from toolkit.numpy.spaced_values import linspace


def _inexact_dtype(dtype: np.dtype) -> np.dtype:
    return dtypes.to_inexact_dtype(dtype)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:  # noqa: A002
    """The ``bins + 1`` edges of equal bins over ``range`` (default: ``a``'s min and max; an empty range
    widens by 0.5 each way), or ``bins`` itself when it is 1-D, as ``jnp.histogram_bin_edges``. String
    bin rules are not supported (``NotImplementedError``)."""
    del weights  # only string bin rules would use them
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = a if is_array(a) else asarray(a)
    dtype = _inexact_dtype(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype)
    if known_value(bins) is None:
        raise ConcretizationTypeError("the bins argument of histogram_bin_edges must be static (an int)")
    n = operator.index(bins)
    lo_hi = shapes.stack([reductions.min(arr), reductions.max(arr)]) if range is None else asarray(range)
    lo_hi = convert(lo_hi, dtype)
    if tuple(lo_hi.shape) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    empty = ufuncs.equal(statistics.ptp(lo_hi), 0)
    lo = ufuncs.where(empty, ufuncs.subtract(lo_hi[0], np.asarray(0.5, dtype)), lo_hi[0])
    hi = ufuncs.where(empty, ufuncs.add(lo_hi[1], np.asarray(0.5, dtype)), lo_hi[1])
    return linspace(lo, hi, n + 1, dtype=dtype)  # JAX's: its jitted linspace, so its bits


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,  # noqa: A002
              density: bool | None = None) -> tuple[Any, Any]:
    """``(counts, edges)`` of the flattened ``a`` (each bin half-open but the last), optionally summing
    ``weights`` and normalized to a density, as ``jnp.histogram``."""
    if weights is None:
        check_arraylike("histogram", a, bins)
        (a,) = promote_inexact(a)
        a = asarray(a)
        weights = creation.ones_like(a)
    else:
        check_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = (asarray(x) for x in promote_inexact(a, weights))
    edges = histogram_bin_edges(a, bins, range, weights)
    n_edges = edges.shape[0]
    idx = sorting.searchsorted(edges, a, side="right")
    idx = ufuncs.where(ufuncs.equal(a, edges[-1]), n_edges - 1, idx)
    counts = scatter.at_property(creation.zeros((n_edges,), weights.dtype))[idx].add(weights)[1:]
    if density:
        counts = ufuncs.divide(ufuncs.divide(counts, signal.diff(edges)), reductions.sum(counts))
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Sequence[Any] | None = None, weights: Any = None,  # noqa: A002
                density: bool | None = None) -> tuple[Any, list[Any]]:
    """``(counts, edges per dimension)`` of ``N`` points in ``D`` dimensions (``sample`` is ``(N, D)``), with
    ``bins`` and ``range`` per dimension or for all, as ``jnp.histogramdd``."""
    if weights is None:
        check_arraylike("histogramdd", sample)
        (sample,) = promote_inexact(sample)
        sample = asarray(sample)
    else:
        check_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = (asarray(x) for x in promote_inexact(sample, weights))
    N, D = sample.shape
    if range is not None and (len(range) != D or any(r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs or Nones; got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = D * [bins]
    else:
        if len(per_dim) != D:
            raise ValueError("should be a bin for each dimension.")
    indices, all_edges = [], []
    for i in builtins.range(D):
        edges = histogram_bin_edges(sample[:, i], per_dim[i], None if range is None else range[i], weights)
        idx = sorting.searchsorted(edges, sample[:, i], side="right")
        idx = ufuncs.where(ufuncs.equal(sample[:, i], edges[-1]), ufuncs.subtract(idx, 1), idx)
        indices.append(idx)
        all_edges.append(edges)
    nbins = tuple(e.shape[0] + 1 for e in all_edges)
    flat = index_tricks.ravel_multi_index(tuple(indices), nbins, mode="clip")
    hist = shapes.reshape(statistics.bincount(flat, weights, length=math.prod(nbins)), nbins)
    hist = hist[D * (slice(1, -1),)]
    if density:
        hist = convert(hist, sample.dtype)
        hist = ufuncs.divide(hist, reductions.sum(hist))
        for norm in index_tricks.ix_(*[signal.diff(e) for e in all_edges]):
            hist = ufuncs.divide(hist, norm)
    return hist, all_edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, weights: Any = None,  # noqa: A002
                density: bool | None = None) -> tuple[Any, Any, Any]:
    """``(counts, x edges, y edges)`` of the points ``(x[i], y[i])``, as ``jnp.histogram2d``."""
    check_arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [asarray(bins), asarray(bins)]
    sample = shapes.transpose(shapes.stack([asarray(x), asarray(y)]))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


@compiled_whole(static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, dtype: Any = None) -> Any:
    """The covariance matrix of the variables in ``m``'s rows (columns unless ``rowvar``), with ``y``'s
    appended, optional frequency and analytic weights, as ``jnp.cov``."""
    if y is not None:
        check_arraylike("cov", m, y)
        m, y = (asarray(v) for v in promote_inexact(m, y))
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        check_arraylike("cov", m)
        m = asarray(promote_inexact(m)[0])
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.is_inexact(np.dtype(dtype)):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype!r}")
    X = shapes.atleast_2d(m)
    if not rowvar and m.ndim != 1:
        X = shapes.transpose(X)
    if X.shape[0] == 0:
        return creation.zeros((0, 0), dtypes.default_float_dtype())
    if y is not None:
        y2 = shapes.atleast_2d(y)
        if not rowvar and y2.shape[0] != 1:
            y2 = shapes.transpose(y2)
        X = shapes.concatenate([X, y2], axis=0)
    if X.shape[1] == 0:
        return creation.full(() if X.shape[0] == 1 else (X.shape[0], X.shape[0]), np.nan, X.dtype)
    if ddof is None:
        ddof = 1 if not bias else 0
    w = None
    if fweights is not None:
        check_arraylike("cov", fweights)
        fweights = asarray(fweights)
        if fweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.is_integer(fweights.dtype):
            raise TypeError("fweights must be integer.")
        w = ufuncs.absolute(fweights)
    if aweights is not None:
        check_arraylike("cov", aweights)
        aweights = asarray(aweights)
        if aweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = ufuncs.absolute(aweights)
        w = aweights if w is None else ufuncs.multiply(w, aweights)
    if dtype is not None:
        X = convert(X, dtypes.canonicalize_explicit_dtype(dtype, "cov"))
        w = None if w is None else convert(w, X.dtype)
    avg, w_sum = statistics.average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f: Any = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = ufuncs.subtract(w_sum, ddof)
    else:
        f = ufuncs.subtract(w_sum, ufuncs.divide(ufuncs.multiply(ddof, reductions.sum(ufuncs.multiply(w, aweights))),
                                                 w_sum))
    X = ufuncs.subtract(X, avg[:, None])
    X_T = shapes.transpose(X if w is None else ufuncs.multiply(X, w))
    return shapes.squeeze(ufuncs.true_divide(tensor_contractions.dot(X, ufuncs.conj(X_T)), f))


@compiled_whole(static_argnames=("rowvar", "dtype"))
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Any:
    """The Pearson correlation coefficients (``cov`` normalized by the standard deviations, clipped to
    [-1, 1]), as ``jnp.corrcoef``."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.is_inexact(np.dtype(dtype)):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype!r}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ufuncs.divide(c, c)
    d = diagonals.diag(c)
    stddev = convert(ufuncs.sqrt(ufuncs.real(d)), c.dtype)
    c = ufuncs.divide(ufuncs.divide(c, stddev[:, None]), stddev[None, :])
    real = ufuncs.clip(ufuncs.real(c), -1, 1)
    if dtypes.is_complex(c.dtype):
        imag = ufuncs.clip(ufuncs.imag(c), -1, 1)
        return ufuncs.add(convert(real, c.dtype), ufuncs.multiply(convert(imag, c.dtype), np.asarray(1j, c.dtype)))
    return real
