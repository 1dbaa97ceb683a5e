"""The binomial distribution (``jax.scipy.stats.binom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, gammaln, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log`` of the mass ``C(n, y) p**y (1 - p)**(n - y)`` at ``y = k - loc``, ``-inf`` outside
    ``loc <= k < loc + n + 1`` (non-integer ``k`` inside is the gamma-function interpolation, as JAX)."""
    k, n, p, loc = _inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = typed_scalar(y, 0)
    comb_term = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
    log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb_term, log_linear_term)
    # A certain outcome (y = n = 0, or p at 0 or 1 on the matching y) is exactly log 1, whatever gammaln rounds to.
    certain = tnp.logical_or(tnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), lax.eq(log_linear_term, zero))
    log_probs = tnp.where(certain, 0., log_probs)
    return tnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass at ``k``."""
    return lax.exp(logpmf(k, n, p, loc))
