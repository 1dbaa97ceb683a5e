"""``toolkit.numpy.fft``: NumPy's discrete Fourier transforms (``jax.numpy.fft``) on ``lax.fft``.

Every transform moves its axes to the end, crops or zero-pads them to ``s``/``n``,
applies one ``stablehlo.fft`` (XLA takes at most three dimensions at once, so
four or more are done in steps) and scales by ``norm``: ``"backward"`` (the
default: the inverse divides by ``n``), ``"ortho"`` (both by ``sqrt(n)``) or
``"forward"``. Results are complex64 (float32 inputs) as JAX's; ``rfft``-family
inputs must be real.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import fourier as lax_fft
from toolkit.lax import structural as lax_structural
from toolkit.lax.fourier import FftType
from toolkit.numpy._core import asarray, check_arraylike
from toolkit.numpy.creation import arange
from toolkit.numpy.shapes import moveaxis, roll
from toolkit.numpy.ufuncs import conj

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

_NORMS = ("backward", "ortho", "forward")


def _norm_scale(lengths: Sequence[int], name: str, norm: str | None) -> float | None:
    if norm is None or norm == "backward":
        return None
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    size = float(np.prod(lengths, dtype=np.float64))
    inverse = name.startswith("i")
    if norm == "ortho":
        return float(np.sqrt(size)) if inverse else 1 / float(np.sqrt(size))
    return size if inverse else 1 / size


def _transform(name: str, kind: FftType, a: Any, s: Sequence[int] | None, axes: Sequence[int] | None,
               norm: str | None) -> Any:
    """The transform ``kind`` of ``a`` over ``axes`` at lengths ``s`` (NumPy's ``fftn`` family's meaning)."""
    full_name = f"toolkit.numpy.fft.{name}"
    check_arraylike(f"jax.numpy.fft.{name}", a)  # JAX's name for the check
    arr = asarray(a)
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
        if axes is not None and len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    given_axes = None if axes is None else tuple(operator.index(ax) for ax in axes)
    if given_axes is None:
        axes = tuple(range(arr.ndim)) if s is None else tuple(range(arr.ndim - len(s), arr.ndim))
    else:
        axes = given_axes
    if len(axes) != len({ax % max(arr.ndim, 1) for ax in axes}):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if given_axes is not None:
        axes = tuple(range(arr.ndim - len(given_axes), arr.ndim))
        arr = moveaxis(arr, given_axes, axes)
    if s is not None:
        sizes = list(arr.shape)
        for axis, n in zip(axes, s):
            sizes[axis] = n
        if kind == FftType.IRFFT:
            sizes[-1] = sizes[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in sizes)]
        if any(n > m for n, m in zip(sizes, arr.shape)):
            # zeros after the data (lax's pad: numpy.padding's modes sit above this module)
            arr = lax_structural.pad(arr, np.zeros((), arr.dtype), [(0, n - m, 0) for n, m in zip(sizes, arr.shape)])
        lengths = list(s)
    elif kind == FftType.IRFFT:
        lengths = [arr.shape[axis] for axis in axes[:-1]]
        if axes:
            lengths.append(max(0, 2 * (arr.shape[axes[-1]] - 1)))
    else:
        lengths = [arr.shape[axis] for axis in axes]
    out = _in_steps(arr, kind, tuple(lengths))
    scale = _norm_scale(lengths, name, norm)
    if scale is not None:
        out = out * asarray(scale, out.dtype)
    if given_axes is not None:
        out = moveaxis(out, axes, given_axes)
    return out


def _in_steps(arr: Any, kind: FftType, lengths: tuple[int, ...]) -> Any:
    # XLA's FFT transforms at most three dimensions: do the innermost 2 or 3, then the rest as complex FFTs.
    if len(lengths) <= 3:
        return lax_fft.fft(arr, kind, lengths)
    inner = 2 if len(lengths) == 4 else 3
    outer_axes = tuple(range(arr.ndim - len(lengths), arr.ndim - inner))
    moved_to = tuple(range(arr.ndim - len(lengths) + inner, arr.ndim))
    if kind in (FftType.RFFT, FftType.FFT):
        arr = lax_fft.fft(arr, kind, lengths[-inner:])
        arr = moveaxis(_in_steps(moveaxis(arr, outer_axes, moved_to), FftType.FFT, lengths[:-inner]),
                       moved_to, outer_axes)
        return arr
    arr = moveaxis(_in_steps(moveaxis(arr, outer_axes, moved_to), FftType.IFFT, lengths[:-inner]),
                   moved_to, outer_axes)
    return lax_fft.fft(arr, kind, lengths[-inner:])


def _one_axis(name: str, axis: Any) -> list[int]:
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"toolkit.numpy.fft.{name} does not support multiple axes. Please use "
                         f"toolkit.numpy.fft.{name}n. Got axis = {axis!r}.")
    return [axis]


def _two_axes(name: str, axes: Sequence[int]) -> Sequence[int]:
    if len(axes) != 2:
        raise ValueError(f"toolkit.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return axes


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional discrete Fourier transform along ``axis`` (``numpy.fft.fft``)."""
    return _transform("fft", FftType.FFT, a, None if n is None else [n], _one_axis("fft", axis), norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`fft`."""
    return _transform("ifft", FftType.IFFT, a, None if n is None else [n], _one_axis("ifft", axis), norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The FFT of a real input: the ``n // 2 + 1`` non-negative frequencies."""
    return _transform("rfft", FftType.RFFT, a, None if n is None else [n], _one_axis("rfft", axis), norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`rfft`: a real output of length ``n`` (default ``2 * (m - 1)``)."""
    return _transform("irfft", FftType.IRFFT, a, None if n is None else [n], _one_axis("irfft", axis), norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    conjugate = conj(a)  # a list is conj's refusal ("conjugate"), as JAX's
    length = (conjugate.shape[axis] - 1) * 2 if n is None else n
    out = _transform("hfft", FftType.IRFFT, conjugate, None if n is None else [n], _one_axis("hfft", axis), norm)
    return out * asarray(length, out.dtype)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`hfft`."""
    arr = asarray(a)
    length = arr.shape[axis] if n is None else n
    out = _transform("ihfft", FftType.RFFT, arr, None if n is None else [n], _one_axis("ihfft", axis), norm)
    return conj(out) * asarray(1 / length, dtypes.float32 if out.dtype == np.complex64 else dtypes.float64)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The N-dimensional FFT over ``axes`` (default: all, or the last ``len(s)``)."""
    return _transform("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The inverse of :func:`fftn`."""
    return _transform("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The N-dimensional FFT of a real input (the last axis keeps ``n // 2 + 1`` frequencies)."""
    return _transform("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The inverse of :func:`rfftn`."""
    return _transform("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The two-dimensional FFT over ``axes``."""
    return _transform("fft2", FftType.FFT, a, s, _two_axes("fft2", axes), norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The inverse of :func:`fft2`."""
    return _transform("ifft2", FftType.IFFT, a, s, _two_axes("ifft2", axes), norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The two-dimensional FFT of a real input."""
    return _transform("rfft2", FftType.RFFT, a, s, _two_axes("rfft2", axes), norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The inverse of :func:`rfft2`."""
    return _transform("irfft2", FftType.IRFFT, a, s, _two_axes("irfft2", axes), norm)


def _frequency_arguments(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of toolkit.numpy.fft.{name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of toolkit.numpy.fft.{name} only takes a single value. Got d = {list(d)}.")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``: ``[0, 1, ..., -1] / (d * n)``."""
    _frequency_arguments("fftfreq", n, d)
    out_dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())  # float64 under x64, as JAX's
    compute = out_dtype if dtypes.is_float(out_dtype) else np.dtype(np.float32)
    k = (arange(n, dtype=compute) + n // 2) % n - n // 2
    return (k / asarray(d * n, compute)).astype(out_dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d * n)``."""
    _frequency_arguments("rfftfreq", n, d)
    out_dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())  # float64 under x64, as JAX's
    return arange(0, n // 2 + 1, dtype=out_dtype) / asarray(d * n, out_dtype)


def _shifts(x: Any, axes: Any, sign: int) -> tuple[Any, Any]:
    if axes is None:
        axes = tuple(range(x.ndim))
        return [sign * (dim // 2) for dim in x.shape], axes
    if isinstance(axes, int):
        return sign * (x.shape[axes] // 2), axes
    return [sign * (x.shape[ax] // 2) for ax in axes], axes


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """Move the zero frequency to the center of ``axes`` (default: all)."""
    check_arraylike("fftshift", x)
    x = asarray(x)
    shift, axes = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """The inverse of :func:`fftshift`."""
    check_arraylike("ifftshift", x)
    x = asarray(x)
    shift, axes = _shifts(x, axes, -1)
    return roll(x, shift, axes)
