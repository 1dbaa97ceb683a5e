"""The normal distribution (``jax.scipy.stats.norm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.scipy.special import _inexact, log_ndtr, ndtr, ndtri

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density of ``N(loc, scale**2)`` at ``x``."""
    x, loc, scale = _inexact("norm.logpdf", x, loc, scale)
    scale_squared = scale * scale
    log_normalizer = lax.log(np.asarray(2 * np.pi, x.dtype) * scale_squared)
    quadratic = (x - loc) * (x - loc) / scale_squared
    return (log_normalizer + quadratic) / np.asarray(-2, x.dtype)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density of ``N(loc, scale**2)`` at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``."""
    x, loc, scale = _inexact("norm.cdf", x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x]``, accurate in the tails."""
    x, loc, scale = _inexact("norm.logcdf", x, loc, scale)
    return log_ndtr((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``."""
    x, loc, scale = _inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x]``."""
    x, loc, scale = _inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, the inverse of :func:`cdf`: ``ndtri(q) * scale + loc`` in the default float dtype
    (``q`` must be float32 or float64, as ``special.ndtri``)."""
    return tnp.asarray(ndtri(q) * scale + loc, float)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`: ``ppf(1 - q, loc, scale)``."""
    q = tnp.asarray(q)
    return ppf(np.asarray(1, q.dtype) - q, loc, scale)
