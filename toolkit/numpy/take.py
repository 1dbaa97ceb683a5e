"""``take`` and ``take_along_axis``: elements at integer indices along one
axis, lowered to one ``gather``, with JAX's modes for out-of-range indices
(``"fill"``, ``"clip"``, ``"wrap"``, ``"promise_in_bounds"``; ``take_along_axis`` also JAX's
``"one_hot"``, a one-hot contraction instead of the gather). Example::

    tnp.take(x, idx, axis=1, mode="clip")
    tnp.take_along_axis(x, tnp.argsort(x, axis=1), axis=1)   # == sort(x, axis=1)
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from toolkit.core import dtypes, shape_poly
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import indexing as lax_indexing
from toolkit.lax import structural as lax_structural
from toolkit.lax.convolution import Precision
from toolkit.numpy import ufuncs
from toolkit.numpy._core import asarray, broadcast_shapes, check_arraylike, convert, is_array
from toolkit.numpy.creation import zeros
from toolkit.numpy.indexing import _INT32_MAX, _common_index_dtype, _getitem, _normalize_dynamic
from toolkit.numpy.shapes import _flatten_if_none, reshape, squeeze


def _take_mode(mode: str | None):
    if mode is None or mode == "fill":
        return lax_indexing.GatherScatterMode.FILL_OR_DROP
    if mode in ("clip", "promise_in_bounds"):
        return lax_indexing.GatherScatterMode.from_any(mode)
    if mode == "wrap":
        return "wrap"
    raise ValueError(f"take: unknown mode {mode!r}; expected 'fill', 'clip', 'wrap' or 'promise_in_bounds'")


@compiled_whole(static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"),
                lists_as_tuples=True)
def take(a: Any, indices: Any, axis: int | None = None, out: None = None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (``None``: flattened); JAX's parameters, in its order.

    Out-of-range indices follow ``mode`` (as in JAX): ``"fill"`` (default;
    negative indices wrap once, the rest give NaN for floats, see ``lax.gather``),
    ``"clip"`` (clamped into ``[0, n-1]``, negative ones to 0, as numpy does),
    ``"wrap"`` (modulo ``n``) or ``"promise_in_bounds"``. ``unique_indices`` and
    ``indices_are_sorted`` are promises JAX hands XLA's gather; toolkit's gather is
    correct without them, so they are accepted and change nothing.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike("take", a, indices)
    a, axis = _flatten_if_none(a, axis)
    gather_mode = _take_mode(mode)
    indices = indices if is_array(indices) else np.asarray(indices)
    if indices.dtype == np.dtype(bool) and gather_mode is not lax_indexing.GatherScatterMode.CLIP:
        # True and False are the indices 1 and 0 (numpy's take; JAX's too, through its arithmetic on them).
        indices = indices.astype(np.int32) if isinstance(indices, np.ndarray) else convert(indices, np.int32)
    if not dtypes.is_integer(indices.dtype):
        if gather_mode is lax_indexing.GatherScatterMode.CLIP:  # JAX's gather refuses them
            raise ValueError("indices must have an integer type")
        raise TypeError(f"take: indices must be integers, got {np.dtype(indices.dtype).name}")
    n = a.shape[axis]
    if shape_poly.definitely_equal(n, 0) and not shape_poly.definitely_equal(shape_poly.dim_size_product(
            indices.shape), 0):
        raise IndexError("Cannot do a non-empty toolkit.numpy.take() from an empty axis.")  # JAX's, in every mode
    if isinstance(indices, np.ndarray) and shape_poly.is_symbolic_dim(n) and gather_mode in (
            "wrap", lax_indexing.GatherScatterMode.CLIP):
        indices = asarray(indices)  # wrapping/clamping by a symbolic size happens at run time
    if gather_mode == "wrap":
        indices = np.mod(indices, n) if isinstance(indices, np.ndarray) else ufuncs.remainder(indices, n)
        gather_mode = lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS
    elif gather_mode is lax_indexing.GatherScatterMode.CLIP:
        # numpy's and JAX's "clip" clamps raw indices: negative ones become 0 rather than wrapping.
        indices = np.clip(indices, 0, n - 1) if isinstance(indices, np.ndarray) else ufuncs.clip(indices, 0, n - 1)
        gather_mode = lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS
    index = [slice(None)] * a.ndim
    index[axis] = indices
    return _getitem(a, tuple(index), gather_mode, fill_value, check_static_bounds=False) \
        if _is_nd_index(indices) else _take_scalar(a, axis, indices, gather_mode, fill_value)


def _is_nd_index(indices: Any) -> bool:
    return np.ndim(indices) > 0 if isinstance(indices, np.ndarray) else indices.ndim > 0


def _take_scalar(a: Any, axis: int, index: Any, mode: Any, fill_value: Any) -> Any:
    # A 0-d index removes the axis; route it through the gather path so `mode` applies.
    taken = take(a, index.reshape(1) if isinstance(index, np.ndarray) else reshape(index, (1,)), axis,
                 mode=_mode_name(mode), fill_value=fill_value)
    return squeeze(taken, axis)


def _mode_name(mode: Any) -> str:
    return {lax_indexing.GatherScatterMode.FILL_OR_DROP: "fill", lax_indexing.GatherScatterMode.CLIP: "clip",
            lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS: "promise_in_bounds"}[mode]


@compiled_whole(static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"))
def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: str | None = None,
                    fill_value: Any = None, *, wrap_negative_indices: bool | None = None) -> Any:
    """``arr`` indexed along ``axis`` by ``indices`` (same rank, other dimensions broadcast), e.g. with argsort.

    Negative indices wrap once (``wrap_negative_indices``; JAX's default: unless ``mode="promise_in_bounds"``);
    then out-of-range ones follow ``mode`` (``"fill"`` by default, or ``"clip"``/``"promise_in_bounds"``), as in
    JAX. ``mode="one_hot"`` computes JAX's way without a gather: a contraction of the array with the indices'
    boolean one-hot encoding (an ``einsum`` in the array's dtype), so an out-of-range index gives 0, and a NaN
    or infinity anywhere along ``axis`` of a row makes every element taken from that row NaN (0 * inf);
    ``fill_value`` is ignored there.

    Example::

        take_along_axis(x, argsort(x, axis=1), axis=1)   # == sort(x, axis=1)
    """
    check_arraylike("take_along_axis", arr, indices)
    indices = indices if is_array(indices) else np.asarray(indices)
    if not dtypes.is_integer(indices.dtype):  # JAX's order of checks: the dtype, the ranks, then the axis
        raise TypeError(f"take_along_axis: indices must be integers, got {np.dtype(indices.dtype).name}")
    requested_axis = axis
    arr, axis = _flatten_if_none(arr, axis)
    if indices.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: indices of rank {indices.ndim} must match the array's rank {arr.ndim}")
    if arr.ndim == 0:  # canonical_axis lets axis 0 of a scalar through; a scalar has no axis to take along
        raise ValueError(f"take_along_axis: axis {requested_axis} is out of bounds for an array of rank 0")
    one_hot = isinstance(mode, str) and mode == "one_hot"
    gather_mode = None if one_hot else _take_mode(mode)
    if gather_mode == "wrap":
        raise ValueError("take_along_axis: mode 'wrap' is not supported")
    # JAX's gather: the dimensions where array and indices agree are gather batching dimensions (so a sharded
    # batch dimension resolves between them), size-1 index dimensions take the whole array dimension (offset
    # dimensions), size-1 array dimensions are squeezed away.
    definitely_equal = shape_poly.definitely_equal
    rank, idx_shape, axis_size = arr.ndim, tuple(indices.shape), arr.shape[axis]
    arr_shape = tuple(1 if i == axis else d for i, d in enumerate(arr.shape))
    out_shape = broadcast_shapes(idx_shape, arr_shape)
    if definitely_equal(axis_size, 0) or any(type(d) is int and d == 0 for d in out_shape):
        return zeros(out_shape, arr.dtype)
    if wrap_negative_indices is None:
        wrap_negative_indices = gather_mode is not lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS
    indices = _along_axis_indices(indices, axis_size, wrap_negative_indices)
    if one_hot:
        return _take_along_axis_one_hot(arr, asarray(indices), axis)
    index_dims = [i for i, d in enumerate(idx_shape) if i == axis or not definitely_equal(d, 1)]
    gather_index_shape = tuple(out_shape[i] for i in index_dims) + (1,)
    if isinstance(indices, np.ndarray):
        indices = asarray(indices.reshape(gather_index_shape))
    else:
        indices = lax_structural.reshape(indices, gather_index_shape)
    slice_sizes, offset_dims, start_index_map, collapsed_slice_dims = [], [], [], []
    operand_batching_dims, start_indices_batching_dims, dims_to_squeeze = [], [], []
    new_i = j = 0
    for i in range(rank):
        if i == axis:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed_slice_dims.append(new_i)
            new_i += 1
            j += 1
        elif definitely_equal(idx_shape[i], 1):
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif definitely_equal(arr_shape[i], 1):
            dims_to_squeeze.append(i)
            j += 1
        else:
            slice_sizes.append(1)
            operand_batching_dims.append(new_i)
            start_indices_batching_dims.append(j)
            new_i += 1
            j += 1
    if dims_to_squeeze:
        arr = lax_structural.reshape(arr, tuple(d for i, d in enumerate(arr.shape) if i not in dims_to_squeeze))
    dnums = lax_indexing.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed_slice_dims),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching_dims),
        start_indices_batching_dims=tuple(start_indices_batching_dims))
    return lax_indexing.gather(arr, indices, dnums, tuple(slice_sizes), mode=gather_mode, fill_value=fill_value)


#: The einsum labels the one-hot contraction names the dimensions before ``axis`` with (two more are needed for
#: the index and one-hot dimensions): JAX's limit on ``axis``.
_ONE_HOT_MAX_LEADING_DIMS = len(string.ascii_letters) - 2


def _take_along_axis_one_hot(arr: Any, indices: Any, axis: int) -> Any:
    """JAX's ``mode="one_hot"``: ``hot[..., k] = (indices == k)`` contracted with ``arr`` along ``axis``.

    The leading dimensions (before ``axis``) are einsum batch labels and the trailing ones its ``...``, so both
    broadcast between ``indices`` and ``arr`` as in the gather path. The einsum and its precision (default for
    1-D, ``HIGHEST`` otherwise) are JAX's, so results agree bit for bit."""
    from toolkit.numpy.einsum import einsum  # function-level: einsum is a layer above take in toolkit.numpy

    axis_size = arr.shape[axis]
    iota_shape = (1,) * indices.ndim + (axis_size,)
    classes = lax_structural.broadcasted_iota(indices.dtype, iota_shape, indices.ndim)
    hot = ufuncs.equal(lax_structural.expand_dims(indices, (indices.ndim,)), classes)
    if arr.ndim == 1:
        taken = einsum("...b,b->...", hot, arr, preferred_element_type=arr.dtype)
    else:
        if axis > _ONE_HOT_MAX_LEADING_DIMS:
            raise ValueError("One Hot indexing is only supported for up to 50 leading dimensions.")
        leading = string.ascii_letters[:axis]
        subscripts = f"{leading}y...z,{leading}z...->{leading}y..."
        taken = einsum(subscripts, hot, arr, precision=Precision.HIGHEST, preferred_element_type=arr.dtype)
    return taken  # strongly typed, as JAX's (an einsum with a preferred_element_type)


def _along_axis_indices(indices: Any, n: Any, wrap: bool = True) -> Any:
    """take_along_axis's indices for the gather (or the one-hot encoding).

    With ``wrap``, JAX's: converted to the index type of an axis of size ``n`` (int32 unless ``n`` exceeds int32's
    range; the default integer type for a symbolic ``n``), wrapping modulo 2**32 as XLA's conversion does (so
    under x64 an int64 index 2**32 + 1 takes element 1, and a uint32 2**32 - 1 is -1, the last element), then
    negative entries wrapped once by ``n``. Without, int32 (int64 for 64-bit traced ones), numpy values clamped
    into int32's range, which changes no result: such an index is out of bounds either way."""
    if wrap:
        symbolic = type(n) is not int
        index_dtype = dtypes.default_int_dtype() if symbolic else np.dtype(np.int64 if n > _INT32_MAX else np.int32)
        if isinstance(indices, np.ndarray):
            v = indices.astype(index_dtype)  # numpy's cast wraps as XLA's convert does
            if not symbolic:
                return np.where(v < 0, v + index_dtype.type(n), v)
            if not (v < 0).any():
                return v
            indices = asarray(v)  # negative entries wrap by a symbolic size: at run time
        elif indices.dtype != index_dtype or indices.weak_type:
            indices = lax_elementwise.convert_element_type(indices, index_dtype)
        return _normalize_dynamic(indices, n)
    if isinstance(indices, np.ndarray):
        return np.clip(indices.astype(np.int64), -_INT32_MAX - 1, _INT32_MAX).astype(np.int32)
    index_dtype = _common_index_dtype([indices])
    if indices.dtype != index_dtype or indices.weak_type:
        indices = lax_elementwise.convert_element_type(indices, index_dtype)
    return indices
