"""StableHLO for ``toolkit.lax.indexing``: ``stablehlo.gather`` and ``stablehlo.scatter``.

XLA clamps gather start indices and skips scatter windows that are out of
bounds, so CLIP/PROMISE_IN_BOUNDS gathers and FILL_OR_DROP/PROMISE_IN_BOUNDS
scatters are a single op. A FILL gather masks the clamped result; a CLIP
scatter clamps its indices first.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, is_static_shape
from toolkit.lax import indexing
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.elementwise import compare_type, complex_extremum
from toolkit.lowering.rules.structural import assert_dim_at_least
from toolkit.lowering.types import tensor_type


def _compare(a, b, direction: str, dtype) -> ir.Value:
    return stablehlo.CompareOp(a, b, stablehlo.ComparisonDirectionAttr.get(direction),
                               compare_type=stablehlo.ComparisonTypeAttr.get(compare_type(dtype))).result


def _index_bounds(ctx, indices_aval: ShapedArray, upper: list) -> tuple[ir.Value, ir.Value]:
    """Tensors (0, upper) shaped like the indices, ``upper`` varying along the index vector.

    ``upper`` entries may be symbolic dimension expressions.
    """
    scalar = indices_aval.update(shape=(), weak_type=False)
    zero = ctx.broadcast(ctx.constant(0, scalar), indices_aval)
    if is_static_shape(tuple(upper)) and is_static_shape(indices_aval.shape):
        hi = np.ascontiguousarray(np.broadcast_to(np.asarray(upper, indices_aval.dtype), indices_aval.shape))
        return zero, ctx.constant(hi, indices_aval)
    vector = ctx.shape_value(upper)  # tensor<k x i64>
    vector_aval = ShapedArray((len(upper),), indices_aval.dtype)
    if indices_aval.dtype != np.int64:
        vector = stablehlo.ConvertOp(tensor_type(vector_aval), vector).result
    return zero, ctx.broadcast(vector, indices_aval, (indices_aval.ndim - 1,))


def _gather_op(ctx, operand, indices, dn, slice_sizes, indices_are_sorted, out_type):
    attr = stablehlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims), collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map), index_vector_dim=ctx.avals_in[1].ndim - 1)
    if is_static_shape(tuple(slice_sizes)):
        return stablehlo.GatherOp(operand, indices, attr, list(slice_sizes), indices_are_sorted=indices_are_sorted,
                                  results=[out_type]).result
    # Symbolic slice sizes: the dynamic form takes them as a tensor.
    return stablehlo.DynamicGatherOp(operand, indices, ctx.shape_value(slice_sizes), attr,
                                     indices_are_sorted=indices_are_sorted, results=[out_type]).result


@register_lowering(indexing.gather_p)
def _gather(ctx, operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted, unique_indices, mode,
            fill_value):
    dn = dimension_numbers
    for axis, (size, dim) in enumerate(zip(slice_sizes, ctx.avals_in[0].shape)):
        assert_dim_at_least(ctx, dim, size, f"gather: slice size of operand dimension {axis}")
    out = _gather_op(ctx, operand, indices, dn, slice_sizes, indices_are_sorted, ctx.out_type)
    if mode is not indexing.GatherScatterMode.FILL_OR_DROP:
        return out
    operand_aval, indices_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    upper = [operand_aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
    lo, hi = _index_bounds(ctx, indices_aval, upper)
    in_bounds = stablehlo.AndOp(_compare(indices, lo, "GE", indices_aval.dtype),
                                _compare(indices, hi, "LE", indices_aval.dtype)).result
    # All entries of an index vector must be in bounds: AND-reduce the vector dimension.
    bool_scalar = tensor_type(ShapedArray((), dtypes.bool_))
    batch_aval = ShapedArray(indices_aval.shape[:-1], dtypes.bool_)
    reduce = stablehlo.ReduceOp([tensor_type(batch_aval)], [in_bounds],
                                [ctx.constant(True, ShapedArray((), dtypes.bool_))], [indices_aval.ndim - 1])
    block = reduce.body.blocks.append(bool_scalar, bool_scalar)
    with ir.InsertionPoint(block):
        stablehlo.ReturnOp([stablehlo.AndOp(*block.arguments).result])
    batch_positions = [i for i in range(out_aval.ndim) if i not in dn.offset_dims]
    mask = ctx.broadcast(reduce.result, out_aval.update(dtype=dtypes.bool_), batch_positions)
    fill = indexing.default_fill_value(out_aval.dtype) if fill_value is None else fill_value
    fill = ctx.broadcast(ctx.constant(fill, out_aval.update(shape=(), weak_type=False)), out_aval)
    return stablehlo.SelectOp(mask, out, fill).result


_COMBINERS = {
    indexing.scatter_p: None,
    indexing.scatter_add_p: stablehlo.AddOp,
    indexing.scatter_mul_p: stablehlo.MulOp,
    indexing.scatter_min_p: stablehlo.MinOp,
    indexing.scatter_max_p: stablehlo.MaxOp,
}


def _scatter_rule(combiner):
    def rule(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
        dn = dimension_numbers
        operand_aval, indices_aval, updates_aval = ctx.avals_in
        for axis, (size, dim) in enumerate(zip(_window_sizes(dn, operand_aval, updates_aval), operand_aval.shape)):
            assert_dim_at_least(ctx, dim, size, f"scatter: update window of operand dimension {axis}")
        if mode is indexing.GatherScatterMode.CLIP:
            # Clamp each start so its whole window fits: [0, dim - window size].
            window_sizes = _window_sizes(dn, operand_aval, updates_aval)
            upper = [operand_aval.shape[d] - window_sizes[d] for d in dn.scatter_dims_to_operand_dims]
            lo, hi = _index_bounds(ctx, indices_aval, upper)
            indices = stablehlo.ClampOp(lo, indices, hi).result
        attr = stablehlo.ScatterDimensionNumbers.get(
            update_window_dims=list(dn.update_window_dims), inserted_window_dims=list(dn.inserted_window_dims),
            input_batching_dims=list(dn.operand_batching_dims),
            scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
            scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
            index_vector_dim=indices_aval.ndim - 1)
        op = stablehlo.ScatterOp([ctx.out_type], [operand], indices, [updates], attr,
                                 indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)
        scalar = tensor_type(operand_aval.update(shape=(), weak_type=False))
        block = op.update_computation.blocks.append(scalar, scalar)
        current, update = block.arguments
        with ir.InsertionPoint(block):
            if combiner is None:
                stablehlo.ReturnOp([update])
            elif combiner in (stablehlo.AddOp, stablehlo.MulOp) and dtypes.is_bool(operand_aval.dtype):
                stablehlo.ReturnOp([(stablehlo.OrOp if combiner is stablehlo.AddOp else stablehlo.AndOp)(
                    current, update).result])
            elif combiner in (stablehlo.MinOp, stablehlo.MaxOp) and dtypes.is_complex(operand_aval.dtype):
                # JAX's order of complex numbers (real part, then imaginary part), as lax.min/max
                direction = "LT" if combiner is stablehlo.MinOp else "GT"
                stablehlo.ReturnOp([complex_extremum(current, update, direction, operand_aval.dtype)])
            else:
                stablehlo.ReturnOp([combiner(current, update).result])
        return op.results[0]
    return rule


def _window_sizes(dn, operand_aval: ShapedArray, updates_aval: ShapedArray) -> list[int]:
    sizes = [1] * operand_aval.ndim
    window_dims = [d for d in range(operand_aval.ndim)
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    for od, ud in zip(window_dims, dn.update_window_dims):
        sizes[od] = updates_aval.shape[ud]
    return sizes


for _p, _combiner in _COMBINERS.items():
    register_lowering(_p)(_scatter_rule(_combiner))
