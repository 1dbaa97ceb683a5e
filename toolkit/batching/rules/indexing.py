"""Batching rules for ``gather`` and the ``scatter`` family, through XLA's batching dimensions.

``gather``: a batched operand becomes a new leading slice dimension (whole
batch sliced, result dimension 0); batched indices become a new leading
index batch dimension; both batched pair up as ``operand_batching_dims`` /
``start_indices_batching_dims``. ``scatter``: operand, indices and updates
all get the batch dimension first (unbatched ones broadcast) and pair up as
batching dimensions, so each batch element scatters into its own operand.
"""

from __future__ import annotations

from toolkit.batching.interpret import bdim_at_front, moveaxis
from toolkit.batching.registry import register_batching
from toolkit.lax import indexing


def _plus1(dims):
    return tuple(d + 1 for d in dims)


def _gather(axis, args, dims, *, dimension_numbers, slice_sizes, indices_are_sorted, unique_indices, mode,
            fill_value):
    (operand, indices), (do, di) = args, dims
    dn = dimension_numbers
    params = {"indices_are_sorted": indices_are_sorted, "unique_indices": unique_indices, "mode": mode,
                  "fill_value": fill_value}
    if di is None:
        operand = moveaxis(operand, do, 0)
        new = indexing.GatherDimensionNumbers(
            offset_dims=(0,) + _plus1(dn.offset_dims), collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
            start_index_map=_plus1(dn.start_index_map), operand_batching_dims=_plus1(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        return indexing.gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=(axis.size,) + tuple(slice_sizes),
                                **params), 0
    indices = moveaxis(indices, di, 0)
    params["indices_are_sorted"] = False  # sorted per element, not across the batch
    if do is None:
        new = indexing.GatherDimensionNumbers(
            offset_dims=_plus1(dn.offset_dims), collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map, operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_plus1(dn.start_indices_batching_dims))
        return indexing.gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=tuple(slice_sizes), **params), 0
    operand = moveaxis(operand, do, 0)
    new = indexing.GatherDimensionNumbers(
        offset_dims=_plus1(dn.offset_dims), collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
        start_index_map=_plus1(dn.start_index_map), operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _plus1(dn.start_indices_batching_dims))
    return indexing.gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=(1,) + tuple(slice_sizes),
                            **params), 0


def _scatter(prim):
    def rule(axis, args, dims, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
        dn = dimension_numbers
        operand, indices, updates = (bdim_at_front(x, d, axis.size) for x, d in zip(args, dims))
        new = indexing.ScatterDimensionNumbers(
            update_window_dims=_plus1(dn.update_window_dims), inserted_window_dims=_plus1(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
            scatter_indices_batching_dims=(0,) + _plus1(dn.scatter_indices_batching_dims))
        return prim.bind(operand, indices, updates, dimension_numbers=new, indices_are_sorted=False,
                         unique_indices=unique_indices, mode=mode), 0
    rule.__name__ = f"{prim.name}_batch"
    return rule


register_batching(indexing.gather_p, _gather)
for _p in (indexing.scatter_p, indexing.scatter_add_p, indexing.scatter_mul_p, indexing.scatter_min_p, indexing.scatter_max_p):
    register_batching(_p, _scatter(_p))
