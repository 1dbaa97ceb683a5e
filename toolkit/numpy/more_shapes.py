"""Array-API shape helpers and index builders of ``jax.numpy``: ``permute_dims``,
``matrix_transpose``, ``unstack``, ``atleast_3d``, ``rollaxis``, ``block``,
``cumulative_sum``/``cumulative_prod`` (``include_initial``), ``indices`` and
the ``tril``/``triu``/``diag`` index tuples. Example::

    rows, cols = tnp.triu_indices(4, k=1)
    tnp.block([[a, b], [c, d]])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import structural as lax_structural
from toolkit.numpy._core import asarray, canonical_axis, is_array
from toolkit.numpy import extras, shapes


def permute_dims(a: Any, /, axes: tuple[int, ...]) -> Any:
    """``transpose(a, axes)``, the array-API name."""
    return shapes.transpose(a, axes)


def matrix_transpose(x: Any, /) -> Any:
    """The last two axes swapped (rank >= 2)."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={x.ndim}")
    return lax_structural.transpose(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = asarray(x)
    if not -x.ndim <= int(axis) < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    axis = int(axis) % x.ndim
    moved = shapes.moveaxis(x, axis, 0)
    return tuple(shapes.squeeze(lax_structural.slice(moved, (i,) + (0,) * (x.ndim - 1),
                                                     (i + 1,) + tuple(moved.shape[1:])), 0)
                 for i in range(x.shape[axis]))


def atleast_3d(*arys: Any) -> Any:
    """Arrays viewed with at least three dimensions: ``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` ``(M, N, 1)``."""
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = lax_structural.reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = lax_structural.reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = lax_structural.reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """``axis`` moved to just before position ``start`` (numpy's older ``moveaxis``)."""
    a = asarray(a)
    axis = canonical_axis(axis, a.ndim)
    start = int(start)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"start={start} must satisfy {-a.ndim}<=start<={a.ndim}")
    if start < 0:
        start += a.ndim
    if start > axis:
        start -= 1
    return shapes.moveaxis(a, axis, start)


def _block_depth(arrays: Any) -> int:
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError("jax.numpy.block does not allow empty list arguments.")
        depths = {_block_depth(a) for a in arrays}
        if len(depths) != 1:
            raise ValueError("Mismatched list depths in jax.numpy.block")
        return 1 + depths.pop()
    if isinstance(arrays, tuple):
        raise TypeError("jax.numpy.block does not allow tuples.")
    return 0


def _block(arrays: Any, depth: int, ndim: int) -> Any:
    if not isinstance(arrays, list):
        a = asarray(arrays)
        return lax_structural.reshape(a, (1,) * (ndim - a.ndim) + tuple(a.shape)) if a.ndim < ndim else a
    parts = [_block(a, depth - 1, ndim) for a in arrays]
    return shapes.concatenate(parts, axis=-depth)


def _max_ndim(arrays: Any) -> int:
    if isinstance(arrays, list):
        return max(_max_ndim(a) for a in arrays)
    return np.ndim(arrays) if not is_array(arrays) else arrays.ndim


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks (innermost lists concatenate along the last axis)."""
    depth = _block_depth(arrays)
    return _block(arrays, depth, max(depth, _max_ndim(arrays)))


def _cumulative(name: str, fn: Any, identity: int):
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
            out = shapes.concatenate([init, out], axis=axis)
        return out
    cumulative.__name__ = name
    cumulative.__doc__ = (f"Array-API cumulative {name[11:]} along ``axis`` (optional for 1-D input); "
                          f"``include_initial`` prepends {identity}.")
    return cumulative


cumulative_sum = _cumulative("cumulative_sum", extras.cumsum, 0)
cumulative_prod = _cumulative("cumulative_prod", extras.cumprod, 1)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """A grid of index arrays, stacked (or, with ``sparse``, a tuple of broadcastable arrays)."""
    dtype = dtypes.canonicalize_dtype(dtypes.DEFAULT_INT if dtype is None else dtype)
    dimensions = tuple(int(d) for d in dimensions)
    n = len(dimensions)
    out = []
    for i, d in enumerate(dimensions):
        shape = tuple(d if j == i else (1 if sparse else dimensions[j]) for j in range(n))
        out.append(lax_structural.broadcasted_iota(dtype, shape, i))
    if sparse:
        return tuple(out)
    if not out:
        return asarray(np.zeros((0,), dtype))
    return shapes.stack(out, 0)


def _tri_indices(n: int, k: int, m: int | None, lower: bool) -> tuple[Any, Any]:
    m = n if m is None else m
    mask = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    rows, cols = np.nonzero(mask)  # static sizes: computed in numpy
    return asarray(rows.astype(dtypes.DEFAULT_INT)), asarray(cols.astype(dtypes.DEFAULT_INT))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle (on and below diagonal ``k``) of an ``n x m`` array."""
    return _tri_indices(int(n), int(k), None if m is None else int(m), True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle (on and above diagonal ``k``) of an ``n x m`` array."""
    return _tri_indices(int(n), int(k), None if m is None else int(m), False)


def _shape_of(arr: Any) -> tuple:
    return tuple(arr.shape) if hasattr(arr, "shape") else np.shape(arr)


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``tril_indices`` for the shape of the 2-D ``arr``."""
    shape = _shape_of(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``triu_indices`` for the shape of the 2-D ``arr``."""
    shape = _shape_of(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(shape[0], k, shape[1])


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """``ndim`` copies of ``arange(n)``: the indices of the main diagonal."""
    n, ndim = int(n), int(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax_structural.iota(dtypes.DEFAULT_INT, n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """``diag_indices`` of the square array ``arr``."""
    shape = _shape_of(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))
