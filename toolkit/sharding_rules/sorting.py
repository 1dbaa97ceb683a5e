"""Sharding rules of ``toolkit.lax.sorting``: unchanged, but unsharded along the sorted axis (and sort's operands
sharded alike).
"""

from __future__ import annotations

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import sorting
from toolkit.sharding_rules import spec_algebra


@register_sharding_rule(sorting.sort_p)
def _sort_rule(specs_in, avals_in, avals_out, *, dimension, **params):
    # JAX's _sort_abstract_eval: every operand unsharded over the sorting dimension, all sharded alike
    # (an untyped operand counts as replicated, as a JAX array on the current mesh does).
    specs = [tuple(s) for s in specs_in]
    for s in specs:
        if s[dimension] is not None:
            raise ShardingTypeError("Arguments to sort must be unsharded over the sorting dimension. "
                                    f"Got arg sharding={spec_algebra.sharding_text(avals_in, s)} and sorting "
                                    f"dimension={dimension}")
        if s != specs[0]:
            shardings = " ".join(spec_algebra.sharding_text(avals_in, t) for t in specs)
            raise ShardingTypeError(f"Arguments to sort must have equal shardings, got: {shardings}")
    return [specs[0] for _ in avals_out]


@register_sharding_rule(sorting.top_k_p)
def _top_k_rule(specs_in, avals_in, avals_out, **params):
    # toolkit's top_k works along the last axis (JAX's axis=-1, canonicalized).
    spec, operand = specs_in[0], avals_in[0]
    axis = len(operand.shape) - 1
    if spec[axis] is not None:
        raise ShardingTypeError("The input should be unsharded over the axis along which to compute the top_k "
                                f"values. Got input type={operand} and axis={axis}")
    return [spec, spec]
