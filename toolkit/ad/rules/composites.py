"""Differentiation of ``composite``: refused with JAX's message (wrap the function in ``custom_jvp``/``custom_vjp``)."""

from __future__ import annotations

from toolkit.ad.registry import JVP_RULES
from toolkit.lax import composites


def _composite_jvp(primals, tangents, **params):
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


JVP_RULES[composites.composite_p] = _composite_jvp
