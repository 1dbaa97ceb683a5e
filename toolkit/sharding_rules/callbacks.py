"""Sharding rule of host callbacks: any input shardings; the declared results are replicated.

The host function sees whole (logical) values, so its results are typed
replicated over the inputs' mesh, and a ``debug.print`` of an explicitly
sharded array (no results) types nothing.
"""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax.callbacks import debug_callback_p, io_callback_p, pure_callback_p


def _replicated_results(specs_in, avals_in, avals_out, **params):
    return [(None,) * len(a.shape) for a in avals_out]


for _p in (pure_callback_p, io_callback_p, debug_callback_p):
    register_sharding_rule(_p)(_replicated_results)
