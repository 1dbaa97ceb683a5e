"""Elementwise primitives. Operands have equal shapes and dtypes (``toolkit.numpy``
broadcasts and promotes before it gets here); the result is weakly typed only
when every operand is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray
from toolkit.core.primitive import Primitive
from toolkit.lax.shape_rules import all_weak, check_dtype, same_dtypes, same_shapes

FLOAT, COMPLEX, INT, BOOL = "f", "c", "iu", "b"
NUMBER = "iufc"
INEXACT = "fc"


def _unary(name: str, kinds: str) -> Primitive:
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype(name, x, kinds)
        return x
    return Primitive(name, shape_rule=rule)


def _binary(name: str, kinds: str) -> Primitive:
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        shape = same_shapes(name, x, y)
        dtype = same_dtypes(name, x, y)
        check_dtype(name, x, kinds)
        return ShapedArray(shape, dtype, all_weak(x, y))
    return Primitive(name, shape_rule=rule)


def _compare(name: str) -> Primitive:
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        shape = same_shapes(name, x, y)
        same_dtypes(name, x, y)
        return ShapedArray(shape, dtypes.bool_)
    return Primitive(name, shape_rule=rule)


neg_p = _unary("neg", NUMBER)
sign_p = _unary("sign", NUMBER)
floor_p = _unary("floor", FLOAT)
ceil_p = _unary("ceil", FLOAT)
exp_p = _unary("exp", INEXACT)
exp2_p = _unary("exp2", INEXACT)
log_p = _unary("log", INEXACT)
log1p_p = _unary("log1p", INEXACT)
expm1_p = _unary("expm1", INEXACT)
tanh_p = _unary("tanh", INEXACT)
logistic_p = _unary("logistic", INEXACT)
sin_p = _unary("sin", INEXACT)
cos_p = _unary("cos", INEXACT)
tan_p = _unary("tan", INEXACT)
asin_p = _unary("asin", INEXACT)
acos_p = _unary("acos", INEXACT)
atan_p = _unary("atan", INEXACT)
sinh_p = _unary("sinh", INEXACT)
cosh_p = _unary("cosh", INEXACT)
asinh_p = _unary("asinh", INEXACT)
acosh_p = _unary("acosh", INEXACT)
atanh_p = _unary("atanh", INEXACT)
sqrt_p = _unary("sqrt", INEXACT)
rsqrt_p = _unary("rsqrt", INEXACT)
cbrt_p = _unary("cbrt", FLOAT)
not_p = _unary("not", BOOL + INT)
population_count_p = _unary("population_count", INT)
clz_p = _unary("clz", INT)
erf_p = _unary("erf", FLOAT)
erfc_p = _unary("erfc", FLOAT)
erf_inv_p = _unary("erf_inv", FLOAT)
lgamma_p = _unary("lgamma", FLOAT)
digamma_p = _unary("digamma", FLOAT)
conj_p = _unary("conj", COMPLEX)


def _is_finite_rule(x: ShapedArray) -> ShapedArray:
    check_dtype("is_finite", x, FLOAT)
    return ShapedArray(x.shape, dtypes.bool_)


is_finite_p = Primitive("is_finite", shape_rule=_is_finite_rule)


def _round_rule(x: ShapedArray, *, rounding_method: int) -> ShapedArray:
    check_dtype("round", x, FLOAT)
    return x


round_p = Primitive("round", shape_rule=_round_rule)


def _abs_rule(x: ShapedArray) -> ShapedArray:
    check_dtype("abs", x, NUMBER)
    if dtypes.is_complex(x.dtype):
        return ShapedArray(x.shape, dtypes.float32 if x.dtype == dtypes.complex64 else dtypes.float64, x.weak_type)
    return x


abs_p = Primitive("abs", shape_rule=_abs_rule)


def _complex_part_rule(name: str):
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype(name, x, COMPLEX)
        return ShapedArray(x.shape, dtypes.float32 if x.dtype == dtypes.complex64 else dtypes.float64, x.weak_type)
    return rule


real_p = Primitive("real", shape_rule=_complex_part_rule("real"))
imag_p = Primitive("imag", shape_rule=_complex_part_rule("imag"))

add_p = _binary("add", NUMBER)
sub_p = _binary("sub", NUMBER)
mul_p = _binary("mul", NUMBER)
div_p = _binary("div", NUMBER)
rem_p = _binary("rem", NUMBER)
pow_p = _binary("pow", NUMBER)
max_p = _binary("max", BOOL + NUMBER)
min_p = _binary("min", BOOL + NUMBER)
and_p = _binary("and", BOOL + INT)
or_p = _binary("or", BOOL + INT)
xor_p = _binary("xor", BOOL + INT)
atan2_p = _binary("atan2", INEXACT)
nextafter_p = _binary("nextafter", FLOAT)
shift_left_p = _binary("shift_left", INT)
shift_right_arithmetic_p = _binary("shift_right_arithmetic", INT)
shift_right_logical_p = _binary("shift_right_logical", INT)


def _complex_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    shape = same_shapes("complex", x, y)
    dtype = same_dtypes("complex", x, y)
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"complex requires float32 or float64 operands, got {dtype.name}")
    return ShapedArray(shape, dtypes.complex64 if dtype == dtypes.float32 else dtypes.complex128, all_weak(x, y))


complex_p = Primitive("complex", shape_rule=_complex_rule)

eq_p = _compare("eq")
ne_p = _compare("ne")
lt_p = _compare("lt")
le_p = _compare("le")
gt_p = _compare("gt")
ge_p = _compare("ge")


def _integer_pow_rule(x: ShapedArray, *, y: int) -> ShapedArray:
    check_dtype("integer_pow", x, NUMBER)
    if y < 0 and dtypes.is_integer(x.dtype):
        raise ValueError(f"integer_pow of an integer operand needs a non-negative exponent, got {y}")
    return x


integer_pow_p = Primitive("integer_pow", shape_rule=_integer_pow_rule)


def _select_n_rule(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n needs at least one case")
    shape = same_shapes("select_n", *cases)
    dtype = same_dtypes("select_n", *cases)
    if which.shape not in ((), shape):
        raise TypeError(f"select_n: the selector's shape {which.shape} must be () or the cases' shape {shape}")
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise TypeError(f"select_n: the selector must be bool or int32, got {which.dtype.name}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select_n: a bool selector chooses between at most two cases")
    return ShapedArray(shape, dtype, all_weak(*cases))


select_n_p = Primitive("select_n", shape_rule=_select_n_rule)


def _clamp_rule(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for name, bound in (("min", lo), ("max", hi)):
        if bound.dtype != x.dtype:
            raise TypeError(f"clamp: the {name} bound's dtype {bound.dtype.name} differs from the operand's {x.dtype.name}")
        if bound.shape not in ((), x.shape):
            raise TypeError(f"clamp: the {name} bound's shape {bound.shape} must be () or the operand's {x.shape}")
    return x


clamp_p = Primitive("clamp", shape_rule=_clamp_rule)


def _convert_rule(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool = False) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = Primitive("convert_element_type", shape_rule=_convert_rule)


def _bitcast_rule(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    old, new = dtypes.bit_width(x.dtype), dtypes.bit_width(new_dtype)
    if old == new:
        return ShapedArray(x.shape, new_dtype)
    if old > new:
        if old % new:
            raise TypeError(f"bitcast_convert_type: {x.dtype.name} does not split into {new_dtype.name}")
        return ShapedArray((*x.shape, old // new), new_dtype)
    if not x.shape or x.shape[-1] != new // old:
        raise TypeError(f"bitcast_convert_type from {x.dtype.name} to {new_dtype.name} needs a last dimension of "
                        f"{new // old}, got shape {x.shape}")
    return ShapedArray(x.shape[:-1], new_dtype)


bitcast_convert_type_p = Primitive("bitcast_convert_type", shape_rule=_bitcast_rule)


# --- user-level functions (lax semantics: no implicit broadcasting) ----------

def _fn(p: Primitive):
    def apply(*args: Any) -> Any:
        return p.bind(*args)
    apply.__name__ = p.name
    apply.__doc__ = f"Elementwise ``{p.name}`` (operands of equal shapes and dtypes)."
    return apply


neg, sign, floor, ceil, exp, exp2, log, log1p, expm1, tanh, logistic = map(
    _fn, (neg_p, sign_p, floor_p, ceil_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p))
sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh = map(
    _fn, (sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p))
sqrt, rsqrt, cbrt, bitwise_not, population_count, clz = map(
    _fn, (sqrt_p, rsqrt_p, cbrt_p, not_p, population_count_p, clz_p))
erf, erfc, erf_inv, lgamma, digamma, conj, is_finite, abs, real, imag = map(
    _fn, (erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, conj_p, is_finite_p, abs_p, real_p, imag_p))
add, sub, mul, div, rem, pow, max, min = map(_fn, (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p))
bitwise_and, bitwise_or, bitwise_xor, atan2, nextafter = map(_fn, (and_p, or_p, xor_p, atan2_p, nextafter_p))
shift_left, shift_right_arithmetic, shift_right_logical, complex = map(
    _fn, (shift_left_p, shift_right_arithmetic_p, shift_right_logical_p, complex_p))
eq, ne, lt, le, gt, ge = map(_fn, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))


def round(x: Any, rounding_method: int = 0) -> Any:
    """Round to nearest; ``rounding_method`` 0 rounds halves away from zero, 1 to even."""
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a static integer ``y``."""
    return integer_pow_p.bind(x, y=int(y))


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise; ``which`` is bool (two cases) or int32."""
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` else ``on_false``."""
    return select_n_p.bind(pred, on_false, on_true)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    return clamp_p.bind(lo, x, hi)


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """``x`` converted to ``new_dtype``."""
    return convert_element_type_p.bind(x, new_dtype=dtypes.canonicalize_dtype(new_dtype), weak_type=bool(weak_type))


def bitcast_convert_type(x: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of ``x`` as ``new_dtype`` (adding or removing a last dimension when widths differ)."""
    return bitcast_convert_type_p.bind(x, new_dtype=dtypes.canonicalize_dtype(new_dtype))
