"""More elementwise math of ``jax.numpy``: logs in other bases, rounding towards
zero, sign manipulation, NaN-aware max/min, angle conversion, integer gcd/lcm,
``divmod``/``modf``, ``nan_to_num``, ``sinc`` and the selection helpers
``select``/``piecewise``; same promotion and weak types as JAX. Example::

    import toolkit.numpy as tnp
    tnp.hypot(3.0, tnp.asarray([4.0]))      # [5.]
    tnp.select([x < 0, x > 1], [-x, x * 2], default=0)
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import control_flow as lax_control_flow
from toolkit.lax import elementwise as lax_elementwise
from toolkit.numpy._core import asarray, broadcast_shapes, broadcast_to, convert, promote_and_broadcast, \
    promote_inexact, shape_of
from toolkit.numpy import reductions, ufuncs


def _inexact(*args: Any) -> list[Any]:
    """JAX's ``promote_args_inexact``: the common dtype, made floating when it is not, broadcast."""
    return promote_and_broadcast(*promote_inexact(*args))


def _const(x: Any, value: Any) -> Any:
    """``value`` shaped and typed like ``x`` (weakly typed when ``x`` is)."""
    c = broadcast_to(np.asarray(value, x.dtype), x.shape)
    return lax_elementwise.convert_element_type(c, x.dtype, weak_type=True) if x.weak_type else c


def _no_complex(name: str, x: Any) -> None:
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"ufunc '{name}' does not support complex dtypes")


def log2(x: Any, /) -> Any:
    """Base-2 logarithm, ``log(x) / log(2)`` (integers computed as floats)."""
    x, = _inexact(x)
    return lax_elementwise.div(lax_elementwise.log(x), lax_elementwise.log(broadcast_to(np.asarray(2, x.dtype), x.shape)))


def log10(x: Any, /) -> Any:
    """Base-10 logarithm, ``log(x) / log(10)``."""
    x, = _inexact(x)
    return lax_elementwise.div(lax_elementwise.log(x), lax_elementwise.log(broadcast_to(np.asarray(10, x.dtype), x.shape)))


def trunc(x: Any) -> Any:
    """Round towards zero (integers unchanged)."""
    x = asarray(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    return ufuncs.where(lax_elementwise.lt(x, _const(x, 0)), lax_elementwise.ceil(x), lax_elementwise.floor(x))



def rint(x: Any, /) -> Any:
    """Round half to even; integers and bools become the default float, as in JAX."""
    x = asarray(x)
    if not dtypes.is_inexact(x.dtype):
        return lax_elementwise.convert_element_type(x, dtypes.DEFAULT_FLOAT)
    if dtypes.is_complex(x.dtype):
        return lax_elementwise.complex(lax_elementwise.round(lax_elementwise.real(x), 1),
                                       lax_elementwise.round(lax_elementwise.imag(x), 1))
    return lax_elementwise.round(x, 1)


def fabs(x: Any, /) -> Any:
    """Absolute value as a float (complex raises ``TypeError``)."""
    x, = _inexact(x)
    _no_complex("fabs", x)
    return lax_elementwise.abs(x)


def positive(x: Any, /) -> Any:
    """``+x``: a copy of ``x``."""
    return asarray(x)


def signbit(x: Any, /) -> Any:
    """True where the sign bit is set (also for ``-0.0`` and negative NaNs)."""
    x = asarray(x)
    if dtypes.is_bool(x.dtype) or dtypes.is_unsigned(x.dtype):
        return broadcast_to(np.asarray(False), x.shape)
    if dtypes.is_integer(x.dtype):
        return lax_elementwise.lt(x, _const(x, 0))
    _no_complex("signbit", x)
    int_type = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    bits = lax_elementwise.bitcast_convert_type(x, int_type)
    return lax_elementwise.lt(bits, _const(bits, 0))


def copysign(x1: Any, x2: Any, /) -> Any:
    """The magnitude of ``x1`` with the sign (bit) of ``x2``."""
    x1, x2 = _inexact(x1, x2)
    _no_complex("copysign", x1)
    return ufuncs.where(signbit(x2), lax_elementwise.neg(lax_elementwise.abs(x1)), lax_elementwise.abs(x1))


def hypot(x1: Any, x2: Any, /) -> Any:
    """``sqrt(x1**2 + x2**2)`` without intermediate overflow (infinite when either is)."""
    x1, x2 = _inexact(x1, x2)
    if dtypes.is_complex(x1.dtype):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please convert to real values "
                         "first, such as by using abs(x)")
    x1, x2 = lax_elementwise.abs(x1), lax_elementwise.abs(x2)
    inf = ufuncs.logical_or(ufuncs.isinf(x1), ufuncs.isinf(x2))
    big, small = lax_elementwise.max(x1, x2), lax_elementwise.min(x1, x2)
    zero = lax_elementwise.eq(big, _const(big, 0))
    ratio = lax_elementwise.div(small, ufuncs.where(zero, _const(big, 1), big))
    out = ufuncs.where(zero, big, lax_elementwise.mul(big, lax_elementwise.sqrt(
        lax_elementwise.add(_const(big, 1), lax_elementwise.integer_pow(ratio, 2)))))
    return ufuncs.where(inf, _const(out, np.inf), out)


def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum ignoring NaNs (NaN only where both are)."""
    x1, x2 = promote_and_broadcast(x1, x2)
    return ufuncs.where(ufuncs.logical_or(ufuncs.greater(x1, x2), ufuncs.isnan(x2)), x1, x2)


def fmin(x1: Any, x2: Any) -> Any:
    """Elementwise minimum ignoring NaNs (NaN only where both are)."""
    x1, x2 = promote_and_broadcast(x1, x2)
    return ufuncs.where(ufuncs.logical_or(ufuncs.less(x1, x2), ufuncs.isnan(x2)), x1, x2)


def heaviside(x1: Any, x2: Any, /) -> Any:
    """0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2`` where ``x1 == 0``."""
    x1, x2 = _inexact(x1, x2)
    zero = _const(x1, 0)
    return ufuncs.where(lax_elementwise.lt(x1, zero), zero,
                        ufuncs.where(lax_elementwise.gt(x1, zero), _const(x1, 1),
                                     ufuncs.where(ufuncs.isnan(x1), x1, x2)))


def deg2rad(x: Any, /) -> Any:
    """Degrees to radians."""
    x, = _inexact(x)
    return lax_elementwise.mul(x, _const(x, np.pi / 180))


def rad2deg(x: Any, /) -> Any:
    """Radians to degrees."""
    x, = _inexact(x)
    return lax_elementwise.mul(x, _const(x, 180 / np.pi))


radians = deg2rad
degrees = rad2deg


def logaddexp2(x1: Any, x2: Any, /) -> Any:
    """``log2(2**x1 + 2**x2)`` without overflow."""
    x1, x2 = _inexact(x1, x2)
    _no_complex("logaddexp2", x1)
    amax = lax_elementwise.max(x1, x2)
    delta = lax_elementwise.sub(x1, x2)
    term = lax_elementwise.mul(
        lax_elementwise.log1p(lax_elementwise.exp2(lax_elementwise.neg(lax_elementwise.abs(delta)))),
        _const(amax, 1 / np.log(2)))
    return ufuncs.where(lax_elementwise.ne(delta, delta), lax_elementwise.add(x1, x2),
                        lax_elementwise.add(amax, term))


def pow(x1: Any, x2: Any, /) -> Any:  # noqa: A001 - numpy's name
    """Alias of ``power``."""
    return ufuncs.power(x1, x2)


def float_power(x: Any, y: Any, /) -> Any:
    """``x ** y`` computed in floating point (integer operands promoted)."""
    return lax_elementwise.pow(*_inexact(x, y))


def _int_operands(name: str, x1: Any, x2: Any) -> list[Any]:
    x1, x2 = promote_and_broadcast(x1, x2)
    if not dtypes.is_integer(x1.dtype):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return [x1, x2]


def _gcd(x1: Any, x2: Any) -> Any:
    def cond(xs: Any) -> Any:
        return reductions.any(ufuncs.not_equal(xs[1], _const(xs[1], 0)))

    def body(xs: Any) -> Any:
        a, b = xs
        nonzero = ufuncs.not_equal(b, _const(b, 0))
        safe_b = ufuncs.where(nonzero, b, _const(b, 1))
        return ufuncs.where(nonzero, b, a), ufuncs.where(nonzero, lax_elementwise.rem(a, safe_b), _const(b, 0))

    return lax_control_flow.while_loop(cond, body, (ufuncs.abs(x1), ufuncs.abs(x2)))[0]


def gcd(x1: Any, x2: Any) -> Any:
    """Greatest common divisor of integers (non-negative; ``gcd(0, 0) == 0``)."""
    return _gcd(*_int_operands("gcd", x1, x2))


def lcm(x1: Any, x2: Any) -> Any:
    """Least common multiple of integers (non-negative; 0 when either is 0)."""
    x1, x2 = _int_operands("lcm", x1, x2)
    d = _gcd(x1, x2)
    zero = lax_elementwise.eq(d, _const(d, 0))
    return ufuncs.where(zero, _const(d, 0), ufuncs.abs(lax_elementwise.mul(
        x1, lax_elementwise.div(x2, ufuncs.where(zero, _const(d, 1), d)))))


def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:  # noqa: A001 - numpy's name
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    return ufuncs.floor_divide(x1, x2), ufuncs.remainder(x1, x2)


def modf(x: Any, /, out: None = None) -> tuple[Any, Any]:
    """``(fractional part, integral part)``, both with the sign of ``x``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    x, = _inexact(x)
    whole = trunc(x)
    return lax_elementwise.sub(x, whole), whole


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    """NaN replaced by ``nan``, infinities by ``posinf``/``neginf`` (default: the dtype's largest finite values)."""
    del copy
    x = asarray(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        return lax_elementwise.complex(
            nan_to_num(lax_elementwise.real(x), nan=nan, posinf=posinf, neginf=neginf),
            nan_to_num(lax_elementwise.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = ufuncs.where(ufuncs.isnan(x), asarray(nan, x.dtype), x)
    out = ufuncs.where(lax_elementwise.eq(out, _const(out, np.inf)), asarray(posinf, x.dtype), out)
    return ufuncs.where(lax_elementwise.eq(out, _const(out, -np.inf)), asarray(neginf, x.dtype), out)


def sinc(x: Any, /) -> Any:
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x, = _inexact(x)
    zero = lax_elementwise.eq(x, _const(x, 0))
    pi_x = lax_elementwise.mul(_const(x, np.pi), ufuncs.where(zero, _const(x, 1), x))
    return ufuncs.where(zero, _const(x, 1), lax_elementwise.div(lax_elementwise.sin(pi_x), pi_x))


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """``choicelist[i]`` where ``condlist[i]`` is the first true condition, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    choices = promote_and_broadcast(default, *choicelist)
    conds = [ufuncs._bool(c) for c in condlist]
    shape = broadcast_shapes(choices[0].shape, *[shape_of(c) for c in conds])
    out = broadcast_to(choices[0], shape)
    for cond, choice in reversed(list(zip(conds, choices[1:]))):
        out = ufuncs.where(cond, choice, out)
    return out


def piecewise(x: Any, condlist: Any, funclist: list[Any | Callable[..., Any]], *args: Any, **kw: Any) -> Any:
    """``funclist[i](x)`` where ``condlist[i]`` holds (the last true condition wins); an extra
    function is the default, else 0. Constants in ``funclist`` stand for constant functions.
    Every function is evaluated on the whole of ``x``; the result has ``x``'s dtype."""
    x = asarray(x)
    if isinstance(condlist, (list, tuple)):
        conds = [ufuncs._bool(c) for c in condlist]
    else:
        c = ufuncs._bool(condlist)
        conds = [c] if c.ndim == x.ndim or c.ndim == 0 else [c[i] for i in range(c.shape[0])]
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        default, funclist = funclist[-1], list(funclist[:-1])
    elif nf == nc:
        default = 0
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")

    def value(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return broadcast_to(convert(v, x.dtype, False), x.shape)

    out = value(default)
    for cond, f in zip(conds, funclist):
        out = ufuncs.where(broadcast_to(cond, x.shape), value(f), out)
    return out
