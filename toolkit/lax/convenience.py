"""Convenience wrappers of ``jax.lax`` built from toolkit's primitives (no new primitives).

Shape helpers (``expand_dims``, ``squeeze``, ``collapse``, ``broadcast_to_rank``),
slicing along one axis (``slice_in_dim``, ``index_in_dim`` and the dynamic
variants, which wrap negative indices like JAX's ``allow_negative_indices=True``),
``reciprocal``/``square``, ``full_like``, ``sort_key_val``, ``batch_matmul``,
``cumlogsumexp`` (a whole-axis ``reduce_window`` of logaddexp, as the cumulative
ops), ``associative_scan`` (JAX's odd/even parallel-prefix recursion over static
strided slices) and ``map`` (a ``scan`` over the leading axis; ``batch_size``
vmaps ``f`` over chunks). Example::

    from toolkit import lax
    lax.associative_scan(lax.add, xs)            # == lax.cumsum(xs)
    lax.map(f, xs, batch_size=8)
    lax.dynamic_index_in_dim(x, i, axis=1, keepdims=False)
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from toolkit import tree_util
from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.core.shape_poly import is_symbolic_dim
from toolkit.lax import elementwise, linalg, sorting, structural

__all__ = [
    "expand_dims", "squeeze", "slice_in_dim", "index_in_dim", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "reciprocal", "square", "collapse",
    "broadcast_to_rank", "full_like", "sort_key_val", "batch_matmul", "associative_scan", "map", "cumlogsumexp",
]


def _canonicalize_axis(axis: Any, ndim: int) -> int:
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _shape(x: Any) -> tuple:
    return tuple(aval_of(x).shape)


# --- shapes ----------------------------------------------------------------------

def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` with size-1 dimensions inserted at ``dimensions`` (positions in the result)."""
    dimensions = tuple(dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    shape = list(_shape(array))
    ndim_out = len(shape) + len(dimensions)
    dims = [_canonicalize_axis(d, ndim_out) for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    for d in sorted(dims):
        shape.insert(d, 1)
    return structural.broadcast_in_dim(array, shape, [i for i in range(ndim_out) if i not in set(dims)])


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` without its size-1 ``dimensions``."""
    shape = _shape(array)
    dims = tuple(sorted(_canonicalize_axis(d, len(shape)) for d in dimensions))
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions are not unique: {dims}")
    if any(is_symbolic_dim(shape[d]) or shape[d] != 1 for d in dims):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                         f"got shape={shape} and dimensions={dims}")
    if not dims:
        return array
    return structural.reshape(array, tuple(s for i, s in enumerate(shape) if i not in dims))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Dimensions ``[start_dimension, stop_dimension)`` of ``operand`` merged into one (row-major)."""
    shape = _shape(operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}[{start_dimension}:{stop_dimension}]")
    size = math.prod(shape[lo:hi])
    return structural.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading size-1 dimensions added up to rank ``rank``."""
    ndim = len(_shape(x))
    if ndim == rank:
        return x if not dtypes.is_python_scalar(x) else structural.reshape(x, ())
    return structural.broadcast_in_dim(x, (1,) * (rank - ndim) + _shape(x), tuple(range(rank - ndim, rank)))


# --- slicing along one axis ---------------------------------------------------------

def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1,
                 axis: int = 0) -> Any:
    """``operand[..., start_index:limit_index:stride, ...]`` along ``axis`` (negative bounds count from the end)."""
    shape = _shape(operand)
    axis = int(axis)
    size = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = size if limit_index is None else int(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return structural.slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The ``index``-th slice along ``axis``; a static index out of bounds raises ``IndexError``."""
    index, axis = int(index), int(axis)
    size = _shape(operand)[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _index_dtype(i: Any) -> np.dtype:
    if dtypes.is_python_scalar(i):
        return dtypes.DEFAULT_INT
    return dtypes.canonicalize_dtype(aval_of(i).dtype)


def _start_index(i: Any, size: Any, allow_negative: bool) -> Any:
    """A scalar start index with negative values wrapped (JAX's ``allow_negative_indices``)."""
    dtype = _index_dtype(i)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"index arguments to dynamic_slice must be integers of the same type, got: {dtype.name}")
    if isinstance(i, (int, np.integer)) and not is_symbolic_dim(size):
        if int(i) < 0:
            if not allow_negative:
                raise ValueError(f"Index {i} is out of bounds for dimension {size} if allow_negative_indices=False")
            i = int(i) + size
        return np.asarray(i, dtype)
    if dtypes.is_unsigned(dtype) or not allow_negative:
        return i
    size_value = structural.dimension_as_value(size, dtype) if is_symbolic_dim(size) else np.asarray(size, dtype)
    zero = np.zeros((), dtype)
    if aval_of(i).weak_type:
        i = elementwise.convert_element_type(i, dtype)
    return elementwise.select(elementwise.lt(i, zero), elementwise.add(i, size_value), i)


def _starts(operand_shape: tuple, axis: int, start_index: Any, allow_negative: bool) -> list[Any]:
    start = _start_index(start_index, operand_shape[axis], allow_negative)
    zero = np.zeros((), _index_dtype(start))
    return [start if d == axis else zero for d in range(len(operand_shape))]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """``slice_size`` elements along ``axis`` from the (traced) ``start_index``, clamped into bounds."""
    shape = _shape(operand)
    axis = int(axis)
    sizes = list(shape)
    sizes[axis] = slice_size
    return structural.dynamic_slice(operand, _starts(shape, axis, start_index, allow_negative_indices), sizes)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """The (traced) ``index``-th slice along ``axis``, the index clamped into bounds."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (int(axis),))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with ``update`` written along ``axis`` from the (traced) ``start_index``."""
    shape = _shape(operand)
    axis = int(axis)
    return structural.dynamic_update_slice(operand, update,
                                           _starts(shape, axis, start_index, allow_negative_indices))


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with ``update`` (rank one less, or equal with size 1 along ``axis``) at ``index``."""
    axis = int(axis)
    if len(_shape(update)) != len(_shape(operand)):
        if len(_shape(update)) + 1 != len(_shape(operand)):
            raise ValueError(f"dynamic_update_index_in_dim: update of rank {len(_shape(update))} needs rank "
                             f"{len(_shape(operand))} or {len(_shape(operand)) - 1}")
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices=allow_negative_indices)


# --- elementwise -------------------------------------------------------------------

def square(x: Any) -> Any:
    """Elementwise ``x * x``."""
    return elementwise.integer_pow(x, 2)


def reciprocal(x: Any) -> Any:
    """Elementwise ``1 / x`` (``integer_pow(x, -1)``: integers raise ``TypeError``, as in JAX)."""
    aval = aval_of(x)
    if dtypes.is_integer(aval.dtype) or dtypes.is_bool(aval.dtype):
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({aval}, -1)")
    return elementwise.integer_pow(x, -1)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None, sharding: Any = None) -> Any:
    """An array like ``x`` (its shape and dtype unless given) filled with the scalar ``fill_value``.

    Weakly typed when ``dtype`` is None and ``x`` is.
    """
    aval = aval_of(x)
    fill_shape = tuple(aval.shape) if shape is None else tuple(shape)
    weak = dtype is None and aval.weak_type
    dtype = dtypes.canonicalize_dtype(aval.dtype if dtype is None else dtype)
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    if hasattr(fill_value, "aval") or hasattr(fill_value, "_impl"):
        fill = elementwise.convert_element_type(fill_value, dtype, weak_type=weak)
    else:
        fill = np.asarray(fill_value, dtype)
        if weak:
            fill = elementwise.convert_element_type(fill, dtype, weak_type=True)
    return structural.full(fill_shape, fill, sharding=sharding)


# --- sorting and products ------------------------------------------------------------

def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> tuple[Any, Any]:
    """``keys`` sorted along ``dimension`` and ``values`` permuted the same way."""
    k, v = sorting.sort((keys, values), dimension, is_stable=is_stable, num_keys=1)
    return k, v


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over the leading (batch) dimensions of two arrays of equal rank >= 2."""
    ldim, rdim = len(_shape(lhs)), len(_shape(rhs))
    if min(ldim, rdim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ldim}, {rdim}")
    if ldim != rdim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {ldim}, {rdim}")
    batch = tuple(range(ldim - 2))
    return linalg.dot_general(lhs, rhs, (((ldim - 1,), (rdim - 2,)), (batch, batch)), precision=precision)


# --- cumulative and scans --------------------------------------------------------------

def _logaddexp(x: Any, y: Any) -> Any:
    amax = elementwise.max(x, y)
    delta = elementwise.sub(x, y)
    return elementwise.select(elementwise.ne(delta, delta), elementwise.add(x, y),
                              elementwise.add(amax, elementwise.log1p(elementwise.exp(
                                  elementwise.neg(elementwise.abs(delta))))))


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative ``log(sum(exp(operand)))`` along ``axis``, computed stably (floating operands)."""
    from toolkit.lax.windowed import reduce_window
    aval = aval_of(operand)
    if not dtypes.is_float(aval.dtype):
        raise TypeError(f"cumlogsumexp does not accept dtype {aval.dtype.name}. Accepted dtypes are subtypes of "
                        "floating.")
    ndim = aval.ndim
    if ndim == 0:
        raise ValueError(f"cumlogsumexp needs an operand of rank at least 1, got {aval.str_short()}")
    axis = _canonicalize_axis(axis, ndim)
    size = aval.shape[axis]
    if is_symbolic_dim(size):
        raise NotImplementedError("cumlogsumexp along an axis of symbolic size")
    if size == 0:
        return operand
    window, padding = [1] * ndim, [(0, 0)] * ndim
    window[axis] = size
    padding[axis] = (0, size - 1) if reverse else (size - 1, 0)
    return reduce_window(operand, np.asarray(-np.inf, aval.dtype), _logaddexp, window, (1,) * ndim, padding)


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """Elements of ``a`` at even and ``b`` at odd positions along ``axis`` (``a`` as long as ``b`` or one longer)."""
    a_len, b_len = _shape(a)[axis], _shape(b)[axis]
    a_pad, b_pad = [(0, 0, 0)] * len(_shape(a)), [(0, 0, 0)] * len(_shape(b))
    a_pad[axis] = (0, 1 if a_len == b_len else 0, 1)
    b_pad[axis] = (1, 0 if a_len == b_len else 1, 1)
    dtype = aval_of(a).dtype
    op = elementwise.bitwise_or if dtype == np.bool_ else elementwise.add
    zero = np.zeros((), dtype)
    return op(structural.pad(a, zero, a_pad), structural.pad(b, zero, b_pad))


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations ``fn(... fn(e[0], e[1]) ..., e[i])`` of the pytree ``elems`` along ``axis``.

    ``fn`` must be associative and vectorized (it combines whole slices); the
    recursion halves the axis each level (``O(log n)`` depth), as JAX's.
    """
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    elems_flat, tree = tree_util.tree_flatten(elems)
    if not elems_flat:
        raise ValueError("lax.associative_scan: elems must contain at least one array")
    axis = _canonicalize_axis(axis, len(_shape(elems_flat[0])))
    if reverse:
        elems_flat = [structural.rev(e, (axis,)) for e in elems_flat]

    def combine(a_flat: list, b_flat: list) -> list:
        c = fn(tree_util.tree_unflatten(tree, a_flat), tree_util.tree_unflatten(tree, b_flat))
        return tree_util.tree_flatten(c)[0]

    num_elems = _shape(elems_flat[0])[axis]
    if is_symbolic_dim(num_elems):
        raise NotImplementedError(f"associative scan over axis of non-constant size: {num_elems}.")
    if not all(_shape(e)[axis] == num_elems for e in elems_flat[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first dimension. (saw: "
                         f"{[_shape(e) for e in elems_flat]})")

    def scan_(elems: list) -> list:
        n = _shape(elems[0])[axis]
        if n < 2:
            return elems
        reduced = combine([slice_in_dim(e, 0, -1, stride=2, axis=axis) for e in elems],
                          [slice_in_dim(e, 1, None, stride=2, axis=axis) for e in elems])
        odd = scan_(reduced)
        if n % 2 == 0:
            even = combine([slice_in_dim(e, 0, -1, axis=axis) for e in odd],
                           [slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        else:
            even = combine(odd, [slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        even = [structural.concatenate([slice_in_dim(e, 0, 1, axis=axis), r], axis) for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    scans = scan_(elems_flat)
    if reverse:
        scans = [structural.rev(s, (axis,)) for s in scans]
    return tree_util.tree_unflatten(tree, scans)


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 - jax.lax.map's name
    """``f`` applied to each slice of the pytree ``xs`` along its leading axis, stacked (a ``scan``).

    With ``batch_size``, ``f`` is vmapped over chunks of that many slices (the
    scan runs ``n // batch_size`` steps, the remainder is one extra vmapped call).
    """
    from toolkit.lax.control_flow import scan
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    from toolkit.batching import vmap
    leaves, treedef = tree_util.tree_flatten(xs)
    if not leaves:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    n = _shape(leaves[0])[0]
    batch_size = int(batch_size)
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    batch_elems = num_batches * batch_size
    vf = vmap(f)
    scan_ys = None
    if num_batches:
        scan_leaves = [structural.reshape(slice_in_dim(leaf, 0, batch_elems),
                                          (num_batches, batch_size) + _shape(leaf)[1:]) for leaf in leaves]
        scan_ys = scan(lambda _, x: ((), vf(x)), (), tree_util.tree_unflatten(treedef, scan_leaves))[1]
    if num_batches == 0 or remainder:
        rest = tree_util.tree_unflatten(treedef, [slice_in_dim(leaf, batch_elems, None) for leaf in leaves])
        rest_ys = vf(rest)

    def flatten(y: Any) -> Any:
        return structural.reshape(y, (_shape(y)[0] * _shape(y)[1],) + _shape(y)[2:])

    if scan_ys is None:
        return rest_ys
    if remainder:
        return tree_util.tree_map(lambda y, r: structural.concatenate([flatten(y), r], 0), scan_ys, rest_ys)
    return tree_util.tree_map(flatten, scan_ys)
