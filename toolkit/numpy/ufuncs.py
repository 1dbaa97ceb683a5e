"""Elementwise functions with numpy broadcasting and toolkit's dtype promotion."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import elementwise as lax_elementwise
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


add = _binary("add", lax_elementwise.add)
subtract = _binary("subtract", lax_elementwise.sub)
multiply = _binary("multiply", lax_elementwise.mul)
maximum = _binary("maximum", lax_elementwise.max)
minimum = _binary("minimum", lax_elementwise.min)
arctan2 = _binary("arctan2", lax_elementwise.atan2, float_only=True)
nextafter = _binary("nextafter", lax_elementwise.nextafter, float_only=True)
equal = _binary("equal", lax_elementwise.eq)
not_equal = _binary("not_equal", lax_elementwise.ne)
less = _binary("less", lax_elementwise.lt)
less_equal = _binary("less_equal", lax_elementwise.le)
greater = _binary("greater", lax_elementwise.gt)
greater_equal = _binary("greater_equal", lax_elementwise.ge)
bitwise_and = _binary("bitwise_and", lax_elementwise.bitwise_and, int_only=True)
bitwise_or = _binary("bitwise_or", lax_elementwise.bitwise_or, int_only=True)
bitwise_xor = _binary("bitwise_xor", lax_elementwise.bitwise_xor, int_only=True)
left_shift = _binary("left_shift", lax_elementwise.shift_left, int_only=True)


def right_shift(x: Any, y: Any) -> Any:
    x, y = promote_and_broadcast(x, y)
    op = lax_elementwise.shift_right_logical if dtypes.is_unsigned(_dt(x)) else lax_elementwise.shift_right_arithmetic
    return op(x, y)


def logical_and(x: Any, y: Any) -> Any:
    return lax_elementwise.bitwise_and(*promote_and_broadcast(_bool(x), _bool(y)))


def logical_or(x: Any, y: Any) -> Any:
    return lax_elementwise.bitwise_or(*promote_and_broadcast(_bool(x), _bool(y)))


def logical_xor(x: Any, y: Any) -> Any:
    return lax_elementwise.bitwise_xor(*promote_and_broadcast(_bool(x), _bool(y)))


def logical_not(x: Any) -> Any:
    return lax_elementwise.bitwise_not(_bool(x))


def _bool(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    return x if x.dtype == dtypes.bool_ else lax_elementwise.convert_element_type(x, dtypes.bool_)


def true_divide(x: Any, y: Any) -> Any:
    """``x / y``; integer operands divide as floats, as in numpy."""
    dtype, weak = result_dtype(x, y)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.DEFAULT_FLOAT
    x, y = promote_and_broadcast(convert(x, dtype, _weak(x)), convert(y, dtype, _weak(y)))
    return lax_elementwise.div(x, y)


def _weak(x: Any) -> bool:
    return dtypes.is_python_scalar(x) or bool(getattr(x, "weak_type", False))


divide = true_divide


def floor_divide(x: Any, y: Any) -> Any:
    """``x // y`` rounding towards minus infinity, as in numpy."""
    x, y = promote_and_broadcast(x, y)
    dtype = _dt(x)
    if dtypes.is_unsigned(dtype):
        return lax_elementwise.div(x, y)
    if dtypes.is_integer(dtype):
        quotient = lax_elementwise.div(x, y)
        # Truncation rounds towards zero; step down when signs differ and there is a remainder.
        remainder = lax_elementwise.rem(x, y)
        zero = np.zeros((), dtype)
        fix = logical_and(lax_elementwise.ne(remainder, _full_like(remainder, zero)),
                          lax_elementwise.ne(lax_elementwise.lt(x, _full_like(x, zero)), lax_elementwise.lt(y, _full_like(y, zero))))
        return where(fix, lax_elementwise.sub(quotient, _full_like(quotient, np.ones((), dtype))), quotient)
    return lax_elementwise.floor(lax_elementwise.div(x, y))


def remainder(x: Any, y: Any) -> Any:
    """``x % y`` with the sign of ``y``, as in numpy."""
    x, y = promote_and_broadcast(x, y)
    dtype = _dt(x)
    r = lax_elementwise.rem(x, y)
    if dtypes.is_unsigned(dtype):
        return r
    zero = np.zeros((), dtype)
    fix = logical_and(lax_elementwise.ne(r, _full_like(r, zero)), lax_elementwise.ne(lax_elementwise.lt(r, _full_like(r, zero)), lax_elementwise.lt(y, _full_like(y, zero))))
    return where(fix, lax_elementwise.add(r, y), r)


mod = remainder


def fmod(x: Any, y: Any) -> Any:
    return lax_elementwise.rem(*promote_and_broadcast(x, y))


def _full_like(x: Any, value: np.ndarray) -> Any:
    from toolkit.numpy.shapes import broadcast_to
    return broadcast_to(np.asarray(value, x.dtype), x.shape)


def power(x: Any, y: Any) -> Any:
    """``x ** y``; a Python integer exponent uses repeated multiplication (exact for integers)."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        x = asarray(x) if not is_array(x) else x
        if y >= 0 or dtypes.is_inexact(x.dtype):
            return lax_elementwise.integer_pow(x, int(y))
    return lax_elementwise.pow(*promote_and_broadcast(x, y))


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
    return lax_elementwise.select(condition, x, y)


def clip(x: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """``x`` limited to ``[a_min, a_max]`` (either bound may be None)."""
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x


negative = _unary("negative", lax_elementwise.neg)
sign = _unary("sign", lax_elementwise.sign)
floor = _unary("floor", lambda x: x if not dtypes.is_inexact(x.dtype) else lax_elementwise.floor(x))
ceil = _unary("ceil", lambda x: x if not dtypes.is_inexact(x.dtype) else lax_elementwise.ceil(x))
exp = _unary("exp", lax_elementwise.exp, float_only=True)
exp2 = _unary("exp2", lax_elementwise.exp2, float_only=True)
log = _unary("log", lax_elementwise.log, float_only=True)
log1p = _unary("log1p", lax_elementwise.log1p, float_only=True)
expm1 = _unary("expm1", lax_elementwise.expm1, float_only=True)
tanh = _unary("tanh", lax_elementwise.tanh, float_only=True)
sin = _unary("sin", lax_elementwise.sin, float_only=True)
cos = _unary("cos", lax_elementwise.cos, float_only=True)
tan = _unary("tan", lax_elementwise.tan, float_only=True)
arcsin = _unary("arcsin", lax_elementwise.asin, float_only=True)
arccos = _unary("arccos", lax_elementwise.acos, float_only=True)
arctan = _unary("arctan", lax_elementwise.atan, float_only=True)
sinh = _unary("sinh", lax_elementwise.sinh, float_only=True)
cosh = _unary("cosh", lax_elementwise.cosh, float_only=True)
arcsinh = _unary("arcsinh", lax_elementwise.asinh, float_only=True)
arccosh = _unary("arccosh", lax_elementwise.acosh, float_only=True)
arctanh = _unary("arctanh", lax_elementwise.atanh, float_only=True)
sqrt = _unary("sqrt", lax_elementwise.sqrt, float_only=True)
rsqrt = _unary("rsqrt", lax_elementwise.rsqrt, float_only=True)
cbrt = _unary("cbrt", lax_elementwise.cbrt, float_only=True)
isfinite = _unary("isfinite", lambda x: lax_elementwise.is_finite(x) if dtypes.is_float(x.dtype) else
                  asarray(np.ones(x.shape, bool)) if not dtypes.is_complex(x.dtype) else
                  logical_and(lax_elementwise.is_finite(lax_elementwise.real(x)), lax_elementwise.is_finite(lax_elementwise.imag(x))))
real = _unary("real", lambda x: lax_elementwise.real(x) if dtypes.is_complex(x.dtype) else x)
imag = _unary("imag", lambda x: lax_elementwise.imag(x) if dtypes.is_complex(x.dtype) else lax_elementwise.mul(x, _full_like(x, np.zeros((), x.dtype))))
conj = _unary("conj", lambda x: lax_elementwise.conj(x) if dtypes.is_complex(x.dtype) else x)
conjugate = conj
invert = _unary("invert", lax_elementwise.bitwise_not)
bitwise_not = invert


def absolute(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    return x if dtypes.is_unsigned(x.dtype) or dtypes.is_bool(x.dtype) else lax_elementwise.abs(x)


abs = absolute


def isnan(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    return lax_elementwise.ne(x, x) if dtypes.is_inexact(x.dtype) else asarray(np.zeros(x.shape, bool))


def isinf(x: Any) -> Any:
    x = asarray(x) if not is_array(x) else x
    if not dtypes.is_float(x.dtype):
        return asarray(np.zeros(x.shape, bool))
    return lax_elementwise.eq(lax_elementwise.abs(x), _full_like(x, np.asarray(np.inf, x.dtype)))


def round(x: Any, decimals: int = 0) -> Any:
    """Round half to even, as numpy does."""
    x = asarray(x) if not is_array(x) else x
    if not dtypes.is_inexact(x.dtype):
        return x
    if decimals == 0:
        return lax_elementwise.round(x, 1)
    factor = _full_like(x, np.asarray(10.0 ** decimals, x.dtype))
    return lax_elementwise.div(lax_elementwise.round(lax_elementwise.mul(x, factor), 1), factor)


around = round


def square(x: Any) -> Any:
    return lax_elementwise.integer_pow(asarray(x) if not is_array(x) else x, 2)


def reciprocal(x: Any) -> Any:
    return true_divide(1, x) if not dtypes.is_integer(asarray(x).dtype) else floor_divide(1, x)


def logaddexp(x: Any, y: Any) -> Any:
    x, y = promote_and_broadcast(x, y)
    m = maximum(x, y)
    return lax_elementwise.add(m, log1p(exp(lax_elementwise.neg(abs(lax_elementwise.sub(x, y))))))
