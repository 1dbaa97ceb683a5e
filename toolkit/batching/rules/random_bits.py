"""Batching rule for ``rng_bit_generator``, JAX's behaviour carried over.

XLA's bit generator takes one key. JAX's rule (``jax/_src/lax/control_flow/loops.py``)
draws the whole batch ``(B, *shape)`` of bits from the *first* key of the
batch and returns the keys with the first one advanced; the other keys do
not influence the bits. toolkit does the same so that ``vmap`` results
equal JAX's. (For independent streams per element, split keys first and
use them outside ``vmap``, or ``lax.scan`` over the keys.)
"""

import numpy as np

from toolkit.batching.interpret import moveaxis
from toolkit.batching.registry import register_batching
from toolkit.core.avals import aval_of
from toolkit.lax import random_bits
from toolkit.lax import structural


def _rng_bit_generator(axis, args, dims, *, shape, dtype, algorithm):
    keys = moveaxis(args[0], dims[0], 0)
    key_len = aval_of(keys).shape[1]
    key = structural.reshape(structural.slice(keys, (0, 0), (1, key_len)), (key_len,))
    new_key, bits = random_bits.rng_bit_generator_p.bind(key, shape=(axis.size,) + tuple(shape), dtype=dtype,
                                                         algorithm=algorithm)
    zero = np.zeros((), np.int32)
    new_keys = structural.clamped_dynamic_update_slice(keys, structural.reshape(new_key, (1, key_len)), (zero, zero))
    return [new_keys, bits], [0, 0]


register_batching(random_bits.rng_bit_generator_p, _rng_bit_generator)
