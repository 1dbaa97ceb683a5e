"""Sharding rule of ``composite``: outputs replicated (the decomposition is opaque to the type rules), as an
unknown op; reshard explicitly around it."""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import composites


@register_sharding_rule(composites.composite_p)
def _composite_rule(specs_in, avals_in, avals_out, **params):
    return [(None,) * len(a.shape) for a in avals_out]
