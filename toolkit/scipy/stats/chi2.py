"""The chi-square distribution with ``df`` degrees of freedom (``jax.scipy.stats.chi2``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, gammainc, gammaincc

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density, ``(df/2 - 1) log y - y/2 - log(2**(df/2) Gamma(df/2) scale)``; ``-inf`` below ``loc``."""
    x, df, loc, scale = _inexact("chi2.logpdf", x, df, loc, scale)
    one = typed_scalar(x, 1)
    two = typed_scalar(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half_df, one), lax.log(y)), lax.div(y, two))
    log_normalizer = lax.neg(lax.add(lax.lgamma(half_df), lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(log_normalizer, lax.log(scale)), kernel)
    return tnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, df, loc, scale))


def _gamma_arguments(x: Any, df: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    # (x - loc) / (2 scale) is clamped at 0, so below loc the regularized gamma functions give cdf 0 and sf 1.
    two = typed_scalar(scale, 2)
    y = lax.clamp(typed_scalar(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, two)), typed_scalar(x, np.inf))
    return lax.div(df, two), y


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x] = gammainc(df/2, (x - loc) / (2 scale))``, 0 below ``loc``."""
    x, df, loc, scale = _inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(*_gamma_arguments(x, df, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x]`` (the ``log`` of :func:`cdf`)."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x] = gammaincc(df/2, (x - loc) / (2 scale))``, 1 below ``loc``."""
    x, df, loc, scale = _inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(*_gamma_arguments(x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x]`` (the ``log`` of :func:`sf`)."""
    return lax.log(sf(x, df, loc, scale))
