"""The normal distribution (``jax.scipy.stats.norm``); ``ppf``/``isf`` wait for ``special.ndtri``."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit.scipy.special import _inexact, log_ndtr, ndtr

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


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
