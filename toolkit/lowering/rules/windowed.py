"""StableHLO for ``toolkit.lax.windowed``: ``stablehlo.reduce`` / ``stablehlo.reduce_window`` whose body
region is the traced computation."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core.avals import is_static_shape
from toolkit.lax import windowed
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import tensor_type


def _padded_aval(aval, padding):
    return aval.update(shape=tuple(d + lo + hi for d, (lo, hi) in zip(aval.shape, padding)))


def _fill_body(ctx, region: ir.Region, computation, scalar_types) -> None:
    block = region.blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block):
        stablehlo.ReturnOp(ctx.lower_program(computation, list(block.arguments)))


def _scalar_types(ctx, n: int) -> list[ir.Type]:
    return [tensor_type(a.update(shape=(), weak_type=False)) for a in ctx.avals_in[:n]]


@register_lowering(windowed.reduce_p)
def _reduce(ctx, *args, computation, dimensions):
    n = len(args) // 2
    op = stablehlo.ReduceOp(ctx.out_types, list(args[:n]), list(args[n:]), list(dimensions))
    _fill_body(ctx, op.body, computation, _scalar_types(ctx, n))
    return list(op.results)


@register_lowering(windowed.reduce_window_p)
def _reduce_window(ctx, *args, computation, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    n = len(args) // 2
    ndim = len(window_dimensions)
    flat_padding = [p for pair in padding for p in pair]
    if not is_static_shape(flat_padding):
        # Padding of a symbolic size ('SAME' with strides): StableHLO wants it static, so pad the operands
        # explicitly with their init values (what reduce_window pads with) and reduce without padding.
        lows, highs = [lo for lo, _ in padding], [hi for _, hi in padding]
        zeros = (0,) * ndim
        args = [stablehlo.DynamicPadOp(tensor_type(_padded_aval(aval, padding)), x, init, ctx.shape_value(lows),
                                       ctx.shape_value(highs), ctx.shape_value(zeros)).result
                for x, init, aval in zip(args[:n], args[n:], ctx.avals_in[:n])] + list(args[n:])
        padding = ((0, 0),) * ndim
    i64 = ir.IntegerType.get_signless(64)
    pads = ir.DenseIntElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(ndim, 2),
                                       type=ir.RankedTensorType.get([ndim, 2], i64))
    ones = (1,) * ndim
    op = stablehlo.ReduceWindowOp(
        ctx.out_types, list(args[:n]), list(args[n:]), list(window_dimensions),
        window_strides=list(window_strides) if window_strides != ones else None,
        base_dilations=list(base_dilation) if base_dilation != ones else None,
        window_dilations=list(window_dilation) if window_dilation != ones else None,
        padding=pads if any(p != (0, 0) for p in padding) else None)
    _fill_body(ctx, op.body, computation, _scalar_types(ctx, n))
    return list(op.results)
