"""Sharding rules of ``toolkit.lax.custom_batching``: ``custom_vmap_call`` is typed by its body, as the calls are."""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import custom_batching
from toolkit.sharding_rules import spec_algebra

register_sharding_rule(custom_batching.custom_vmap_call_p)(spec_algebra.from_bodies)
