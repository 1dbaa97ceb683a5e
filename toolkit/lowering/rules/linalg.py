"""StableHLO for ``toolkit.lax.linalg``."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo

from toolkit.lax import linalg
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.convolution import precision_config
from toolkit.lowering.types import tensor_type


@register_lowering(linalg.dot_general_p)
def _dot_general(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out_dtype = ctx.avals_out[0].dtype
    # XLA wants equal operand types; mixed inputs are converted to the result type first.
    if lhs_aval.dtype != out_dtype:
        lhs = stablehlo.ConvertOp(_retyped(ctx, 0, out_dtype), lhs).result
    if rhs_aval.dtype != out_dtype:
        rhs = stablehlo.ConvertOp(_retyped(ctx, 1, out_dtype), rhs).result
    dn = stablehlo.DotDimensionNumbers.get(lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
                                           lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
    # precision_config only when asked for (JAX always writes [DEFAULT, DEFAULT], which means the same).
    return stablehlo.DotGeneralOp(ctx.out_type, lhs, rhs, dn, precision_config=precision_config(precision)).result


def _retyped(ctx, i, dtype):
    return tensor_type(ctx.avals_in[i].update(dtype=dtype))
