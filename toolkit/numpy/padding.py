"""Padding (``pad``): NumPy's modes ``constant``, ``edge``, ``reflect``, ``symmetric`` and ``wrap`` along each
axis, as concatenations of slices (or, for a symbolic size, a gather by computed positions) and ``lax.pad``."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import shape_poly
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import structural as lax_structural
from toolkit.numpy import _core, ufuncs
from toolkit.numpy._core import asarray, check_arraylike, convert, is_array
from toolkit.numpy.indexing import getitem
from toolkit.numpy.shapes import _axis_slice

__all__ = ["pad"]


def _pad_widths(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    try:
        widths = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of rank {ndim}") from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad widths must be non-negative, got {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in widths]


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad ``array`` (modes ``constant`` [``constant_values``], ``edge``, ``reflect``, ``symmetric``, ``wrap``).

    Example::

        pad(x, 1)                                  # one zero on every side
        pad(x, ((0, 0), (2, 1)), mode="edge")
    """
    check_arraylike("pad", array)
    a = asarray(array)
    widths = _pad_widths(pad_width, a.ndim)
    if mode == "constant":
        values = kwargs.pop("constant_values", 0)
        _no_kwargs(kwargs, mode)
        if is_array(values) and values.ndim == 0 or np.ndim(values) == 0:
            value = convert(values, a.dtype) if not is_array(values) else lax_elementwise.convert_element_type(values, a.dtype)
            return lax_structural.pad(a, value, [(lo, hi, 0) for lo, hi in widths])
        per_axis = np.broadcast_to(np.asarray(values), (a.ndim, 2))
        for axis, (lo, hi) in enumerate(widths):
            config = [(0, 0, 0)] * a.ndim
            if lo:
                config[axis] = (lo, 0, 0)
                a = lax_structural.pad(a, np.asarray(per_axis[axis, 0], a.dtype), config)
            if hi:
                config[axis] = (0, hi, 0)
                a = lax_structural.pad(a, np.asarray(per_axis[axis, 1], a.dtype), config)
        return a
    _no_kwargs(kwargs, mode)
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (constant, edge, reflect, symmetric, wrap)")
    for axis, (lo, hi) in enumerate(widths):
        if not lo and not hi:
            continue
        n = a.shape[axis]
        if n == 0:
            raise ValueError(f"pad: cannot pad empty axis {axis} with mode {mode!r}")
        a = _pad_axis(a, axis, lo, hi, mode)
    return a


def _no_kwargs(kwargs: dict, mode: str) -> None:
    if kwargs:
        raise TypeError(f"pad: unexpected arguments {sorted(kwargs)} for mode {mode!r}")


def _pad_axis(a: Any, axis: int, lo: int, hi: int, mode: str) -> Any:
    n = a.shape[axis]
    if mode != "edge" and shape_poly.is_symbolic_dim(n):
        return _pad_axis_symbolic(a, axis, lo, hi, mode)
    if mode == "edge":
        parts = []
        if lo:
            parts.append(_repeat_slice(_axis_slice(a, axis, 0, 1), axis, lo))
        parts.append(a)
        if hi:
            parts.append(_repeat_slice(_axis_slice(a, axis, n - 1, n), axis, hi))
        return lax_structural.concatenate(parts, axis) if len(parts) > 1 else a
    if mode == "wrap":
        # Repeat the whole axis enough times, then cut the window out.
        reps = 1 + -(-lo // n) + -(-hi // n)
        tiled = lax_structural.concatenate([a] * reps, axis) if reps > 1 else a
        start = -(-lo // n) * n - lo
        return _axis_slice(tiled, axis, start, start + lo + n + hi)
    # reflect / symmetric: periodic with period 2(n-1) resp. 2n.
    if mode == "reflect" and shape_poly.definitely_equal(n, 1):
        return _repeat_slice(a, axis, lo + 1 + hi)
    period = n - 1 if mode == "reflect" else n
    if lo > period or hi > period:
        # Wider than one reflection: one gather with the static source index of every output position.
        positions = np.arange(-lo, n + hi) % (2 * period)
        source = np.where(positions < n, positions, 2 * period - positions - (0 if mode == "reflect" else 1))
        index = [slice(None)] * a.ndim
        index[axis] = source.astype(np.int32)
        return getitem(a, tuple(index))
    parts = []
    if lo:
        parts.append(_axis_slice(a, axis, lo, 0, -1) if mode == "reflect" else
                     _axis_slice(a, axis, lo - 1, None, -1))
    parts.append(a)
    if hi:
        stop = n - 2 - hi if mode == "reflect" else n - 1 - hi
        parts.append(_axis_slice(a, axis, n - 2 if mode == "reflect" else n - 1, stop if stop >= 0 else None, -1))
    return lax_structural.concatenate(parts, axis)


def _pad_axis_symbolic(a: Any, axis: int, lo: int, hi: int, mode: str) -> Any:
    """reflect / symmetric / wrap padding of a symbolic-size axis: one gather with source indices computed at
    run time (which reflection a position falls in depends on the size)."""
    n = a.shape[axis]
    positions = ufuncs.subtract(lax_structural.iota(np.int32, lo + n + hi), np.int32(lo))   # -lo .. n + hi - 1
    size = lax_structural.dimension_as_value(n, np.int32)
    if mode == "wrap":
        source = ufuncs.remainder(positions, size)
    else:
        # reflect: period 2(n-1) (n == 1 repeats the only element); symmetric: period 2n.
        period = ufuncs.subtract(size, np.int32(1)) if mode == "reflect" else size
        twice = ufuncs.maximum(ufuncs.add(period, period), np.int32(1))
        folded = ufuncs.remainder(positions, twice)
        back = ufuncs.subtract(ufuncs.subtract(twice, folded), np.int32(0 if mode == "reflect" else 1))
        source = ufuncs.where(ufuncs.less(folded, size), folded, back)
    index = [slice(None)] * a.ndim
    index[axis] = source
    return getitem(a, tuple(index))


def _repeat_slice(piece: Any, axis: int, count: int) -> Any:
    shape = list(piece.shape)
    shape[axis] = count
    return _core.broadcast_to(piece, tuple(shape))
