"""Batching rules for ``toolkit.lax.structural``: the batch dimension is one more dimension to carry along.

Most rules put it first and shift the parameters by one. ``dynamic_slice``
and ``dynamic_update_slice`` with batched start indices become a ``gather``
/ ``scatter`` with a batching dimension (each element starts elsewhere),
clamped as XLA clamps dynamic slices; ``pad`` with a batched padding value
pads with zeros and selects the padding value through a padded mask.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit.batching.interpret import AxisData, bdim_at_front, moveaxis
from toolkit.batching.registry import register_batching
from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise
from toolkit.lax import indexing
from toolkit.lax import structural


def _front(axis: AxisData, x: Any, d: int | None) -> Any:
    return bdim_at_front(x, d, axis.size)


def _broadcast_in_dim(axis, args, dims, *, shape, broadcast_dimensions):
    x = moveaxis(args[0], dims[0], 0)
    return structural.broadcast_in_dim_p.bind(x, shape=(axis.size,) + tuple(shape),
                                      broadcast_dimensions=(0,) + tuple(d + 1 for d in broadcast_dimensions)), 0


def _reshape(axis, args, dims, *, new_sizes):
    x = moveaxis(args[0], dims[0], 0)
    return structural.reshape_p.bind(x, new_sizes=(axis.size,) + tuple(new_sizes)), 0


def _transpose(axis, args, dims, *, permutation):
    x = moveaxis(args[0], dims[0], 0)
    return structural.transpose_p.bind(x, permutation=(0,) + tuple(p + 1 for p in permutation)), 0


def _insert(values: Sequence[Any], d: int, value: Any) -> tuple:
    out = list(values)
    out.insert(d, value)
    return tuple(out)


def _slice(axis, args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    size = aval_of(x).shape[d]
    return structural.slice_p.bind(x, start_indices=_insert(start_indices, d, 0), limit_indices=_insert(limit_indices, d, size),
                           strides=None if strides is None else _insert(strides, d, 1)), d


def _pad(axis, args, dims, *, padding_config):
    (x, value), (dx, dv) = args, dims
    if dv is None:
        return structural.pad_p.bind(x, value, padding_config=_insert(padding_config, dx, (0, 0, 0))), dx
    # A batched padding value: pad with zeros, then pick the value where a padded mask says "padding".
    x = _front(axis, x, dx)
    config = ((0, 0, 0),) + tuple(padding_config)
    dtype = aval_of(x).dtype
    padded = structural.pad_p.bind(x, np.zeros((), dtype), padding_config=config)
    shape = aval_of(padded).shape
    inside = structural.broadcast_in_dim(np.ones((), dtypes.bool_), aval_of(x).shape, ())
    mask = structural.pad_p.bind(inside, np.zeros((), dtypes.bool_), padding_config=config)
    fill = structural.broadcast_in_dim(moveaxis(value, dv, 0), shape, (0,))
    return elementwise.select_n(mask, fill, padded), 0


def _concatenate(axis, args, dims, *, dimension):
    xs = [_front(axis, x, d) for x, d in zip(args, dims)]
    return structural.concatenate_p.bind(*xs, dimension=dimension + 1), 0


def _split(axis_data, args, dims, **params):
    # The primitive's parameter is named ``axis`` (as JAX's), so the axis data comes in positionally.
    (x,), (d,) = args, dims
    split_axis = params["axis"]
    outs = structural.split_p.bind(x, sizes=params["sizes"], axis=split_axis + (split_axis >= d))
    return list(outs), [d] * len(outs)


def _rev(axis, args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return structural.rev_p.bind(x, dimensions=tuple(a + (a >= d) for a in dimensions)), d


def _nullary(prim):
    def rule(axis, args, dims, **params):  # no operands: never batched, kept for completeness
        return prim.bind(**params), None
    rule.__name__ = f"{prim.name}_batch"
    return rule


def _stack_indices(axis: AxisData, indices: Sequence[Any], dims: Sequence[int | None], dtype: Any) -> Any:
    """The start indices as one ``(B, n)`` array (batched ones per element, unbatched ones repeated)."""
    cols = []
    for i, d in zip(indices, dims):
        i = elementwise.convert_element_type(i, dtype)
        cols.append(structural.broadcast_in_dim(_front(axis, i, d), (axis.size, 1), (0,)))
    return structural.concatenate_p.bind(*cols, dimension=1)


def _index_dtype(indices: Sequence[Any]) -> Any:
    kinds = {aval_of(i).dtype for i in indices}
    return kinds.pop() if len(kinds) == 1 else dtypes.int64 if dtypes.int64 in kinds else dtypes.int32


def _dynamic_slice(axis, args, dims, *, slice_sizes):
    (x, *indices), (dx, *dis) = args, dims
    if all(d is None for d in dis):
        zero = np.zeros((), aval_of(indices[0]).dtype) if indices else np.int32(0)
        indices = list(indices)
        indices.insert(dx, zero)
        return structural.dynamic_slice_p.bind(x, *indices, slice_sizes=_insert(slice_sizes, dx, axis.size)), dx
    n = len(indices)
    starts = _stack_indices(axis, indices, dis, _index_dtype(indices))
    if dx is None:
        dn = indexing.GatherDimensionNumbers(offset_dims=tuple(range(1, n + 1)), collapsed_slice_dims=(),
                                       start_index_map=tuple(range(n)))
        sizes = tuple(slice_sizes)
    else:
        x = moveaxis(x, dx, 0)
        dn = indexing.GatherDimensionNumbers(offset_dims=tuple(range(1, n + 1)), collapsed_slice_dims=(),
                                       start_index_map=tuple(range(1, n + 1)), operand_batching_dims=(0,),
                                       start_indices_batching_dims=(0,))
        sizes = (1,) + tuple(slice_sizes)
    return indexing.gather_p.bind(x, starts, dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=False,
                            unique_indices=False, mode=indexing.GatherScatterMode.CLIP, fill_value=None), 0


def _dynamic_update_slice(axis, args, dims):
    (x, update, *indices), (dx, du, *dis) = args, dims
    x, update = _front(axis, x, dx), _front(axis, update, du)
    if all(d is None for d in dis):
        zero = np.zeros((), aval_of(indices[0]).dtype) if indices else np.int32(0)
        return structural.dynamic_update_slice_p.bind(x, update, zero, *indices), 0
    n = len(indices)
    starts = _stack_indices(axis, indices, dis, _index_dtype(indices))
    dn = indexing.ScatterDimensionNumbers(update_window_dims=tuple(range(1, n + 1)), inserted_window_dims=(),
                                    scatter_dims_to_operand_dims=tuple(range(1, n + 1)), operand_batching_dims=(0,),
                                    scatter_indices_batching_dims=(0,))
    return indexing.scatter_p.bind(x, starts, update, dimension_numbers=dn, indices_are_sorted=True, unique_indices=True,
                             mode=indexing.GatherScatterMode.CLIP), 0


register_batching(structural.broadcast_in_dim_p, _broadcast_in_dim)
register_batching(structural.reshape_p, _reshape)
register_batching(structural.transpose_p, _transpose)
register_batching(structural.slice_p, _slice)
register_batching(structural.pad_p, _pad)
register_batching(structural.concatenate_p, _concatenate)
register_batching(structural.rev_p, _rev)
register_batching(structural.split_p, _split)
register_batching(structural.iota_p, _nullary(structural.iota_p))
register_batching(structural.dimension_size_p, _nullary(structural.dimension_size_p))
register_batching(structural.dynamic_slice_p, _dynamic_slice)
register_batching(structural.dynamic_update_slice_p, _dynamic_update_slice)
