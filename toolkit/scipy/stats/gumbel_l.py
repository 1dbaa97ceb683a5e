"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact, xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

# JAX's xlogy and xlog1py are custom-JVP functions: with the Python int -1 their JVP multiplies a float0 tangent, so
# JAX's gradients of logpdf w.r.t. scale and of ppf w.r.t. p raise a TypeError. toolkit's give the derivatives.


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density, ``z - exp(z) - log scale`` with ``z = (x - loc) / scale``; NaN unless ``scale > 0``."""
    x, loc, scale = _inexact("gumbel_l.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_pdf = lax.add(xlogy(-1, scale), lax.sub(z, lax.exp(z)))
    return tnp.where(lax.gt(scale, typed_scalar(scale, 0)), log_pdf, np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X <= x] = log(-expm1(-exp(z)))``; NaN unless ``scale > 0``."""
    x, loc, scale = _inexact("gumbel_l.logcdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_cdf = lax.log(-lax.expm1(lax.neg(lax.exp(z))))
    return tnp.where(lax.gt(scale, typed_scalar(scale, 0)), log_cdf, np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P[X <= x]``, ``exp`` of :func:`logcdf`."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, ``loc + scale * log(-log1p(-p))``; NaN outside ``0 < p < 1``."""
    p, loc, scale = _inexact("gumbel_l.ppf", p, loc, scale)
    inside = lax.bitwise_and(lax.gt(p, typed_scalar(p, 0)), lax.lt(p, typed_scalar(p, 1)))
    quantile = lax.add(loc, lax.mul(scale, lax.log(xlog1py(-1, lax.neg(p)))))
    return tnp.where(inside, quantile, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P[X > x]``, ``exp`` of :func:`logsf`."""
    return tnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P[X > x] = -exp(z)``; NaN unless ``scale > 0``."""
    x, loc, scale = _inexact("gumbel_l.logsf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return tnp.where(lax.gt(scale, typed_scalar(scale, 0)), lax.neg(lax.exp(z)), np.nan)
