"""The Cauchy distribution (``jax.scipy.stats.cauchy``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density at ``x``: ``-log(pi scale) - log1p(z**2)`` with ``z = (x - loc) / scale``."""
    x, loc, scale = _inexact("cauchy.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_normalizer = lax.log(lax.mul(typed_scalar(x, np.pi), scale))
    return lax.neg(lax.add(log_normalizer, lax.log1p(lax.mul(z, z))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x] = 1/2 + arctan((x - loc) / scale) / pi``."""
    x, loc, scale = _inexact("cauchy.cdf", x, loc, scale)
    one_over_pi = lax.div(typed_scalar(x, 1), typed_scalar(x, np.pi))
    return lax.add(typed_scalar(x, 0.5), lax.mul(one_over_pi, tnp.arctan(lax.div(lax.sub(x, loc), scale))))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x]`` (the ``log`` of :func:`cdf`)."""
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``, by symmetry ``cdf(-x, -loc, scale)``."""
    x, loc, scale = _inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x]``, by symmetry ``logcdf(-x, -loc, scale)``."""
    x, loc, scale = _inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`: ``tan(pi/2 - pi q) * scale + loc``."""
    q, loc, scale = _inexact("cauchy.isf", q, loc, scale)
    unscaled = lax.tan(lax.sub(typed_scalar(q, np.pi / 2), lax.mul(typed_scalar(q, np.pi), q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, the inverse of :func:`cdf`: ``tan(pi q - pi/2) * scale + loc``."""
    q, loc, scale = _inexact("cauchy.ppf", q, loc, scale)
    unscaled = lax.tan(lax.sub(lax.mul(typed_scalar(q, np.pi), q), typed_scalar(q, np.pi / 2)))
    return lax.add(lax.mul(unscaled, scale), loc)
