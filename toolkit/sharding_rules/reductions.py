"""Sharding rules of ``toolkit.lax.reductions``: reduced dimensions drop (a sharded one is an error, as in JAX).
"""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import reductions
from toolkit.sharding_rules import spec_algebra


def _reduction_rule(specs_in, avals_in, avals_out, *, axes, **params):
    return [spec_algebra.drop(specs_in[0], axes)]


for _p in (reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p, reductions.reduce_min_p,
           reductions.reduce_and_p, reductions.reduce_or_p, reductions.reduce_xor_p):
    register_sharding_rule(_p)(_reduction_rule)


@register_sharding_rule(reductions.argmax_p, reductions.argmin_p)
def _arg_rule(specs_in, avals_in, avals_out, *, axis, **params):
    return [spec_algebra.drop(specs_in[0], (axis,))]
