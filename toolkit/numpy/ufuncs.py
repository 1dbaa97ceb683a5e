"""Elementwise functions with numpy broadcasting and toolkit's dtype promotion."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import elementwise as ew
from toolkit.numpy._core import asarray, convert, is_array, promote_and_broadcast, result_dtype


def _binary(name: str, op: Any, *, float_only: bool = False, int_only: bool = False):
    def fn(x: Any, y: Any) -> Any:
        if float_only:
            dtype, weak = result_dtype(x, y)
            if not dtypes.is_inexact(dtype):
                x, y = convert(x, dtypes.DEFAULT_FLOAT, weak), convert(y, dtypes.DEFAULT_FLOAT, weak)
        x, y = promote_and_broadcast(x, y)
        if int_only and not (dtypes.is_integer(_dt(x)) or dtypes.is_bool(_dt(x))):
            raise TypeError(f"{name} is only defined for integer and bool arrays, got {_dt(x).name}")
        return op(x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` with broadcasting."
    return fn


def _dt(x: Any) -> np.dtype:
    return x.dtype if hasattr(x, "dtype") else dtypes.dtype_of(x)


def _unary(name: str, op: Any, *, float_only: bool = False):
    def fn(x: Any) -> Any:
        x = asarray(x) if not is_array(x) else x
        if float_only and not dtypes.is_inexact(x.dtype):
            x = convert(x, dtypes.DEFAULT_FLOAT, x.weak_type)
        return op(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}``."
    return fn


add = _binary("add", ew.add)
subtract = _binary("subtract", ew.sub)
multiply = _binary("multiply", ew.mul)
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)
arctan2 = _binary("arctan2", ew.atan2, float_only=True)
nextafter = _binary("nextafter", ew.nextafter, float_only=True)
equal = _binary("equal", ew.eq)
not_equal = _binary("not_equal", ew.ne)
less = _binary("less", ew.lt)
less_equal = _binary("less_equal", ew.le)
greater = _binary("greater", ew.gt)
greater_equal = _binary("greater_equal", ew.ge)
bitwise_and = _binary("bitwise_and", ew.bitwise_and, int_only=True)
bitwise_or = _binary("bitwise_or", ew.bitwise_or, int_only=True)
bitwise_xor = _binary("bitwise_xor", ew.bitwise_xor, int_only=True)
left_shift = _binary("left_shift", ew.shift_left, int_only=True)


def right_shift(x: Any, y: Any) -> Any:
    x, y = promote_and_broadcast(x, y)
    op = ew.shift_right_logical if dtypes.is_unsigned(_dt(x)) else ew.shift_right_arithmetic
    return op(x, y)


def logical_and(x: Any, y: Any) -> Any:
    return ew.bitwise_and(*promote_and_broadcast(_bool(x), _bool(y)))


def logical_or(x: Any, y: Any) -> Any:
    return ew.bitwise_or(*promote_and_broadcast(_bool(x), _bool(y)))


def logical_xor(x: Any, y: Any) -> Any:
    return ew.bitwise_xor(*promote_and_broadcast(_bool(x), _bool(y)))


def logical_not(x: Any) -> Any:
    return ew.bitwise_not(_bool(x))


def _bool(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    return x if x.dtype == dtypes.bool_ else ew.convert_element_type(x, dtypes.bool_)


def true_divide(x: Any, y: Any) -> Any:
    """``x / y``; integer operands divide as floats, as in numpy."""
    dtype, weak = result_dtype(x, y)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.DEFAULT_FLOAT
    x, y = promote_and_broadcast(convert(x, dtype, _weak(x)), convert(y, dtype, _weak(y)))
    return ew.div(x, y)


def _weak(x: Any) -> bool:
    return dtypes.is_python_scalar(x) or bool(getattr(x, "weak_type", False))


divide = true_divide


def floor_divide(x: Any, y: Any) -> Any:
    """``x // y`` rounding towards minus infinity, as in numpy."""
    x, y = promote_and_broadcast(x, y)
    dtype = _dt(x)
    if dtypes.is_unsigned(dtype):
        return ew.div(x, y)
    if dtypes.is_integer(dtype):
        quotient = ew.div(x, y)
        # Truncation rounds towards zero; step down when signs differ and there is a remainder.
        remainder = ew.rem(x, y)
        zero = np.zeros((), dtype)
        fix = logical_and(ew.ne(remainder, _full_like(remainder, zero)),
                          ew.ne(ew.lt(x, _full_like(x, zero)), ew.lt(y, _full_like(y, zero))))
        return where(fix, ew.sub(quotient, _full_like(quotient, np.ones((), dtype))), quotient)
    return ew.floor(ew.div(x, y))


def remainder(x: Any, y: Any) -> Any:
    """``x % y`` with the sign of ``y``, as in numpy."""
    x, y = promote_and_broadcast(x, y)
    dtype = _dt(x)
    r = ew.rem(x, y)
    if dtypes.is_unsigned(dtype):
        return r
    zero = np.zeros((), dtype)
    fix = logical_and(ew.ne(r, _full_like(r, zero)), ew.ne(ew.lt(r, _full_like(r, zero)), ew.lt(y, _full_like(y, zero))))
    return where(fix, ew.add(r, y), r)


mod = remainder


def fmod(x: Any, y: Any) -> Any:
    return ew.rem(*promote_and_broadcast(x, y))


def _full_like(x: Any, value: np.ndarray) -> Any:
    from toolkit.numpy.shapes import broadcast_to
    return broadcast_to(np.asarray(value, x.dtype), x.shape)


def power(x: Any, y: Any) -> Any:
    """``x ** y``; a Python integer exponent uses repeated multiplication (exact for integers)."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        x = asarray(x) if not is_array(x) else x
        if y >= 0 or dtypes.is_inexact(x.dtype):
            return ew.integer_pow(x, int(y))
    return ew.pow(*promote_and_broadcast(x, y))


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``x`` where ``condition`` else ``y`` (numpy broadcasting)."""
    if x is None or y is None:
        raise ValueError("toolkit.numpy.where needs x and y: the one-argument form has a data-dependent shape")
    condition = _bool(condition)
    x, y = promote_and_broadcast(x, y)
    from toolkit.numpy._core import broadcast_shapes, broadcast_to
    shape = broadcast_shapes(condition.shape, np.shape(x) if not is_array(x) else x.shape,
                             np.shape(y) if not is_array(y) else y.shape)
    condition = broadcast_to(condition, shape)
    x = broadcast_to(x if is_array(x) else asarray(x), shape)
    y = broadcast_to(y if is_array(y) else asarray(y), shape)
    return ew.select(condition, x, y)


def clip(x: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """``x`` limited to ``[a_min, a_max]`` (either bound may be None)."""
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x


negative = _unary("negative", ew.neg)
sign = _unary("sign", ew.sign)
floor = _unary("floor", lambda x: x if not dtypes.is_inexact(x.dtype) else ew.floor(x))
ceil = _unary("ceil", lambda x: x if not dtypes.is_inexact(x.dtype) else ew.ceil(x))
exp = _unary("exp", ew.exp, float_only=True)
exp2 = _unary("exp2", ew.exp2, float_only=True)
log = _unary("log", ew.log, float_only=True)
log1p = _unary("log1p", ew.log1p, float_only=True)
expm1 = _unary("expm1", ew.expm1, float_only=True)
tanh = _unary("tanh", ew.tanh, float_only=True)
sin = _unary("sin", ew.sin, float_only=True)
cos = _unary("cos", ew.cos, float_only=True)
tan = _unary("tan", ew.tan, float_only=True)
arcsin = _unary("arcsin", ew.asin, float_only=True)
arccos = _unary("arccos", ew.acos, float_only=True)
arctan = _unary("arctan", ew.atan, float_only=True)
sinh = _unary("sinh", ew.sinh, float_only=True)
cosh = _unary("cosh", ew.cosh, float_only=True)
arcsinh = _unary("arcsinh", ew.asinh, float_only=True)
arccosh = _unary("arccosh", ew.acosh, float_only=True)
arctanh = _unary("arctanh", ew.atanh, float_only=True)
sqrt = _unary("sqrt", ew.sqrt, float_only=True)
rsqrt = _unary("rsqrt", ew.rsqrt, float_only=True)
cbrt = _unary("cbrt", ew.cbrt, float_only=True)
isfinite = _unary("isfinite", lambda x: ew.is_finite(x) if dtypes.is_float(x.dtype) else
                  asarray(np.ones(x.shape, bool)) if not dtypes.is_complex(x.dtype) else
                  logical_and(ew.is_finite(ew.real(x)), ew.is_finite(ew.imag(x))))
real = _unary("real", lambda x: ew.real(x) if dtypes.is_complex(x.dtype) else x)
imag = _unary("imag", lambda x: ew.imag(x) if dtypes.is_complex(x.dtype) else ew.mul(x, _full_like(x, np.zeros((), x.dtype))))
conj = _unary("conj", lambda x: ew.conj(x) if dtypes.is_complex(x.dtype) else x)
conjugate = conj
invert = _unary("invert", ew.bitwise_not)
bitwise_not = invert


def absolute(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    return x if dtypes.is_unsigned(x.dtype) or dtypes.is_bool(x.dtype) else ew.abs(x)


abs = absolute


def isnan(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    return ew.ne(x, x) if dtypes.is_inexact(x.dtype) else asarray(np.zeros(x.shape, bool))


def isinf(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    if not dtypes.is_float(x.dtype):
        return asarray(np.zeros(x.shape, bool))
    return ew.eq(ew.abs(x), _full_like(x, np.asarray(np.inf, x.dtype)))


def round(x: Any, decimals: int = 0) -> Any:
    """Round half to even, as numpy does."""
    x = asarray(x) if not is_array(x) else x
    if not dtypes.is_inexact(x.dtype):
        return x
    if decimals == 0:
        return ew.round(x, 1)
    factor = _full_like(x, np.asarray(10.0 ** decimals, x.dtype))
    return ew.div(ew.round(ew.mul(x, factor), 1), factor)


around = round


def square(x: Any) -> Any:
    return ew.integer_pow(asarray(x) if not is_array(x) else x, 2)


def reciprocal(x: Any) -> Any:
    return true_divide(1, x) if not dtypes.is_integer(asarray(x).dtype) else floor_divide(1, x)


def logaddexp(x: Any, y: Any) -> Any:
    x, y = promote_and_broadcast(x, y)
    m = maximum(x, y)
    return ew.add(m, log1p(exp(ew.neg(abs(ew.sub(x, y))))))
