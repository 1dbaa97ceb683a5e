"""StableHLO for ``toolkit.lax.compiler_controls``: one op each (``dce_sink``: none or one), as JAX 0.10.2 lowers them."""

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


@register_lowering(compiler_controls.dce_sink_p)
def _dce_sink(ctx, x, *, prevent_mlir_dce):
    if not prevent_mlir_dce:
        return []  # the equation only kept the value alive in the program; MLIR needs nothing
    # JAX's ffi_lowering("dce_sink", has_side_effect=True): a side-effecting call MLIR's DCE cannot drop,
    # operand laid out row-major, no results, an empty typed-FFI configuration beside the empty string.
    (aval,) = ctx.avals_in
    layout = np.arange(len(aval.shape) - 1, -1, -1, dtype=np.int64)
    index = ir.IndexType.get()
    op = stablehlo.CustomCallOp(
        [], [x], "dce_sink", has_side_effect=True, backend_config=ir.StringAttr.get(""),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        operand_layouts=ir.ArrayAttr.get([ir.DenseIntElementsAttr.get(
            layout, type=ir.RankedTensorType.get([len(layout)], index))]),
        result_layouts=ir.ArrayAttr.get([]))
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get({})
    return []
