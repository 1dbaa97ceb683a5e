"""Sharding rules of ``toolkit.lax.tokens``: none; a token has no dimensions to shard."""

from __future__ import annotations

from toolkit.core.sharding_types import NO_SHARDING_RULE
from toolkit.lax import tokens

NO_SHARDING_RULE[tokens.create_token_p] = ("no operands and a token result: a token has no dimensions, so no "
                                           "sharding in its type (JAX's AbstractToken has none)")
NO_SHARDING_RULE[tokens.after_all_p] = ("tokens in and out: a token has no dimensions, so no sharding in its type "
                                        "(JAX's AbstractToken has none)")
