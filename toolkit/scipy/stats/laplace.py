"""The Laplace distribution (``jax.scipy.stats.laplace``)."""

from __future__ import annotations

from typing import Any

from toolkit import lax
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density at ``x``: ``-|x - loc| / scale - log(2 scale)``."""
    x, loc, scale = _inexact("laplace.logpdf", x, loc, scale)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(typed_scalar(x, 2), scale))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``: ``exp(z) / 2`` for ``z = (x - loc) / scale <= 0``, else ``1 - exp(-z) / 2``."""
    x, loc, scale = _inexact("laplace.cdf", x, loc, scale)
    half = typed_scalar(x, 0.5)
    z = lax.div(lax.sub(x, loc), scale)
    upper = lax.sub(typed_scalar(x, 1), lax.mul(half, lax.exp(lax.neg(z))))
    return lax.select(lax.le(z, typed_scalar(x, 0)), lax.mul(half, lax.exp(z)), upper)
