"""Elementwise functions and type predicates of ``jax.numpy`` beyond the ufuncs: ``angle``, ``frexp``,
``ldexp``, ``spacing``, ``i0`` (the modified Bessel function of order 0), ``gcd``/``lcm``, ``isposinf``/``isneginf``,
``iscomplex``/``isreal``, ``sort_complex``; and the host-side questions about values and types
(``iscomplexobj``, ``isrealobj``, ``isscalar``, ``issubdtype``, ``can_cast``, ``iterable``, ``ndim``,
``shape``, ``size``), with numpy's ``dtype``, ``euler_gamma`` and ``ComplexWarning`` as JAX re-exports them.

Example::

    m, e = tnp.frexp(tnp.asarray([8.0, 0.3]))      # m * 2**e; m in [0.5, 1)
    tnp.issubdtype(tnp.float32, tnp.floating)      # True
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import ml_dtypes
import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import autodiff as lax_autodiff
from toolkit.lax import control_flow as lax_control_flow
from toolkit.lax import reductions as lax_reductions
from toolkit.lax import special_functions as lax_special_functions
from toolkit.lax import structural as lax_structural
from toolkit.numpy import sorting, ufuncs
from toolkit.numpy._core import (
    asarray, broadcast_to, canonical_axes, check_arraylike, convert, is_array, promote_and_broadcast, promote_inexact,
)

#: numpy's (and ``jax.numpy``'s) Euler-Mascheroni constant and ``dtype`` type.
euler_gamma = np.euler_gamma
dtype = np.dtype
#: The warning numpy gives when a complex value is cast to a real type (``jax.numpy.ComplexWarning``).
ComplexWarning = np.exceptions.ComplexWarning


def _full(x: Any, value: np.ndarray) -> Any:
    return broadcast_to(value, x.shape)


def _inexact_operand(name: str, x: Any) -> Any:
    check_arraylike(name, x)
    (x,) = promote_inexact(x)
    return x


@compiled_whole(static_argnames=("deg",))
def angle(z: Any, deg: bool = False) -> Any:
    """The counterclockwise angle of each complex ``z`` from the positive real axis (radians, or degrees
    with ``deg``), as ``jnp.angle``: a float result (the default float type for integer inputs)."""
    check_arraylike("angle", z)
    z = z if is_array(z) else asarray(z)
    re, im = ufuncs.real(z), ufuncs.imag(z)
    if not dtypes.is_inexact(re.dtype) or (dtypes.is_float(z.dtype) and z.ndim == 0):
        float_dtype = dtypes.default_float_dtype()
        re, im = convert(re, float_dtype), convert(im, float_dtype)
    result = lax_elementwise.atan2(im, re)
    return ufuncs.degrees(result) if deg else result


_INT_OF_BITS = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


@compiled_whole()
def frexp(x: Any, /) -> tuple[Any, Any]:
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``
    (``exponent`` int32), as ``jnp.frexp``; zeros, infinities and NaNs give themselves and exponent 0.
    Complex input is a ``TypeError``."""
    x = _inexact_operand("frexp", x)
    if dtypes.is_complex(x.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    info = dtypes.finfo(x.dtype)
    int_type = np.dtype(_INT_OF_BITS[info.bits])
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    # Subnormals are scaled into the normal range first (JAX's _normalize_float), then the exponent bits
    # are read off and replaced by the bias - 1 of the interval [0.5, 1).
    tiny = ufuncs.less(ufuncs.absolute(x), np.asarray(info.tiny, x.dtype))
    scaled = ufuncs.where(tiny, ufuncs.multiply(x, np.asarray(1 << info.nmant, x.dtype)), x)
    bits = lax_elementwise.bitcast_convert_type(scaled, int_type)
    exponent = ufuncs.where(tiny, np.asarray(-info.nmant, int_type), np.asarray(0, int_type))
    field = ufuncs.bitwise_and(ufuncs.right_shift(bits, np.asarray(info.nmant, int_type)), np.asarray(mask, int_type))
    exponent = ufuncs.add(exponent, ufuncs.subtract(field, np.asarray(bias - 1, int_type)))
    bits = ufuncs.bitwise_and(bits, np.asarray(~(mask << info.nmant), int_type))
    bits = ufuncs.bitwise_or(bits, np.asarray((bias - 1) << info.nmant, int_type))
    mantissa = lax_elementwise.bitcast_convert_type(bits, x.dtype)
    special = ufuncs.logical_or(ufuncs.logical_or(ufuncs.isinf(x), ufuncs.isnan(x)), ufuncs.equal(x, 0))
    exponent = ufuncs.where(special, np.asarray(0, int_type), exponent)
    return ufuncs.where(special, x, mantissa), convert(exponent, np.int32)


@compiled_whole()
def ldexp(x1: Any, x2: Any, /) -> Any:
    """``x1 * 2**x2`` elementwise (``x2`` integer), as ``jnp.ldexp``; a complex ``x1`` or a non-integer
    ``x2`` is a ``ValueError``."""
    check_arraylike("ldexp", x1, x2)
    x1, x2 = (x if is_array(x) else asarray(x) for x in (x1, x2))
    if dtypes.is_complex(x1.dtype) or dtypes.is_inexact(x2.dtype):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = promote_inexact(x1)
    x2 = convert(x2, x1.dtype)
    # The exponent is split off first so that a small x1 with a large x2 does not overflow on the way.
    m, e = frexp(x1)
    e = ufuncs.add(convert(e, x2.dtype), x2)
    positive = ufuncs.greater(e, 0)
    m = ufuncs.where(positive, ufuncs.multiply(m, np.asarray(2, m.dtype)), m)
    e = ufuncs.where(positive, ufuncs.subtract(e, np.asarray(1, e.dtype)), e)
    out = ufuncs.multiply(m, ufuncs.power(np.asarray(2, m.dtype), convert(e, m.dtype)))
    return ufuncs.where(ufuncs.logical_or(ufuncs.isinf(x1), ufuncs.equal(x1, 0)), x1, out)


@compiled_whole()
def spacing(x: Any, /) -> Any:
    """The distance from each ``x`` to the next representable value away from zero (``x``'s ulp), as
    ``jnp.spacing``; complex input is a ``ValueError``."""
    x = _inexact_operand("spacing", x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = np.asarray(np.inf, x.dtype)
    if x.dtype == np.float16:  # numpy's (and JAX's) float16 rule: toward +inf always
        return ufuncs.subtract(lax_elementwise.nextafter(x, _full(x, inf)), x)
    toward = ufuncs.copysign(_full(x, inf), x)
    result = ufuncs.subtract(lax_elementwise.nextafter(x, toward), x)
    smallest = ufuncs.copysign(_full(x, np.asarray(dtypes.finfo(x.dtype).smallest_subnormal, x.dtype)),
                               x)
    return ufuncs.where(ufuncs.equal(result, 0), smallest, result)


@compiled_whole()
def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0, elementwise, as ``jnp.i0``:
    ``exp(|x|) * bessel_i0e(|x|)`` with ``toolkit.lax.bessel_i0e`` (JAX's formula, bit for bit); complex input is
    a ``ValueError``."""
    x = _inexact_operand("i0", x)
    if not dtypes.is_float(x.dtype):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    # JAX's custom JVP makes the derivative 0 at x == 0 (abs's is 1 there, i0's is 0): |x| without a derivative
    # at 0 does the same here (the same value either way).
    magnitude = lax_elementwise.select(lax_elementwise.eq(x, lax_structural.full_like(x, 0)),
                                       lax_autodiff.stop_gradient(x), lax_elementwise.abs(x))
    return lax_elementwise.mul(lax_elementwise.exp(magnitude), lax_special_functions.bessel_i0e(magnitude))


def _isposneginf(name: str, infinity: float, x: Any, out: Any) -> Any:
    check_arraylike(name, x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    x = x if is_array(x) else asarray(x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if dtypes.is_float(x.dtype):
        return ufuncs.equal(x, np.asarray(infinity, x.dtype))
    return _full(x, np.asarray(False))


def isposinf(x: Any, /, out: Any = None) -> Any:
    """True where ``x`` is ``+inf`` (False everywhere for integers), as ``jnp.isposinf``."""
    return _isposneginf("isposinf", np.inf, x, out)


def isneginf(x: Any, /, out: Any = None) -> Any:
    """True where ``x`` is ``-inf`` (False everywhere for integers), as ``jnp.isneginf``."""
    return _isposneginf("isneginf", -np.inf, x, out)


@compiled_whole()
def iscomplex(x: Any) -> Any:
    """True where ``x`` has a nonzero imaginary part, as ``jnp.iscomplex``."""
    imag = ufuncs.imag(x)
    return lax_elementwise.ne(imag, ufuncs.constant_like(imag, 0))


@compiled_whole()
def isreal(x: Any) -> Any:
    """True where ``x``'s imaginary part is zero, as ``jnp.isreal``."""
    imag = ufuncs.imag(x)
    return lax_elementwise.eq(imag, ufuncs.constant_like(imag, 0))



@compiled_whole()
def sort_complex(a: Any) -> Any:
    """``a`` sorted along its last axis (real part first, then imaginary) as a complex array, as
    ``jnp.sort_complex``."""
    check_arraylike("sort_complex", a)
    a = sorting.sort(a if is_array(a) else asarray(a))
    if dtypes.is_complex(a.dtype):
        return a
    target = np.complex128 if a.dtype == np.float64 or a.dtype.itemsize == 8 else np.complex64
    return convert(a, dtypes.canonicalize_dtype(target))


# --- questions about values and types, answered on the host ------------------------------------------------------


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` (an array, number or array-like) has a complex type, as ``jnp.iscomplexobj``."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    try:
        typ = x.dtype.type
    except AttributeError:
        typ = asarray(x).dtype.type
    return issubdtype(typ, np.complexfloating)


def isrealobj(x: Any) -> bool:
    """Whether ``x`` does not have a complex type (``not iscomplexobj(x)``), as ``jnp.isrealobj``."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar: a numpy scalar or Python number (``np.isscalar``), or an array
    of rank 0, as ``jnp.isscalar``."""
    if np.isscalar(element):
        return True
    if isinstance(element, np.ndarray) or is_array(element):
        return element.ndim == 0
    if getattr(element, "__jax_array__", None) is not None:
        return asarray(element).ndim == 0
    return False


_CUSTOM_FLOATS = {np.dtype(getattr(ml_dtypes, n)).type for n in (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn")}
_CUSTOM_SIGNED = {np.dtype(ml_dtypes.int2).type, np.dtype(ml_dtypes.int4).type}
_CUSTOM_UNSIGNED = {np.dtype(ml_dtypes.uint2).type, np.dtype(ml_dtypes.uint4).type}


def _scalar_type(t: Any) -> Any:
    if isinstance(t, type) and issubclass(t, np.generic):
        return t
    return np.dtype(t).type


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether ``arg1`` is ``arg2`` or below it in numpy's type hierarchy, as ``jnp.issubdtype``: also for
    ml_dtypes' types (``bfloat16`` is a ``floating``, ``int4`` a ``signedinteger``), which numpy's misses."""
    a, b = _scalar_type(arg1), _scalar_type(arg2)
    if a in _CUSTOM_FLOATS:
        return b in {a, np.floating, np.inexact, np.number, np.generic}
    if a in _CUSTOM_SIGNED:
        return b in {a, np.signedinteger, np.integer, np.number, np.generic}
    if a in _CUSTOM_UNSIGNED:
        return b in {a, np.unsignedinteger, np.integer, np.number, np.generic}
    return bool(np.issubdtype(a, b))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether a value of type ``from_`` can be cast to ``to`` under ``casting`` (numpy's rule; JAX's is
    numpy's ``can_cast``)."""
    return bool(np.can_cast(from_, to, casting=casting))  # type: ignore[arg-type]


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works (numpy's ``iterable``; a 0-d array is not iterable)."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def ndim(a: Any) -> int:
    """The number of dimensions of ``a`` (an array, or an array-like through numpy), as ``jnp.ndim``."""
    if hasattr(a, "ndim"):
        return a.ndim
    return int(np.ndim(a))


def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a`` (an array, or an array-like through numpy), as ``jnp.shape``."""
    if hasattr(a, "shape"):
        return tuple(a.shape)
    return np.shape(a)


def size(a: Any, axis: int | Sequence[int] | None = None) -> int:
    """The number of elements of ``a``, or along ``axis`` (an int or a tuple of them), as ``jnp.size``;
    a repeated or out-of-range axis is a ``ValueError``."""
    if axis is None and hasattr(a, "size"):
        return int(a.size)
    the_shape = shape(a)
    axes = canonical_axes(axis, len(the_shape)) if axis is not None else tuple(range(len(the_shape)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in size: {axis}")
    return math.prod(the_shape[i] for i in axes)


# --- greatest common divisor, least common multiple ------------------------------------------------

def _int_operands(name: str, x1: Any, x2: Any) -> list[Any]:
    x1, x2 = promote_and_broadcast(x1, x2)
    if not dtypes.is_integer(x1.dtype):
        raise ValueError(f"Arguments to toolkit.numpy.{name} must be integers.")
    return [x1, x2]


def _gcd(x1: Any, x2: Any) -> Any:
    def cond(xs: Any) -> Any:
        nonzero = ufuncs.not_equal(xs[1], ufuncs.constant_like(xs[1], 0))
        return lax_reductions.reduce_or(nonzero, tuple(range(nonzero.ndim)))  # any(): reductions sits above

    def body(xs: Any) -> Any:
        a, b = xs
        nonzero = ufuncs.not_equal(b, ufuncs.constant_like(b, 0))
        safe_b = ufuncs.where(nonzero, b, ufuncs.constant_like(b, 1))
        return ufuncs.where(nonzero, b, a), ufuncs.where(nonzero, lax_elementwise.rem(a, safe_b), ufuncs.constant_like(b, 0))

    # abs() again at the end: the most negative integer is its own abs(), so remainders can go negative (numpy's
    # gcd(-2**31, 6) is 2). JAX's loop does not end on such inputs; this one does, with numpy's answer.
    out = ufuncs.abs(lax_control_flow.while_loop(cond, body, (ufuncs.abs(x1), ufuncs.abs(x2)))[0])
    if getattr(out, "weak_type", False) and out.ndim:
        # JAX's loop body makes its zero with lax._const, strong for an array: only two weak scalars stay weak.
        out = lax_elementwise.convert_element_type(out, out.dtype, weak_type=False)
    return out


@compiled_whole()
def gcd(x1: Any, x2: Any) -> Any:
    """Greatest common divisor of integers (non-negative; ``gcd(0, 0) == 0``)."""
    check_arraylike("gcd", x1, x2)
    return _gcd(*_int_operands("gcd", x1, x2))


@compiled_whole()
def lcm(x1: Any, x2: Any) -> Any:
    """Least common multiple of integers (non-negative; 0 when either is 0)."""
    check_arraylike("lcm", x1, x2)
    x1, x2 = _int_operands("lcm", x1, x2)
    d = _gcd(x1, x2)
    zero = lax_elementwise.eq(d, ufuncs.constant_like(d, 0))
    return ufuncs.where(zero, ufuncs.constant_like(d, 0), ufuncs.abs(lax_elementwise.mul(
        x1, lax_elementwise.div(x2, ufuncs.where(zero, ufuncs.constant_like(d, 1), d)))))
