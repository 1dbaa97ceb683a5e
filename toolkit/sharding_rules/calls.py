"""Sharding rules of ``toolkit.lax.calls``: calls are typed by their bodies (the shape rule already returns the body's
output types); ``name`` keeps its operand's.
"""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import calls
from toolkit.sharding_rules import spec_algebra


register_sharding_rule(calls.custom_jvp_call_p, calls.custom_vjp_call_p, calls.checkpoint_p,
                       calls.jit_call_p)(spec_algebra.from_bodies)
register_sharding_rule(calls.name_p)(spec_algebra.same_as_operand)
