"""The von Mises distribution (``jax.scipy.stats.vonmises``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Any:
    """``log`` of the density ``exp(kappa cos x) / (2 pi I0(kappa))`` at ``x`` (NaN unless ``kappa > 0``)."""
    x, kappa = _inexact("vonmises.logpdf", x, kappa)
    positive = lax.gt(kappa, typed_scalar(kappa, 0))
    # With i0e(kappa) = exp(-kappa) I0(kappa), the exp(kappa) factor cancels against exp(kappa cos x): no overflow.
    value = kappa * (tnp.cos(x) - 1) - tnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return tnp.where(positive, value, np.nan)


def pdf(x: Any, kappa: Any) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, kappa))
