"""The beta distribution (``jax.scipy.stats.beta``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, betainc, betaln, xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the beta density at ``x``: ``-inf`` outside ``[loc, loc + scale]``, NaN unless ``a, b, scale > 0``."""
    x, a, b, loc, scale = _inexact("beta.logpdf", x, a, b, loc, scale)
    one = typed_scalar(x, 1)
    zero = typed_scalar(a, 0)
    shape_term = lax.neg(betaln(a, b))
    y = lax.div(lax.sub(x, loc), scale)
    log_linear_term = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(shape_term, log_linear_term), lax.log(scale))
    outside = tnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    result = tnp.where(outside, -np.inf, log_probs)
    bad_parameters = tnp.logical_or(tnp.logical_or(lax.le(a, zero), lax.le(b, zero)), lax.le(scale, zero))
    return tnp.where(bad_parameters, np.nan, result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density at ``x``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def _clamped_unit(x: Any, loc: Any, scale: Any) -> Any:
    return lax.clamp(typed_scalar(x, 0), lax.div(lax.sub(x, loc), scale), typed_scalar(x, 1))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``: ``betainc(a, b, y)`` with ``y = (x - loc) / scale`` clamped to ``[0, 1]``."""
    x, a, b, loc, scale = _inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, _clamped_unit(x, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x]`` (the ``log`` of :func:`cdf`)."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``: ``betainc(b, a, 1 - y)`` with ``y`` clamped to ``[0, 1]``."""
    x, a, b, loc, scale = _inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - _clamped_unit(x, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x]`` (the ``log`` of :func:`sf`)."""
    return lax.log(sf(x, a, b, loc, scale))
