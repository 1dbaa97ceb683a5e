"""The Poisson distribution (``jax.scipy.stats.poisson``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax.structural import typed_scalar
from toolkit.numpy._core import check_arraylike, promote_inexact
from toolkit.scipy.special import _inexact, entr, gammaincc, gammaln, xlogy

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``log`` of the mass ``exp(-mu) mu**x / x!`` at ``x = k - loc``, ``-inf`` for ``x < 0`` or non-integer ``k``."""
    k, mu, loc = _inexact("poisson.logpmf", k, mu, loc)
    zero = typed_scalar(k, 0)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return tnp.where(tnp.logical_or(lax.lt(x, zero), lax.ne(tnp.round(k), k)), -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The probability mass at ``k``."""
    return tnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``P[X <= k] = gammaincc(floor(k - loc) + 1, mu)``, 0 below ``loc``."""
    k, mu, loc = _inexact("poisson.cdf", k, mu, loc)
    zero = typed_scalar(k, 0)
    x = lax.sub(k, loc)
    p = gammaincc(tnp.floor(1 + x), mu)
    return tnp.where(lax.lt(x, zero), zero, p)


@compiled_whole()
def entropy(mu: Any, loc: Any = 0) -> Any:
    """The Shannon entropy ``-sum_k p(k) log p(k)`` (``loc`` only broadcasts): summed over ``k < mu + 20`` for
    ``mu < 10``, over ``k < mu + 10 sqrt(mu) + 20`` for ``mu < 100``, Stirling's ``log(2 pi e mu) / 2 - 1 / (12 mu)``
    beyond; 0 at ``mu == 0``."""
    check_arraylike("poisson.entropy", mu, loc)
    mu, loc = (tnp.asarray(v) for v in promote_inexact(mu, loc))
    result_shape = tnp.broadcast_shapes(mu.shape, loc.shape)
    mu_flat = tnp.ravel(mu)
    result = tnp.where(
        mu_flat == 0, tnp.zeros_like(mu_flat),
        tnp.where(mu_flat < 10, _entropy_by_sum(mu_flat, 35, mu_flat + 20),
                  tnp.where(mu_flat < 100, _entropy_by_sum(mu_flat, 250, mu_flat + 10 * tnp.sqrt(mu_flat) + 20),
                            _entropy_large_mu(mu_flat))))
    return tnp.broadcast_to(tnp.reshape(result, mu.shape), result_shape)


def _entropy_by_sum(mu: Any, max_k: int, bound: Any) -> Any:
    """``sum entr(pmf(k, mu))`` over ``k < min(ceil(bound), max_k)``: ``max_k`` is static (the bound of JAX's
    regime) so the sum has one shape for every ``mu``."""
    k = tnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    upper_bounds = tnp.ceil(bound).astype(k.dtype)
    probs = tnp.where(k < upper_bounds[None, :], probs, 0.0)
    return tnp.sum(entr(probs), axis=0)


def _entropy_large_mu(mu: Any) -> Any:
    return 0.5 * tnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)
