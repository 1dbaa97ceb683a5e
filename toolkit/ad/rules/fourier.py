"""JVP and transpose rules for ``toolkit/lax/fourier.py``: ``fft`` is linear.

A complex FFT's transpose is the same FFT (the DFT matrix is symmetric). RFFT and
IRFFT drop or restore the Hermitian-redundant half of the spectrum, so their
transposes weigh each kept frequency by how many it stands for (1 for DC and,
for even lengths, Nyquist; 2 for the rest) — JAX's rules, and JAX's convention
for complex cotangents (the IRFFT transpose is conjugated).
"""

from __future__ import annotations

import math

import numpy as np

from toolkit.ad.jvp import deflinear
from toolkit.ad.values import Zero, value_aval
from toolkit.lax import elementwise, structural
from toolkit.lax.fourier import FftType, fft, fft_p


def _hermitian_weights(frequencies: int, length: int, dtype: np.dtype, ndim: int) -> np.ndarray:
    """Along the last axis: 1 for DC (and Nyquist when ``length`` is even), 2 for the frequencies in between."""
    weights = np.full((frequencies,), 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    return weights.astype(dtype).reshape((1,) * (ndim - 1) + (frequencies,))


def _rfft_transpose(t, fft_lengths):
    aval = value_aval(t)
    weights = _hermitian_weights(aval.shape[-1], fft_lengths[-1], aval.dtype, aval.ndim)
    spectrum = elementwise.conj(t) / structural.broadcast_in_dim(weights, aval.shape, tuple(range(aval.ndim)))
    return fft(spectrum, FftType.IRFFT, fft_lengths) * np.asarray(math.prod(fft_lengths), value_aval(t).dtype).real


def _irfft_transpose(t, fft_lengths):
    spectrum = fft(t, FftType.RFFT, fft_lengths)
    aval = value_aval(spectrum)
    weights = _hermitian_weights(aval.shape[-1], fft_lengths[-1], aval.dtype, aval.ndim) / math.prod(fft_lengths)
    return elementwise.conj(spectrum * structural.broadcast_in_dim(weights.astype(aval.dtype), aval.shape,
                                                                   tuple(range(aval.ndim))))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if isinstance(ct, Zero):
        return [None]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


deflinear(fft_p, _fft_transpose)
