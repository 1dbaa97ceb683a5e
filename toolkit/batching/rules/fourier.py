"""Batching rule for ``fft``: the transform acts on trailing dimensions, so the batch dimension moves to the front."""

from __future__ import annotations

from toolkit.batching.interpret import moveaxis
from toolkit.batching.registry import register_batching
from toolkit.lax import fourier


def _fft(axis, args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    return fourier.fft_p.bind(moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


register_batching(fourier.fft_p, _fft)
