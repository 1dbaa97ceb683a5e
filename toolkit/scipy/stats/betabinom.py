"""The beta-binomial distribution (``jax.scipy.stats.betabinom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, betaln

__all__ = ["logpmf", "pmf"]


@compiled_whole()
def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``log`` of the mass ``C(n, y) B(y + a, n - y + b) / B(a, b)`` at ``y = floor(k) - loc``: ``-inf`` outside
    the support, NaN for ``n < 0``, ``a <= 0`` or ``b <= 0``."""
    k, n, a, b, loc = _inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = typed_scalar(y, 1), typed_scalar(y, 0)
    log_comb = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one))))
    log_betas = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(log_comb, log_betas)
    log_probs = tnp.where(tnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0., log_probs)
    # JAX's lower bound, floor(k) < 0 rather than y < 0: with loc > 0, the points 0 <= k < loc are not masked.
    outside = tnp.logical_or(tnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)), lax.le(lax.add(y, a), zero))
    log_probs = tnp.where(outside, -np.inf, log_probs)
    bad_parameters = tnp.logical_or(tnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
    return tnp.where(bad_parameters, np.nan, log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """The probability mass at ``k``."""
    return lax.exp(logpmf(k, n, a, b, loc))
