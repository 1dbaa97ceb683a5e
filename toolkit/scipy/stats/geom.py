"""The geometric distribution (``jax.scipy.stats.geom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, xlog1py

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``log`` of the mass ``(1 - p)**(x - 1) p`` at ``x = k - loc``, ``-inf`` for ``x <= 0`` (non-integer ``x`` is
    not masked, as JAX)."""
    k, p, loc = _inexact("geom.logpmf", k, p, loc)
    zero, one = typed_scalar(k, 0), typed_scalar(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, one), -p) + lax.log(p)
    return tnp.where(lax.le(x, zero), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass at ``k``."""
    return tnp.exp(logpmf(k, p, loc))
