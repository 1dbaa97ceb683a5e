"""Threefry-4x32 on raw ``uint32[4]`` key data, as JAX 0.10.2's ``threefry4x32`` PRNG.

The 20-round Threefry-4x32 block cipher of Random123 on ``toolkit.lax`` integer
primitives (wrapping ``uint32`` additions), reproducing
``jax._src.random.threefry4x32`` bit for bit:

* the hash: the key schedule ``k0, k1, k2, k3, k0 ^ k1 ^ k2 ^ k3 ^ 0x1BD11BDA``; even rounds mix the word pairs
  (0, 1) and (2, 3), odd rounds (0, 3) and (2, 1), with Random123's rotation table; after every fourth round
  the schedule, rotated by one, is added to the words and the injection count ``1..5`` to the last word;
* ``seed(s)``: the four words of the hash of ``(0, 0, 0, 0)`` under the key ``(s >> 32, uint32(s), 0, 0)``;
* ``split(key, shape)``: the four words of the hash of ``(0, 0, hi, lo)``, ``(hi, lo)`` each element's 64-bit
  flat index; ``fold_in(key, d)``: of ``(0, 0, 0, d)``;
* ``random_bits``: the hash of ``(hi, lo, 0, 0)``; 32 bits are the XOR of the four words, 64 bits
  ``(x0 ^ x2) << 32 | (x1 ^ x3)``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from toolkit import lax
from toolkit.core import dtypes
from toolkit.random.threefry import (
    check_bit_width, check_bits_size, checked_seed, iota_2x32_shape, key_words, seed_words, words_to_bits,
)
from toolkit.stages import jit

__all__ = ["threefry4x32", "threefry4x32_seed", "threefry4x32_split", "threefry4x32_fold_in",
           "threefry4x32_random_bits"]

_U32 = dtypes.uint32
_ROUNDS = 20
_ROTATIONS = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))
_PARITY = 0x1BD11BDA


def _filled(shape: tuple, value: int) -> Any:
    return lax.full(shape, np.uint32(value), _U32)


def _at(word: Any, shape: tuple) -> Any:
    """A key word (a ``uint32`` scalar) at the counters' shape."""
    return word if tuple(word.shape) == tuple(shape) else lax.broadcast_in_dim(word, shape, ())


def _rotate_left(x: Any, d: int) -> Any:
    shape = tuple(x.shape)
    return lax.bitwise_or(lax.shift_left(x, _filled(shape, d)), lax.shift_right_logical(x, _filled(shape, 32 - d)))


def _mix(a: Any, b: Any, rotation: int) -> tuple[Any, Any]:
    a = lax.add(a, b)
    return a, lax.bitwise_xor(a, _rotate_left(b, rotation))


def threefry4x32(keys: tuple, x0: Any, x1: Any, x2: Any, x3: Any) -> tuple[Any, Any, Any, Any]:
    """The Threefry-4x32-20 hash of the counter words ``(x0, x1, x2, x3)`` (``uint32`` arrays of one shape)
    under the four key words ``keys`` (``uint32`` scalars); returns four ``uint32`` arrays of that shape."""
    shape = tuple(x0.shape)
    k0, k1, k2, k3 = keys
    parity = lax.bitwise_xor(lax.bitwise_xor(lax.bitwise_xor(lax.bitwise_xor(k0, k1), k2), k3), _filled((), _PARITY))
    schedule = [_at(k, shape) for k in (k0, k1, k2, k3, parity)]
    x = [lax.add(x0, schedule[0]), lax.add(x1, schedule[1]), lax.add(x2, schedule[2]), lax.add(x3, schedule[3])]
    for rnd in range(_ROUNDS):
        rot0, rot1 = _ROTATIONS[rnd % 8]
        if rnd % 2 == 0:
            x[0], x[1] = _mix(x[0], x[1], rot0)
            x[2], x[3] = _mix(x[2], x[3], rot1)
        else:
            x[0], x[3] = _mix(x[0], x[3], rot0)
            x[2], x[1] = _mix(x[2], x[1], rot1)
        if rnd % 4 == 3:
            injection = rnd // 4
            x = [lax.add(x[i], schedule[(i + 1 + injection) % 5]) for i in range(4)]
            x[3] = lax.add(x[3], _filled(shape, 1 + injection))
    return x[0], x[1], x[2], x[3]


def _stacked(words: tuple, shape: tuple) -> Any:
    """The words (arrays of ``shape``) stacked on a new last axis: ``shape + (len(words),)``."""
    dims = tuple(range(len(shape)))
    return lax.concatenate([lax.broadcast_in_dim(w, (*shape, 1), dims) for w in words], len(shape))


def threefry4x32_seed(seed: Any) -> Any:
    """Raw ``threefry4x32`` key data ``uint32[4]`` from an integer scalar ``seed`` (JAX's ``threefry4x32_seed``)."""
    return _threefry4x32_seed(checked_seed(seed))


@partial(jit, inline=True)
def _threefry4x32_seed(seed: Any) -> Any:
    hi, lo = seed_words(seed)
    zero = _filled((), 0)
    return _stacked(threefry4x32((hi, lo, zero, zero), zero, zero, zero, zero), ())


@partial(jit, static_argnums=(1,))
def threefry4x32_split(key: Any, shape: tuple) -> Any:
    """``shape + (4,)`` new raw ``threefry4x32`` keys from the raw key ``key``."""
    hi, lo = iota_2x32_shape(shape)
    zeros = _filled(tuple(shape), 0)
    return _stacked(threefry4x32(tuple(key_words(key, 4)), zeros, zeros, hi, lo), tuple(shape))


@jit
def threefry4x32_fold_in(key: Any, data: Any) -> Any:
    """The raw ``threefry4x32`` key ``key`` with the ``uint32`` scalar ``data`` folded in."""
    zero = _filled((), 0)
    return _stacked(threefry4x32(tuple(key_words(key, 4)), zero, zero, zero, data), ())


@partial(jit, static_argnums=(1, 2))
def threefry4x32_random_bits(key: Any, bit_width: int, shape: tuple) -> Any:
    """Unsigned integers of ``bit_width`` bits and ``shape`` from the raw ``threefry4x32`` key ``key``."""
    check_bit_width(bit_width)
    check_bits_size(shape)
    hi, lo = iota_2x32_shape(shape)
    zeros = _filled(tuple(shape), 0)
    out0, out1, out2, out3 = threefry4x32(tuple(key_words(key, 4)), hi, lo, zeros, zeros)
    mixed = lax.bitwise_xor(lax.bitwise_xor(lax.bitwise_xor(out0, out1), out2), out3)
    return words_to_bits(lax.bitwise_xor(out0, out2), lax.bitwise_xor(out1, out3), mixed, bit_width)
