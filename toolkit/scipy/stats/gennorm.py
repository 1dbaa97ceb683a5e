"""The generalized normal distribution (``jax.scipy.stats.gennorm``)."""

from __future__ import annotations

from typing import Any

from toolkit import lax
from toolkit.scipy.special import _inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, beta: Any) -> Any:
    """``log`` of the density ``beta / (2 Gamma(1/beta)) exp(-|x|**beta)`` at ``x``."""
    x, beta = _inexact("gennorm.logpdf", x, beta)
    return lax.log(.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x: Any, beta: Any) -> Any:
    """``P[X <= x] = (1 + sign(x) P(1/beta, |x|**beta)) / 2`` (``P`` the regularized lower incomplete gamma)."""
    x, beta = _inexact("gennorm.cdf", x, beta)
    return .5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x: Any, beta: Any) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, beta))
