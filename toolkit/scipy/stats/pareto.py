"""The Pareto distribution with shape ``b`` (``jax.scipy.stats.pareto``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density, ``-log(scale / b) - (b + 1) log((x - loc) / scale)``; ``-inf`` below ``loc + scale``."""
    x, b, loc, scale = _inexact("pareto.logpdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_normalizer = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(log_normalizer, lax.mul(lax.add(b, typed_scalar(x, 1)), lax.log(z))))
    return tnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, log_probs)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x] = 1 - z**-b`` with ``z = (x - loc) / scale``, 0 below ``loc + scale``."""
    x, b, loc, scale = _inexact("pareto.cdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    probs = lax.sub(typed_scalar(x, 1), lax.pow(z, lax.neg(b)))
    return tnp.where(lax.lt(x, lax.add(loc, scale)), typed_scalar(x, 0), probs)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x] = log1p(-z**-b)``, ``-inf`` below ``loc + scale``."""
    x, b, loc, scale = _inexact("pareto.logcdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return tnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, lax.log1p(lax.neg(lax.pow(z, lax.neg(b)))))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x] = -b log z``, 0 below ``loc + scale``."""
    x, b, loc, scale = _inexact("pareto.logsf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return tnp.where(lax.lt(x, lax.add(loc, scale)), typed_scalar(x, 0), lax.neg(lax.mul(b, lax.log(z))))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``, ``exp`` of :func:`logsf`."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, ``loc + scale * (1 - q)**(-1/b)``; NaN for ``q`` outside ``[0, 1]``."""
    q, b, loc, scale = _inexact("pareto.ppf", q, b, loc, scale)
    one = typed_scalar(q, 1)
    quantile = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, quantile)
