"""Reductions with numpy's ``axis``/``keepdims``/``dtype`` conventions."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import reductions as lax_reductions
from toolkit.numpy._core import asarray, canonical_axes, canonical_axis


def _keep(result: Any, shape: tuple, axes: tuple, keepdims: bool) -> Any:
    if not keepdims:
        return result
    from toolkit.lax.structural import reshape
    return reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    # numpy accumulates small integers and bools in the default integer type.
    if dtypes.is_bool(dtype) or (dtypes.is_signed(dtype) and dtype.itemsize < 4):
        return dtypes.DEFAULT_INT
    if dtypes.is_unsigned(dtype) and dtype.itemsize < 4:
        return dtypes.uint32
    return dtype


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    target = dtypes.canonicalize_dtype(dtype) if dtype is not None else _sum_dtype(a.dtype)
    if a.dtype != target:
        a = lax_elementwise.convert_element_type(a, target)
    return _keep(lax_reductions.reduce_sum(a, axes), a.shape, axes, keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    target = dtypes.canonicalize_dtype(dtype) if dtype is not None else _sum_dtype(a.dtype)
    if a.dtype != target:
        a = lax_elementwise.convert_element_type(a, target)
    return _keep(lax_reductions.reduce_prod(a, axes), a.shape, axes, keepdims)


def _minmax(reducer: Any, name: str):
    def fn(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
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
    a = asarray(a)
    if a.dtype != dtypes.bool_:
        a = lax_elementwise.convert_element_type(a, dtypes.bool_)
    axes = canonical_axes(axis, a.ndim)
    return _keep(lax_reductions.reduce_or(a, axes), a.shape, axes, keepdims)


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
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


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    target = dtypes.canonicalize_dtype(dtype) if dtype is not None else \
        (a.dtype if dtypes.is_inexact(a.dtype) else dtypes.DEFAULT_FLOAT)
    total = sum(a, axes, dtype=target, keepdims=keepdims)
    from toolkit.numpy.ufuncs import true_divide
    count = _count(a.shape, axes)  # symbolic for polymorphic shapes: computed at run time
    return true_divide(total, np.asarray(count, target) if type(count) is int else count)


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    a = asarray(a)
    axes = canonical_axes(axis, a.ndim)
    from toolkit.numpy.ufuncs import multiply, subtract, true_divide, conj, real
    centered = subtract(a, mean(a, axes, dtype=dtype, keepdims=True))
    squared = real(multiply(centered, conj(centered))) if dtypes.is_complex(centered.dtype) else \
        multiply(centered, centered)
    total = sum(squared, axes, keepdims=keepdims)
    n = _count(a.shape, axes) - ddof
    return true_divide(total, np.asarray(n, total.dtype) if type(n) is int else n)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    from toolkit.numpy.ufuncs import sqrt
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def _arg_reduction(reduce: Any, name: str):
    def fn(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        a = asarray(a)
        if axis is None:  # over the flattened array
            from toolkit.numpy.shapes import ravel
            return _keep(reduce(ravel(a), 0), a.shape, tuple(range(a.ndim)), keepdims)
        axis = canonical_axis(axis, a.ndim)
        return _keep(reduce(a, axis), a.shape, (axis,), keepdims)
    fn.__name__ = name
    fn.__doc__ = f"Index of the first {name[3:]}imum along ``axis`` (of the flattened array when None)."
    return fn


argmax = _arg_reduction(lax_reductions.argmax, "argmax")
argmin = _arg_reduction(lax_reductions.argmin, "argmin")
