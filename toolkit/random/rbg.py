"""The ``rbg`` and ``unsafe_rbg`` PRNGs of JAX 0.10.2 on raw ``uint32[4]`` key data.

Both draw their random bits from XLA's ``RngBitGenerator`` (``toolkit.lax.rng_bit_generator``, algorithm
``RNG_DEFAULT``: the bits are the platform's, as in JAX, and XLA does not promise them stable across
backends or versions). They differ in how keys are derived, as ``jax._src.random.rbg``:

* **rbg** (``key<rbg>``): the key is two threefry2x32 keys side by side. ``seed(s)`` is
  ``concat(threefry_seed(s), threefry_seed(s))``; ``split`` and ``fold_in`` apply threefry2x32's to each half
  (``split`` follows ``jax_threefry_partitionable``, as JAX's).
* **unsafe_rbg** (``key<urbg>``): the same seed; ``split(key, shape)`` treats ten rows of bit-generator output as
  a hash: it draws ``uint32[10 * n, 4]`` from the key and keeps every tenth row; ``fold_in(key, d)`` is
  ``key ^ bits[-1]`` of ``uint32[10, 4]`` drawn from ``rbg_seed(d)``.

Under ``vmap`` XLA's bit generator takes one key: JAX's batching rule (and toolkit's,
``toolkit/batching/rules/random_bits.py``) draws the whole batch from the first key, so ``random_bits`` of a
batch of rbg keys is not a function of each key, in JAX as here.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from toolkit import lax
from toolkit.random.threefry import (
    UINT_DTYPES, check_bit_width, checked_seed, seed_words, threefry_fold_in, threefry_split,
)
from toolkit.stages import jit

__all__ = ["rbg_seed", "rbg_split", "rbg_fold_in", "rbg_random_bits", "unsafe_rbg_split", "unsafe_rbg_fold_in"]


def _halves(key: Any) -> tuple[Any, Any]:
    """The two threefry2x32 keys ``uint32[2]`` an rbg key is made of."""
    return lax.slice(key, (0,), (2,)), lax.slice(key, (2,), (4,))


def rbg_seed(seed: Any) -> Any:
    """Raw rbg (and unsafe_rbg) key data ``uint32[4]``: threefry2x32's key of ``seed``, twice (JAX's ``_rbg_seed``)."""
    return _rbg_seed(checked_seed(seed))


@partial(jit, inline=True)
def _rbg_seed(seed: Any) -> Any:
    hi, lo = (lax.reshape(word, (1,)) for word in seed_words(seed))
    return lax.concatenate([hi, lo, hi, lo], 0)


@partial(jit, static_argnums=(1,))
def rbg_split(key: Any, shape: tuple) -> Any:
    """``shape + (4,)`` new raw rbg keys: threefry2x32's split of each half, side by side."""
    first, second = _halves(key)
    return lax.concatenate([threefry_split(first, shape), threefry_split(second, shape)], len(shape))


@jit
def rbg_fold_in(key: Any, data: Any) -> Any:
    """The raw rbg key ``key`` with the ``uint32`` scalar ``data`` folded into each half (threefry2x32's)."""
    first, second = _halves(key)
    return lax.concatenate([threefry_fold_in(first, data), threefry_fold_in(second, data)], 0)


@partial(jit, static_argnums=(1, 2))
def rbg_random_bits(key: Any, bit_width: int, shape: tuple) -> Any:
    """Unsigned integers of ``bit_width`` bits and ``shape``: XLA's bit generator run from the key."""
    check_bit_width(bit_width)
    _, bits = lax.rng_bit_generator(key, shape, UINT_DTYPES[bit_width])
    return bits


@partial(jit, static_argnums=(1,))
def unsafe_rbg_split(key: Any, shape: tuple) -> Any:
    """``shape + (4,)`` new raw unsafe_rbg keys: every tenth row of ``uint32[10 * n, 4]`` generated bits."""
    num = math.prod(shape)
    _, rows = lax.rng_bit_generator(key, (10 * num, 4), UINT_DTYPES[32])
    kept = lax.slice(rows, (0, 0), (10 * num, 4), (10, 1))
    return lax.reshape(kept, (*shape, 4))


@jit
def unsafe_rbg_fold_in(key: Any, data: Any) -> Any:
    """The raw unsafe_rbg key ``key`` XORed with the last row of ``uint32[10, 4]`` bits generated from ``data``'s
    rbg seed."""
    _, rows = lax.rng_bit_generator(_rbg_seed(data), (10, 4), UINT_DTYPES[32])
    return lax.bitwise_xor(key, lax.reshape(lax.slice(rows, (9, 0), (10, 4)), (4,)))
