"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, xlog1py, xlogy

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``log`` of the mass at ``k``: ``log p`` at ``k - loc == 1``, ``log(1 - p)`` at 0, ``-inf`` outside ``[0, 1]``
    (between 0 and 1 the formula's interpolation, as JAX)."""
    k, p, loc = _inexact("bernoulli.logpmf", k, p, loc)
    zero, one = typed_scalar(k, 0), typed_scalar(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
    return tnp.where(tnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass at ``k``."""
    return tnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    """``P[X <= k]``: 0 below 0, ``1 - p`` on ``[0, 1)``, 1 from 1 on; NaN for NaN arguments or ``p`` outside
    ``[0, 1]``."""
    k, p = _inexact("bernoulli.cdf", k, p)
    zero, one = typed_scalar(k, 0), typed_scalar(k, 1)
    conditions = [
        tnp.isnan(k) | tnp.isnan(p) | (p < zero) | (p > one),
        lax.lt(k, zero),
        tnp.logical_and(lax.ge(k, zero), lax.lt(k, one)),
        lax.ge(k, one),
    ]
    return tnp.select(conditions, [np.nan, zero, one - p, one])


def ppf(q: Any, p: Any) -> Any:
    """The quantile function: 0 where ``q <= 1 - p``, else 1; NaN for NaN arguments or ``q``, ``p`` outside
    ``[0, 1]``."""
    q, p = _inexact("bernoulli.ppf", q, p)
    zero, one = typed_scalar(q, 0), typed_scalar(q, 1)
    invalid = tnp.isnan(q) | tnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return tnp.where(invalid, np.nan, tnp.where(lax.le(q, one - p), zero, one))
