"""StableHLO for ``approx_top_k``: JAX's ``ApproxTopK`` custom call with its comparator function.

Off TPU the call carries ``is_fallback = true`` and XLA computes the exact top k, as for JAX.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from toolkit.core.avals import ShapedArray
from toolkit.lax import approximate_top_k
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import element_type


def _comparator(ctx, dtype, is_max_k: bool) -> str:
    """``func.func @top_k_{gt|lt}_<type>_comparator`` at the start of the module (JAX's), its symbol."""
    mctx = ctx.module_context
    op_type = element_type(dtype)
    scalar = ir.RankedTensorType.get([], op_type)
    index = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    base = f"top_k_{'gt' if is_max_k else 'lt'}_{op_type}_comparator"
    taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in mctx.module.body.operations
             if "sym_name" in op.attributes}
    name, n = base, 0
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    with ir.InsertionPoint.at_block_begin(mctx.module.body):
        comparator = func.FuncOp(name, ir.FunctionType.get([scalar, scalar, index, index],
                                                           [ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))]))
    block = comparator.add_entry_block()
    with ir.InsertionPoint(block):
        a, b, _, _ = block.arguments
        stablehlo.ReturnOp([stablehlo.CompareOp(
            a, b, stablehlo.ComparisonDirectionAttr.get("GT" if is_max_k else "LT")).result])
    return name


def _lowering(fallback: bool):
    def rule(ctx, operand, *, k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override,
             aggregate_to_topk):
        aval = ctx.avals_in[0]
        dim = reduction_dimension % aval.ndim
        comparator = _comparator(ctx, aval.dtype, is_max_k)
        iota = ctx.iota(ShapedArray(aval.shape, np.dtype(np.int32)), dim)
        init_value = ctx.constant(np.array(-np.inf if is_max_k else np.inf, aval.dtype), aval.update(shape=()))
        init_index = ctx.constant(np.int32(-1), ShapedArray((), np.dtype(np.int32)))
        i64 = ir.IntegerType.get_signless(64)
        config = {"reduction_dim": ir.IntegerAttr.get(i64, dim),
                  "recall_target": ir.FloatAttr.get(ir.F32Type.get(), recall_target),
                  "aggregate_to_topk": ir.BoolAttr.get(aggregate_to_topk),
                  "reduction_input_size_override": ir.IntegerAttr.get(i64, reduction_input_size_override)}
        if fallback:
            config["is_fallback"] = ir.BoolAttr.get(True)
        config["top_k"] = ir.IntegerAttr.get(i64, k)
        op = stablehlo.CustomCallOp(ctx.out_types, [operand, iota, init_value, init_index], "ApproxTopK",
                                    backend_config=ir.StringAttr.get(""),
                                    called_computations=ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(comparator)]))
        op.attributes["mhlo.backend_config"] = ir.DictAttr.get(config)
        return list(op.results)
    rule.__name__ = "_approx_top_k_fallback" if fallback else "_approx_top_k_tpu"
    return rule


register_lowering(approximate_top_k.approx_top_k_p)(_lowering(fallback=True))
register_lowering(approximate_top_k.approx_top_k_p, platforms=["tpu"])(_lowering(fallback=False))
