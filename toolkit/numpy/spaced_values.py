"""Values spaced evenly on a log scale, as ``jax.numpy`` has them: ``logspace`` (powers of ``base``
at evenly spaced exponents) and ``geomspace`` (a geometric progression between the endpoints), both with
array endpoints (broadcast), ``endpoint``, ``dtype`` and ``axis``.

Example::

    tnp.logspace(0.0, 3.0, 4)        # [1, 10, 100, 1000]
    tnp.geomspace(1.0, 256.0, 9)     # [1, 2, 4, ..., 256]
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import Tracer
from toolkit.lax import structural as lax_structural
from toolkit.numpy import creation, shapes, ufuncs
from toolkit.numpy._core import asarray, broadcast_to, canonical_axis, check_arraylike, convert
from toolkit.core.compiled_whole import compiled_whole


def _static_int(value: Any, what: str) -> int:
    if isinstance(value, Tracer):
        raise TypeError(f"the {what} must be static (a Python int), not a traced value")
    return operator.index(value)


def _inexact(dtype: np.dtype) -> np.dtype:
    return dtypes.to_inexact_dtype(dtype)


def _result_dtype(name: str, start: Any, stop: Any, dtype: Any) -> tuple[np.dtype, np.dtype]:
    check_arraylike(name, start, stop)
    out = _inexact(dtypes.result_type(start, stop)) if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, name)
    return out, _inexact(out)


def _linspace0(start: Any, stop: Any, num: int, endpoint: bool, dtype: np.dtype) -> Any:
    """JAX's linspace of array endpoints along a new first axis, computed in ``dtype``."""
    bounds = tuple(np.broadcast_shapes(tuple(np.shape(start)), tuple(np.shape(stop))))
    start, stop = broadcast_to(convert(start, dtype), bounds), broadcast_to(convert(stop, dtype), bounds)
    if num == 0:
        return creation.zeros((0,) + bounds, dtype)
    if num == 1:
        return shapes.reshape(start, (1,) + bounds)
    div = num - 1 if endpoint else num
    real = np.dtype(dtypes.finfo(dtype).dtype)
    step = ufuncs.divide(lax_structural.iota(real, div), np.asarray(div, real))
    step = convert(shapes.reshape(step, (div,) + (1,) * len(bounds)), dtype)
    out = ufuncs.add(ufuncs.multiply(shapes.reshape(start, (1,) + bounds), ufuncs.subtract(np.asarray(1, dtype), step)),
                     ufuncs.multiply(shapes.reshape(stop, (1,) + bounds), step))
    if endpoint:
        out = shapes.concatenate([out, shapes.reshape(stop, (1,) + bounds)], axis=0)
    return out


def _to_dtype(x: Any, dtype: np.dtype) -> Any:
    if dtypes.is_integer(dtype) and not dtypes.is_integer(x.dtype):
        x = ufuncs.floor(x) if not dtypes.is_complex(x.dtype) else x
    return convert(x, dtype)


@compiled_whole(static_argnames=("num", "endpoint", "dtype", "axis"), lists_as_tuples=True)
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0, dtype: Any = None,
             axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)`` along ``axis``, as ``jnp.logspace``; ``num`` and ``axis``
    are static, a negative ``num`` is a ``ValueError``."""
    num, axis = _static_int(num, "num argument of jnp.logspace"), _static_int(axis, "axis argument of jnp.logspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    out_dtype, compute = _result_dtype("logspace", start, stop, dtype)
    lin = _linspace0(asarray(start, compute), asarray(stop, compute), num, endpoint, compute)
    out = _to_dtype(ufuncs.power(base, lin), out_dtype)
    return shapes.moveaxis(out, 0, canonical_axis(axis, out.ndim))


@compiled_whole(static_argnames=("num", "endpoint", "dtype", "axis"), lists_as_tuples=True)
def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """``num`` values from ``start`` to ``stop`` in geometric progression along ``axis``, as
    ``jnp.geomspace`` (the sign of ``start`` is kept; zero endpoints give NaNs, not an error)."""
    num, axis = _static_int(num, "num argument of jnp.geomspace"), _static_int(axis, "axis argument of jnp.geomspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    out_dtype, compute = _result_dtype("geomspace", start, stop, dtype)
    start, stop = asarray(start, compute), asarray(stop, compute)
    sign = ufuncs.sign(start)
    lin = _linspace0(ufuncs.log10(ufuncs.divide(start, sign)), ufuncs.log10(ufuncs.divide(stop, sign)), num, endpoint,
                     compute)
    out = ufuncs.multiply(sign, ufuncs.power(np.asarray(10.0, compute), lin))
    out = _to_dtype(out, out_dtype)
    return shapes.moveaxis(out, 0, canonical_axis(axis, out.ndim))
