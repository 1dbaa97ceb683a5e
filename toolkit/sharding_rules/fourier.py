"""Sharding rule of ``fft``: leading dimensions keep their specs; the transformed ones must be unsharded.

Each output element of an FFT depends on every element of the transformed
dimensions, so a sharded one would need a collective the type cannot express
(JAX refuses it too): reshard first.
"""

from __future__ import annotations

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import fourier


@register_sharding_rule(fourier.fft_p)
def _fft_rule(specs_in, avals_in, avals_out, *, fft_type, fft_lengths):
    (spec,) = specs_in
    n = len(fft_lengths)
    transformed = tuple(spec[len(spec) - n:])
    if any(entry is not None for entry in transformed):
        raise ShardingTypeError(f"fft: the transformed dimensions must be unsharded, got {spec}; "
                                f"reshard the last {n} dimension(s) to None first")
    return [tuple(spec[:len(spec) - n]) + (None,) * n]
