"""The logistic distribution (``jax.scipy.stats.logistic``)."""

from __future__ import annotations

from typing import Any

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.scipy.special import _inexact, expit, logit

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density at ``x``: ``-2 logaddexp(z/2, -z/2) - log scale`` with ``z = (x - loc) / scale``."""
    x, loc, scale = _inexact("logistic.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -2 * tnp.logaddexp(z / 2, -z / 2) - lax.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x] = expit((x - loc) / scale)``."""
    x, loc, scale = _inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X > x]``."""
    x, loc, scale = _inexact("logistic.sf", x, loc, scale)
    return expit(-((x - loc) / scale))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function at probability ``x`` (JAX's name for it), ``logit(x) * scale + loc``."""
    x, loc, scale = _inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function at probability ``x`` (JAX's name for it), ``-logit(x) * scale + loc``."""
    x, loc, scale = _inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc
