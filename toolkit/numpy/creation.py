"""Array creation: ``array``, ``zeros``, ``ones``, ``full``, ``arange``, ``eye``, ``linspace``, ``*_like``."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import canonicalize_shape
from toolkit.lax import elementwise as ew
from toolkit.lax import structural as st
from toolkit.numpy._core import asarray, broadcast_to, is_array


def array(obj: Any, dtype: Any = None, copy: bool = True) -> Any:
    """A toolkit array from array-like data (``copy`` is accepted for numpy compatibility)."""
    return asarray(obj, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    shape = canonicalize_shape(shape)
    if dtype is None:
        dtype = fill_value.dtype if is_array(fill_value) or isinstance(fill_value, np.ndarray) else \
            dtypes.dtype_of(fill_value)
    dtype = dtypes.canonicalize_dtype(dtype)
    value = asarray(fill_value, dtype) if is_array(fill_value) else np.asarray(fill_value, dtype)
    return broadcast_to(value if is_array(value) else asarray(value), shape)


def zeros(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 0, dtypes.DEFAULT_FLOAT if dtype is None else dtype)


def ones(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 1, dtypes.DEFAULT_FLOAT if dtype is None else dtype)


def empty(shape: Any, dtype: Any = None) -> Any:
    return zeros(shape, dtype)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(a, 1, dtype, shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    a = a if is_array(a) else np.asarray(a)
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values; bounds must be concrete (not traced)."""
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if is_array(v) and not hasattr(v, "_impl"):
            raise TypeError(f"arange: {name} must be a concrete value, not a traced one; the result's size must be "
                            "known when tracing")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    all_int = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
    if dtype is None:
        dtype = dtypes.DEFAULT_INT if all_int else dtypes.DEFAULT_FLOAT
    dtype = dtypes.canonicalize_dtype(dtype)
    if all_int and step == 1 and start == 0:
        return st.iota(dtype, max(int(stop), 0))
    return asarray(np.arange(start, stop, step).astype(dtype))


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: Any = None) -> Any:
    dtype = dtypes.DEFAULT_FLOAT if dtype is None else dtype
    return asarray(np.linspace(start, stop, num, endpoint=endpoint).astype(dtypes.canonicalize_dtype(dtype)))


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """A 2-D array with ones on the ``k``-th diagonal."""
    M = N if M is None else M
    dtype = dtypes.canonicalize_dtype(dtypes.DEFAULT_FLOAT if dtype is None else dtype)
    rows = st.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = st.broadcasted_iota(dtypes.int32, (N, M), 1)
    offset = broadcast_to(asarray(np.asarray(k, np.int32)), (N, M))
    return ew.convert_element_type(ew.eq(ew.add(rows, offset), cols), dtype)


def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    M = N if M is None else M
    dtype = dtypes.canonicalize_dtype(dtypes.DEFAULT_FLOAT if dtype is None else dtype)
    rows = st.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = st.broadcasted_iota(dtypes.int32, (N, M), 1)
    offset = broadcast_to(asarray(np.asarray(k, np.int32)), (N, M))
    return ew.convert_element_type(ew.le(cols, ew.add(rows, offset)), dtype)
