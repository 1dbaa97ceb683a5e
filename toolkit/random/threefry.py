"""Threefry-2x32 on raw ``uint32[2]`` key data, as JAX 0.10.2's default PRNG.

Everything here works on the *raw* key data of one key (``uint32[2]``) and is
built from ``toolkit.lax`` primitives only, so it traces under ``jit``,
batches under ``vmap`` (the batching rules of the primitives do it) and is a
constant to autodiff (integer arithmetic). It reproduces, bit for bit,
``jax._src.random.threefry2x32`` with JAX's default
``jax_threefry_partitionable=True``:

* the hash (``threefry2x32``): the 20-round Threefry-2x32 block cipher with
  rotations ``(13, 15, 26, 6)`` / ``(17, 29, 16, 24)``, the key schedule
  ``k0, k1, k0 ^ k1 ^ 0x1BD11BDA`` injected after every four rounds with the
  injection counter 1..5 added to the second word (JAX's unrolled lowering);
  ``uint32`` additions wrap as XLA's do;
* ``seed``: JAX's default mode is 32-bit (``jax_enable_x64`` off), where the
  seed is a 32-bit integer, so the key is ``[0, uint32(seed)]``; a 64-bit seed
  (toolkit has 64-bit types always) is first wrapped to its low 32 bits, as
  JAX's canonicalization does;
* ``split(key, shape)``: the counters are the flat index of each element of
  ``shape`` as a 64-bit number split into ``(hi, lo)`` ``uint32`` words
  (``iota_2x32_shape``); the new keys are ``stack(threefry2x32(k, hi, lo))``;
* ``fold_in(key, d)``: ``threefry_2x32(key, seed(d))``, i.e. the hash of the
  counter pair ``(0, uint32(d))``;
* ``random_bits(key, width, shape)``: the same counters as ``split``;
  32 bits are ``x0 ^ x1``, 8 and 16 bits the truncation of that, 64 bits
  ``x0 << 32 | x1``.

The seed words, the counters and the checks here (``checked_seed``, ``seed_words``, ``iota_2x32_shape``,
``words_to_bits``...) are JAX's for every implementation: :mod:`toolkit.random.threefry4x32`,
:mod:`toolkit.random.philox` and :mod:`toolkit.random.rbg` build on them (:mod:`toolkit.random.prng_impls`).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Sequence

import numpy as np

from toolkit import lax
from toolkit.core import dtypes
from toolkit.core.config import flag_value
from toolkit.stages import jit

__all__ = ["threefry2x32", "threefry_seed", "threefry_split", "threefry_fold_in", "threefry_random_bits",
           "iota_2x32_shape", "UINT_DTYPES", "checked_seed", "seed_words", "check_bit_width", "check_bits_size",
           "key_words", "words_to_bits"]

UINT_DTYPES = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}
_U32 = dtypes.uint32

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _const(x: Any, value: int) -> Any:
    """A ``uint32`` array of ``x``'s shape filled with ``value``."""
    return lax.full(x.shape, np.uint32(value), _U32)


def _rotate_left(x: Any, d: Any) -> Any:
    """``x`` rotated left by the ``uint32`` scalar ``d`` (traced: JAX's rolled loop carries the rotations)."""
    right = lax.sub(lax.full((), np.uint32(32), _U32), d)
    return lax.bitwise_or(lax.shift_left(x, lax.broadcast_in_dim(d, x.shape, ())),
                          lax.shift_right_logical(x, lax.broadcast_in_dim(right, x.shape, ())))


def _bcast(k: Any, x: Any) -> Any:
    """The key word ``k`` (a scalar, or already of ``x``'s shape) at ``x``'s shape."""
    return k if k.shape == x.shape else lax.broadcast_in_dim(k, x.shape, ())


def _apply_round(v: list, rot: Any) -> list:
    v0 = lax.add(v[0], v[1])
    v1 = _rotate_left(v[1], rot)
    return [v0, lax.bitwise_xor(v0, v1)]


def _rolled_step(i: Any, state: tuple) -> tuple:
    x, ks, rotations = state
    for j in range(4):
        x = _apply_round(x, lax.reshape(lax.slice(rotations[0], (j,), (j + 1,)), ()))
    step = lax.broadcast_in_dim(lax.convert_element_type(lax.add(i, np.asarray(1, i.dtype)), _U32), x[1].shape, ())
    new_x = [lax.add(x[0], _bcast(ks[0], x[0])), lax.add(lax.add(x[1], _bcast(ks[1], x[1])), step)]
    return new_x, ks[1:] + ks[:1], rotations[1:] + rotations[:1]


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """The Threefry-2x32 hash of the counter words ``(x1, x2)`` under the key ``(k1, k2)``.

    ``k1``/``k2`` are ``uint32`` scalars (or of the counters' shape), ``x1``/``x2``
    ``uint32`` arrays of one shape; returns two ``uint32`` arrays of that shape.
    The five blocks of four rounds are a ``fori_loop`` carrying the rotating key
    schedule and rotation amounts, as JAX lowers the hash on CPU: the bits are the
    same either way, but XLA then fuses the float math that follows as it does
    JAX's program, which keeps samplers' roundings identical.
    """
    # As JAX, scalar keys stay scalars (broadcast at each use), also in the loop's carry.
    ks = [k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _const(k1, 0x1BD11BDA))]
    x = [lax.add(x1, _bcast(ks[0], x1)), lax.add(x2, _bcast(ks[1], x2))]
    rotations = [np.array(r, np.uint32) for r in _ROTATIONS]
    x, _, _ = lax.fori_loop(0, 5, _rolled_step, (x, ks[1:] + ks[:1], rotations))
    return x[0], x[1]


def check_bit_width(bit_width: int) -> None:
    """JAX's ``TypeError`` for a random-bits width other than 8, 16, 32 or 64 (every implementation checks it)."""
    if bit_width not in (8, 16, 32, 64):
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")


def check_bits_size(shape: Sequence[int]) -> None:
    """JAX's ``NotImplementedError`` for more than ``2 ** 64`` random numbers (the counters have 64 bits)."""
    if math.prod(shape) > 2 ** 64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")


def key_words(key: Any, count: int) -> list[Any]:
    """The ``count`` words of one raw key ``uint32[count]`` as ``uint32`` scalars (JAX's ``key[0]``, ``key[1]``...)."""
    return [lax.reshape(lax.slice(key, (i,), (i + 1,)), ()) for i in range(count)]


def words_to_bits(high: Any, low: Any, mixed: Any, bit_width: int) -> Any:
    """Random bits of ``bit_width`` from a hash's output words, as JAX's counter-based implementations build
    them: 64 bits are ``high << 32 | low``; 32 bits are ``mixed`` (the hash's XOR of its words), 8 and 16 bits its
    truncation."""
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        high = lax.convert_element_type(high, dtype)
        low = lax.convert_element_type(low, dtype)
        return lax.bitwise_or(lax.shift_left(high, lax.full(high.shape, np.uint64(32), dtype)), low)
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, dtype)


def iota_2x32_shape(shape: Sequence[int]) -> tuple[Any, Any]:
    """``(hi, lo)``: the flat (row-major) index of each element of ``shape`` as a 64-bit count in two words."""
    shape = tuple(shape)
    if not shape:
        zero = lax.full((), np.uint32(0), _U32)
        return zero, zero
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    counts = None
    for d, stride in enumerate(strides):
        term = lax.mul(lax.broadcasted_iota(dtypes.uint64, shape, d), lax.full(shape, np.uint64(stride), dtypes.uint64))
        counts = term if counts is None else lax.add(counts, term)
    hi = lax.shift_right_logical(counts, lax.full(shape, np.uint64(32), dtypes.uint64))
    return lax.convert_element_type(hi, _U32), lax.convert_element_type(counts, _U32)


def _words(key: Any) -> tuple[Any, Any]:
    k1 = lax.reshape(lax.slice(key, (0,), (1,)), ())
    k2 = lax.reshape(lax.slice(key, (1,), (2,)), ())
    return k1, k2


def checked_seed(seed: Any) -> Any:
    """``seed`` as every implementation's seed function takes it, checked as JAX checks it: a Python int becomes
    an ``int64`` (JAX's ``random_seed``: its low 32 bits count while x64 is off); not a scalar or not an integer
    is a ``TypeError``."""
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = np.int64(seed)  # as JAX: a Python int seed may use 64 bits (its low 32 bits count)
    dtype = dtypes.dtype_of(seed)
    if getattr(seed, "shape", ()):
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if not dtypes.is_integer(dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return seed


def seed_words(seed: Any) -> tuple[Any, Any]:
    """``(uint32(seed >> 32), uint32(seed))`` of a traced integer scalar: the two words every JAX implementation
    builds its key from (the high word is 0 unless the seed has 64 bits, which needs x64)."""
    dtype = seed.dtype
    if dtypes.bit_width(dtype) == 64:
        # Only with x64 on (with it off the seed entered as its 32-bit canonical type): JAX's
        # [uint32(seed >> 32), uint32(seed & 0xFFFFFFFF)].
        high = lax.shift_right_logical(seed, lax.full((), np.asarray(32, dtype), dtype))
        hi = lax.convert_element_type(high, _U32)
    else:
        # uint32(seed >> 32) is 0 for a 32-bit seed (XLA shifts by the bit width to 0)
        hi = lax.full((), np.uint32(0), _U32)
    return hi, lax.convert_element_type(seed, _U32)


def threefry_seed(seed: Any) -> Any:
    """Raw key data ``uint32[2]`` from an integer scalar ``seed`` (JAX's 32-bit mode: ``[0, uint32(seed)]``)."""
    return _seed(checked_seed(seed))


@partial(jit, inline=True)
def _seed(seed: Any) -> Any:
    hi, lo = seed_words(seed)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def threefry_2x32(key: Any, count: Any) -> Any:
    """The hash of the flat ``uint32`` counters ``count`` as JAX's ``threefry_2x32``: the first half of the
    (zero-padded to even) counters are the first words, the second half the second; the two hashed halves,
    concatenated and unpadded, are the result (the non-partitionable layout)."""
    k1, k2 = _words(key)
    n = count.shape[0]
    padded = lax.concatenate([count, lax.full((1,), np.uint32(0), _U32)], 0) if n % 2 else count
    half = padded.shape[0] // 2
    x1, x2 = threefry2x32(k1, k2, lax.slice(padded, (0,), (half,)), lax.slice(padded, (half,), (2 * half,)))
    out = lax.concatenate([x1, x2], 0)
    return lax.slice(out, (0,), (n,)) if n % 2 else out


def _split_original(key: Any, shape: tuple) -> Any:
    # jax_threefry_partitionable=False: JAX's _threefry_split_original.
    num = math.prod(shape)
    return lax.reshape(threefry_2x32(key, lax.iota(_U32, num * 2)), (*shape, 2))


def _random_bits_original(key: Any, bit_width: int, shape: tuple) -> Any:
    # jax_threefry_partitionable=False: JAX's _threefry_random_bits_original (one block of counters).
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= 2 ** 32 - 1:
        raise NotImplementedError("random bits of more than 2**32 - 1 words with jax_threefry_partitionable=False")
    bits = threefry_2x32(key, lax.iota(_U32, max_count))
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        half = max_count // 2
        hi = lax.convert_element_type(lax.slice(bits, (0,), (half,)), dtype)
        lo = lax.convert_element_type(lax.slice(bits, (half,), (2 * half,)), dtype)
        bits = lax.bitwise_or(lax.shift_left(hi, lax.full((half,), np.uint64(32), dtype)), lo)
    elif bit_width in (8, 16):
        # bits.view(dtype)[:size]: each word's pieces, lowest first (little-endian).
        pieces = 32 // bit_width
        shifts = lax.mul(lax.full((pieces, max_count), np.uint32(bit_width), _U32),
                         lax.broadcasted_iota(_U32, (pieces, max_count), 0))
        words = lax.broadcast_in_dim(bits, (pieces, max_count), (1,))
        parts = lax.bitwise_and(lax.full((pieces, max_count), np.uint32((1 << bit_width) - 1), _U32),
                                lax.shift_right_logical(words, shifts))
        flat = lax.reshape(lax.transpose(parts, (1, 0)), (max_count * pieces,))
        bits = lax.slice(lax.convert_element_type(flat, dtype), (0,), (size,))
    return lax.reshape(bits, shape)


@partial(jit, static_argnums=(1,))
def threefry_split(key: Any, shape: tuple) -> Any:
    """``shape + (2,)`` new raw keys from the raw key ``key`` (JAX's partitionable, fold-like split; the
    original layout while ``jax_threefry_partitionable`` is off)."""
    if not flag_value("jax_threefry_partitionable"):
        return _split_original(key, shape)
    k1, k2 = _words(key)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    nd = len(shape)
    return lax.concatenate([lax.broadcast_in_dim(b, (*shape, 1), tuple(range(nd))) for b in (b1, b2)], nd)


@jit
def threefry_fold_in(key: Any, data: Any) -> Any:
    """The raw key ``key`` with the ``uint32`` scalar ``data`` folded in."""
    k1, k2 = _words(key)
    x1 = lax.full((1,), np.uint32(0), _U32)
    x2 = lax.reshape(data, (1,))
    b1, b2 = threefry2x32(k1, k2, x1, x2)
    return lax.concatenate([b1, b2], 0)


@partial(jit, static_argnums=(1, 2))
def threefry_random_bits(key: Any, bit_width: int, shape: tuple) -> Any:
    """Unsigned integers of ``bit_width`` bits and ``shape`` from the raw key ``key`` (partitionable variant)."""
    check_bit_width(bit_width)
    if not flag_value("jax_threefry_partitionable"):
        return _random_bits_original(key, bit_width, shape)
    check_bits_size(shape)
    k1, k2 = _words(key)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        b1 = lax.convert_element_type(b1, dtype)
        b2 = lax.convert_element_type(b2, dtype)
        return lax.bitwise_or(lax.shift_left(b1, lax.full(shape, np.uint64(32), dtype)), b2)
    bits = lax.bitwise_xor(b1, b2)
    return bits if bit_width == 32 else lax.convert_element_type(bits, dtype)
