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

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, canonicalize_shape
from toolkit.core.families import Family

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
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT) -> tuple[Any, Any]:
    """Random bits of ``shape``/``dtype`` from ``key``; returns ``(new_key, bits)``.

    ``dtype`` must be unsigned (uint8/16/32/64).

    Example::

        new_key, bits = rng_bit_generator(np.zeros(4, np.uint32), (8,), np.uint8,
                                          algorithm=RandomAlgorithm.RNG_THREE_FRY)
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    if dtype not in _UNSIGNED:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}; use uint8, uint16, uint32 or uint64")
    try:
        algorithm = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"rng_bit_generator: unknown algorithm {algorithm!r}; use a RandomAlgorithm") from None
    new_key, bits = rng_bit_generator_p.bind(key, shape=canonicalize_shape(shape), dtype=dtype, algorithm=algorithm)
    return new_key, bits
