"""The exponential distribution (``jax.scipy.stats.expon``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.scipy.special import _inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density at ``x``: ``-(x - loc) / scale - log scale``, ``-inf`` below ``loc``."""
    x, loc, scale = _inexact("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return tnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x] = -expm1(-(x - loc) / scale)``, 0 below ``loc``."""
    x, loc, scale = _inexact("expon.cdf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return tnp.where(lax.lt(x, loc), tnp.zeros_like(neg_z), lax.neg(lax.expm1(neg_z)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x] = log1p(-sf(x))``."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x] = -(x - loc) / scale``, 0 below ``loc``."""
    # JAX names this function "expon.sf" in its argument errors; kept so the messages match.
    x, loc, scale = _inexact("expon.sf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return tnp.where(lax.lt(x, loc), tnp.zeros_like(neg_z), neg_z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``, ``exp`` of :func:`logsf`."""
    return lax.exp(logsf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, ``loc - scale * log1p(-q)``; NaN for ``q`` outside ``[0, 1]``."""
    q, loc, scale = _inexact("expon.ppf", q, loc, scale)
    quantile = lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q))))
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, quantile)
