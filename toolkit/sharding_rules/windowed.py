"""Sharding rules of ``toolkit.lax.windowed``: ``reduce`` drops its reduced dimensions; ``reduce_window`` keeps the
operand's spec, unsharded where a window spans more than one element.
"""

from __future__ import annotations

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import windowed
from toolkit.sharding_rules import spec_algebra


@register_sharding_rule(windowed.reduce_p)
def _reduce_rule(specs_in, avals_in, avals_out, *, dimensions, **params):
    n = len(avals_in) // 2
    specs = [tuple(s) for s in specs_in[:n]]
    if any(s != specs[0] for s in specs[1:]):
        raise ShardingTypeError(f"reduce: the operands must be sharded alike, got {spec_algebra.specs_text(specs)}")
    return [spec_algebra.drop(specs[0], dimensions) for _ in avals_out]


@register_sharding_rule(windowed.reduce_window_p)
def _reduce_window_rule(specs_in, avals_in, avals_out, *, window_dimensions, **params):
    n = len(avals_in) // 2
    spec, operand = specs_in[0], avals_in[0]
    for i, (entry, w) in enumerate(zip(spec, window_dimensions)):
        if entry is not None and w != 1:
            raise ShardingTypeError(f"Input should be unsharded over the axis being reduced. Got input type="
                                    f"{operand} and axis={i}")
    return [spec for _ in avals_out[:n]]
