"""Differentiation of ``toolkit.lax.random_bits``: nothing to differentiate.

``rng_bit_generator`` takes an integer key and returns integer bits; its
tangents are always symbolic zeros, which the JVP interpreter propagates
without asking for a rule (random *values* are differentiated through the
arithmetic that turns bits into floats).
"""

from __future__ import annotations

from toolkit.ad.registry import NO_JVP
from toolkit.lax.random_bits import rng_bit_generator_p

NO_JVP[rng_bit_generator_p] = "integer key in, integer bits out: its tangents are always zero"
