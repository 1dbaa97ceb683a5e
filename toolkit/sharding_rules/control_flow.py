"""Sharding rules of ``toolkit.lax.control_flow``: the bodies were traced with the typed inputs, so the shape rules'
outputs (the bodies' output avals) already carry the types the bodies' own rules gave; loop-carried and
branch outputs keep them, and a scan's stacked outputs add an unsharded leading dimension.
"""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import control_flow
from toolkit.sharding_rules import spec_algebra


register_sharding_rule(control_flow.cond_p, control_flow.while_p)(spec_algebra.from_bodies)


@register_sharding_rule(control_flow.scan_p)
def _scan_rule(specs_in, avals_in, avals_out, *, body, num_carry, num_consts, **params):
    for spec in specs_in[num_carry:len(avals_in) - num_consts]:
        if spec and spec[0] is not None:
            raise ValueError(f"0th dimension of all xs should be replicated. Got {spec_algebra.spec_text(spec)}")  # as JAX
    ys = [None if a.sharding is None else (None,) + tuple(a.sharding.spec) for a in body.out_avals[num_carry:]]
    return [a.sharding for a in avals_out[:num_carry]] + ys
