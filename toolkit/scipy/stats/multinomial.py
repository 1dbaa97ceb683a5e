"""The multinomial distribution (``jax.scipy.stats.multinomial``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.numpy._core import check_arraylike, check_rank_promotion, convert, result_dtype
from toolkit.scipy.special import _inexact, gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def _counts(x: Any, n: Any) -> tuple[Any, Any]:
    """``x`` and ``n`` as JAX's ``promote_args_numeric``: their common dtype (bool as int32), the lower rank padded
    with leading unit axes when both are non-scalar."""
    check_arraylike("multinomial.logpmf", x, n)
    dtype, weak = result_dtype(x, n)
    if dtypes.is_bool(dtype):
        dtype = dtypes.int32
    x, n = tnp.asarray(convert(x, dtype, weak)), tnp.asarray(convert(n, dtype, weak))
    if x.ndim and n.ndim and x.ndim != n.ndim:
        check_rank_promotion("multinomial.logpmf", [x.shape, n.shape])
        rank = max(x.ndim, n.ndim)
        x = tnp.reshape(x, (1,) * (rank - x.ndim) + x.shape)
        n = tnp.reshape(n, (1,) * (rank - n.ndim) + n.shape)
    return x, n


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """``log`` of the mass ``n! prod p_i**x_i / x_i!`` of the counts ``x`` (last axis), ``-inf`` unless the counts
    sum to ``n``; ``x`` and ``n`` must be integers (``ValueError`` otherwise, as JAX)."""
    (p,) = _inexact("multinomial.logpmf", p)
    x, n = _counts(x, n)
    if not dtypes.is_integer(x.dtype):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = gammaln(n + 1) + tnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    # As JAX, the mask compares the sum of all of x (every batch row together) with n.
    return tnp.where(tnp.equal(tnp.sum(x), n), logprobs, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """The probability mass of the counts ``x``."""
    return lax.exp(logpmf(x, n, p))
