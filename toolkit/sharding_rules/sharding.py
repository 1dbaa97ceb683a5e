"""Sharding rules of ``toolkit.lax.sharding``: a sharding constraint's result has the constraint's type,
a traced ``device_put``'s its sharding's type (a device's: the value's own)."""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule, type_sharding
from toolkit.lax.sharding import device_put_p, sharding_constraint_p
from toolkit.shard.sharding import Sharding


@register_sharding_rule(sharding_constraint_p)
def _constraint_rule(specs_in, avals_in, avals_out, *, sharding, **params):
    return [type_sharding(sharding, len(avals_in[0].shape))]


@register_sharding_rule(device_put_p)
def _device_put_rule(specs_in, avals_in, avals_out, *, device, **params):
    typed = type_sharding(device, len(avals_in[0].shape)) if isinstance(device, Sharding) else None
    return [specs_in[0] if typed is None else typed]
