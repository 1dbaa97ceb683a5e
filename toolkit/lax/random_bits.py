"""``rng_bit_generator``: XLA's stateless bit generator (``stablehlo.rng_bit_generator``).

Semantics of ``jax.lax.rng_bit_generator``: the key is ``uint32[4]`` (or
``uint64[2]``); the result is ``(new_key, bits)`` with ``bits`` of ``shape``
and an unsigned ``dtype``. The bits depend on the algorithm and, for
``RNG_DEFAULT``, on the platform.

Example::

    key = np.array([0, 1, 2, 3], np.uint32)
    key, bits = toolkit.lax.rng_bit_generator(key, (2, 3), np.uint32)
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

from toolkit.core import dtypes, tracing
from toolkit.core.avals import ShapedArray, canonicalize_shape
from toolkit.core.families import Family
from toolkit.lax.sharding import sharding_constraint_p
from toolkit.shard.explicit import canonicalize_out_sharding, out_type_sharding

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("random_bits")

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p"]


class RandomAlgorithm(enum.IntEnum):
    """Which bit-generation algorithm ``rng_bit_generator`` uses."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_UNSIGNED = (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)


def _rng_rule(key: ShapedArray, *, shape: tuple, dtype: Any, algorithm: RandomAlgorithm) -> list[ShapedArray]:
    if not ((key.shape == (4,) and key.dtype == dtypes.uint32) or (key.shape == (2,) and key.dtype == dtypes.uint64)):
        raise TypeError(f"rng_bit_generator: the key must be uint32[4] or uint64[2], got {key.str_short()}")
    return [key.strip_weak_type(), ShapedArray(shape, dtype)]


rng_bit_generator_p = family.primitive("rng_bit_generator", shape_rule=_rng_rule, multiple_results=True)


@family.function(binds=(rng_bit_generator_p,))
def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = dtypes.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding: Any = None) -> tuple[Any, Any]:
    """Random bits of ``shape``/``dtype`` from ``key``; returns ``(new_key, bits)``.

    ``dtype`` must be unsigned (uint8/16/32/64). ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec``
    under ``toolkit.set_mesh``): the bits' sharding (their type on Explicit mesh axes), as JAX's — the same
    bits as without it (JAX and toolkit both constrain the generated array); the new key keeps the key's.

    Example::

        new_key, bits = rng_bit_generator(np.zeros(4, np.uint32), (8,), np.uint8,
                                          algorithm=RandomAlgorithm.RNG_THREE_FRY)
    """
    shape = canonicalize_shape(shape)
    dtype = dtypes.canonicalize_dtype(dtype)
    sharding = canonicalize_out_sharding(out_sharding, "rng_bit_generator")  # JAX checks it before the dtype
    if dtype not in _UNSIGNED:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}; use uint8, uint16, uint32 or uint64")
    try:
        algorithm = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"rng_bit_generator: unknown algorithm {algorithm!r}; use a RandomAlgorithm") from None
    if sharding is None:
        new_key, bits = rng_bit_generator_p.bind(key, shape=shape, dtype=dtype, algorithm=algorithm)
        return new_key, bits
    out_type_sharding(sharding, shape)  # the spec fits the bits' shape (JAX's errors)
    if not tracing.is_tracing():  # one program, its bits placed as their type says
        return tracing.eager_call(lambda k: _constrained_bits(k, shape, dtype, algorithm, sharding), key)
    return _constrained_bits(key, shape, dtype, algorithm, sharding)


def _constrained_bits(key: Any, shape: tuple, dtype: Any, algorithm: RandomAlgorithm,
                      sharding: Any) -> tuple[Any, Any]:
    # JAX types the generator's bits output by out_sharding and lowers that as a sharding constraint after the
    # op; the constraint here (the bits are generated replicated, then typed and laid out) writes the same.
    new_key, bits = rng_bit_generator_p.bind(key, shape=shape, dtype=dtype, algorithm=algorithm)
    return new_key, sharding_constraint_p.bind(bits, sharding=sharding)
