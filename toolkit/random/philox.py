"""Philox-2x32 and Philox-4x32 on raw key data, as JAX 0.10.2's ``philox2x32`` and ``philox4x32`` PRNGs.

The counter-based Philox hashes of Random123 (D. E. Shaw Research), 10 rounds,
on ``toolkit.lax`` integer primitives (``mul`` is the low half of the product,
``mulhi`` the high half; ``uint32`` additions wrap), reproducing
``jax._src.random.philox2x32``/``philox4x32`` bit for bit:

* **philox2x32** — key ``uint32[1]``. A round is ``(x0, x1) -> (mulhi(M, x0) ^ x1 ^ k, M * x0)`` with
  ``M = 0xD256D193``; the key word is bumped by ``0x9E3779B9`` before every round but the first.
  ``seed(s)``: word 0 of the hash of the counter ``(s >> 32, uint32(s))`` under key 0. ``split(key, shape)``:
  word 0 of the hash of each element's 64-bit flat index ``(hi, lo)``. ``fold_in(key, d)``: word 0 of the hash
  of ``(0, d)``. ``random_bits``: the hash of ``(hi, lo)``; 32 bits are ``x0 ^ x1``, 64 bits ``x0 << 32 | x1``.
* **philox4x32** — key ``uint32[2]``. A round multiplies ``x0`` by ``0xD2511F53`` and ``x2`` by ``0xCD9E8D57``
  and yields ``(hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)``; the key words are bumped by ``0x9E3779B9`` and
  ``0xBB67AE85``. ``seed(s)``: words 0-1 of the hash of ``(s >> 32, uint32(s), 0, 0)`` under key ``(0, 0)``.
  ``split``: words 0-1 of the hash of ``(0, 0, hi, lo)``; ``fold_in(key, d)``: of ``(0, 0, 0, d)``.
  ``random_bits``: the hash of ``(hi, lo, 0, 0)``; 32 bits are the XOR of the four words, 64 bits
  ``x0 << 32 | x1``.
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

__all__ = ["philox2x32", "philox4x32", "philox2x32_seed", "philox2x32_split", "philox2x32_fold_in",
           "philox2x32_random_bits", "philox4x32_seed", "philox4x32_split", "philox4x32_fold_in",
           "philox4x32_random_bits"]

_U32 = dtypes.uint32
_ROUNDS = 10
# Random123's multipliers and Weyl key increments.
_M2x32_0 = 0xD256D193
_M4x32_0, _M4x32_1 = 0xD2511F53, 0xCD9E8D57
_W32_0, _W32_1 = 0x9E3779B9, 0xBB67AE85


def _filled(shape: tuple, value: int) -> Any:
    return lax.full(shape, np.uint32(value), _U32)


def _at(word: Any, shape: tuple) -> Any:
    """A key word (a ``uint32`` scalar) at the counters' shape."""
    return word if tuple(word.shape) == tuple(shape) else lax.broadcast_in_dim(word, shape, ())


def _xor(*words: Any) -> Any:
    out = words[0]
    for word in words[1:]:
        out = lax.bitwise_xor(out, word)
    return out


def philox2x32(k0: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """The Philox-2x32-10 hash of the counter words ``(x0, x1)`` (``uint32`` arrays of one shape) under the key
    word ``k0`` (a ``uint32`` scalar); returns two ``uint32`` arrays of the counters' shape."""
    shape = tuple(x0.shape)
    m = _filled(shape, _M2x32_0)
    for rnd in range(_ROUNDS):
        if rnd:
            k0 = lax.add(k0, _filled((), _W32_0))
        lo, hi = lax.mul(m, x0), lax.mulhi(m, x0)
        x0, x1 = _xor(hi, x1, _at(k0, shape)), lo
    return x0, x1


def philox4x32(k0: Any, k1: Any, x0: Any, x1: Any, x2: Any, x3: Any) -> tuple[Any, Any, Any, Any]:
    """The Philox-4x32-10 hash of the counter words ``(x0, x1, x2, x3)`` (``uint32`` arrays of one shape) under
    the key words ``(k0, k1)`` (``uint32`` scalars); returns four ``uint32`` arrays of the counters' shape."""
    shape = tuple(x0.shape)
    m0, m1 = _filled(shape, _M4x32_0), _filled(shape, _M4x32_1)
    for rnd in range(_ROUNDS):
        if rnd:
            k0 = lax.add(k0, _filled((), _W32_0))
            k1 = lax.add(k1, _filled((), _W32_1))
        lo0, hi0 = lax.mul(m0, x0), lax.mulhi(m0, x0)
        lo1, hi1 = lax.mul(m1, x2), lax.mulhi(m1, x2)
        x0, x1, x2, x3 = _xor(hi1, x1, _at(k0, shape)), lo1, _xor(hi0, x3, _at(k1, shape)), lo0
    return x0, x1, x2, x3


# --- philox2x32: key uint32[1] -----------------------------------------------------------------

def philox2x32_seed(seed: Any) -> Any:
    """Raw ``philox2x32`` key data ``uint32[1]`` from an integer scalar ``seed`` (JAX's ``philox2x32_seed``)."""
    return _philox2x32_seed(checked_seed(seed))


@partial(jit, inline=True)
def _philox2x32_seed(seed: Any) -> Any:
    hi, lo = seed_words(seed)
    out0, _ = philox2x32(_filled((), 0), hi, lo)
    return lax.reshape(out0, (1,))


@partial(jit, static_argnums=(1,))
def philox2x32_split(key: Any, shape: tuple) -> Any:
    """``shape + (1,)`` new raw ``philox2x32`` keys from the raw key ``key``."""
    hi, lo = iota_2x32_shape(shape)
    out0, _ = philox2x32(key_words(key, 1)[0], hi, lo)
    return lax.broadcast_in_dim(out0, (*shape, 1), tuple(range(len(shape))))


@jit
def philox2x32_fold_in(key: Any, data: Any) -> Any:
    """The raw ``philox2x32`` key ``key`` with the ``uint32`` scalar ``data`` folded in."""
    out0, _ = philox2x32(key_words(key, 1)[0], _filled((), 0), data)
    return lax.reshape(out0, (1,))


@partial(jit, static_argnums=(1, 2))
def philox2x32_random_bits(key: Any, bit_width: int, shape: tuple) -> Any:
    """Unsigned integers of ``bit_width`` bits and ``shape`` from the raw ``philox2x32`` key ``key``."""
    check_bit_width(bit_width)
    check_bits_size(shape)
    hi, lo = iota_2x32_shape(shape)
    out0, out1 = philox2x32(key_words(key, 1)[0], hi, lo)
    return words_to_bits(out0, out1, _xor(out0, out1), bit_width)


# --- philox4x32: key uint32[2] -----------------------------------------------------------------

def philox4x32_seed(seed: Any) -> Any:
    """Raw ``philox4x32`` key data ``uint32[2]`` from an integer scalar ``seed`` (JAX's ``philox4x32_seed``)."""
    return _philox4x32_seed(checked_seed(seed))


@partial(jit, inline=True)
def _philox4x32_seed(seed: Any) -> Any:
    hi, lo = seed_words(seed)
    zero = _filled((), 0)
    out0, out1, _, _ = philox4x32(zero, zero, hi, lo, zero, zero)
    return lax.concatenate([lax.reshape(out0, (1,)), lax.reshape(out1, (1,))], 0)


@partial(jit, static_argnums=(1,))
def philox4x32_split(key: Any, shape: tuple) -> Any:
    """``shape + (2,)`` new raw ``philox4x32`` keys from the raw key ``key``."""
    k0, k1 = key_words(key, 2)
    hi, lo = iota_2x32_shape(shape)
    zeros = _filled(tuple(shape), 0)
    out0, out1, _, _ = philox4x32(k0, k1, zeros, zeros, hi, lo)
    dims = tuple(range(len(shape)))
    return lax.concatenate([lax.broadcast_in_dim(w, (*shape, 1), dims) for w in (out0, out1)], len(shape))


@jit
def philox4x32_fold_in(key: Any, data: Any) -> Any:
    """The raw ``philox4x32`` key ``key`` with the ``uint32`` scalar ``data`` folded in."""
    k0, k1 = key_words(key, 2)
    zero = _filled((), 0)
    out0, out1, _, _ = philox4x32(k0, k1, zero, zero, zero, data)
    return lax.concatenate([lax.reshape(out0, (1,)), lax.reshape(out1, (1,))], 0)


@partial(jit, static_argnums=(1, 2))
def philox4x32_random_bits(key: Any, bit_width: int, shape: tuple) -> Any:
    """Unsigned integers of ``bit_width`` bits and ``shape`` from the raw ``philox4x32`` key ``key``."""
    check_bit_width(bit_width)
    check_bits_size(shape)
    k0, k1 = key_words(key, 2)
    hi, lo = iota_2x32_shape(shape)
    zeros = _filled(tuple(shape), 0)
    out0, out1, out2, out3 = philox4x32(k0, k1, hi, lo, zeros, zeros)
    return words_to_bits(out0, out1, _xor(out0, out1, out2, out3), bit_width)
