"""StableHLO for ``toolkit.lax.sharding``: the GSPMD ``@Sharding`` custom call."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core.avals import is_static_shape
from toolkit.lax.sharding import sharding_constraint_p
from toolkit.lowering.registry import register_lowering


@register_lowering(sharding_constraint_p)
def _sharding_constraint(ctx, x, *, sharding):
    if not is_static_shape(ctx.avals_in[0].shape):
        # JAX passes the shape as an extra operand (indices_of_shape_operands) that StableHLO's C++
        # canonicalization removes again; toolkit-refine-shapes would leave it, so refuse clearly.
        raise NotImplementedError(f"with_sharding_constraint on a symbolic shape ({ctx.avals_in[0].str_short()}) is "
                                  "not supported; constrain the shardings of the jit's inputs/outputs instead")
    op = stablehlo.CustomCallOp([ctx.out_type], [x], "Sharding")
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(str(sharding._to_xla_hlo_sharding(ctx.avals_in[0].ndim)))
    return op.result
