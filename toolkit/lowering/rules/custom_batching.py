"""Lowering of ``toolkit.lax.custom_batching``: ``custom_vmap_call`` is its sub-program, inline (as JAX's)."""

from __future__ import annotations

from toolkit.lax import custom_batching
from toolkit.lowering.registry import register_lowering


@register_lowering(custom_batching.custom_vmap_call_p)
def _custom_vmap_call(ctx, *operands, call, rule, num_consts):
    return ctx.lower_program(call, list(operands))
