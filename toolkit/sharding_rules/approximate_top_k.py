"""Sharding rule of ``approx_top_k``: the reduction dimension must be unsharded; both results keep the spec."""

from __future__ import annotations

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import approximate_top_k


@register_sharding_rule(approximate_top_k.approx_top_k_p)
def _approx_top_k_rule(specs_in, avals_in, avals_out, *, reduction_dimension, **params):
    (spec,) = specs_in
    dim = reduction_dimension % len(spec)
    if spec[dim] is not None:
        raise ShardingTypeError(f"reduction dimension {dim} in operand {avals_in[0].str_short()} should be "
                                "unsharded i.e. the spec of that dim should be `None`.")
    return [spec, spec]
