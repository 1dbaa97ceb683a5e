"""Sharding rules of ``toolkit.lax.convolution``: the rhs replicated, the lhs's feature dimension unsharded; the output
takes the lhs's spec (batch and spatial) if its axes divide the new sizes.
"""

from __future__ import annotations

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import convolution
from toolkit.sharding_rules import spec_algebra


@register_sharding_rule(convolution.conv_general_dilated_p)
def _conv_rule(specs_in, avals_in, avals_out, *, dimension_numbers, **params):
    # JAX's _conv_general_dilated_sharding_rule: the rhs replicated and the lhs's feature dimension unsharded;
    # the output then has the lhs's spec position by position (the batch dimension's sharding carries over),
    # a dimension whose size changes keeping its axes only if they divide the new size.
    lhs_spec, rhs_spec = specs_in
    lhs, out = avals_in[0], avals_out[0]
    if any(e is not None for e in rhs_spec) or lhs_spec[dimension_numbers[0][1]] is not None:
        raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter of "
                                "`conv_general_dilated`")
    sizes = spec_algebra.mesh_sizes(avals_in)
    for in_size, out_size, entry in zip(lhs.shape, out.shape, lhs_spec):
        if in_size != out_size and entry is not None and out_size % spec_algebra.axes_size(entry, sizes):
            raise ShardingTypeError(
                f"conv_general_dilated on sharded dims where out dim ({out_size}) is not divisible by mesh axes "
                f"({spec_algebra.axes_size(entry, sizes)}) with spec ({entry}) is not implemented. Got input "
                f"type={lhs.str_short()} and output shape={tuple(out.shape)}")
    return [tuple(lhs_spec)]
