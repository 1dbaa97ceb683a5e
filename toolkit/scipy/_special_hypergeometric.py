"""The confluent hypergeometric function ``hyp1f1`` of ``toolkit.scipy.special`` (JAX 0.10.2's algorithm).

Kummer's series below ``|x| = 100`` and the asymptotic series above (arXiv:1407.7786), each summed until
a term is below the dtype's epsilon relative to the sum (at most 250 terms); the parameter derivatives
are the series differentiated term by term, as JAX's ``custom_jvp``. Written per element and vectorized
(``jnp.vectorize``), as JAX's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad.custom_derivatives import custom_jvp
from toolkit.scipy._special_arguments import inexact

__all__ = ["hyp1f1"]


def _sum_series(first_term: Any, ratio: Any, weight: Any, start: Any, x: Any) -> Any:
    """``start + sum_k weight(k) * t_k`` with ``t_1 = first_term`` and ``t_{k+1} = t_k * ratio(k)``."""
    eps = np.finfo(x.dtype).eps

    def body(state):
        total, k, term = state
        return total + term * weight(k), k + 1, term * ratio(k)

    def cond(state):
        total, k, term = state
        return (k < 250) & (tnp.abs(term) / tnp.abs(total) > eps)

    return lax.while_loop(cond, body, (start, np.int32(1), first_term))[0]


def _one(k: Any) -> Any:
    return 1.0


def _series(a: Any, b: Any, x: Any) -> Any:
    return _sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), _one, tnp.ones_like(x), x)


def _asymptotic(a: Any, b: Any, x: Any) -> Any:
    total = _sum_series((b - a) * (1 - a) / x, lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x, _one,
                        tnp.ones_like(x), x)
    # function-level: special imports this module (gamma is defined there)
    from toolkit.scipy.special import gamma
    return gamma(b) / gamma(a) * tnp.exp(x) * x ** (a - b) * total


def _hyp1f1_element(a: Any, b: Any, x: Any) -> Any:
    result = lax.cond(tnp.abs(x) < 100, _series, _asymptotic, a, b, x)
    index = (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3
    return lax.select_n(index, result, tnp.ones_like(x), tnp.exp(x), tnp.full_like(x, np.inf))


def _a_derivative_element(a: Any, b: Any, x: Any) -> Any:
    return _sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1),
                       lambda k: lax.digamma(a + k) - lax.digamma(a), tnp.zeros_like(x), x)


def _b_derivative_element(a: Any, b: Any, x: Any) -> Any:
    return _sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1),
                       lambda k: lax.digamma(b) - lax.digamma(b + k), tnp.zeros_like(x), x)


_hyp1f1_elementwise = tnp.vectorize(_hyp1f1_element)
_a_derivative = tnp.vectorize(_a_derivative_element)
_b_derivative = tnp.vectorize(_b_derivative_element)


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    return _hyp1f1_elementwise(a, b, x)


_hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _a_derivative(a, b, x) * a_dot,
    lambda b_dot, ans, a, b, x: _b_derivative(a, b, x) * b_dot,
    lambda x_dot, ans, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * x_dot,
)


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x**k / k!`` (real
    arguments); 1 where ``a == 0``, ``exp(x)`` where ``a == b``, inf where ``b == 0``. Differentiable in all
    three arguments."""
    a, b, x = inexact("hyp1f1", a, b, x, real=True)
    return _hyp1f1(a, b, x)
