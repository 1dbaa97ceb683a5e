"""The truncated normal distribution (``jax.scipy.stats.truncnorm``).

``a`` and ``b`` are the truncation bounds in standard units (``(bound - loc) / scale``), as scipy's. The
probability masses are computed in log space from ``log_ndtr`` in the left tail (scipy's algorithm, as JAX).
As in JAX, every function but :func:`pdf` runs as one compiled program when called eagerly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core.compiled_whole import compiled_whole
from toolkit.scipy.special import _inexact, log_ndtr, logsumexp, ndtr
from toolkit.scipy.stats import norm

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(x: Any, y: Any) -> Any:
    """``log(exp(x) - exp(y))``."""
    return logsumexp(tnp.array([x, y]), b=tnp.array([tnp.ones_like(x), -tnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """``log`` of the standard normal probability of ``[a, b]``."""
    a, b = tnp.broadcast_arrays(tnp.array(a), tnp.array(b))
    # The right tail is inaccurate (ndtr rounds to 1 there), so an interval in it is mirrored into the left tail.
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = tnp.where(case_right, -b, a)
    b_tail = tnp.where(case_right, -a, b)
    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    # An interval around 0 has a mass near 1, where log(ndtr(b) - ndtr(a)) would cancel catastrophically.
    mass_central = tnp.log1p(-ndtr(a) - ndtr(-b))
    return tnp.where(case_central, mass_central, mass_tail)


@compiled_whole()
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density at ``x``: the normal's over its mass in ``[a, b]``, -inf outside, NaN if ``a >= b``."""
    x, a, b, loc, scale = _inexact("truncnorm.logpdf", x, a, b, loc, scale)
    value = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    x_scaled = lax.div(lax.sub(x, loc), scale)
    value = tnp.where((x_scaled < a) | (x_scaled > b), -np.inf, value)
    return tnp.where(a >= b, np.nan, value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


@compiled_whole()
def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x]``: :func:`logcdf` of the mirrored distribution at ``-x``."""
    x, a, b, loc, scale = _inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


@compiled_whole()
def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``."""
    return lax.exp(logsf(x, a, b, loc, scale))


@compiled_whole()
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x]``: 0 above ``b``, ``-inf`` below ``a``, NaN where ``a >= b``."""
    x, a, b, loc, scale = _inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = tnp.broadcast_arrays(x, a, b)
    x = lax.div(lax.sub(x, loc), scale)
    log_mass = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, x) - log_mass
    log_sf = _log_gauss_mass(x, b) - log_mass
    # Near log_cdf = 0 the complement is the accurate one: log1p(-sf) (scipy's threshold, -0.1).
    log_cdf = tnp.select([x >= b, x <= a, log_cdf > -0.1, x > a],
                         [0, -np.inf, tnp.log1p(-tnp.exp(log_sf)), log_cdf])
    return tnp.where(a >= b, np.nan, log_cdf)


@compiled_whole()
def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``."""
    return lax.exp(logcdf(x, a, b, loc, scale))
