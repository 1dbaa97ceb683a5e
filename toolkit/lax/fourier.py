"""Fast Fourier transforms: the ``fft`` primitive (StableHLO's ``fft``) and ``FftType``.

One primitive with a static ``fft_type`` and ``fft_lengths`` (the sizes of the
trailing dimensions it transforms), as ``jax.lax.fft``. ``toolkit.numpy.fft``
builds every NumPy transform on it.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.lax.elementwise import convert_element_type

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("fourier")


class FftType(enum.IntEnum):
    """Which transform ``fft`` computes (the values are XLA's and JAX's)."""

    FFT = 0    #: forward, complex to complex
    IFFT = 1   #: inverse, complex to complex
    RFFT = 2   #: forward, real to complex (the last dimension keeps n // 2 + 1 frequencies)
    IRFFT = 3  #: inverse, complex to real


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype of ``dtype``'s precision (float64/complex128 stay 128-bit)."""
    return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128) else np.complex64)


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of a complex (or real) ``dtype``."""
    return np.dtype(np.float64 if np.dtype(dtype) in (np.float64, np.complex128) else np.float32)


def _fft_rule(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> ShapedArray:
    n = len(fft_lengths)
    if n > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input dimensions as fft_lengths "
                         f"{fft_lengths}.")
    minor = tuple(x.shape[x.ndim - n:])
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}")
        if fft_lengths and fft_lengths[-1] == 0:
            # Its n // 2 + 1 = 1 output bins would have no input: StableHLO's verifier rejects the op (and numpy
            # the transform), so say so before lowering.
            raise ValueError(f"RFFT of an empty axis: fft_lengths {fft_lengths} end in 0 (shape {x.shape})")
        shape = tuple(x.shape[:x.ndim - n]) + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, complex_dtype(x.dtype), x.weak_type)
    if not dtypes.is_complex(x.dtype):
        raise ValueError(f"{fft_type.name} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to all except the last "
                             f"fft_length, got fft_lengths={fft_lengths}")
        return ShapedArray(tuple(x.shape[:x.ndim - n]) + fft_lengths, real_dtype(x.dtype), x.weak_type)
    if minor != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}")
    return ShapedArray(tuple(x.shape), x.dtype, x.weak_type)


fft_p = family.primitive("fft", shape_rule=_fft_rule)

_NAMES = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT, "irfft": FftType.IRFFT}


def _fft_type(fft_type: FftType | str) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type.lower() not in _NAMES:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return _NAMES[fft_type.lower()]
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


@family.function(binds=(fft_p,))
def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """The FFT of ``x`` over its last ``len(fft_lengths)`` dimensions (``jax.lax.fft``).

    ``fft_type`` is an :class:`FftType` or its name (``"fft"``, ``"IRFFT"``, ...).
    The operand is converted first: to complex for ``FFT``/``IFFT``/``IRFFT``, to
    a real floating type for ``RFFT`` (a complex operand there is a ``ValueError``).
    Empty ``fft_lengths`` returns the converted operand (XLA has no rank-0 FFT).
    """
    kind = _fft_type(fft_type)
    dtype = aval_of(x).dtype
    if kind == FftType.RFFT:
        if dtypes.is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        # Integers and booleans become their inexact type (JAX's to_inexact_dtype: float32, int64 -> float64 with
        # x64); float16/bfloat16 stay and the shape rule refuses them.
        x = convert_element_type(x, dtypes.to_inexact_dtype(dtype))
    else:  # JAX's to_complex_dtype: of the inexact type (int64 -> complex128 with x64)
        x = convert_element_type(x, complex_dtype(dtypes.to_inexact_dtype(dtype)))
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=kind, fft_lengths=lengths)
