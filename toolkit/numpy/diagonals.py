"""Diagonals: ``diagonal`` (of any two axes, as the last axis), ``diag`` (the
matrix with a vector on a diagonal, or a matrix's diagonal) and ``trace``."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes, shape_poly
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import structural as lax_structural
from toolkit.numpy import reductions, ufuncs
from toolkit.numpy._core import asarray, broadcast_to, canonical_axis, check_arraylike
from toolkit.numpy.creation import zeros
from toolkit.numpy.indexing import getitem
from toolkit.numpy.shapes import moveaxis


@compiled_whole(static_argnames=("offset", "axis1", "axis2"))
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset`` diagonal of the ``axis1``/``axis2`` planes, as the last axis (numpy's layout)."""
    check_arraylike("diagonal", a)
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal needs an array of rank at least 2, got shape {a.shape}")
    axis1, axis2 = canonical_axis(axis1, a.ndim), canonical_axis(axis2, a.ndim)
    if axis1 == axis2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = a.shape[-2], a.shape[-1]
    offset = int(offset)
    min_dim, max_dim = shape_poly.min_dim, shape_poly.max_dim
    length = max_dim(0, min_dim(rows, cols - offset) if offset >= 0 else min_dim(rows + offset, cols))
    if shape_poly.definitely_equal(length, 0):
        return zeros(tuple(a.shape[:-2]) + (0,), a.dtype)
    if shape_poly.is_symbolic_dim(length):
        positions = lax_structural.iota(np.int32, length)
        r = ufuncs.add(positions, np.int32(-offset)) if offset < 0 else positions
        c = ufuncs.add(positions, np.int32(offset)) if offset > 0 else positions
        return getitem(a, (Ellipsis, r, c))
    r = np.arange(length) + max(-offset, 0)
    c = np.arange(length) + max(offset, 0)
    return getitem(a, (Ellipsis, r, c))


@compiled_whole(static_argnames=("k",), lists_as_tuples=True)
def diag(v: Any, k: int = 0) -> Any:
    """1-D input: a 2-D array with ``v`` on diagonal ``k``; 2-D input: its ``k`` diagonal."""
    check_arraylike("diag", v)
    v = asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag needs a 1-D or 2-D array, got shape {v.shape}")
    n = v.shape[0] + abs(int(k))
    rows = lax_structural.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = lax_structural.broadcasted_iota(dtypes.int32, (n, n), 1)
    on_diagonal = lax_elementwise.eq(lax_elementwise.sub(cols, rows), broadcast_to(np.asarray(k, np.int32), (n, n)))
    # Row i of the diagonal holds v[i] (k >= 0) or v[i + k]; pad v to n so both cases index it by row or column.
    source = lax_structural.pad(v, np.zeros((), v.dtype), [(0, abs(int(k)), 0)])
    values = lax_structural.broadcast_in_dim(source, (n, n), (0 if k >= 0 else 1,))
    return lax_elementwise.select(on_diagonal, values, broadcast_to(np.zeros((), v.dtype), (n, n)))


# offset static too (JAX traces it): toolkit takes the diagonal by slicing, which needs its value.
@compiled_whole(static_argnames=("offset", "axis1", "axis2", "dtype"))
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: None = None) -> Any:
    """Sum along a diagonal (see ``diagonal``). ``out``: JAX accepts only None (``NotImplementedError``)."""
    check_arraylike("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    return reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
