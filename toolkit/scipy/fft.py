"""``toolkit.scipy.fft``: SciPy's discrete cosine transforms (``jax.scipy.fft``): ``dct``, ``dctn``, ``idct``,
``idctn``, over ``toolkit.numpy.fft``.

As JAX's, only the type-2 DCT (and its inverse) exists: another ``type`` is ``NotImplementedError``, and ``norm``
is ``None``/``"backward"`` or ``"ortho"`` (``"forward"`` is a ``ValueError``). The forward transform is
Makhoul's (1980): the input reordered (even samples, then the odd ones reversed), one FFT, a quarter-wave twiddle;
the two-dimensional one does two axes in one FFT, and more axes are done two at a time. Complex inputs are
transformed as their real and imaginary parts. The operations are JAX's, in its order, so the rounding is its.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.lax.decompositions import complex_dtype
from toolkit.lax.structural import canonicalize_axis
from toolkit.numpy._core import check_arraylike, promote_inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


def _checked(name: str, x: Any, type: int, norm: str | None) -> Any:
    check_arraylike(name, x)
    x = tnp.asarray(x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")  # JAX's message, names and all
    return x


def _others(ndim: int, axis: int) -> list[int]:
    return [a for a in range(ndim) if a != axis]


def _w4(n: int, k: Any) -> Any:
    """The twiddle ``exp(-i pi k / (2 n))``, in the complex dtype of ``k``'s precision (JAX's
    ``promote_dtypes_complex(n, k)``)."""
    dtype = complex_dtype(k.dtype)
    n_arr = tnp.asarray(n, dtype)
    k = k.astype(dtype)
    return tnp.exp(-.5j * np.pi * k / n_arr)


def _interleave(x: Any, axis: int) -> Any:
    even = lax.slice_in_dim(x, None, None, 2, axis)
    odd_reversed = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([even, odd_reversed], axis)


def _deinterleave(x: Any, axis: int) -> Any:
    """The inverse of :func:`_interleave`: the first ``ceil(n / 2)`` entries to the even positions, the rest,
    reversed, to the odd ones."""
    half = math.ceil(x.shape[axis] / 2)

    def along(s: slice) -> tuple[slice, ...]:
        return tuple(s if a == axis else slice(None) for a in range(x.ndim))

    first = x[along(slice(None, half, 1))]
    second = lax.rev(x[along(slice(half, None, 1))], (axis,))
    out = tnp.zeros(x.shape, dtype=x.dtype)
    out = out.at[along(slice(None, None, 2))].set(first)
    return out.at[along(slice(1, None, 2))].set(second)


def _ortho_norm(out: Any, axis: int) -> Any:
    # The orthonormal scaling: sqrt(1 / (4 n)) for the zero frequency, sqrt(1 / (2 n)) for the others.
    factor = lax.concatenate([lax.full((1,), 4, out.dtype), lax.full((out.shape[axis] - 1,), 2, out.dtype)], 0)
    factor = lax.expand_dims(factor, _others(out.ndim, axis))
    return out / lax.sqrt(factor * out.shape[axis])


def _resize(x: Any, sizes: dict[int, int]) -> Any:
    """``x`` zero-padded or truncated (negative padding) to ``sizes[axis]`` along each axis given."""
    return lax.pad(x, tnp.asarray(0, x.dtype), [(0, sizes[a] - x.shape[a] if a in sizes else 0, 0)
                                                 for a in range(x.ndim)])


def _shape_argument(s: Any, ndim: int) -> list[int]:
    try:
        sizes = list(s)
    except TypeError:
        sizes = [operator.index(s)]
    if len(sizes) > ndim:
        raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(sizes)}")
    return sizes


def _axes_argument(axes: Any, s: list[int] | None, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    if isinstance(axes, Sequence):
        out = tuple(canonicalize_axis(operator.index(a), ndim) for a in axes)
        if len(set(out)) != len(out):
            raise ValueError(f"repeated axis: {out}")
        return out
    return (canonicalize_axis(operator.index(axes), ndim),)


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The type-2 discrete cosine transform of ``x`` along ``axis`` (``scipy.fft.dct``), ``x`` zero-padded or
    truncated to ``n``."""
    x = _checked("dct", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(dct(x.real, type=type, n=n, norm=norm, axis=axis),
                           dct(x.imag, type=type, n=n, norm=norm, axis=axis))
    axis = canonicalize_axis(operator.index(axis), x.ndim)
    if n is not None:
        x = _resize(x, {axis: n})
    size = x.shape[axis]
    spectrum = tnp.fft.fft(_interleave(x, axis), axis=axis)
    k = lax.expand_dims(tnp.arange(size, dtype=spectrum.real.dtype), _others(x.ndim, axis))
    out = 2 * (spectrum * _w4(size, k)).real
    if norm == "ortho":
        out = _ortho_norm(out, axis)
    return out


def _dct2(x: Any, axes: Sequence[int], norm: str | None) -> Any:
    """The type-2 DCT over two axes from one two-dimensional FFT (Makhoul's section on two dimensions)."""
    axis1, axis2 = (canonicalize_axis(a, x.ndim) for a in axes)
    size1, size2 = x.shape[axis1], x.shape[axis2]
    spectrum = tnp.fft.fftn(_interleave(_interleave(x, axis1), axis2), axes=axes)
    k1 = lax.expand_dims(tnp.arange(size1, dtype=spectrum.dtype), _others(x.ndim, axis1))
    k2 = lax.expand_dims(tnp.arange(size2, dtype=spectrum.dtype), _others(x.ndim, axis2))
    mirrored = tnp.roll(tnp.flip(spectrum, axis=axis2), shift=1, axis=axis2)
    out = _w4(size1, k1) * (_w4(size2, k2) * spectrum + _w4(size2, -k2) * mirrored)
    out = 2 * out.real
    if norm == "ortho":
        return _ortho_norm(_ortho_norm(out, axis1), axis2)
    return out


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """The multidimensional type-2 DCT of ``x`` over ``axes`` (``scipy.fft.dctn``; default: all axes, or the
    last ``len(s)``), ``x`` zero-padded or truncated to the shape ``s`` there."""
    x = _checked("dctn", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(dctn(x.real, type=type, s=s, norm=norm, axes=axes),
                           dctn(x.imag, type=type, s=s, norm=norm, axes=axes))
    sizes = None if s is None else _shape_argument(s, x.ndim)
    axes_ = _axes_argument(axes, sizes, x.ndim)
    if len(axes_) == 1:
        return dct(x, n=sizes[0] if sizes is not None else None, axis=axes_[0], norm=norm)
    if sizes is not None:
        x = _resize(x, dict(zip(axes_, sizes)))
    if len(axes_) == 2:
        return _dct2(x, axes_, norm)
    # More axes: two at a time (the last alone when their number is odd), as JAX composes them.
    for block in [axes_[i:i + 2] for i in range(0, len(axes_), 2)]:
        x = dctn(x, axes=block, norm=norm)
    return x


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of the type-2 DCT (the type-3 DCT, scaled) of ``x`` along ``axis`` (``scipy.fft.idct``), ``x``
    zero-padded or truncated to ``n``."""
    x = _checked("idct", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(idct(x.real, type=type, n=n, norm=norm, axis=axis),
                           idct(x.imag, type=type, n=n, norm=norm, axis=axis))
    axis = canonicalize_axis(operator.index(axis), x.ndim)
    if n is not None:
        x = _resize(x, {axis: n})
    size = x.shape[axis]
    (x,) = (tnp.asarray(a) for a in promote_inexact(x))
    if norm is None or norm == "backward":
        x = _ortho_norm(x, axis)
    x = _ortho_norm(x, axis)
    k = lax.expand_dims(tnp.arange(size, dtype=x.dtype), _others(x.ndim, axis))
    w4 = _w4(size, k)
    x = x.astype(w4.dtype) / w4 * 2 * size
    return _deinterleave(tnp.fft.ifft(x, axis=axis).real, axis)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The multidimensional inverse of the type-2 DCT of ``x`` over ``axes`` (``scipy.fft.idctn``; default: all
    axes, or the last ``len(s)``), ``x`` zero-padded or truncated to the shape ``s`` there."""
    x = _checked("idctn", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(idctn(x.real, type=type, s=s, norm=norm, axes=axes),
                           idctn(x.imag, type=type, s=s, norm=norm, axes=axes))
    sizes = None if s is None else _shape_argument(s, x.ndim)
    axes_ = _axes_argument(axes, sizes, x.ndim)
    if len(axes_) == 1:
        return idct(x, n=sizes[0] if sizes is not None else None, axis=axes_[0], norm=norm)
    if sizes is not None:
        x = _resize(x, dict(zip(axes_, sizes)))
    for axis in axes_:
        x = idct(x, axis=axis, norm=norm)
    return x
