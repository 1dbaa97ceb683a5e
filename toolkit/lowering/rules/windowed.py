"""StableHLO for ``toolkit.lax.windowed``: ``stablehlo.reduce`` / ``stablehlo.reduce_window`` whose body
region is the traced computation."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.lax import windowed as wd
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import tensor_type


def _fill_body(ctx, region: ir.Region, computation, scalar_types) -> None:
    block = region.blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block):
        stablehlo.ReturnOp(ctx.lower_program(computation, list(block.arguments)))


def _scalar_types(ctx, n: int) -> list[ir.Type]:
    return [tensor_type(a.update(shape=(), weak_type=False)) for a in ctx.avals_in[:n]]


@register_lowering(wd.reduce_p)
def _reduce(ctx, *args, computation, dimensions):
    n = len(args) // 2
    op = stablehlo.ReduceOp(ctx.out_types, list(args[:n]), list(args[n:]), list(dimensions))
    _fill_body(ctx, op.body, computation, _scalar_types(ctx, n))
    return list(op.results)


@register_lowering(wd.reduce_window_p)
def _reduce_window(ctx, *args, computation, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    n = len(args) // 2
    ndim = len(window_dimensions)
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
