"""Sharding rules of ``toolkit.lax.sharding``: a sharding constraint's result has the constraint's type."""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule, type_sharding
from toolkit.lax.sharding import sharding_constraint_p


@register_sharding_rule(sharding_constraint_p)
def _constraint_rule(specs_in, avals_in, avals_out, *, sharding, **params):
    return [type_sharding(sharding, len(avals_in[0].shape))]
