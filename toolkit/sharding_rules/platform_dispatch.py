"""Sharding rule of ``platform_index``: a replicated scalar."""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import platform_dispatch


@register_sharding_rule(platform_dispatch.platform_index_p)
def _platform_index_rule(specs_in, avals_in, avals_out, *, platforms):
    return [()]
