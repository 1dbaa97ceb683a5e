"""Sharding rules of ``toolkit.lax.parallel``: none — collectives run only inside ``shard_map``.
"""

from __future__ import annotations

from toolkit.core.sharding_types import NO_SHARDING_RULE
from toolkit.lax import parallel


for _p in (parallel.psum_p, parallel.psum_invariant_p, parallel.pmax_p, parallel.pmin_p, parallel.all_gather_p,
           parallel.all_gather_invariant_p, parallel.psum_scatter_p, parallel.ppermute_p, parallel.all_to_all_p,
           parallel.axis_index_p, parallel.pvary_p):
    NO_SHARDING_RULE[_p] = ("a collective runs only inside shard_map, whose axes are Manual there: explicit "
                            "types never reach it")
