"""StableHLO for ``toolkit.lax.structural``."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core.avals import is_static_shape
from toolkit.lax import structural
from toolkit.core.shape_poly import InconclusiveDimensionOperation
from toolkit.lowering import dims
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import tensor_type


@register_lowering(structural.broadcast_in_dim_p)
def _broadcast_in_dim(ctx, x, *, shape, broadcast_dimensions):
    return ctx.broadcast(x, ctx.avals_out[0], broadcast_dimensions)


@register_lowering(structural.reshape_p)
def _reshape(ctx, x, *, new_sizes):
    if is_static_shape(new_sizes):
        return stablehlo.ReshapeOp(ctx.out_type, x).result
    return stablehlo.DynamicReshapeOp(ctx.out_type, x, ctx.shape_value(new_sizes)).result


@register_lowering(structural.transpose_p)
def _transpose(ctx, x, *, permutation):
    return stablehlo.TransposeOp(x, list(permutation)).result


@register_lowering(structural.slice_p)
def _slice(ctx, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    for axis, (limit, size) in enumerate(zip(limit_indices, ctx.avals_in[0].shape)):
        assert_dim_at_least(ctx, size, limit, f"slice: limit of dimension {axis}")
    if is_static_shape(tuple(start_indices) + tuple(limit_indices)):
        return stablehlo.SliceOp(x, list(start_indices), list(limit_indices), list(strides)).result
    return stablehlo.RealDynamicSliceOp(ctx.out_type, x, ctx.shape_value(start_indices),
                                        ctx.shape_value(limit_indices), ctx.shape_value(strides)).result


@register_lowering(structural.pad_p)
def _pad(ctx, x, padding_value, *, padding_config):
    lows, highs, interiors = zip(*padding_config) if padding_config else ((), (), ())
    # Static padding amounts give a static pad even of a symbolic operand (its result type keeps the `?`),
    # as JAX emits; only symbolic amounts need dynamic_pad.
    if is_static_shape(lows + highs + interiors):
        return stablehlo.PadOp(x, padding_value, list(lows), list(highs), list(interiors)).result
    return stablehlo.DynamicPadOp(ctx.out_type, x, padding_value, ctx.shape_value(lows), ctx.shape_value(highs),
                                  ctx.shape_value(interiors)).result


@register_lowering(structural.concatenate_p)
def _concatenate(ctx, *xs, dimension):
    return stablehlo.ConcatenateOp(list(xs), dimension).result


@register_lowering(structural.split_p)
def _split(ctx, x, *, sizes, axis):
    # One slice per piece, as JAX lowers split; the pieces start where the previous ones end.
    ndim = len(ctx.avals_in[0].shape)
    start, outs = 0, []
    for size in sizes:
        starts = [0] * ndim
        limits = list(ctx.avals_in[0].shape)
        starts[axis], limits[axis] = start, start + size
        outs.append(_slice(ctx, x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=None))
        start = start + size
    return outs


@register_lowering(structural.rev_p)
def _rev(ctx, x, *, dimensions):
    return stablehlo.ReverseOp(x, list(dimensions)).result


@register_lowering(structural.iota_p)
def _iota(ctx, *, dtype, shape, dimension):
    return ctx.iota(ctx.avals_out[0], dimension)


@register_lowering(structural.dimension_size_p)
def _dimension_size(ctx, *, dimension, dtype):
    value = ctx.dim_value(dimension)  # tensor<i64>
    return value if dtype == np.int64 else stablehlo.ConvertOp(ctx.out_type, value).result


def assert_dim_at_least(ctx, size, bound, what: str) -> None:
    """A ``shape_assertion`` that ``size >= bound`` when the tracer could not decide it (symbolic sizes).

    Shape rules trust undecidable bounds (``known_false``); this checks them
    when the module is specialized, failing with ``what`` and the actual size
    instead of a verifier error on the refined op.
    """
    try:
        if size >= bound:
            return
    except InconclusiveDimensionOperation:
        pass
    else:
        return  # definitely smaller: the shape rule has already raised
    value, bound_value = ctx.dim_value(size), ctx.dim_value(bound)
    ok = stablehlo.CompareOp(value, bound_value, stablehlo.ComparisonDirectionAttr.get("GE"),
                             compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result
    if type(bound) is int:
        dims.shape_assertion(ok, f"{what}: needs '{size}' >= {bound}, got '{size}' = {{0}}.", [value])
    else:
        dims.shape_assertion(ok, f"{what}: needs '{size}' >= '{bound}', got '{size}' = {{0}} and '{bound}' = {{1}}.",
                             [value, bound_value])


def reshape_to(ctx, x, aval) -> ir.Value:
    """``x`` reshaped to ``aval``'s shape: ``reshape``, or ``dynamic_reshape`` for a symbolic shape."""
    if is_static_shape(aval.shape):
        return stablehlo.ReshapeOp(tensor_type(aval), x).result
    return stablehlo.DynamicReshapeOp(tensor_type(aval), x, ctx.shape_value(aval.shape)).result


def dynamic_slice(ctx, x, x_aval, indices, slice_sizes, out_aval) -> ir.Value:
    """``dynamic_slice`` of ``x`` (starts clamped into bounds); ``indices`` share one integer type.

    Symbolic ``slice_sizes`` become a ``real_dynamic_slice`` with explicitly
    clamped starts (real_dynamic_slice does not clamp), as JAX emits; after
    refinement its sizes are static and XLA turns it into a dynamic slice.
    """
    if is_static_shape(slice_sizes):
        return stablehlo.DynamicSliceOp(x, list(indices), list(slice_sizes)).result
    one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(64))
    i64 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
    starts = [stablehlo.ReshapeOp(one, stablehlo.ConvertOp(i64, i).result).result for i in indices]
    starts = starts[0] if len(starts) == 1 else stablehlo.ConcatenateOp(starts, 0).result
    sizes = ctx.shape_value(slice_sizes)
    upper = stablehlo.SubtractOp(ctx.shape_value(x_aval.shape), sizes).result
    clamped = stablehlo.ClampOp(ctx.shape_value((0,) * len(indices)), starts, upper).result
    return stablehlo.RealDynamicSliceOp(tensor_type(out_aval), x, clamped, stablehlo.AddOp(clamped, sizes).result,
                                        ctx.shape_value((1,) * len(indices))).result


@register_lowering(structural.dynamic_slice_p)
def _dynamic_slice(ctx, x, *indices, slice_sizes):
    for axis, (size, dim) in enumerate(zip(slice_sizes, ctx.avals_in[0].shape)):
        assert_dim_at_least(ctx, dim, size, f"dynamic_slice: slice size of dimension {axis}")
    return dynamic_slice(ctx, x, ctx.avals_in[0], _same_index_type(ctx, indices, 1), slice_sizes, ctx.avals_out[0])


@register_lowering(structural.dynamic_update_slice_p)
def _dynamic_update_slice(ctx, x, update, *indices):
    for axis, (size, dim) in enumerate(zip(ctx.avals_in[1].shape, ctx.avals_in[0].shape)):
        assert_dim_at_least(ctx, dim, size, f"dynamic_update_slice: update size of dimension {axis}")
    return stablehlo.DynamicUpdateSliceOp(x, update, list(_same_index_type(ctx, indices, 2))).result


def _same_index_type(ctx, indices, first):
    # StableHLO wants all start indices of one type; mixed user inputs are converted to i32... or the widest.
    avals = ctx.avals_in[first:]
    if len({a.dtype for a in avals}) <= 1:
        return indices
    widest = max(avals, key=lambda a: a.dtype.itemsize)
    target = tensor_type(widest.update(shape=()))
    return [i if a.dtype == widest.dtype else stablehlo.ConvertOp(target, i).result for i, a in zip(indices, avals)]
