"""jax.lax's array helpers that are compositions of existing primitives.

``stack``, ``unstack`` and ``tile`` are primitives in JAX 0.10.2 whose lowerings are
``broadcast_in_dim`` + ``concatenate``, ``slice`` + ``reshape`` and ``reshape`` +
``broadcast_in_dim`` + ``reshape``: here they are those compositions, so the StableHLO is
the same. ``scatter_sub`` is ``scatter_add`` of the negated updates (equal values: ``x - u``
and ``x + (-u)`` are the same IEEE and two's-complement result), ``scatter_apply`` applies
its function as many times as an element is hit, and ``empty`` is zeros (what JAX's CPU lowering
gives). Shape arithmetic (``broadcast_shapes``, ``shape_as_value``) and ``dtype`` are host-side.
``stage`` lifts a value into the active trace (a constant of the program, as JAX's folds it).
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toolkit.core import dtypes, tracing
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise
from toolkit.lax.control_flow import fori_loop
from toolkit.lax.indexing import GatherDimensionNumbers, ScatterDimensionNumbers, gather, scatter_add
from toolkit.lax.reductions import reduce_max
from toolkit.lax.structural import (
    broadcast_in_dim, canonicalize_axis, concatenate, dimension_as_value, expand_dims, full, reshape, slice,
)

__all__ = [
    "RoundingMethod", "broadcast_like", "broadcast_shapes", "dtype", "empty", "index_take", "scatter_apply",
    "scatter_sub", "shape_as_value", "stack", "stage", "tile", "unstack",
]


class RoundingMethod(enum.IntEnum):
    """How :func:`toolkit.lax.round` rounds halfway values (``jax.lax.RoundingMethod``; the values are JAX's)."""

    AWAY_FROM_ZERO = 0   #: 0.5 -> 1, -0.5 -> -1
    TO_NEAREST_EVEN = 1  #: banker's rounding: 0.5 -> 0, 1.5 -> 2


def _is_symbolic(d: Any) -> bool:
    return bool(getattr(d, "_is_symbolic_dim", False))


def broadcast_shapes(*shapes: Sequence[Any]) -> tuple[Any, ...]:
    """The shape NumPy broadcasting of ``shapes`` gives (``jax.lax.broadcast_shapes``).

    Shapes of different ranks align on the right. No shapes, a non-integer size, or sizes
    that differ and are not 1 raise ``ValueError``/``TypeError`` as JAX's does.
    """
    if not shapes:
        raise TypeError("broadcast_shapes: At least one shape is required.")
    canon = []
    for s in shapes:
        try:
            canon.append(tuple(d if _is_symbolic(d) else operator.index(d) for d in s))
        except TypeError:
            raise TypeError(f"broadcast_shapes: shapes must be sequences of integers, got {s!r}") from None
    rank = max(len(s) for s in canon)
    padded = [(1,) * (rank - len(s)) + s for s in canon]
    result = []
    for ds in zip(*padded):
        non_1 = [d for d in ds if _is_symbolic(d) or d != 1]
        if not non_1:
            result.append(1)
        elif all(d == non_1[0] for d in non_1[1:]):
            result.append(non_1[0])
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}")
    return tuple(result)


def _broadcast_to(x: Any, shape: tuple[Any, ...]) -> Any:
    """NumPy-style broadcast of ``x`` to ``shape`` (trailing alignment), as JAX's internal ``broadcast_to``."""
    x_shape = tuple(aval_of(x).shape)
    if x_shape == shape:
        return x
    if len(x_shape) > len(shape) or broadcast_shapes(x_shape, shape) != shape:
        raise ValueError(f"Incompatible shapes for broadcasting: {x_shape} and requested shape {shape}")
    lead = len(shape) - len(x_shape)
    kept = [i for i, d in enumerate(x_shape) if not (d == 1 and shape[lead + i] != 1)]
    if len(kept) != len(x_shape):
        x = reshape(x, tuple(x_shape[i] for i in kept))
    return broadcast_in_dim(x, shape, tuple(lead + i for i in kept))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (NumPy-style) to the shape of ``like_arr`` (``jax.lax.broadcast_like``)."""
    return _broadcast_to(arr, tuple(aval_of(like_arr).shape))


def dtype(x: Any) -> np.dtype:
    """The dtype of a value or type, as ``jax.lax.dtype`` (JAX 0.10.2).

    Python scalars and scalar types give the current default types (int32/float32 with x64
    off); NumPy scalar types, dtypes, names and non-toolkit arrays are canonicalized (with
    JAX's truncation warning for an explicit 64-bit request); toolkit arrays and tracers keep
    their dtype. ``None`` is a ``ValueError``; an unsupported or undeterminable dtype a ``TypeError``.
    """
    scalar_types = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
                    complex: np.dtype(np.complex128)}
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type) and x in scalar_types:
        return dtypes.canonicalize_dtype(scalar_types[x])
    if isinstance(x, type) and issubclass(x, np.generic):
        return dtypes.canonicalize_explicit_dtype(np.dtype(x), "dtype")
    if not isinstance(x, type) and type(x) in scalar_types:
        return dtypes.canonicalize_dtype(scalar_types[type(x)])
    if hasattr(x, "aval"):  # a toolkit array or tracer: made in its mode, kept (as JAX keeps its arrays')
        return np.dtype(x.dtype)
    if isinstance(x, (str, np.dtype)):
        return dtypes.canonicalize_explicit_dtype(np.dtype(x), "dtype")
    attr = getattr(x, "dtype", None)
    if isinstance(attr, np.dtype):
        dt = attr
    else:
        try:
            dt = np.result_type(x)
        except TypeError as err:
            raise TypeError(f"Cannot determine dtype of {x}") from err
    return dtypes.canonicalize_dtype(dt)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose values are unspecified (``jax.lax.empty``).

    Zeros, as JAX's CPU lowering gives (a zero broadcast); on TPU/GPU JAX emits an
    ``AllocateBuffer`` custom call this toolkit does not.
    """
    shape = (shape,) if isinstance(shape, int) or _is_symbolic(shape) else tuple(shape)
    return full(shape, 0, dtypes.canonicalize_dtype(dtype), sharding=out_sharding)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """Gather ``src`` at the index vectors ``idxs`` (one 1-D index array per axis in ``axes``), as JAX.

    Indices wrap modulo the axis size (JAX's ``index_take``). The result has the index
    count as its first dimension, then ``src``'s remaining dimensions.
    """
    src_shape = tuple(aval_of(src).shape)
    axes = tuple(int(a) for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    ind_aval = aval_of(indices)
    max_idx = np.array([src_shape[ax] for ax in axes], dtype=ind_aval.dtype)
    sizes = broadcast_in_dim(max_idx, ind_aval.shape, (ind_aval.ndim - 1,))
    # Python's (floor) modulo, as JAX's ``indices % max_idx``: -1 is the last element.
    rem = elementwise.rem(indices, sizes)
    indices = elementwise.select(elementwise.lt(rem, full(ind_aval.shape, 0, ind_aval.dtype)),
                                 elementwise.add(rem, sizes), rem)
    slice_sizes = list(src_shape)
    for ax in axes:
        slice_sizes[ax] = 1
    offset_dims = tuple(range(1, len(src_shape) - ind_aval.shape[1] + 1))
    dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=axes, start_index_map=axes)
    return gather(src, indices, dimension_numbers=dnums, slice_sizes=tuple(slice_sizes))


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: ScatterDimensionNumbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Any:
    """XLA scatter that subtracts each update from ``operand`` at its window (``jax.lax.scatter_sub``)."""
    return scatter_add(operand, scatter_indices, elementwise.neg(updates), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with ``func`` applied at each scattered position, once per hit (``jax.lax.scatter_apply``).

    ``func`` is elementwise on ``operand``'s dtype; an element hit k times gets ``func``
    applied k times (duplicates compose, as in XLA); dropped (out-of-bounds) windows change nothing.
    """
    hits = scatter_add(full(aval_of(operand).shape, 0, np.int32), scatter_indices,
                       full(tuple(update_shape), 1, np.int32), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    if unique_indices:
        return elementwise.select(elementwise.gt(hits, full(aval_of(hits).shape, 0, np.int32)), func(operand), operand)
    times = reduce_max(hits, tuple(range(aval_of(hits).ndim)))

    def body(i: Any, x: Any) -> Any:
        more = elementwise.gt(hits, broadcast_in_dim(i, aval_of(hits).shape, ()))
        return elementwise.select(more, func(x), x)

    return fori_loop(np.int32(0), times, body, operand)


def shape_as_value(shape: Sequence[Any]) -> Any:
    """``shape`` as a 1-D integer array: a NumPy array for constant sizes, computed for symbolic ones.

    int32 unless a size exceeds it (int64); empty shapes give an empty int32 array, as ``jax.lax.shape_as_value``.
    """
    shape = tuple(shape)
    int32_max = np.iinfo(np.int32).max
    if any(_is_symbolic(d) for d in shape):
        dt = dtypes.canonicalize_dtype(np.int64)
    else:
        dt = np.dtype(np.int64) if any(int(d) > int32_max for d in shape) else np.dtype(np.int32)
    if not shape:
        return full((0,), np.array(0, dtype=dt))
    if not any(_is_symbolic(d) for d in shape):
        return np.asarray(shape, dtype=dt)
    return concatenate([broadcast_in_dim(dimension_as_value(d, dt), (1,), ()) for d in shape], 0)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays of one shape along a new ``axis`` (``jax.lax.stack``: broadcast_in_dim each, then concatenate)."""
    operands = list(operands)
    if not operands:
        raise ValueError("stack: need at least one array to stack")
    shape = tuple(aval_of(operands[0]).shape)
    for x in operands[1:]:
        if tuple(aval_of(x).shape) != shape:
            raise TypeError(f"stack: all operands must have the same shape, got {shape} and "
                            f"{tuple(aval_of(x).shape)}")
    axis = canonicalize_axis(axis, len(shape) + 1)
    new_shape = shape[:axis] + (1,) + shape[axis:]
    dims = tuple(i for i in range(len(shape) + 1) if i != axis)
    return concatenate([broadcast_in_dim(x, new_shape, dims) for x in operands], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, that axis removed (``jax.lax.unstack``: slice + reshape each)."""
    shape = tuple(aval_of(x).shape)
    axis = canonicalize_axis(axis, len(shape))
    out_shape = shape[:axis] + shape[axis + 1:]
    outs = []
    for i in range(shape[axis]):
        start = [0] * len(shape)
        limit = list(shape)
        start[axis], limit[axis] = i, i + 1
        outs.append(reshape(slice(x, start, limit), out_shape))
    return tuple(outs)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each dimension i (``jax.lax.tile``).

    ``reps`` needs one non-negative entry per dimension (else ``ValueError``/``TypeError``).
    """
    shape = tuple(aval_of(operand).shape)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != len(shape):
        raise ValueError(f"len(reps) must be equal to operand.ndim: got reps={reps} and operand.ndim={len(shape)}")
    if any(r < 0 for r in reps):
        raise ValueError(f"reps must be non-negative, got {reps}")
    expanded = tuple(j for d in shape for j in (1, d))
    x = reshape(operand, expanded)
    x = broadcast_in_dim(x, tuple(k for pair in zip(reps, shape) for k in pair), tuple(range(2 * len(shape))))
    return reshape(x, tuple(r * d for r, d in zip(reps, shape)))


def stage(x: Any, /) -> Any:
    """``x`` (an array or a scalar) lifted into the active trace: the identity on values (``jax.lax.stage``).

    Inside a trace a host value becomes a constant of the program (JAX folds its ``stage_p`` of a constant
    the same way) and a traced value is itself; outside any trace the result is a toolkit array. The dtype
    and weak type are the value's (a Python float stays weakly typed, a float64 is float32 with x64 off).
    """
    if not (isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)) or hasattr(x, "aval")
            or hasattr(x, "__toolkit_array__")):
        raise TypeError("Error interpreting argument to stage as a JAX value. The problematic value is of type "
                        f"{type(x)} and was passed to stage at position 0.")
    builder = tracing.current_builder()
    if builder is None:
        return tracing.eager_call(_identity, x)
    return builder.to_tracer(x)


def _identity(x: Any) -> Any:
    return x
