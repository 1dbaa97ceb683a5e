"""StableHLO for ``toolkit.lax.sharding``: the GSPMD ``@Sharding`` custom call."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.lax.sharding import sharding_constraint_p
from toolkit.lowering.registry import register_lowering


@register_lowering(sharding_constraint_p)
def _sharding_constraint(ctx, x, *, sharding):
    op = stablehlo.CustomCallOp([ctx.out_type], [x], "Sharding")
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(str(sharding._to_xla_hlo_sharding(ctx.avals_in[0].ndim)))
    return op.result
