"""The algorithms behind ``toolkit.lax.special_functions``' expanded primitives, as ``toolkit.lax`` programs.

JAX 0.10.2 lowers ``igamma``, ``igammac``, ``igamma_grad_a``, ``regularized_incomplete_beta`` and
``bessel_i0e`` on CPU by tracing a Python function of ``jax.lax`` ops (``mlir.lower_fun``): XLA's
``math.cc`` algorithms ported op for op — a power series and Legendre's continued fraction for the
incomplete gamma function, the Lentz-Thompson-Barnett evaluation of the incomplete beta's continued
fraction (DLMF 8.17.22), Cephes' Chebyshev expansions of ``i0e``. These are the same algorithms, the same
constants and iteration limits, written with ``toolkit.lax``: the lowering rules trace them
(``toolkit/lowering/rules/special_functions.py``), so toolkit's StableHLO has JAX's ops.

Every function takes operands of one shape and one float dtype (float16 and bfloat16 are computed in
float32 and converted back, as JAX's ``_up_and_broadcast``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from toolkit.core.avals import aval_of
from toolkit.lax import elementwise as ew
from toolkit.lax.control_flow import while_loop
from toolkit.lax.reductions import reduce_or
from toolkit.lax.structural import broadcast_in_dim, full_like

__all__ = ["bessel_i0e_expansion", "igamma_expansion", "igamma_grad_a_expansion", "igammac_expansion",
           "random_gamma_grad_expansion", "regularized_incomplete_beta_expansion", "upcast_half"]


def upcast_half(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(*args, dtype=...)`` run in float32 for float16/bfloat16 operands, the result converted back."""
    def run(*args: Any) -> Any:
        dtype = np.dtype(aval_of(args[0]).dtype)
        if dtype.itemsize < 4:
            out = fn(*(ew.convert_element_type(a, np.float32) for a in args), dtype=np.dtype(np.float32))
            return ew.convert_element_type(out, dtype)
        return fn(*args, dtype=dtype)
    run.__name__ = fn.__name__
    return run


def _full(x: Any, value: Any) -> Any:
    return full_like(x, value, dtype=aval_of(x).dtype)


def _any(predicates: Any) -> Any:
    return reduce_or(predicates, tuple(range(len(aval_of(predicates).shape))))


def _or(*predicates: Any) -> Any:
    out = predicates[0]
    for p in predicates[1:]:
        out = ew.bitwise_or(out, p)
    return out


def _isnan(x: Any) -> Any:
    return ew.ne(x, x)


def _scalar(value: float, dtype: np.dtype) -> Any:
    return np.asarray(value, dtype)


# --- incomplete beta -------------------------------------------------------------------------------------

def _lentz_thompson_barnett(*, num_iterations: int, small: Any, threshold: Any, numerator: Callable[..., Any],
                            denominator: Callable[..., Any], inputs: list[Any]) -> Any:
    """A continued fraction by the modified Lentz method (XLA's LentzThompsonBarnettAlgorithm)."""
    def cond(values):
        iteration, unconverged = values[0], values[1]
        return ew.bitwise_and(iteration < num_iterations, unconverged)

    def body(values):
        iteration, _, c, d, h = values
        partial_numerator = numerator(iteration, *inputs)
        partial_denominator = denominator(iteration, *inputs)
        c = partial_denominator + partial_numerator / c
        small_constant = _full(c, small)
        c = ew.select(ew.abs(c) < small_constant, small_constant, c)
        d = partial_denominator + partial_numerator * d
        d = ew.select(ew.abs(d) < small_constant, small_constant, d)
        d = 1.0 / d
        delta = c * d
        h = h * delta
        unconverged = _any(ew.abs(delta - 1.0) >= threshold)
        return (iteration + 1, unconverged, c, d, h)

    partial_denominator = denominator(0, *inputs)
    h = ew.select(ew.abs(partial_denominator) < small, _full(partial_denominator, small), partial_denominator)
    values = while_loop(cond, body, (np.int32(1), np.bool_(True), h, _full(h, 0), h))
    return values[4]


def regularized_incomplete_beta_expansion(a: Any, b: Any, x: Any, *, dtype: np.dtype) -> Any:
    """``I_x(a, b)`` by its continued fraction, with the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)``."""
    shape = aval_of(a).shape

    def numerator(iteration, a, b, x):
        it = broadcast_in_dim(iteration, shape, ())
        is_even = (it % 2) == 0
        is_one = it == 1
        m_int = (it - 1) // 2
        m_is_zero = m_int == 0
        m = ew.convert_element_type(m_int, dtype)
        zero_numerator = -(a + b) * x / (a + 1.0)
        even = ew.select(m_is_zero, zero_numerator, -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)))
        odd = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        return ew.select(is_one, _full(x, 1.0), ew.select(is_even, even, odd))

    def denominator(iteration, a, b, x):
        it = broadcast_in_dim(np.int32(iteration) if isinstance(iteration, int) else iteration, shape, ())
        return ew.select(it == 0, _full(x, 0.0), _full(x, 1.0))

    a_is_zero = ew.bitwise_or(a == 0.0, b == np.inf)
    b_is_zero = ew.bitwise_or(b == 0.0, a == np.inf)
    x_is_zero, x_is_one = x == 0.0, x == 1.0
    is_nan = _or(_isnan(a), _isnan(b), _isnan(x))
    result_is_zero = ew.bitwise_or(ew.bitwise_and(b_is_zero, ew.bitwise_not(x_is_one)),
                                   ew.bitwise_and(a_is_zero, x_is_zero))
    result_is_one = ew.bitwise_or(ew.bitwise_and(a_is_zero, ew.bitwise_not(x_is_zero)),
                                  ew.bitwise_and(b_is_zero, x_is_one))
    result_is_nan = _or(a < 0.0, b < 0.0, x < 0.0, x > 1.0, ew.bitwise_and(a_is_zero, b_is_zero), is_nan)

    # The continued fraction converges fast for x < (a + 1) / (a + b + 2) (DLMF 8.17.23); elsewhere use the
    # symmetry relation (DLMF 8.17.4).
    converges_rapidly = x < (a + 1.0) / (a + b + 2.0)
    a, b = ew.select(converges_rapidly, a, b), ew.select(converges_rapidly, b, a)
    x = ew.select(converges_rapidly, x, 1.0 - x)
    eps_half = _scalar(np.finfo(dtype).eps / 2, dtype)
    fraction = _lentz_thompson_barnett(num_iterations=200 if dtype == np.float32 else 600, small=eps_half,
                                       threshold=eps_half, numerator=numerator, denominator=denominator,
                                       inputs=[a, b, x])
    # For tiny a, a * gamma(a) = gamma(a + 1) -> 1 avoids dividing by zero.
    very_small = _scalar(np.finfo(dtype).tiny * 2, dtype)
    lbeta_small_a = ew.lgamma(b) - ew.lgamma(a + b)
    lbeta = ew.lgamma(a) + lbeta_small_a
    factor = ew.select(a < very_small, ew.exp(ew.log1p(-x) * b - lbeta_small_a),
                       ew.exp(ew.log(x) * a + ew.log1p(-x) * b - lbeta) / a)
    result = fraction * factor
    result = ew.select(converges_rapidly, result, 1.0 - result)
    result = ew.select(result_is_zero, _full(a, 0.0), result)
    result = ew.select(result_is_one, _full(a, 1.0), result)
    return ew.select(result_is_nan, _full(a, np.nan), result)


# --- incomplete gamma ------------------------------------------------------------------------------------

class IgammaMode(enum.Enum):
    """What the incomplete-gamma kernels compute: the value, d/da, or the derivative of a gamma sample."""

    VALUE = 1
    DERIVATIVE = 2
    SAMPLE_DERIVATIVE = 3


def _igamma_series(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype, mode: IgammaMode) -> Any:
    eps = _scalar(np.finfo(dtype).eps, dtype)

    def cond(vals):
        return _any(vals[0])

    def body(vals):
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = r + 1.0
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
        if mode == IgammaMode.VALUE:
            conditional = ew.bitwise_and(enabled, c / ans > eps)
        else:
            conditional = ew.bitwise_and(enabled, ew.abs(dc_da / dans_da) > eps)
        return (conditional, ew.select(enabled, r, vals[1]), ew.select(enabled, c, vals[2]),
                ew.select(enabled, ans, vals[3]), ew.select(enabled, x, vals[4]),
                ew.select(enabled, dc_da, vals[5]), ew.select(enabled, dans_da, vals[6]))

    init = (enabled, a, _full(a, 1), _full(a, 1), x, _full(a, 0), _full(a, 0))
    vals = while_loop(cond, body, init)
    ans, dans_da = vals[3], vals[6]
    if mode == IgammaMode.VALUE:
        return (ans * ax) / a
    dlogax_da = ew.log(x) - ew.digamma(a + 1.0)
    if mode == IgammaMode.DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype, mode: IgammaMode) -> Any:
    eps = _scalar(np.finfo(dtype).eps, dtype)

    def cond(vals):
        return ew.bitwise_and(vals[5] < 2000.0, _any(vals[0]))

    def body(vals):
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = c + 1.0
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        qk_is_nonzero = qk != 0.0
        r = pk / qk
        t = ew.select(qk_is_nonzero, ew.abs((ans - r) / r), _full(r, 1))
        ans = ew.select(qk_is_nonzero, r, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = ew.select(qk_is_nonzero, (dpk_da - ans * dqk_da) / qk, dans_da)
        grad_conditional = ew.select(qk_is_nonzero, ew.abs(dans_da_new - dans_da), _full(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = ew.abs(pk) > 1.0 / eps
        pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
            ew.select(rescale, v * eps, v) for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da))
        if mode == IgammaMode.VALUE:
            conditional = ew.bitwise_and(enabled, t > eps)
        else:
            conditional = ew.bitwise_and(enabled, grad_conditional > eps)
        new = (ans, t, y, z, None, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        out = [conditional]
        for i, v in enumerate(new, start=1):
            out.append(c if i == 5 else ew.select(enabled, v, vals[i]))
        return tuple(out)

    y = 1.0 - a
    z = x + y + 1.0
    c = _scalar(0, dtype)
    pkm2, qkm2 = _full(x, 1), x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = _full(x, 1)
    dpkm2_da, dqkm2_da, dpkm1_da = _full(x, 0), _full(x, 0), _full(x, 0)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    init = (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)
    vals = while_loop(cond, body, init)
    ans = vals[1]
    if mode == IgammaMode.VALUE:
        return ans * ax
    dans_da = vals[14]
    dlogax_da = ew.log(x) - ew.digamma(a)
    if mode == IgammaMode.DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da)
    return -(dans_da + ans * dlogax_da) * x


def _log_ax(a: Any, x: Any, dtype: np.dtype) -> tuple[Any, Any]:
    """``a log x - x - lgamma(a)``'s exponential, and where it underflows."""
    ax = a * ew.log(x) - x - ew.lgamma(a)
    underflow = ax < -np.log(np.finfo(dtype).max).astype(dtype)
    return ew.exp(ax), underflow


def igamma_expansion(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    """The regularized lower incomplete gamma ``P(a, x)`` (NaN outside ``a >= 0, x >= 0``, and at ``a = x = 0``)."""
    is_nan = ew.bitwise_or(_isnan(a), _isnan(x))
    x_is_infinity = x == np.inf
    x_is_zero = x == 0.0
    domain_error = _or(x < 0.0, a < 0.0, ew.bitwise_and(a == 0.0, x_is_zero), is_nan)
    use_igammac = ew.bitwise_and(x >= 1.0, x > a)
    ax, underflow = _log_ax(a, x, dtype)
    enabled = ew.bitwise_not(_or(x_is_zero, domain_error, underflow, x_is_infinity))
    output = ew.select(
        use_igammac,
        1.0 - _igammac_continued_fraction(ax, x, a, ew.bitwise_and(enabled, use_igammac), dtype, IgammaMode.VALUE),
        _igamma_series(ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_igammac)), dtype, IgammaMode.VALUE))
    output = ew.select(x_is_zero, _full(a, 0), output)
    output = ew.select(x_is_infinity, _full(a, 1), output)
    return ew.select(domain_error, _full(a, np.nan), output)


def igammac_expansion(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    """The regularized upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``, accurate where it is small."""
    is_nan = ew.bitwise_or(_isnan(a), _isnan(x))
    a_is_zero = a == 0.0
    x_is_infinity = x == np.inf
    domain_error = _or(x < 0.0, a < 0.0, ew.bitwise_and(a_is_zero, x == 0.0), is_nan)
    use_igamma = ew.bitwise_or(x < 1.0, x < a)
    ax, underflow = _log_ax(a, x, dtype)
    enabled = ew.bitwise_not(_or(domain_error, underflow, x_is_infinity, a_is_zero))
    series = _igamma_series(ax, x, a, ew.bitwise_and(enabled, use_igamma), dtype, IgammaMode.VALUE)
    fraction = _igammac_continued_fraction(ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_igamma)), dtype,
                                           IgammaMode.VALUE)
    output = ew.select(use_igamma, 1.0 - series, fraction)
    output = ew.select(ew.bitwise_or(x_is_infinity, a_is_zero), _full(output, 0), output)
    return ew.select(domain_error, _full(a, np.nan), output)


def _igamma_derivative(a: Any, x: Any, dtype: np.dtype, mode: IgammaMode) -> Any:
    is_nan = ew.bitwise_or(_isnan(a), _isnan(x))
    x_is_zero = x == 0.0
    domain_error = ew.bitwise_or(x < 0.0, a <= 0.0)
    use_igammac = ew.bitwise_and(x > 1.0, x > a)
    ax, underflow = _log_ax(a, x, dtype)
    enabled = ew.bitwise_not(_or(x_is_zero, domain_error, underflow, is_nan))
    output = ew.select(
        use_igammac,
        -_igammac_continued_fraction(ax, x, a, ew.bitwise_and(enabled, use_igammac), dtype, mode),
        _igamma_series(ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_igammac)), dtype, mode))
    output = ew.select(x_is_zero, _full(output, 0), output)
    return ew.select(ew.bitwise_or(domain_error, is_nan), _full(a, np.nan), output)


def igamma_grad_a_expansion(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    """``d/da P(a, x)``, differentiating the series and the continued fraction term by term."""
    return _igamma_derivative(a, x, dtype, IgammaMode.DERIVATIVE)


def random_gamma_grad_expansion(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    """The derivative of a ``Gamma(a, 1)`` sample ``x`` with respect to ``a`` (implicit reparameterization)."""
    return _igamma_derivative(a, x, dtype, IgammaMode.SAMPLE_DERIVATIVE)


# --- i0e -------------------------------------------------------------------------------------------------

# Cephes' Chebyshev coefficients of exp(-|x|) I0(x) on [0, 8] (A) and of sqrt(x) exp(-x) I0(x) on (8, inf) (B);
# float32 uses the tails of the float64 series, as JAX.
_I0E_A64 = [
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14, -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7, 1.11738753912010371815E-6,
    -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5, 1.88502885095841655729E-4,
    -5.76375574538582365885E-4, 1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2, 1.71620901522208775349E-1,
    -3.04682672343198398683E-1, 6.76795274409476084995E-1]
_I0E_B64 = [
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17, 3.46122286769746109310E-17,
    -2.82762398051658348494E-16, -3.42548561967721913462E-16, 1.77256013305652638360E-15, 3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11, -3.14991652796324136454E-11,
    1.18891471078464383424E-11, 4.94060238822496958910E-10, 3.39623202570838634515E-9, 2.26666899049817806459E-8,
    2.04891858946906374183E-7, 2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1]
_I0E_A32, _I0E_B32 = _I0E_A64[-18:], _I0E_B64[-7:]


def _chebyshev(x: Any, coefficients: list[float]) -> Any:
    b0, b1, b2 = _full(x, 0), _full(x, 0), _full(x, 0)
    for c in coefficients:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + _full(x, c)
    return 0.5 * (b0 - b2)


def bessel_i0e_expansion(x: Any) -> Any:
    """``exp(-|x|) I0(x)`` by Cephes' Chebyshev expansions (float16/bfloat16 computed in float32)."""
    dtype = np.dtype(aval_of(x).dtype)
    if dtype.itemsize < 4:
        return ew.convert_element_type(bessel_i0e_expansion(ew.convert_element_type(x, np.float32)), dtype)
    a_coef, b_coef = (_I0E_A64, _I0E_B64) if dtype == np.float64 else (_I0E_A32, _I0E_B32)
    x = ew.abs(x)
    small = _chebyshev(0.5 * x - 2.0, a_coef)
    large = _chebyshev(32.0 / x - 2.0, b_coef) / ew.sqrt(x)
    return ew.select(x <= 8.0, small, large)

