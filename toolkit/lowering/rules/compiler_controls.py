"""StableHLO for ``toolkit.lax.compiler_controls``: one op each, as JAX 0.10.2 lowers them."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core.avals import ShapedArray
from toolkit.lax import compiler_controls
from toolkit.lowering.registry import register_lowering


@register_lowering(compiler_controls.reduce_precision_p)
def _reduce_precision(ctx, x, *, exponent_bits, mantissa_bits):
    i32 = ir.IntegerType.get_signless(32)
    return stablehlo.ReducePrecisionOp(x, ir.IntegerAttr.get(i32, exponent_bits),
                                       ir.IntegerAttr.get(i32, mantissa_bits)).result


@register_lowering(compiler_controls.optimization_barrier_p)
def _optimization_barrier(ctx, *xs):
    return list(stablehlo.OptimizationBarrierOp(list(xs)).results)


@register_lowering(compiler_controls.rng_uniform_p)
def _rng_uniform(ctx, a, b, *, shape):
    # The shape operand is a constant tensor<Nxi64>, as JAX's lowering writes it.
    dims = np.array(shape, np.int64)
    shape_value = ctx.constant(dims, ShapedArray(dims.shape, dims.dtype))
    return stablehlo.RngOp(a, b, shape_value, stablehlo.RngDistributionAttr.get("UNIFORM")).result
