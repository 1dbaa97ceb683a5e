"""Lowering rules of ``toolkit/lax/autodiff.py``: ``stop_gradient`` lowers to its operand (no op), as in JAX."""

from toolkit.lax import autodiff
from toolkit.lowering.registry import register_lowering


@register_lowering(autodiff.stop_gradient_p)
def _stop_gradient(ctx, x):
    return x
