"""StableHLO for ``toolkit.lax.tokens``: ``stablehlo.create_token`` and ``stablehlo.after_all``, as JAX 0.10.2 lowers them.

(The ordered-callback tokens toolkit threads itself are ``toolkit/lowering/tokens.py``'s; these are the
user's token values, typed ``!stablehlo.token`` by ``lowering.types.tensor_type``.)
"""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo

from toolkit.lax import tokens
from toolkit.lowering.registry import register_lowering


@register_lowering(tokens.create_token_p)
def _create_token(ctx):
    return stablehlo.CreateTokenOp().result


@register_lowering(tokens.after_all_p)
def _after_all(ctx, *operands):
    # With no operands too: XLA's AfterAll of nothing is a fresh token (JAX lowers it the same way).
    return stablehlo.AfterAllOp(list(operands)).result
