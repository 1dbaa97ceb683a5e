"""The wrapped Cauchy distribution (``jax.scipy.stats.wrapcauchy``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Any:
    """``log (1 - c**2) / (2 pi (1 + c**2 - 2c cos x))`` on ``[0, 2 pi]``, ``-inf`` off it; NaN unless ``0 < c < 1``."""
    x, c = _inexact("wrapcauchy.logpdf", x, c)
    valid_c = lax.gt(c, typed_scalar(c, 0)) & lax.lt(c, typed_scalar(c, 1))
    in_support = lax.ge(x, typed_scalar(x, 0)) & lax.le(x, typed_scalar(x, 2 * np.pi))
    value = tnp.log(1 - c * c) - tnp.log(2 * np.pi) - tnp.log(1 + c * c - 2 * c * tnp.cos(x))
    return tnp.where(valid_c, tnp.where(in_support, value, -np.inf), np.nan)


def pdf(x: Any, c: Any) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, c))
