"""Student's t distribution with ``df`` degrees of freedom (``jax.scipy.stats.t``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit.lax.structural import typed_scalar
from toolkit.scipy.special import _inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density, ``lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale**2)/2 - (df+1)/2 log1p(z**2/df)``."""
    x, df, loc, scale = _inexact("t.logpdf", x, df, loc, scale)
    two = typed_scalar(x, 2)
    z = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    half_df_plus_half = lax.add(half_df, typed_scalar(x, 0.5))
    pi_scale_squared = lax.mul(lax.mul(scale, scale), typed_scalar(x, np.pi))
    log_normalizer = lax.sub(lax.add(lax.lgamma(half_df), lax.div(lax.log(lax.mul(pi_scale_squared, df)), two)),
                             lax.lgamma(half_df_plus_half))
    return lax.neg(lax.add(log_normalizer, lax.mul(half_df_plus_half, lax.log1p(lax.div(lax.mul(z, z), df)))))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``."""
    return lax.exp(logpdf(x, df, loc, scale))
