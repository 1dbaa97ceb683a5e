"""Sharding rules of ``toolkit.lax.custom_call``: none — an opaque target."""

from __future__ import annotations

from toolkit.core.sharding_types import NO_SHARDING_RULE
from toolkit.lax.custom_call import custom_call_p, effectful_custom_call_p

for _p in (custom_call_p, effectful_custom_call_p):
    NO_SHARDING_RULE[_p] = "an opaque target: no layout of its results can be derived from its operands"
