"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.scipy._special_arguments import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def _triangular_solve_lower_transposed(factor: Any, b: Any) -> Any:
    return lax.linalg.triangular_solve(factor, b, lower=True, transpose_a=True)


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """``log`` of the density of ``N(mean, cov)`` at ``x`` (``x`` and ``mean`` vectors on the last axis; ``cov``
    a matrix, or a scalar meaning ``cov * I``), by a Cholesky factor of ``cov``."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * tnp.square(x - mean) / cov
                - 1 / 2 * (tnp.log(2 * np.pi) + tnp.log(cov)))
    n = mean.shape[-1]
    if not np.shape(cov):
        y = x - mean
        return (-1 / 2 * tnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (tnp.log(2 * np.pi) + tnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax.linalg.cholesky(cov)
    # y = L^-1 (x - mean), so y.y is the Mahalanobis distance and log det(cov) is 2 sum(log diag L).
    y = tnp.vectorize(_triangular_solve_lower_transposed, signature="(n,n),(n)->(n)")(factor, x - mean)
    return (-1 / 2 * tnp.einsum("...i,...i->...", y, y) - n / 2 * tnp.log(2 * np.pi)
            - tnp.log(factor.diagonal(axis1=-1, axis2=-2)).sum(-1))


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The density of ``N(mean, cov)`` at ``x``: ``exp(logpdf(x, mean, cov))``."""
    return lax.exp(logpdf(x, mean, cov))
