"""The right-skewed Gumbel distribution (``jax.scipy.stats.gumbel_r``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.nn import log1mexp
from toolkit.scipy.special import _inexact, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

# JAX's xlogy is a custom-JVP function: with the Python int -1 its JVP multiplies a float0 tangent, so JAX's gradients
# of logpdf w.r.t. scale and of ppf w.r.t. p raise a TypeError. toolkit's give the derivatives.


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density, ``-(z + exp(-z)) - log scale``, ``z = (x - loc) / scale``; NaN unless ``scale > 0``."""
    x, loc, scale = _inexact("gumbel_r.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_pdf = lax.add(xlogy(-1, scale), lax.neg(lax.add(z, lax.exp(lax.neg(z)))))
    return tnp.where(lax.gt(scale, typed_scalar(scale, 0)), log_pdf, np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x] = -exp(-z)``; NaN unless ``scale > 0``."""
    x, loc, scale = _inexact("gumbel_r.logcdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return tnp.where(lax.gt(scale, typed_scalar(scale, 0)), lax.neg(lax.exp(lax.neg(z))), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``, ``exp`` of :func:`logcdf`."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, ``loc - scale * log(-log p)``; NaN outside ``0 < p < 1``."""
    p, loc, scale = _inexact("gumbel_r.ppf", p, loc, scale)
    inside = lax.bitwise_and(lax.gt(p, typed_scalar(p, 0)), lax.lt(p, typed_scalar(p, 1)))
    quantile = lax.sub(loc, lax.mul(scale, lax.log(xlogy(-1, p))))
    return tnp.where(inside, quantile, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x] = 1 - exp(-exp(-z))``; NaN unless ``scale > 0``."""
    x, loc, scale = _inexact("gumbel_r.sf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    survival = lax.sub(typed_scalar(x, 1), lax.exp(lax.neg(lax.exp(neg_z))))
    return tnp.where(lax.gt(scale, typed_scalar(scale, 0)), survival, np.nan)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x] = log1mexp(exp(-z))``, accurate in both tails; NaN unless ``scale > 0``."""
    x, loc, scale = _inexact("gumbel_r.logsf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return tnp.where(lax.gt(scale, typed_scalar(scale, 0)), log1mexp(lax.exp(neg_z)), np.nan)
