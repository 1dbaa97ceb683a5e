"""The hypergeometric functions ``hyp1f1`` and ``hyp2f1`` of ``toolkit.scipy.special`` (JAX 0.10.2's algorithms).

``hyp1f1``: Kummer's series below ``|x| = 100`` and the asymptotic series above (arXiv:1407.7786).
``hyp2f1``: the Gauss series, the terminating polynomial for a non-positive integer ``a`` or ``b``, the
digamma transformation near ``x = 1`` when ``c - a - b`` is an integer, and the linear transformations
(Abramowitz and Stegun 15.3.3-15.3.6). Series are summed until a term is below the dtype's epsilon
relative to the sum (at most 250 terms); parameter derivatives are the series differentiated term by
term, as JAX's ``custom_jvp``s. Written per element and vectorized (``jnp.vectorize``), as JAX's.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad.custom_derivatives import custom_jvp
from toolkit.scipy._special_arguments import inexact

__all__ = ["hyp1f1", "hyp2f1"]


def _sum_series(first_term: Any, ratio: Any, weight: Any, start: Any, x: Any) -> Any:
    """``start + sum_k weight(k) * t_k`` with ``t_1 = first_term`` and ``t_{k+1} = t_k * ratio(k)``."""
    eps = ml_dtypes.finfo(x.dtype).eps

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
    return _gamma(b) / _gamma(a) * tnp.exp(x) * x ** (a - b) * total


def _gamma(x: Any) -> Any:
    # function-level: toolkit.scipy.special imports this module, and gamma is defined there
    from toolkit.scipy.special import gamma
    return gamma(x)


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


# --- hyp2f1 -------------------------------------------------------------------------------------------------

def _float_loop(lower: Any, upper: Any, body: Any, init: Any) -> Any:
    """JAX's ``fori_loop`` over float bounds: ``body(i, state)`` for ``i = lower, lower + 1, ... < upper``."""
    def step(carry):
        i, state = carry
        return i + 1.0, body(i, state)
    return lax.while_loop(lambda carry: carry[0] < upper, step, (lower, init))[1]


def _hyp2f1_terminal(a: Any, b: Any, c: Any, x: Any) -> Any:
    # The polynomial for a non-positive integer a or b: of the two, the one of larger magnitude (still below
    # |c| if c is a non-positive integer) bounds the sum.
    eps = ml_dtypes.finfo(x.dtype).eps * 50
    ib = tnp.round(b)
    mask = (b < a) & (tnp.abs(b - ib) < eps) & ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = tnp.where(mask, b, a), tnp.where(mask, a, b)
    a = tnp.abs(a)

    def body(i, state):
        total, term = state
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return total + term, term

    return _float_loop(tnp.ones_like(a), a + 1, body, (tnp.ones_like(x), tnp.ones_like(x)))[0]


def _hyp2f1_series(a: Any, b: Any, c: Any, x: Any) -> Any:
    rtol = ml_dtypes.finfo(x.dtype).eps

    def body(state):
        total, k, term = state
        return total + term, k + 1, term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)

    def cond(state):
        total, k, term = state
        return (k < 250) & (tnp.abs(term) > rtol * tnp.abs(total))

    return lax.while_loop(cond, body, (tnp.zeros_like(x), tnp.ones_like(x), tnp.ones_like(x)))[0]


def _hyp2f1_digamma_transform(a: Any, b: Any, c: Any, x: Any) -> Any:
    # Near x = 1 with c - a - b an integer (Abramowitz and Stegun 15.3.10-15.3.12).
    rtol = ml_dtypes.finfo(x.dtype).eps
    zero = tnp.zeros_like(x)
    d = c - a - b
    s = 1 - x
    rd = tnp.round(d)
    e = tnp.where(rd >= 0, d, -d)
    d1 = tnp.where(rd >= 0, d, zero)
    d2 = tnp.where(rd >= 0, zero, d)
    ard = tnp.where(rd >= 0, rd, -rd).astype(np.int32)
    ax = tnp.log(s)
    one = tnp.ones_like(x)
    y = lax.digamma(one) + lax.digamma(1.0 + e) - lax.digamma(a + d1) - lax.digamma(b + d1) - ax
    y = y / _gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / _gamma(e + 2.0)

    def cond(state):
        q, t, y = state[6], state[9], state[10]
        return (t < 250) & (tnp.abs(q) >= rtol * tnp.abs(y))

    def body(state):
        a, ax, b, d1, e, p, q, r, s, t, y = state
        r = lax.digamma(1.0 + t) + lax.digamma(1.0 + t + e) - lax.digamma(a + t + d1) - lax.digamma(b + t + d1) - ax
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return a, ax, b, d1, e, p, q, r, s, t + 1.0, y

    state = lax.while_loop(cond, body, (a, ax, b, d1, e, p, y, zero, s, one, y))
    y = state[10]

    def finite_sum(i, state):
        p, t, y1 = state
        r = 1.0 - e + t
        p = p * (s * (a + t + d2) * (b + t + d2) / r)
        t = t + 1.0
        p = p / t
        return p, t, y1 + p

    y1 = lax.fori_loop(1, ard, finite_sum, (one, zero, one))[2]
    gc = _gamma(c)
    y1 = y1 * (_gamma(e) * gc / (_gamma(a + d1) * _gamma(b + d1)))
    y_scaled = y * (gc / (_gamma(a + d2) * _gamma(b + d2)))
    y_scaled = tnp.where((ard & 1) != 0, -y_scaled, y_scaled)
    q = s ** rd
    combined = tnp.where(rd > 0, y_scaled * q + y1, y_scaled + y1 * q)
    return tnp.where(rd == 0, y * gc / (_gamma(a) * _gamma(b)), combined)


def _hyp2f1_terminal_or_series(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = ml_dtypes.finfo(x.dtype).eps * 50
    d = c - a - b
    neg_int_a = (a <= 0) & (tnp.abs(a - tnp.round(a)) < eps)
    neg_int_b = (b <= 0) & (tnp.abs(b - tnp.round(b)) < eps)
    neg_int = neg_int_a | neg_int_b
    index = tnp.where((x > 0.9) & ~neg_int, tnp.where(tnp.abs(d - tnp.round(d)) >= eps, 0, 1),
                      tnp.where(neg_int, 2, 0))
    return lax.select_n(index, _hyp2f1_series(a, b, c, x), _hyp2f1_digamma_transform(a, b, c, x),
                        _hyp2f1_terminal(a, b, c, x))


def _hyp2f1_element(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = ml_dtypes.finfo(x.dtype).eps * 50
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    near_int_d = ~((tnp.abs(d - tnp.round(d)) >= eps) & (s < 0))
    index = tnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0,
                      tnp.where((c == 0) | ((c < 0) & (c % 1 == 0)), 1,
                      tnp.where((d <= -1) & near_int_d, 2,
                      tnp.where((d <= 0) & (x == 1), 1,
                      tnp.where((x < 1) & (b == c), 3,
                      tnp.where((x < 1) & (a == c), 4,
                      tnp.where(x > 1, 1,
                      tnp.where(x == 1, 5, 6))))))))
    return lax.select_n(index, tnp.ones_like(x), tnp.full_like(x, np.inf),
                        s ** d * _hyp2f1_terminal_or_series(ca, cb, c, x), s ** (-a), s ** (-b),
                        _gamma(c) * _gamma(d) / (_gamma(ca) * _gamma(cb)), _hyp2f1_terminal_or_series(a, b, c, x))


def _hyp2f1_parameter_derivative(weight_of: Any) -> Any:
    def element(a: Any, b: Any, c: Any, x: Any) -> Any:
        return _sum_series(a * b / c * x, lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x,
                           weight_of(a, b, c), tnp.zeros_like(x), x)
    return tnp.vectorize(element)


_hyp2f1_elementwise = tnp.vectorize(_hyp2f1_element)
_hyp2f1_da = _hyp2f1_parameter_derivative(lambda a, b, c: lambda k: lax.digamma(a + k) - lax.digamma(a))
_hyp2f1_db = _hyp2f1_parameter_derivative(lambda a, b, c: lambda k: lax.digamma(b + k) - lax.digamma(b))
_hyp2f1_dc = _hyp2f1_parameter_derivative(lambda a, b, c: lambda k: lax.digamma(c) - lax.digamma(c + k))


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_elementwise(a, b, c, x)


_hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _hyp2f1_da(a, b, c, x) * a_dot,
    lambda b_dot, ans, a, b, c, x: _hyp2f1_db(a, b, c, x) * b_dot,
    lambda c_dot, ans, a, b, c, x: _hyp2f1_dc(a, b, c, x) * c_dot,
    lambda x_dot, ans, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * x_dot,
)


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss' hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x**k / k!`` for ``x <= 1``
    (inf for ``x > 1``, and at the poles ``c = 0, -1, ...``); differentiable in all four arguments."""
    a, b, c, x = inexact("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)
