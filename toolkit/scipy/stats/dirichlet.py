"""The Dirichlet distribution (``jax.scipy.stats.dirichlet``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.scipy.special import gammaln, xlogy
from toolkit.scipy._special_arguments import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def _is_simplex(x: Any) -> Any:
    x_sum = tnp.sum(x, axis=0)
    return tnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1e-6)


def logpdf(x: Any, alpha: Any) -> Any:
    """``log`` of the Dirichlet density with concentrations ``alpha`` (1-D) at the points ``x`` (the components
    on axis 0; one fewer than ``alpha`` leaves the last as ``1 - sum``); ``-inf`` off the open simplex."""
    x, alpha = promote_dtypes_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` "
                         f"or one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = np.asarray(1, x.dtype)
    if x.shape[0] != alpha.shape[0]:
        x = tnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = tnp.sum(gammaln(alpha)) - gammaln(tnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(tnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), normalize_term)
    return tnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x: Any, alpha: Any) -> Any:
    """The Dirichlet density with concentrations ``alpha`` at ``x``: ``exp(logpdf(x, alpha))``."""
    return lax.exp(logpdf(x, alpha))
