"""Reductions with numpy's ``axis``/``keepdims``/``dtype`` conventions: sums,
products, extrema, ``any``/``all``, moments, arg-extrema, ``count_nonzero``,
``allclose``/``array_equal``, and the cumulative ``cumsum``/``cumprod`` (with
the array-API ``cumulative_sum``/``cumulative_prod``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import reductions as lax_reductions
from toolkit.lax import structural as lax_structural
from toolkit.lax import windowed as lax_windowed
from toolkit.numpy._core import asarray, canonical_axes, canonical_axis
from toolkit.numpy.shapes import _flatten_if_none, concatenate, ravel
from toolkit.numpy.ufuncs import (
    conj, equal, isclose, isnan, logical_and, logical_or, multiply, not_equal, real, sqrt, subtract, true_divide,
)


def _keep(result: Any, shape: tuple, axes: tuple, keepdims: bool) -> Any:
    if not keepdims:
        return result
    return lax_structural.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """``sum``/``prod`` accumulate bools and narrower integers in the default integer type, as JAX
    (int32, or int64 with x64 on; unsigned ones in uint32/uint64)."""
    default = dtypes.default_int_dtype()
    if dtypes.is_bool(dtype) or (dtypes.is_signed(dtype) and dtype.itemsize < default.itemsize):
        return default
    if dtypes.is_unsigned(dtype) and dtype.itemsize < default.itemsize:
        return dtypes.uint64 if default == dtypes.int64 else dtypes.uint32
    return dtype


def _cumulative_dtype(dtype: np.dtype) -> np.dtype:
    # numpy accumulates small integers and bools in the default integer type.
    if dtypes.is_bool(dtype) or (dtypes.is_signed(dtype) and dtype.itemsize < 4):
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned(dtype) and dtype.itemsize < 4:
        return dtypes.uint32
    return dtype


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """The sum of ``a``'s elements over ``axis`` (an int, a tuple, or None for all), as ``jnp.sum``.

    Booleans and small integers sum in the default integer type; ``dtype`` overrides; ``keepdims`` keeps the
    reduced dimensions with size 1. An axis out of range raises ``ValueError``.
    """
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    target = dtypes.canonicalize_explicit_dtype(dtype, "sum") if dtype is not None else _sum_dtype(a.dtype)
    if a.dtype != target:
        a = lax_elementwise.convert_element_type(a, target)
    return _keep(lax_reductions.reduce_sum(a, axes), a.shape, axes, keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """The product of ``a``'s elements over ``axis``, as ``jnp.prod`` (``dtype``/``keepdims`` as :func:`sum`)."""
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    target = dtypes.canonicalize_explicit_dtype(dtype, "sum") if dtype is not None else _sum_dtype(a.dtype)
    if a.dtype != target:
        a = lax_elementwise.convert_element_type(a, target)
    return _keep(lax_reductions.reduce_prod(a, axes), a.shape, axes, keepdims)


def _minmax(reducer: Any, name: str):
    def fn(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """The maximum (``max``, ``amax``) or minimum (``min``, ``amin``) of ``a`` over ``axis``, as ``jnp.max``.

        Reducing a dimension of size 0 is a ``ValueError`` (no identity); complex input is a ``TypeError``.
        """
        a = asarray(a)
        axes = canonical_axes(axis, a.ndim)
        for x in axes:
            if a.shape[x] == 0:
                raise ValueError(f"{name} of an empty dimension {x} (shape {a.shape}) has no identity")
        if dtypes.is_complex(a.dtype):
            raise TypeError(f"{name} is not defined for complex arrays")
        return _keep(reducer(a, axes), a.shape, axes, keepdims)
    fn.__name__ = name
    return fn


max = amax = _minmax(lax_reductions.reduce_max, "max")
min = amin = _minmax(lax_reductions.reduce_min, "min")


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether any element of ``a`` over ``axis`` is nonzero (as ``jnp.any``); a boolean array."""
    a = asarray(a)
    if a.dtype != dtypes.bool_:
        a = lax_elementwise.convert_element_type(a, dtypes.bool_)
    axes = canonical_axes(axis, a.ndim)
    return _keep(lax_reductions.reduce_or(a, axes), a.shape, axes, keepdims)


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether every element of ``a`` over ``axis`` is nonzero (as ``jnp.all``); a boolean array."""
    a = asarray(a)
    if a.dtype != dtypes.bool_:
        a = lax_elementwise.convert_element_type(a, dtypes.bool_)
    axes = canonical_axes(axis, a.ndim)
    return _keep(lax_reductions.reduce_and(a, axes), a.shape, axes, keepdims)


def _count(shape: tuple, axes: tuple) -> Any:
    n = 1
    for x in axes:
        n = n * shape[x]
    return n


def _mean_dtype(dtype: np.dtype) -> np.dtype:
    # JAX's to_inexact_dtype: a 64-bit integer gives float64 (then canonicalized), others float32.
    return dtypes.canonicalize_dtype(dtypes.float64 if dtype.itemsize == 8 else dtypes.float32)


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """The arithmetic mean over ``axis`` (as ``jnp.mean``); integers average in a float type, ``dtype`` overrides."""
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    target = dtypes.canonicalize_explicit_dtype(dtype, "mean") if dtype is not None else \
        (a.dtype if dtypes.is_inexact(a.dtype) else _mean_dtype(a.dtype))
    total = sum(a, axes, dtype=target, keepdims=keepdims)
    count = _count(a.shape, axes)  # symbolic for polymorphic shapes: computed at run time
    return true_divide(total, np.asarray(count, target) if type(count) is int else count)


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """The variance over ``axis`` with ``ddof`` delta degrees of freedom (as ``jnp.var``); complex values
    give the variance of their magnitude (a real array).
    """
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    centered = subtract(a, mean(a, axes, dtype=dtype, keepdims=True))
    squared = real(multiply(centered, conj(centered))) if dtypes.is_complex(centered.dtype) else \
        multiply(centered, centered)
    total = sum(squared, axes, keepdims=keepdims)
    n = _count(a.shape, axes) - ddof
    return true_divide(total, np.asarray(n, total.dtype) if type(n) is int else n)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """The standard deviation, ``sqrt(var(a, axis, dtype, ddof, keepdims))`` (as ``jnp.std``)."""
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def _arg_reduction(reduce: Any, name: str):
    def fn(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        a = asarray(a)
        if axis is None:  # over the flattened array
            return _keep(reduce(ravel(a), 0), a.shape, tuple(range(a.ndim)), keepdims)
        axis = canonical_axis(axis, a.ndim)
        return _keep(reduce(a, axis), a.shape, (axis,), keepdims)
    fn.__name__ = name
    fn.__doc__ = f"Index of the first {name[3:]}imum along ``axis`` (of the flattened array when None)."
    return fn


argmax = _arg_reduction(lax_reductions.argmax, "argmax")
argmin = _arg_reduction(lax_reductions.argmin, "argmin")


# --- counting and closeness -----------------------------------------------------------------------

def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements (default integer dtype)."""
    a = asarray(a)
    nonzero = not_equal(a, np.zeros((), a.dtype)) if a.dtype != dtypes.bool_ else a
    return sum(nonzero, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """Whether ``isclose`` holds everywhere (a bool array of shape ())."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and elements (a Python ``False`` when the shapes differ)."""
    a1, a2 = asarray(a1), asarray(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan and dtypes.is_inexact(a1.dtype):
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


# --- cumulative -----------------------------------------------------------------------------------

def _cumulative(name: str):
    def fn(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        a, axis = _flatten_if_none(a, axis)
        target = dtypes.canonicalize_explicit_dtype(dtype, name) if dtype is not None else _cumulative_dtype(a.dtype)
        if a.dtype != target:
            a = lax_elementwise.convert_element_type(a, target)
        return getattr(lax_windowed, name)(a, axis=axis)
    fn.__name__ = name
    fn.__doc__ = (f"Cumulative {name[3:]} along ``axis`` (``None``: flattened); small integers and bools "
                  f"accumulate in the default integer type, as in numpy.\n\nExample::\n\n    {name}(asarray([1, 2, 3]))\n")
    return fn


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")


def _array_api_cumulative(name: str, fn: Any, identity: int):
    def cumulative(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
        x = asarray(x)
        if x.ndim == 0:
            raise ValueError(f"The input must be non-scalar to take a cumulative {name[11:]}, however a scalar "
                             f"value or scalar array was given.")
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to an explicit "
                                 "value. The axis argument is only optional for one-dimensional arrays.")
            axis = 0
        axis = canonical_axis(axis, x.ndim)
        out = fn(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(out.shape)
            shape[axis] = 1
            init = lax_structural.broadcast_in_dim(np.asarray(identity, out.dtype), tuple(shape), ())
            out = concatenate([init, out], axis=axis)
        return out
    cumulative.__name__ = name
    cumulative.__doc__ = (f"Array-API cumulative {name[11:]} along ``axis`` (optional for 1-D input); "
                          f"``include_initial`` prepends {identity}.")
    return cumulative


cumulative_sum = _array_api_cumulative("cumulative_sum", cumsum, 0)
cumulative_prod = _array_api_cumulative("cumulative_prod", cumprod, 1)
