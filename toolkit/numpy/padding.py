"""Padding (``pad``), every mode of ``jnp.pad`` with its results, dtypes and errors: ``constant``, ``edge``,
``reflect``, ``symmetric`` and ``wrap`` as concatenations of slices (or, for a symbolic size, a gather by computed
positions) and ``lax.pad``; ``linear_ramp``, ``maximum``, ``minimum``, ``mean``, ``median``, ``empty`` and a
callable ``mode`` op for op as JAX's (its rounding of integer statistics and ramps included)."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from toolkit.core import dtypes, pytrees, shape_poly
from toolkit.core.avals import aval_of
from toolkit.core.compiled_whole import check_static_hashable, compiled_whole
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import structural as lax_structural
from toolkit.numpy import _core, reductions, rounding, shapes, spaced_values, statistics, ufuncs, vectorization
from toolkit.numpy._core import asarray, check_arraylike, convert, is_array
from toolkit.numpy.indexing import getitem
from toolkit.numpy.shapes import _axis_slice

__all__ = ["pad"]

#: The keyword arguments each mode takes (JAX's table; any other is its ``ValueError``).
_ALLOWED_KWARGS: dict[str, tuple[str, ...]] = {
    "empty": (), "edge": (), "wrap": (),
    "constant": ("constant_values",),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",), "minimum": ("stat_length",),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}

#: The statistic of each statistic mode (called as ``f(x, axis=i, keepdims=True)``).
_STAT_FUNCS: dict[str, Callable[..., Any]] = {
    "maximum": reductions.amax, "minimum": reductions.amin, "mean": reductions.mean, "median": statistics.median,
}


def _broadcast_to_pairs(nvals: Any, nd: int, name: str) -> tuple:
    """``pad_width``, ``stat_length`` or ``end_values`` as ``nd`` (before, after) pairs of numpy scalars, as JAX's
    ``_broadcast_to_pairs``: the same accepted shapes, the same errors (a traced value is concrete-only)."""
    for leaf in pytrees.tree_leaves(nvals):
        if known_value(leaf) is None:
            aval = aval_of(leaf)
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: traced array with shape "
                f"{np.dtype(aval.dtype).name}[{','.join(map(str, aval.shape))}]\n"
                f"{name} argument of toolkit.numpy.pad")
    try:
        values = np.asarray(pytrees.tree_map(known_value, nvals))  # a concrete trace's tracers: their values
    except ValueError as e:
        if "array has an inhomogeneous shape" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {nvals}") from e
        raise

    def as_scalar_dim(v: Any) -> Any:
        if shape_poly.is_dim(v) or not np.shape(v):
            return v
        raise TypeError(f"`{name}` entries must be the same shape: {values}")

    if values.shape == (nd, 2):
        return tuple((as_scalar_dim(v[0]), as_scalar_dim(v[1])) for v in values)
    if values.shape in ((1, 2), (2,)):
        flat = values.reshape(2)
        pair = as_scalar_dim(flat[0]), as_scalar_dim(flat[1])
        return tuple(pair for _ in range(nd))
    if values.shape in ((1,), ()):
        v = as_scalar_dim(values.flat[0])
        return tuple((v, v) for _ in range(nd))
    raise ValueError(f"toolkit.numpy.pad: {name} with {nd=} has unsupported shape {values.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _dim(v: Any) -> Any:
    """A width or bound as a Python int (a numpy integer, a float's ``TypeError`` as JAX's), symbolic ones kept."""
    return v if shape_poly.is_symbolic_dim(v) else operator.index(v)


def pad(array: Any, pad_width: Any, mode: str | Callable[..., Any] = "constant", **kwargs: Any) -> Any:
    """Pad ``array`` as ``jnp.pad``: ``pad_width`` an int, a ``(before, after)`` pair, or one pair per axis.

    Modes (and their keyword arguments): ``constant`` [``constant_values``], ``edge``, ``reflect`` and
    ``symmetric`` [``reflect_type``: ``"even"``, or ``"odd"``: reflections ``2 * edge - x``], ``wrap``,
    ``linear_ramp`` [``end_values``], ``maximum``, ``minimum``, ``mean`` and ``median`` [``stat_length``],
    ``empty`` (zeros, as JAX's), or a callable
    ``mode(row, (before, after), axis, kwargs)`` returning the new row: JAX's protocol (numpy's modifies ``row``
    in place), applied along each axis in turn with ``apply_along_axis`` to the array padded with zeros, the
    other keyword arguments as ``kwargs``. Statistics of integer arrays are rounded half to even back to the
    dtype, as are JAX's; ``stat_length`` and ``end_values`` must be hashable (tuples, not lists), as in JAX. Any
    other keyword argument for a mode is JAX's ``ValueError``. Called eagerly, the statistic and ramp modes run
    as one compiled program, as JAX's jitted helper does (so their float results are JAX's to the bit).

    Example::

        pad(x, 1)                                  # one zero on every side
        pad(x, ((0, 0), (2, 1)), mode="edge")
        pad(x, 2, mode="mean", stat_length=(1, 3))
        pad(x, (3, 1), mode="linear_ramp", end_values=(-1.0, 5.0))
    """
    check_arraylike("pad", array)
    a = asarray(array)
    pairs = _broadcast_to_pairs(pad_width, a.ndim, "pad_width")
    if pairs and not all(shape_poly.is_dim(lo) and shape_poly.is_dim(hi) for lo, hi in pairs):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_func(a, pairs, mode, **kwargs)
    try:
        unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    except KeyError:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    stat_length = kwargs.get("stat_length")
    end_values = kwargs.get("end_values", 0)
    reflect_type = kwargs.get("reflect_type", "even")
    # JAX passes these to its jitted helper as static arguments, which must hash: a list, a numpy or toolkit
    # array, or a traced value is JAX's ValueError (in any mode).
    check_static_hashable(stat_length, end_values, reflect_type)
    if a.ndim == 0:
        return a
    widths = [(_dim(lo), _dim(hi)) for lo, hi in pairs]
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(a, widths, kwargs.get("constant_values", 0))
    if mode == "linear_ramp":
        return _pad_computed(a, tuple(widths), mode, None, _broadcast_to_pairs(end_values, a.ndim, "end_values"))
    if mode in _STAT_FUNCS:
        lengths = None if stat_length is None else _broadcast_to_pairs(stat_length, a.ndim, "stat_length")
        return _pad_computed(a, tuple(widths), mode, lengths, ())
    if mode == "empty":
        # jnp.empty is zeros: JAX concatenates empty_like blocks, which is this one pad by zeros.
        return lax_structural.pad(a, _zero(a), [(lo, hi, 0) for lo, hi in widths])
    if mode in ("reflect", "symmetric") and reflect_type not in ("even", "odd"):
        # JAX asserts it (an AssertionError without a message): a ValueError naming what was wrong instead.
        raise ValueError(f"toolkit.numpy.pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    odd = mode in ("reflect", "symmetric") and reflect_type == "odd"
    for axis, (lo, hi) in enumerate(widths):
        if not lo and not hi:
            continue
        if a.shape[axis] == 0:
            raise ValueError(f"Cannot apply '{mode}' padding to empty axis")
        a = _pad_axis_odd(a, axis, lo, hi, mode) if odd else _pad_axis(a, axis, lo, hi, mode)
    return a


def _zero(a: Any) -> Any:
    """Zero of ``a``'s dtype and weak type (a padding value of ``lax.pad``)."""
    return lax_elementwise.convert_element_type(np.zeros((), a.dtype), a.dtype, weak_type=dtypes.is_weakly_typed(a))


def _pad_constant(a: Any, widths: list[tuple[Any, Any]], values: Any) -> Any:
    if is_array(values) and values.ndim == 0 or np.ndim(values) == 0:
        value = convert(values, a.dtype) if not is_array(values) else \
            lax_elementwise.convert_element_type(values, a.dtype)
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


@compiled_whole(static_argnames=("widths", "mode", "stat_length", "end_values"))
def _pad_computed(a: Any, widths: tuple, mode: str, stat_length: tuple | None, end_values: tuple) -> Any:
    """The modes whose padding values are computed (statistics, ramps): one program when called eagerly, as JAX's
    jitted ``_pad`` is, since XLA's fused arithmetic (a mean's division, a ramp's steps) can differ in the last
    bit from the same operations run one at a time. Inside a trace, traced into the caller's program."""
    if mode == "linear_ramp":
        return _pad_linear_ramp(a, widths, end_values)
    return _pad_stats(a, widths, stat_length, _STAT_FUNCS[mode])


def _slice_in_dim(a: Any, start: Any, limit: Any, axis: int) -> Any:
    """``lax.slice_in_dim`` (negative bounds count from the end) with the ``TypeError`` JAX's ``lax.slice`` raises,
    in its order, for bounds it refuses: a ``stat_length`` below minus the axis size, or an empty axis's edge."""
    size = a.shape[axis]
    start = 0 if start is None else _dim(start)
    limit = size if limit is None else _dim(limit)
    if shape_poly.is_symbolic_dim(size) or shape_poly.is_symbolic_dim(start) or shape_poly.is_symbolic_dim(limit):
        return lax_structural.slice_in_dim(a, start, limit, axis=axis)
    start, limit = start + size if start < 0 else start, limit + size if limit < 0 else limit
    starts, limits = [0] * a.ndim, list(a.shape)
    starts[axis], limits[axis] = start, limit
    for what, bounds in (("start_indices", starts), ("limit_indices", limits)):
        if any(b < 0 for b in bounds):
            raise TypeError(f"slice {what} must have every element be nonnegative, got {tuple(bounds)}.")
    if limit > size:
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got limit_indices "
                        f"{tuple(limits)} for operand shape {tuple(a.shape)}.")
    if limit < start:
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, got start_indices "
                        f"{tuple(starts)} and limit_indices {tuple(limits)}.")
    return lax_structural.slice(a, starts, limits)


def _pad_stats(a: Any, widths: tuple, stat_length: tuple | None,
               stat_func: Callable[..., Any]) -> Any:
    """JAX's ``_pad_stats``: axis by axis, the statistic of the whole axis (or of ``stat_length`` values at each
    end, at most the axis) of the array padded so far, rounded half to even for an integer dtype (``jnp.round``,
    which JAX's module-level ``round`` is: no trip through the default int), converted to the dtype and repeated."""
    weak = dtypes.is_weakly_typed(a)
    for axis in range(a.ndim):
        if stat_length is None:
            before = stat_func(a, axis=axis, keepdims=True)
            after = before
        else:
            size = a.shape[axis]
            length_before, length_after = stat_length[axis]
            if length_before == 0 or length_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            length_before, length_after = min(length_before, size), min(length_after, size)
            slice_before = _slice_in_dim(a, 0, length_before, axis)
            slice_after = _slice_in_dim(a, -length_after, None, axis)
            before = stat_func(slice_before, axis=axis, keepdims=True)
            after = stat_func(slice_after, axis=axis, keepdims=True)
        if np.issubdtype(a.dtype, np.integer):
            before, after = rounding.round(before), rounding.round(after)
        before = lax_elementwise.convert_element_type(before, a.dtype, weak_type=weak)
        after = lax_elementwise.convert_element_type(after, a.dtype, weak_type=weak)
        lo, hi = widths[axis]
        a = lax_structural.concatenate([_repeat_slice(before, axis, lo), a, _repeat_slice(after, axis, hi)], axis)
    return a


def _pad_linear_ramp(a: Any, widths: tuple, end_values: tuple) -> Any:
    """JAX's ``_pad_linear_ramp``: axis by axis, ``linspace`` from each end value to the edge (excluded) in the
    array's dtype (integers floored, as ``linspace`` does), the one after the array reversed."""
    weak = dtypes.is_weakly_typed(a)
    for axis in range(a.ndim):
        edge_before = lax_structural.squeeze(_slice_in_dim(a, 0, 1, axis), (axis,))
        edge_after = lax_structural.squeeze(_slice_in_dim(a, -1, None, axis), (axis,))
        ramps = []
        for end, edge, num in zip(end_values[axis], (edge_before, edge_after), widths[axis]):
            ramp = spaced_values.linspace(end, edge, num, endpoint=False, dtype=a.dtype, axis=axis)
            ramps.append(lax_elementwise.convert_element_type(ramp, ramp.dtype, weak_type=weak))
        a = lax_structural.concatenate([ramps[0], a, shapes.flip(ramps[1], axis)], axis)
    return a


def _pad_func(a: Any, pairs: tuple, func: Callable[..., Any], **kwargs: Any) -> Any:
    """JAX's ``_pad_func``: ``a`` padded with zeros (negative widths crop: JAX does not check them here), then
    ``func(row, pairs[axis], axis, kwargs)`` mapped over the rows of each axis in turn. JAX broadcasts the pairs
    again here, which refuses a 0-d array's empty ones (its ``ValueError``)."""
    pairs = _broadcast_to_pairs(pairs, a.ndim, "pad_width")
    padded = lax_structural.pad(a, _zero(a), [(_dim(lo), _dim(hi), 0) for lo, hi in pairs])
    for axis in range(padded.ndim):
        padded = vectorization.apply_along_axis(func, axis, padded, pairs[axis], axis, kwargs)
    return padded


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


def _pad_axis_odd(a: Any, axis: int, lo: int, hi: int, mode: str) -> Any:
    """``reflect_type="odd"``, as JAX's ``_pad_symmetric_or_reflect``: each reflection is ``2 * edge - x``, and a
    width beyond one reflection reflects what was padded so far (the slices read the growing array, the edge
    moving to the new end), before the array then after it."""
    n = a.shape[axis]
    if shape_poly.is_symbolic_dim(n):
        raise NotImplementedError("toolkit.numpy.pad: reflect_type='odd' along an axis of symbolic size")
    offset = 1 if mode == "reflect" and n > 1 else 0
    for before, padding in ((True, lo), (False, hi)):
        edge = lax_structural.slice_in_dim(a, 0, 1, axis=axis) if before else \
            lax_structural.slice_in_dim(a, -1, None, axis=axis)
        while padding > 0:
            step = min(padding, n - offset)
            padding -= step
            if before:
                start, stop = offset, offset + step
            else:
                start, stop = -(step + offset), None if mode == "symmetric" or n == 1 else -1
            x = ufuncs.subtract(ufuncs.multiply(2, edge),
                                shapes.flip(lax_structural.slice_in_dim(a, start, stop, axis=axis), axis))
            if n > 1:
                edge = lax_structural.slice_in_dim(x, 0, 1, axis=axis) if before else \
                    lax_structural.slice_in_dim(x, -1, None, axis=axis)
            a = lax_structural.concatenate([x, a] if before else [a, x], axis)
    return a


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
