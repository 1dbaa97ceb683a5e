"""``toolkit.custom_derivatives``: JAX's ``jax.custom_derivatives`` names, the same objects as ``toolkit.ad``'s.

``custom_jvp`` / ``custom_vjp`` define a function's derivative rule; ``SymbolicZero`` and
``zero_from_primal`` are the zero tangents rules see with ``symbolic_zeros=True``; ``CustomVJPPrimal`` the
primal a ``custom_vjp`` forward rule receives then. ``custom_jvp_call_p`` / ``custom_vjp_call_p`` are the
primitives a traced program records for them (toolkit's, printed ``custom_jvp_call`` / ``custom_vjp_call``
as JAX's). ``closure_convert`` (a function's closed-over tracers made explicit arguments, for ``custom_vjp``
rules) and ``custom_gradient`` (a function returning its value and its VJP) are ``toolkit``'s top-level ones. See
docs/autodiff.md.
"""

from __future__ import annotations

from toolkit.ad.closures import closure_convert, custom_gradient
from toolkit.ad.custom_derivatives import CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp, zero_from_primal
from toolkit.lax.calls import custom_jvp_call_p, custom_vjp_call_p

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p",
           "custom_vjp", "custom_vjp_call_p", "zero_from_primal"]
