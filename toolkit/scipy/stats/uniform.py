"""The continuous uniform distribution on ``[loc, loc + scale]`` (``jax.scipy.stats.uniform``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.scipy.special import _inexact

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density at ``x``: ``-log scale`` on ``[loc, loc + scale]``, ``-inf`` outside."""
    x, loc, scale = _inexact("uniform.logpdf", x, loc, scale)
    outside = tnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    return tnp.where(outside, -np.inf, lax.neg(lax.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``: 0 below ``loc``, 1 above ``loc + scale``, ``(x - loc) / scale`` between (0 at NaN, as JAX)."""
    x, loc, scale = _inexact("uniform.cdf", x, loc, scale)
    upper = lax.add(loc, scale)
    conditions = [lax.lt(x, loc), lax.gt(x, upper), lax.ge(x, loc) & lax.le(x, upper)]
    values = [tnp.array(0, x.dtype), tnp.array(1, x.dtype), lax.div(lax.sub(x, loc), scale)]
    return tnp.select(conditions, values)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, ``loc + scale * q``; NaN for ``q`` outside ``[0, 1]``."""
    q, loc, scale = _inexact("uniform.ppf", q, loc, scale)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, lax.add(loc, lax.mul(scale, q)))
