"""JVP and transpose rules for ``toolkit/lax/elementwise.py``.

Terms are written with ``toolkit.numpy`` operators (which broadcast Python
scalars at the operand's dtype); every term is linear in its tangent ``t``.
"""

from __future__ import annotations

import math
from typing import Any


from toolkit import numpy as tnp
from toolkit.ad.jvp import defjvp, zero_tangent_jvp
from toolkit.ad.registry import JVP_RULES, TRANSPOSE_RULES
from toolkit.ad.values import Zero, instantiate, is_undefined, tangent_aval, value_aval, zeros
from toolkit.core import dtypes
from toolkit.lax import elementwise
from toolkit.lax import special_functions
from toolkit.lax.dot_algorithms import AccuracyMode

# --- derived from the family's ``derivative`` traits --------------------------------------

def _from_derivative(primitive: Any, derivative: Any):
    """The JVP of an op declared with ``derivative=``: ``f(x) -> df/dx`` (unary) or ``(df/dx, df/dy)`` (binary)."""
    partials = derivative if isinstance(derivative, tuple) else (derivative,)

    def jvp(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        terms = [tnp.multiply(t, d(*primals)) for t, d in zip(tangents, partials) if not isinstance(t, Zero)]
        tangent = terms[0]
        for term in terms[1:]:
            tangent = tnp.add(tangent, term)
        return out, tangent
    jvp.__name__ = f"{primitive.name}_jvp"
    return jvp


@elementwise.family.derive
def _derive(primitive: Any) -> None:
    derivative = primitive.traits.get("derivative")
    if derivative == "zero":  # piecewise constant: zero tangent
        zero_tangent_jvp(primitive)
    elif derivative is not None:
        JVP_RULES[primitive] = _from_derivative(primitive, derivative)


# --- linear ----------------------------------------------------------------------------

def _neg_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return elementwise.neg(x), elementwise.neg(t)


def _neg_transpose(ct, x):
    return [Zero(x.aval) if isinstance(ct, Zero) else elementwise.neg(ct)]


JVP_RULES[elementwise.neg_p] = _neg_jvp
TRANSPOSE_RULES[elementwise.neg_p] = _neg_transpose


def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    if isinstance(tx, Zero):
        return elementwise.add(x, y), ty
    if isinstance(ty, Zero):
        return elementwise.add(x, y), tx
    return elementwise.add(x, y), elementwise.add(tx, ty)


def _add_transpose(ct, x, y):
    return [ct if is_undefined(x) else None, ct if is_undefined(y) else None]


JVP_RULES[elementwise.add_p] = _add_jvp
TRANSPOSE_RULES[elementwise.add_p] = _add_transpose


def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    if isinstance(ty, Zero):
        return elementwise.sub(x, y), tx
    if isinstance(tx, Zero):
        return elementwise.sub(x, y), elementwise.neg(ty)
    return elementwise.sub(x, y), elementwise.sub(tx, ty)


def _sub_transpose(ct, x, y):
    neg = ct if isinstance(ct, Zero) else elementwise.neg(ct)
    return [ct if is_undefined(x) else None, neg if is_undefined(y) else None]


JVP_RULES[elementwise.sub_p] = _sub_jvp
TRANSPOSE_RULES[elementwise.sub_p] = _sub_transpose


def _mul_transpose(ct, x, y, *, out_dtype=None):
    # Bilinear: transposable in exactly one operand, the other is a known coefficient. With out_dtype, JAX's
    # rule: the cotangent times the coefficient with out_dtype the linear operand's dtype (both factors
    # converted to it, one rounding of the product), not the product rounded from out_dtype.
    if is_undefined(x) and is_undefined(y):
        raise ValueError("mul is not linear in both operands at once")
    if isinstance(ct, Zero):
        return [None, None]
    if is_undefined(x):
        return [ct * y if out_dtype is None else elementwise.mul(ct, y, out_dtype=x.aval.dtype), None]
    return [None, x * ct if out_dtype is None else elementwise.mul(x, ct, out_dtype=y.aval.dtype)]


# Each operand's JVP term puts the tangent in that operand's place, passing out_dtype on (JAX's rule).
def _mul_jvp_x(t, ans, x, y, *, out_dtype=None):
    return t * y if out_dtype is None else elementwise.mul(t, y, out_dtype=out_dtype)


def _mul_jvp_y(t, ans, x, y, *, out_dtype=None):
    return x * t if out_dtype is None else elementwise.mul(x, t, out_dtype=out_dtype)


defjvp(elementwise.mul_p, _mul_jvp_x, _mul_jvp_y)
TRANSPOSE_RULES[elementwise.mul_p] = _mul_transpose


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise ValueError("div is linear in its numerator only")
    return [None if isinstance(ct, Zero) else ct / y, None]


defjvp(elementwise.div_p, lambda t, ans, x, y: t / y, lambda t, ans, x, y: -t * ans / y)
TRANSPOSE_RULES[elementwise.div_p] = _div_transpose


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = elementwise.convert_element_type(x, new_dtype, weak_type)
    if not dtypes.is_inexact(new_dtype) or isinstance(t, Zero):
        return out, Zero(tangent_aval(value_aval(out)))
    return out, elementwise.convert_element_type(t, new_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False):
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [elementwise.convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


JVP_RULES[elementwise.convert_element_type_p] = _convert_jvp
TRANSPOSE_RULES[elementwise.convert_element_type_p] = _convert_transpose


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    case_tangents = tangents[1:]
    out = elementwise.select_n(which, *cases)
    if all(isinstance(t, Zero) for t in case_tangents):
        return out, Zero(tangent_aval(value_aval(out)))
    return out, elementwise.select_n(which, *(instantiate(t) for t in case_tangents))


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise ValueError("select_n is not linear in its selector")
    if isinstance(ct, Zero):
        return [None] * (1 + len(cases))
    zero = zeros(value_aval(ct))
    cts = [None]
    for k, case in enumerate(cases):
        if is_undefined(case):
            cts.append(elementwise.select_n(which, *(ct if j == k else zero for j in range(len(cases)))))
        else:
            cts.append(None)
    return cts


JVP_RULES[elementwise.select_n_p] = _select_n_jvp
TRANSPOSE_RULES[elementwise.select_n_p] = _select_n_transpose


def _real_transpose(ct, x):
    return [None if isinstance(ct, Zero) else elementwise.complex(ct, tnp.zeros_like(ct))]


def _imag_transpose(ct, x):
    # imag(z) = Re(-i z): its transpose maps ct to -i ct (JAX's convention for complex cotangents).
    return [None if isinstance(ct, Zero) else elementwise.complex(tnp.zeros_like(ct), elementwise.neg(ct))]


def _complex_transpose(ct, x, y):
    if isinstance(ct, Zero):
        return [None, None]
    return [elementwise.real(ct) if is_undefined(x) else None, elementwise.imag(ct) if is_undefined(y) else None]


def _conj_transpose(ct, x):
    return [None if isinstance(ct, Zero) else elementwise.conj(ct)]


defjvp(elementwise.real_p, lambda t, ans, x: elementwise.real(t))
TRANSPOSE_RULES[elementwise.real_p] = _real_transpose
defjvp(elementwise.imag_p, lambda t, ans, x: elementwise.imag(t))
TRANSPOSE_RULES[elementwise.imag_p] = _imag_transpose
defjvp(elementwise.complex_p, lambda t, ans, x, y: elementwise.complex(t, tnp.zeros_like(t)),
       lambda t, ans, x, y: elementwise.complex(tnp.zeros_like(t), t))
TRANSPOSE_RULES[elementwise.complex_p] = _complex_transpose
defjvp(elementwise.conj_p, lambda t, ans, x: elementwise.conj(t))
TRANSPOSE_RULES[elementwise.conj_p] = _conj_transpose


# --- nonlinear unary: d/dx written next to each primitive --------------------------------

# The ops taking ``accuracy=`` (a parameter only when given): JAX's terms. exp, exp2, log, log1p, tan, sqrt,
# rsqrt and cbrt drop it; sin and cos pass it to the cos/sin of their tangent; expm1, tanh and logistic take
# another formula under AccuracyMode.HIGHEST (expm1's and tanh's pass the accuracy on; logistic's does not).
def _highest(accuracy: Any) -> bool:
    return accuracy is AccuracyMode.HIGHEST


def _expm1_term(t, ans, x, *, accuracy=None):
    if _highest(accuracy):
        return t * elementwise.exp(x, accuracy=accuracy)
    return t * (ans + 1.0)


def _tanh_term(t, ans, x, *, accuracy=None):
    if _highest(accuracy):
        # 1 - tanh(x)**2 = 4 logistic(2x) logistic(-2x), without the cancellation near |x| large
        logistic_product = (elementwise.logistic(2.0 * x, accuracy=accuracy)
                            * elementwise.logistic(-2.0 * x, accuracy=accuracy))
        return t * (4.0 * logistic_product)
    return (t + t * ans) * (1.0 - ans)


def _logistic_term(t, ans, x, *, accuracy=None):
    if _highest(accuracy):
        return t * (ans * elementwise.logistic(elementwise.neg(x)))
    return t * (ans * (1.0 - ans))


defjvp(elementwise.exp_p, lambda t, ans, x, **_: t * ans)
defjvp(elementwise.exp2_p, lambda t, ans, x, **_: math.log(2.0) * (t * ans))
defjvp(elementwise.log_p, lambda t, ans, x, **_: t / x)
defjvp(elementwise.log1p_p, lambda t, ans, x, **_: t / (x + 1.0))
defjvp(elementwise.expm1_p, _expm1_term)
defjvp(elementwise.tanh_p, _tanh_term)
defjvp(elementwise.logistic_p, _logistic_term)
defjvp(elementwise.sin_p, lambda t, ans, x, accuracy=None: t * elementwise.cos(x, accuracy=accuracy))
defjvp(elementwise.cos_p, lambda t, ans, x, accuracy=None: elementwise.neg(t * elementwise.sin(x, accuracy=accuracy)))
defjvp(elementwise.tan_p, lambda t, ans, x, **_: t * (1.0 + ans * ans))
defjvp(elementwise.asin_p, lambda t, ans, x: t * elementwise.rsqrt(1.0 - x * x))
defjvp(elementwise.acos_p, lambda t, ans, x: t * elementwise.neg(elementwise.rsqrt(1.0 - x * x)))
defjvp(elementwise.atan_p, lambda t, ans, x: t / (1.0 + x * x))
defjvp(elementwise.sinh_p, lambda t, ans, x: t * elementwise.cosh(x))
defjvp(elementwise.cosh_p, lambda t, ans, x: t * elementwise.sinh(x))
defjvp(elementwise.asinh_p, lambda t, ans, x: t * elementwise.rsqrt(x * x + 1.0))
# x * x - 1 as JAX 0.10's (its domain is x >= 1; (x - 1)(x + 1) gave -inf at x = -1 where JAX's gives inf).
defjvp(elementwise.acosh_p, lambda t, ans, x: t * elementwise.rsqrt(x * x - 1.0))
defjvp(elementwise.atanh_p, lambda t, ans, x: t / ((1.0 - x) * (1.0 + x)))
defjvp(elementwise.sqrt_p, lambda t, ans, x, **_: t * (0.5 / ans))
defjvp(elementwise.rsqrt_p, lambda t, ans, x, **_: t * (-0.5 * (ans / x)))
defjvp(elementwise.cbrt_p, lambda t, ans, x, **_: t * ((1.0 / 3.0) * elementwise.integer_pow(ans, -2)))
defjvp(elementwise.erf_p, lambda t, ans, x: t * ((2.0 / math.sqrt(math.pi)) * elementwise.exp(elementwise.neg(x * x))))
defjvp(elementwise.erfc_p, lambda t, ans, x: t * ((-2.0 / math.sqrt(math.pi)) * elementwise.exp(elementwise.neg(x * x))))
defjvp(elementwise.erf_inv_p, lambda t, ans, x: t * ((math.sqrt(math.pi) / 2.0) * elementwise.exp(ans * ans)))
defjvp(elementwise.lgamma_p, lambda t, ans, x: t * elementwise.digamma(x))


# psi'(x) = polygamma(1, x), JAX's rule.
defjvp(elementwise.digamma_p, lambda t, ans, x: t * special_functions.polygamma(tnp.ones_like(x), x))


def _abs_term(t, ans, x):
    if dtypes.is_complex(tnp.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype):
        safe = tnp.where(ans == 0, tnp.ones_like(ans), ans)
        return tnp.where(ans == 0, tnp.zeros_like(ans), elementwise.real(elementwise.mul(elementwise.conj(x), t)) / safe)
    # JAX's rule: the derivative at 0 is 1 (select(x >= 0, t, -t)), not sign(0) = 0.
    return elementwise.select(x >= 0, t, elementwise.neg(t))


defjvp(elementwise.abs_p, _abs_term)


def _integer_pow_term(t, ans, x, *, y):
    if y == 0:
        return tnp.zeros_like(t)
    return t * (float(y) * (elementwise.integer_pow(x, y - 1) if y != 1 else tnp.ones_like(x)))


defjvp(elementwise.integer_pow_p, _integer_pow_term)


def _pow_exponent_term(t, ans, x, y):
    # d/dy x**y = log(x) x**y, with log(1) taken where x == 0: JAX's formula, so 0 * inf is NaN where JAX's is.
    safe_log = elementwise.log(tnp.where(x == 0, tnp.ones_like(x), x))
    return t * (safe_log * ans)


def _pow_base_term(t, ans, x, y):
    # d/dx x**y = y x**(y-1), as JAX's: an integer exponent (taken in the base's type, as the lowering converts
    # it) gives 0 where it is 0; a floating one is the plain product (NaN at x == y == 0, as in JAX).
    aval = value_aval(x)
    integer_exponent = not dtypes.is_inexact(value_aval(y).dtype)
    y = tnp.broadcast_to(elementwise.convert_element_type(y, aval.dtype), aval.shape)
    jacobian = y * elementwise.pow(x, y - tnp.ones_like(y))
    if integer_exponent:
        jacobian = tnp.where(y == 0, tnp.zeros_like(jacobian), jacobian)
    return t * jacobian


defjvp(elementwise.pow_p, _pow_base_term, _pow_exponent_term)


def _minmax_mask(x, y, pick_x_where):
    # Ties split the tangent evenly (as JAX does), so max(x, x) has derivative 1.
    return tnp.where(pick_x_where, 1.0, tnp.where(x == y, 0.5, 0.0)).astype(tnp.result_type(x))


defjvp(elementwise.max_p, lambda t, ans, x, y: t * _minmax_mask(x, y, x > y), lambda t, ans, x, y: t * _minmax_mask(y, x, y > x))
defjvp(elementwise.min_p, lambda t, ans, x, y: t * _minmax_mask(x, y, x < y), lambda t, ans, x, y: t * _minmax_mask(y, x, y < x))
defjvp(elementwise.atan2_p, lambda t, ans, x, y: t * (y / (x * x + y * y)), lambda t, ans, x, y: t * (elementwise.neg(x) / (x * x + y * y)))
def _trunc(q):
    return elementwise.sign(q) * elementwise.floor(elementwise.abs(q))


defjvp(elementwise.rem_p, lambda t, ans, x, y: t,
       lambda t, ans, x, y: t * elementwise.neg(_trunc(tnp.asarray(x) / tnp.asarray(y))))


def _clamp_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    lo, x, hi = primals
    t_lo, t_x, t_hi = tangents
    out = elementwise.clamp(lo, x, hi)
    total: Any = Zero(tangent_aval(value_aval(out)))
    shape = value_aval(x).shape
    if not isinstance(t_x, Zero):
        total = t_x * ((x > lo) & (x < hi)).astype(t_x.dtype)
    if not isinstance(t_lo, Zero):
        term = tnp.broadcast_to(t_lo, shape) * (tnp.broadcast_to(lo, shape) > x).astype(t_lo.dtype)
        total = term if isinstance(total, Zero) else total + term
    if not isinstance(t_hi, Zero):
        term = tnp.broadcast_to(t_hi, shape) * (tnp.broadcast_to(hi, shape) < x).astype(t_hi.dtype)
        total = term if isinstance(total, Zero) else total + term
    return out, total


JVP_RULES[elementwise.clamp_p] = _clamp_jvp
