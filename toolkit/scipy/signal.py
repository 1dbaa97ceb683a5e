"""``toolkit.scipy.signal``: ``jax.scipy.signal``'s N-d convolutions and correlations (direct, over
``lax.conv_general_dilated``, and by FFT), ``detrend``, and the windowed-FFT spectral estimates ``stft``,
``istft``, ``csd`` and ``welch``, over ``toolkit.numpy`` and ``toolkit.lax``.

As JAX's: ``convolve2d``/``correlate2d`` take only ``boundary='fill'`` with ``fillvalue=0``; the ``method``
``'auto'`` is ``'direct'``; segment lengths, overlaps and FFT sizes must be concrete. The ``'hann'`` window is
computed here; any other window name or tuple asks SciPy's ``get_window`` (an optional dependency, as JAX's).
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.batching.api import vmap
from toolkit.core import dtypes
from toolkit.lax.decompositions import complex_dtype
from toolkit.numpy import fft as tfft
from toolkit.numpy import linalg as np_linalg
from toolkit.numpy._core import broadcast_shapes, canonical_axis, check_arraylike, convert, promote_inexact, \
    result_dtype

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft",
           "welch"]


def _to_complex_dtype(dtype: Any) -> np.dtype:
    return complex_dtype(dtypes.to_inexact_dtype(np.dtype(dtype)))


def _promote_complex(*args: Any) -> list[Any]:
    dtype, weak = result_dtype(*args)
    return [convert(a, _to_complex_dtype(dtype), weak) for a in args]


def _concrete_int(value: Any) -> int:
    """``int(value)``: a traced value raises toolkit's ``ConcretizationTypeError`` (JAX's ``concrete_or_error``)."""
    return int(value)


# ------------------------------------------------------------------------------------------------ convolutions

def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Sequence[int] | None = None) -> Any:
    """The N-d convolution of ``in1`` and ``in2`` by FFT (``mode`` full, same or valid), optionally only along
    ``axes`` (the other axes are batch axes of equal sizes)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_inexact(tnp.asarray(in1), tnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")

    def unbatched(a: Any, b: Any) -> Any:
        return _fftconvolve_unbatched(a, b, mode)
    if axes is None:
        return unbatched(in1, in2)
    axes_tuple = tuple(operator.index(ax) for ax in (axes if isinstance(axes, (tuple, list)) else (axes,)))
    axes_tuple = tuple(canonical_axis(ax, in1.ndim) for ax in axes_tuple)
    mapped_axes = set(range(in1.ndim)) - set(axes_tuple)
    if any(in1.shape[i] != in2.shape[i] for i in mapped_axes):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} in2.shape={in2.shape} "
                         f"axes={axes_tuple}")
    fun: Callable[..., Any] = unbatched
    for ax in sorted(mapped_axes):
        fun = vmap(fun, in_axes=ax, out_axes=ax)
    return fun(in1, in2)


def _fftconvolve_unbatched(in1: Any, in2: Any, mode: str) -> Any:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2  # an outer product: no FFT needed (and JAX skips it)
    else:
        if tnp.iscomplexobj(in1):
            fft, ifft = tfft.fftn, tfft.ifftn
        else:
            fft, ifft = tfft.rfftn, tfft.irfftn
        conv = ifft(fft(in1, full_shape) * fft(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    starts = tuple((full - out) // 2 for full, out in zip(full_shape, out_shape))
    return lax.dynamic_slice(conv, starts, out_shape)


def _convolve_nd(in1: Any, in2: Any, mode: str, *, precision: Any) -> Any:
    # Not tnp.convolve: its 'same' padding differs from SciPy's for even-sized kernels (as JAX notes).
    if mode not in ["full", "same", "valid"]:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {in1.shape} and {in2.shape}.")
    in1, in2 = promote_inexact(tnp.asarray(in1), tnp.asarray(in2))
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    in2 = tnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2) for s, s_o in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    strides = tuple(1 for _ in shape)
    result = lax.conv_general_dilated(in1[None, None], in2[None, None], strides, padding, precision=precision)
    return result[0, 0]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None) -> Any:
    """The N-d convolution of ``in1`` and ``in2`` (``mode`` full, same or valid), direct or by FFT."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ["direct", "auto"]:
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: float = 0,
               precision: Any = None) -> Any:
    """The 2-d convolution of ``in1`` and ``in2`` (``mode`` full, same or valid; zero fill only)."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("convolve2d() only supports 2-dimensional inputs.")
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None) -> Any:
    """The N-d cross-correlation of ``in1`` and ``in2``: the convolution with ``in2`` flipped and conjugated."""
    return convolve(in1, tnp.flip(in2.conj()), mode, precision=precision, method=method)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: float = 0,
                precision: Any = None) -> Any:
    """The 2-d cross-correlation of ``in1`` and ``in2`` (``mode`` full, same or valid; zero fill only)."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("correlate2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("correlate2d() only supports 2-dimensional inputs.")
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = all(s1 == s2 for s1, s2 in zip(in1.shape, in2.shape))
    # Which operand is flipped, and whether the result is conjugated, follows JAX's case split (SciPy's results
    # when in2 is the larger input).
    if mode == "valid" and swap and not same_shape:
        return _convolve_nd(tnp.flip(in2), in1.conj(), mode, precision=precision)
    if mode not in ("same", "valid") and swap:
        return _convolve_nd(tnp.flip(in2), in1.conj(), mode, precision=precision).conj()
    return tnp.flip(_convolve_nd(tnp.flip(in1), in2.conj(), mode, precision=precision))


# ------------------------------------------------------------------------------------------------ detrend

def detrend(data: Any, axis: int = -1, type: str = "linear", bp: int | Sequence[int] | np.ndarray = 0,
            overwrite_data: None = None) -> Any:
    """``data`` less its least-squares linear trend along ``axis`` (piecewise between the breakpoints ``bp``), or
    less its mean (``type='constant'``)."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ["constant", "linear"]:
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (data_arr,) = promote_inexact(tnp.asarray(data))
    if type == "constant":
        return data_arr - data_arr.mean(axis, keepdims=True)
    n = data_arr.shape[axis]
    # The breakpoints are static: numpy, not device arrays.
    bp_arr = np.sort(np.unique(np.r_[0, bp, n]))
    if bp_arr[0] < 0 or bp_arr[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    data_arr = tnp.moveaxis(data_arr, axis, 0)
    shape = data_arr.shape
    data_arr = data_arr.reshape(n, -1)
    for m in range(len(bp_arr) - 1):
        npts = bp_arr[m + 1] - bp_arr[m]
        a = tnp.vstack([tnp.ones(npts, dtype=data_arr.dtype),
                        tnp.arange(1, npts + 1, dtype=data_arr.dtype) / npts.astype(data_arr.dtype)]).T
        sl = slice(bp_arr[m], bp_arr[m + 1])
        coef, *_ = np_linalg.lstsq(a, data_arr[sl])
        data_arr = data_arr.at[sl].add(-tnp.matmul(a, coef, precision=lax.Precision.HIGHEST))
    return tnp.moveaxis(data_arr.reshape(shape), 0, axis)


# ------------------------------------------------------------------------------------------------ spectral

def _hann(n: int) -> Any:
    """SciPy's periodic (``sym=False``) Hann window, without SciPy."""
    return tnp.array([1.0]) if n == 1 else tnp.sin(tnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _scipy_window(window: Any, n: int) -> np.ndarray:
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return get_window(window, n)


def _triage_segments(window: Any, nperseg: int | None, input_length: int, dtype: Any) -> tuple[Any, int]:
    """The window as an array and the segment length it implies (SciPy's ``_triage_segments``)."""
    if isinstance(window, (str, tuple)):
        nperseg_int = input_length if nperseg is None else int(nperseg)
        if nperseg_int > input_length:
            warnings.warn(f"nperseg={nperseg_int} is greater than input_length={input_length},"
                          f" using nperseg={input_length}")
            nperseg_int = input_length
        win = _hann(nperseg_int) if window == "hann" else _scipy_window(window, nperseg_int)
        win = tnp.array(win, dtype=dtype)
    else:
        win = tnp.asarray(window, dtype=dtype)
        nperseg_int = win.size if nperseg is None else int(nperseg)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if input_length < win.size:
            raise ValueError("window is longer than input signal")
        if nperseg_int != win.size:
            raise ValueError("value specified for nperseg is different from length of window")
    return win, nperseg_int


def _median_bias(n: int) -> Any:
    """The bias of the median of ``n`` periodograms relative to their mean (Allen et al., FINDCHIRP, app. B)."""
    ii_2 = tnp.arange(2.0, n, 2)
    return 1 + tnp.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def _fft_helper(x: Any, win: Any, detrend_func: Callable[[Any], Any], nperseg: int, noverlap: int, nfft: int,
                sides: str) -> Any:
    """The windowed FFTs of ``x``'s segments along its last axis: ``[..., segments, frequencies]``."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    *batch_shape, signal_length = x.shape
    if nperseg == 1 and noverlap == 0:
        result = x[..., None]
    else:
        starts = np.arange(signal_length - nperseg + 1, step=nperseg - noverlap)
        # One gather of every segment (JAX's vmap of dynamic_slice_in_dim, with the same values).
        result = x[..., tnp.asarray((starts[:, None] + np.arange(nperseg)).astype(np.int32))]
    result = detrend_func(result)
    if tnp.iscomplexobj(win):
        (result,) = _promote_complex(result)
    result = win.reshape((1,) * len(batch_shape) + (1, nperseg)) * result
    if sides == "twosided":
        return tfft.fft(result, n=nfft)
    return tfft.rfft(result.real, n=nfft)


def _odd_ext(x: Any, n: int, axis: int = -1) -> Any:
    """``x`` extended by ``n`` points at both ends along ``axis`` by odd (point-symmetric) reflection."""
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. "
                         f"It must not exceed x.shape[axis]-1, which is {x.shape[axis] - 1}.")
    left_end = lax.slice_in_dim(x, 0, 1, axis=axis)
    left_ext = tnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax.slice_in_dim(x, -1, None, axis=axis)
    right_ext = tnp.flip(lax.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    return tnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)


def _make_pad(mode: str, **kwargs: Any) -> Callable[..., Any]:
    def pad(x: Any, n: int, axis: int = -1) -> Any:
        pad_width = [(0, 0) for _ in range(x.ndim)]
        pad_width[axis] = (n, n)
        return tnp.pad(x, pad_width, mode, **kwargs)
    return pad


_BOUNDARY_FUNCS: dict[Any, Callable[..., Any]] = {
    "even": _make_pad("reflect"),
    "odd": _odd_ext,
    "constant": _make_pad("edge"),
    "zeros": _make_pad("constant", constant_values=0.0),
    None: lambda x, *args, **kwargs: x,
}


def _tuple_delete(t: tuple, i: int) -> tuple:
    return t[:i] + t[i + 1:]


def _spectral_helper(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
                     noverlap: int | None = None, nfft: int | None = None, detrend_type: Any = "constant",
                     return_onesided: bool = True, scaling: str = "density", axis: int = -1, mode: str = "psd",
                     boundary: str | None = None, padded: bool = False) -> tuple[Any, Any, Any]:
    """SciPy's ``_spectral_helper`` as JAX's: ``(frequencies, times, result)``; ``y is None`` is the
    auto-spectral case."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARY_FUNCS:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARY_FUNCS.keys())}")
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_inexact(tnp.asarray(x))
        axis = canonical_axis(operator.index(axis), x.ndim)
        y_arr = x
        outershape = _tuple_delete(x.shape, axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y_arr = promote_inexact(tnp.asarray(x), tnp.asarray(y))
        axis = canonical_axis(operator.index(axis), x.ndim)
        if x.ndim != y_arr.ndim:
            # JAX's message is not an f-string: the braces are literal.
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outershape = broadcast_shapes(_tuple_delete(x.shape, axis), _tuple_delete(y_arr.shape, axis))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err

    result_dtype_ = _to_complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype_).dtype

    nperseg_int: int | None = None
    if nperseg is not None:
        nperseg_int = _concrete_int(nperseg)
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_n = _triage_segments(window, nperseg_int, input_length=x.shape[axis], dtype=x.dtype)
    noverlap_int = nperseg_n // 2 if noverlap is None else _concrete_int(noverlap)
    nfft_int = nperseg_n if nfft is None else _concrete_int(nfft)

    if y is None:
        if x.size == 0:
            return (tnp.zeros(x.shape, freq_dtype), tnp.zeros(x.shape, freq_dtype),
                    tnp.zeros(x.shape, result_dtype_))
    elif x.size == 0 or y_arr.size == 0:
        # JAX's tuple_insert(outershape, min(...), axis) inserts the axis *number* at the position min(...): an
        # accident of argument order, kept so that the shapes agree.
        position = min(x.shape[axis], y_arr.shape[axis])
        shape = (*outershape[:position], axis, *outershape[position:])
        return tnp.zeros(shape, freq_dtype), tnp.zeros(shape, freq_dtype), tnp.zeros(shape, result_dtype_)

    x = tnp.moveaxis(x, axis, -1)
    if y is not None and y_arr.ndim > 1:
        y_arr = tnp.moveaxis(y_arr, axis, -1)
    if y is not None and x.shape[-1] != y_arr.shape[-1]:
        if x.shape[-1] < y_arr.shape[-1]:
            pad_shape = (*x.shape[:-1], y_arr.shape[-1] - x.shape[-1])
            x = tnp.concatenate((x, tnp.zeros_like(x, shape=pad_shape)), -1)
        else:
            pad_shape = (*y_arr.shape[:-1], x.shape[-1] - y_arr.shape[-1])
            y_arr = tnp.concatenate((y_arr, tnp.zeros_like(x, shape=pad_shape)), -1)

    if nfft_int < nperseg_n:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_n:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_n - noverlap_int

    if boundary is not None:
        ext_func = _BOUNDARY_FUNCS[boundary]
        x = ext_func(x, nperseg_n // 2, axis=-1)
        if y is not None:
            y_arr = ext_func(y_arr, nperseg_n // 2, axis=-1)
    if padded:
        # Pad to a whole number of segments: x.shape[-1] == nperseg + (nseg - 1) * nstep.
        nadd = (-(x.shape[-1] - nperseg_n) % nstep) % nperseg_n
        x = tnp.concatenate((x, tnp.zeros_like(x, shape=(*x.shape[:-1], nadd))), axis=-1)
        if y is not None:
            y_arr = tnp.concatenate((y_arr, tnp.zeros_like(x, shape=(*y_arr.shape[:-1], nadd))), axis=-1)

    detrend_func: Callable[[Any], Any]
    if isinstance(detrend_type, str):
        def detrend_func(d: Any) -> Any:
            return detrend(d, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        if axis != -1:
            # The segments' axis is last; hand a user's function the layout it would expect (as JAX does).
            def detrend_func(d: Any) -> Any:
                return tnp.moveaxis(detrend_type(tnp.moveaxis(d, axis, -1)), -1, axis)
        else:
            detrend_func = detrend_type
    elif not detrend_type:
        def detrend_func(d: Any) -> Any:
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = tnp.sqrt(scale)
    (scale,) = _promote_complex(scale)

    if return_onesided:
        sides = "onesided"
        if tnp.iscomplexobj(x) or tnp.iscomplexobj(y):
            sides = "twosided"
            warnings.warn("Input data is complex, switching to return_onesided=False")
    else:
        sides = "twosided"
    if sides == "twosided":
        freqs = tfft.fftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    else:
        freqs = tfft.rfftfreq(nfft_int, 1 / fs, dtype=freq_dtype)

    result = _fft_helper(x, win, detrend_func, nperseg_n, noverlap_int, nfft_int, sides)
    if y is not None:
        result_y = _fft_helper(y_arr, win, detrend_func, nperseg_n, noverlap_int, nfft_int, sides)
        result = tnp.conjugate(result) * result_y
    elif mode == "psd":
        result = tnp.conjugate(result) * result
    result *= scale
    if sides == "onesided" and mode == "psd":
        # Doubles the frequencies with a negative twin (all but 0 and, for even nfft, Nyquist), as JAX's.
        end = None if nfft_int % 2 else -1
        result = result.at[..., 1:end].multiply(2)

    time = tnp.arange(nperseg_n / 2, x.shape[-1] - nperseg_n / 2 + 1, nperseg_n - noverlap_int,
                      dtype=freq_dtype) / fs
    if boundary is not None:
        time -= (nperseg_n / 2) / fs
    result = result.astype(result_dtype_)
    if y is None and mode != "stft":
        result = result.real  # the imaginary parts are all zero
    result = tnp.moveaxis(result, -1, axis)
    return freqs, time, result


def stft(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: Any = False, return_onesided: bool = True, boundary: str | None = "zeros",
         padded: bool = True, axis: int = -1) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform of ``x`` along ``axis``: ``(frequencies, segment times, Zxx)``."""
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                            scaling="spectrum", axis=axis, mode="stft", boundary=boundary, padded=padded)


def csd(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple[Any, Any]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's method: ``(frequencies, Pxy)``
    (``y=None``: the PSD of ``x``)."""
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                                     axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j  # complex even when x is y
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1]).astype(pxy.dtype)
                if tnp.iscomplexobj(pxy):
                    pxy = tnp.median(tnp.real(pxy), axis=-1) + 1j * tnp.median(tnp.imag(pxy), axis=-1)
                else:
                    pxy = tnp.median(pxy, axis=-1)
                pxy /= bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = tnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, detrend: Any = "constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple[Any, Any]:
    """The power spectral density of ``x`` by Welch's method (averaged modified periodograms): ``(frequencies,
    Pxx)``."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
                     detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def _overlap_and_add(x: Any, step_size: int) -> Any:
    """``[..., frames, frame_length]`` frames summed at offsets ``step_size`` apart: ``[..., output_size]``
    (``tf.signal.overlap_and_add``)."""
    step_size = _concrete_int(step_size)
    if x.ndim < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")
    *batch_shape, nframes, segment_len = x.shape
    flat_batchsize = math.prod(batch_shape)
    x = x.reshape((flat_batchsize, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    nstep_per_segment = 1 + (segment_len - 1) // step_size
    # B batch, N frames, S steps per segment, T step size.
    padded_segment_len = nstep_per_segment * step_size
    x = tnp.pad(x, ((0, 0), (0, 0), (0, padded_segment_len - segment_len)))
    x = x.reshape((flat_batchsize, nframes, nstep_per_segment, step_size))
    # Reading the (B, S, 2N, T) array flat with one row fewer shifts each frame's tail to the next row's head.
    x = x.transpose((0, 2, 1, 3))
    x = tnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))
    shrunken = x.shape[2] - 1
    x = x.reshape((flat_batchsize, -1))
    x = x[:, :(nstep_per_segment * shrunken * step_size)]
    x = x.reshape((flat_batchsize, nstep_per_segment, shrunken * step_size))
    x = x.sum(axis=1)[:, :output_size]
    return x.reshape(tuple(batch_shape) + (-1,))


def istft(Zxx: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, input_onesided: bool = True, boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2) -> tuple[Any, Any]:
    """The inverse short-time Fourier transform of ``Zxx`` (weighted overlap-add): ``(times, x)``."""
    check_arraylike("istft", Zxx)
    Zxx = tnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonical_axis(freq_axis, Zxx.ndim)
    time_axis = canonical_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = tnp.asarray(Zxx, dtype=_to_complex_dtype(Zxx.dtype))

    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg_int = _concrete_int(nperseg or n_default)
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1  # odd nperseg, no FFT padding
    else:
        nfft_int = _concrete_int(nfft)
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")
    noverlap_int = _concrete_int(noverlap or nperseg_int // 2)
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer_idxs = tuple(idx for idx in range(Zxx.ndim) if idx not in {time_axis, freq_axis})
        Zxx = tnp.transpose(Zxx, outer_idxs + (freq_axis, time_axis))

    # As JAX's: the inverse FFT takes the caller's nfft (None: the transform's default length), not nfft_int.
    ifunc = tfft.irfft if input_onesided else tfft.ifft
    xsubs = ifunc(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]  # [..., frame length, frames]

    if isinstance(window, str) and window == "hann":
        win = _hann(nperseg_int).astype(xsubs.dtype)
    elif isinstance(window, (str, tuple)):
        win = tnp.array(_scipy_window(window, nperseg_int), dtype=xsubs.dtype)
    else:
        win = tnp.asarray(window)
        if len(win.shape) != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs *= win.sum()  # undoes stft's 'spectrum' scaling

    win = lax.expand_dims(win, (*range(xsubs.ndim - 2), -1))
    x = _overlap_and_add((xsubs * win).swapaxes(-2, -1), nstep)
    win_squared = tnp.repeat(win * win, xsubs.shape[-1], axis=-1)
    norm = _overlap_and_add(win_squared.swapaxes(-2, -1), nstep)
    if boundary:
        x = x[..., nperseg_int // 2:-(nperseg_int // 2)]
        norm = norm[..., nperseg_int // 2:-(nperseg_int // 2)]
    x /= tnp.where(norm > 1e-10, norm, 1.0)

    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = tnp.moveaxis(x, -1, time_axis)
    # As JAX's: the times count x's first axis (its samples only for a 1-d signal).
    time = tnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
