"""The gamma distribution (``jax.scipy.stats.gamma``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, gammainc, gammaincc, gammaln, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density of the gamma distribution of shape ``a`` at ``x`` (``-inf`` below ``loc``)."""
    x, a, loc, scale = _inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = typed_scalar(x, 1)
    # Out of support, y = 1 keeps xlogy (and its gradient) finite in the branch the final where discards.
    y = tnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear_term = lax.sub(xlogy(lax.sub(a, one), y), y)
    shape_terms = lax.add(gammaln(a), lax.log(scale))
    return tnp.where(ok, lax.sub(log_linear_term, shape_terms), -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density of the gamma distribution of shape ``a`` at ``x``."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``: ``gammainc(a, (x - loc) / scale)``, the argument clamped at 0."""
    x, a, loc, scale = _inexact("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(typed_scalar(x, 0), lax.div(lax.sub(x, loc), scale), typed_scalar(x, np.inf))
    return gammainc(a, y)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x]`` (the ``log`` of :func:`cdf`)."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``: ``gammaincc(a, (x - loc) / scale)``, 1 below ``loc``."""
    x, a, loc, scale = _inexact("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return tnp.where(lax.lt(y, typed_scalar(y, 0)), 1, gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x]`` (the ``log`` of :func:`sf`)."""
    return lax.log(sf(x, a, loc, scale))
