"""Sharding rules of ``toolkit.lax.elementwise``: inputs' specs agree dimension by dimension (None and size-1
dimensions give way; scalars do not count); the result takes them. Derived for every member of the family
but ``bitcast_convert_type``, whose last dimension may appear or fold.
"""

from __future__ import annotations

from typing import Any

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import elementwise
from toolkit.sharding_rules import spec_algebra


def _elementwise_rule(primitive: Any):
    def rule(specs_in, avals_in, avals_out, **params):
        spec = spec_algebra.broadcasting(primitive.name, specs_in, avals_in)
        return [spec + (None,) * (len(a.shape) - len(spec)) for a in avals_out]
    return rule


@elementwise.family.derive
def _derive(primitive: Any) -> None:
    if primitive is not elementwise.bitcast_convert_type_p:
        register_sharding_rule(primitive)(_elementwise_rule(primitive))


@register_sharding_rule(elementwise.bitcast_convert_type_p)
def _bitcast_rule(specs_in, avals_in, avals_out, **params):
    spec, out = specs_in[0], avals_out[0]
    if len(out.shape) > len(spec):
        return [spec + (None,)]
    if len(out.shape) < len(spec):
        if spec[-1] is not None:
            raise ShardingTypeError(f"bitcast_convert_type: the last dimension is sharded {spec[-1]!r} but is "
                                    "folded into the new dtype")
        return [spec[:-1]]
    return [spec]
