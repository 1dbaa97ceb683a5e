"""Sharding rules of ``toolkit.lax.random_bits``: the key keeps its spec, the bits are replicated.
"""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import random_bits


@register_sharding_rule(random_bits.rng_bit_generator_p)
def _rng_bit_generator_rule(specs_in, avals_in, avals_out, **params):
    # JAX: the new key keeps the key's sharding, the bits are replicated over the mesh (no out_sharding here).
    return [specs_in[0], (None,) * len(avals_out[1].shape)]
