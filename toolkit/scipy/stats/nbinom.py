"""The negative binomial distribution (``jax.scipy.stats.nbinom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log`` of the mass ``C(y + n - 1, n - 1) p**n (1 - p)**y`` at ``y = k - loc``, ``-inf`` for ``k < loc``
    (non-integer ``y`` is the gamma-function interpolation, as JAX)."""
    k, n, p, loc = _inexact("nbinom.logpmf", k, n, p, loc)
    one = typed_scalar(k, 1)
    y = lax.sub(k, loc)
    comb_term = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
    log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    log_probs = lax.add(comb_term, log_linear_term)
    return tnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass at ``k``."""
    return lax.exp(logpmf(k, n, p, loc))
