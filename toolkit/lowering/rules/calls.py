"""Lowering of ``toolkit/lax/calls.py``: every call primitive is its sub-program, inline.

A ``checkpoint`` that was differentiated with ``prevent_cse`` first passes its
operands through one ``stablehlo.optimization_barrier`` (as JAX does), so XLA
cannot merge the recomputation in the backward pass with the forward pass.

A ``jit`` call (a nested ``toolkit.jit``) is not inline: it is a ``func.call`` of a
``func.func private`` named after the function, as JAX lowers it (see
``RuleContext.call_program`` in ``toolkit/lowering/lower.py``).
"""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo

from toolkit.lax import calls
from toolkit.lowering.registry import register_lowering


@register_lowering(calls.custom_jvp_call_p)
def _custom_jvp_call(ctx, *operands, call, jvp, num_consts, symbolic_zeros):
    return ctx.lower_program(call, list(operands))


@register_lowering(calls.custom_vjp_call_p)
def _custom_vjp_call(ctx, *operands, call, fwd, bwd, num_consts, symbolic_zeros):
    return ctx.lower_program(call, list(operands))


@register_lowering(calls.checkpoint_p)
def _checkpoint(ctx, *operands, jaxpr, prevent_cse, differentiated, policy):
    operands = list(operands)
    if differentiated and prevent_cse and operands:
        operands = list(stablehlo.OptimizationBarrierOp(operands).results)
    return ctx.lower_program(jaxpr, operands)


@register_lowering(calls.name_p)
def _name(ctx, x, *, name):
    return x


@register_lowering(calls.jit_call_p)
def _jit_call(ctx, *operands, name, jaxpr):
    return ctx.call_program(jaxpr, name, list(operands))
