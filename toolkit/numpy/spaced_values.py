"""Values spaced evenly, as ``jax.numpy`` has them: ``linspace``, and on a log scale ``logspace`` (powers of
``base`` at evenly spaced exponents) and ``geomspace`` (a geometric progression between the endpoints), all with
array endpoints (broadcast, traced or not), ``endpoint``, ``dtype`` and ``axis``, computed as JAX computes them
(``start * (1 - t) + stop * t`` in the result's precision, one compiled program when called eagerly), so the
values are JAX's bit for bit.

Example::

    tnp.linspace(0.0, 1.0, 5)        # [0, 0.25, 0.5, 0.75, 1]
    tnp.logspace(0.0, 3.0, 4)        # [1, 10, 100, 1000]
    tnp.geomspace(1.0, 256.0, 9)     # [1, 2, 4, ..., 256]
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from toolkit.core import dtypes, shape_poly
from toolkit.core.tracing import Tracer
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import structural as lax_structural
from toolkit.numpy import creation, shapes, ufuncs
from toolkit.numpy._core import asarray, broadcast_to, canonical_axis, check_arraylike, convert, placed
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


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = None,
             axis: int = 0, *, device: Any = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (arrays broadcast; the new axis at ``axis``), as
    ``jnp.linspace``: with ``retstep`` also the step. ``num`` and ``axis`` are static; a symbolic ``num`` (shape
    polymorphism) takes Python-number bounds and neither ``retstep`` nor ``axis``. ``device`` (a device or sharding)
    places the values (not the step), as JAX's."""
    if device is not None:
        out = linspace(start, stop, num, endpoint, retstep, dtype, axis)
        if retstep:
            return placed(out[0], device, None, "linspace"), out[1]
        return placed(out, device, None, "linspace")
    if shape_poly.is_symbolic_dim(num):
        check_arraylike("linspace", start, stop)
        if retstep or axis != 0:
            raise NotImplementedError("toolkit.numpy.linspace: retstep and axis need a static num")
        out_dtype = dtypes.default_float_dtype() if dtype is None else \
            dtypes.canonicalize_explicit_dtype(dtype, "linspace")
        return _symbolic_linspace(float(start), float(stop), num, endpoint, out_dtype)
    num = _static_int(num, "num argument of jnp.linspace")
    axis = _static_int(axis, "axis argument of jnp.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return _linspace(start, stop, num, endpoint, bool(retstep), dtype, axis)


@compiled_whole(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"), lists_as_tuples=True)
def _linspace(start: Any, stop: Any, num: int, endpoint: bool, retstep: bool, dtype: Any, axis: int) -> Any:
    """JAX's ``_linspace`` (a jit of its own in JAX too): the values, and the step when ``retstep``."""
    out_dtype, compute = _result_dtype("linspace", start, stop, dtype)
    start, stop = asarray(start, compute), asarray(stop, compute)
    out = _to_dtype(_linspace0(start, stop, num, endpoint, compute), out_dtype)
    out = shapes.moveaxis(out, 0, canonical_axis(axis, out.ndim))
    if not retstep:
        return out
    div = num - 1 if endpoint else num
    if num > 1:
        delta = ufuncs.divide(convert(ufuncs.subtract(stop, start), compute), np.asarray(div, compute))
    elif num == 1 and not endpoint:
        delta = convert(ufuncs.subtract(stop, start), compute)
    else:
        delta = asarray(np.asarray(np.nan, compute))
    return out, delta


def _symbolic_linspace(start: float, stop: float, num: Any, endpoint: bool, dtype: np.dtype) -> Any:
    """numpy's formula ``start + i * (stop - start) / div`` with the last value exactly ``stop`` (when
    ``endpoint`` and ``num > 1``), computed in float32 at run time."""
    f32 = np.float32
    positions = lax_structural.iota(np.int32, num)
    count = lax_structural.dimension_as_value(num, np.int32)
    div = ufuncs.subtract(count, np.int32(1)) if endpoint else count
    step = ufuncs.divide(np.asarray(stop - start, f32), lax_elementwise.convert_element_type(ufuncs.maximum(div, np.int32(1)), f32))
    values = ufuncs.add(ufuncs.multiply(lax_elementwise.convert_element_type(positions, f32), step), np.asarray(start, f32))
    if endpoint:
        last = ufuncs.equal(positions, ufuncs.subtract(count, np.int32(1)))
        last = ufuncs.logical_and(last, ufuncs.greater(count, np.int32(1)))
        values = ufuncs.where(last, np.asarray(stop, f32), values)
    return lax_elementwise.convert_element_type(values, dtype)


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
