"""Sharding rules of ``toolkit.lax.linalg``: batch and free dimensions keep their specs; sharded contracting
dimensions on both sides are ambiguous (ask for ``out_sharding``).
"""

from __future__ import annotations

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import linalg


@register_sharding_rule(linalg.dot_general_p)
def _dot_general_rule(specs_in, avals_in, avals_out, *, dimension_numbers, **params):
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = specs_in
    lcs, rcs = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
    lbs, rbs = tuple(ls[i] for i in lb), tuple(rs[i] for i in rb)
    for mine, theirs, msg in ((lbs, rbs, "dot_general requires lhs batch dimensions and rhs batch dimensions to "
                                         f"have the consistent sharding, got {lbs} and {rbs}."),
                              (lcs, rcs, "dot_general requires contracting dimensions to have consistent sharding, "
                                         f"got {lcs} and {rcs}.")):
        for a, b in zip(mine, theirs):
            if a is not None and b is not None and a != b:
                raise ShardingTypeError(msg)
    for a, b in zip(lcs, rcs):
        if a is not None and b is not None:
            raise ShardingTypeError(
                "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please "
                "specify the output sharding via the `out_sharding` parameter."
                f" Got lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}")
    batch = tuple(a if a is not None else b for a, b in zip(lbs, rbs))
    lfree = tuple(e for i, e in enumerate(ls) if i not in lc and i not in lb)
    rfree = tuple(e for i, e in enumerate(rs) if i not in rc and i not in rb)
    return [batch + lfree + rfree]
