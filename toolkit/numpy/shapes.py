"""Shape manipulation: reshape, transpose, axes, broadcasting, joining."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core.avals import shape_size
from toolkit.lax import structural as lax_structural
from toolkit.numpy._core import asarray, broadcast_shapes, broadcast_to, canonical_axes, canonical_axis, \
    is_array, result_dtype, convert


def reshape(a: Any, newshape: Any, order: str = "C", *, out_sharding: Any = None) -> Any:
    """``a`` with shape ``newshape`` (one entry may be -1).

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``): the result's
    type on Explicit mesh axes, as in JAX (``toolkit.lax.reshape``'s); needed where it cannot be inferred.
    """
    if order != "C":
        raise NotImplementedError("only C order reshapes are supported")
    a = asarray(a)
    if isinstance(newshape, (int, np.integer)) or getattr(newshape, "_is_symbolic_dim", False):
        newshape = (newshape,)
    newshape = [int(d) if isinstance(d, (int, np.integer)) else d for d in newshape]
    if sum(1 for d in newshape if isinstance(d, int) and d == -1) > 1:
        raise ValueError(f"reshape: at most one dimension may be -1, got {tuple(newshape)}")
    if -1 in [d for d in newshape if isinstance(d, int)]:
        known = 1
        for d in newshape:
            if not (isinstance(d, int) and d == -1):
                known = known * d
        total = shape_size(a.shape)
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape an array of shape {a.shape} into shape {tuple(newshape)}")
        newshape = [total // known if isinstance(d, int) and d == -1 else d for d in newshape]
    newshape = tuple(newshape)
    if out_sharding is not None:
        return lax_structural.reshape(a, newshape, out_sharding=out_sharding)
    if tuple(a.shape) == newshape:
        return a
    return lax_structural.reshape(a, newshape)


def ravel(a: Any, order: str = "C", *, out_sharding: Any = None) -> Any:
    return reshape(a, (-1,), order, out_sharding=out_sharding)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    a = asarray(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    axes = tuple(canonical_axis(x, a.ndim) for x in axes)
    if axes == tuple(range(a.ndim)):
        return a
    return lax_structural.transpose(a, axes)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    a = asarray(a)
    perm = list(range(a.ndim))
    i, j = canonical_axis(axis1, a.ndim), canonical_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    a = asarray(a)
    src = canonical_axes(source, a.ndim)
    dst = canonical_axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a: Any, axis: Any) -> Any:
    a = asarray(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = a.ndim + len(axes)
    axes = sorted(canonical_axis(x, ndim) for x in axes)
    shape = list(a.shape)
    for x in axes:
        shape.insert(x, 1)
    return lax_structural.reshape(a, tuple(shape))


def squeeze(a: Any, axis: Any = None) -> Any:
    a = asarray(a)
    if axis is None:
        axes = [i for i, d in enumerate(a.shape) if d == 1]
    else:
        axes = list(canonical_axes(axis, a.ndim))
        for x in axes:
            if a.shape[x] != 1:
                raise ValueError(f"squeeze: axis {x} has size {a.shape[x]}, not 1 (shape {a.shape})")
    if not axes:
        return a
    return lax_structural.reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


def atleast_1d(a: Any) -> Any:
    a = asarray(a)
    return reshape(a, (1,)) if a.ndim == 0 else a


def atleast_2d(a: Any) -> Any:
    a = asarray(a)
    return reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)) if a.ndim < 2 else a


def broadcast_arrays(*args: Any) -> list[Any]:
    shape = broadcast_shapes(*[np.shape(a) if not is_array(a) else a.shape for a in args])
    return [broadcast_to(asarray(a), shape) for a in args]


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    """Join arrays along an existing axis (``axis=None`` flattens first)."""
    if not len(arrays):
        raise ValueError("concatenate needs at least one array")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    dtype, weak = result_dtype(*arrays)
    arrays = [asarray(convert(a, dtype, weak)) for a in arrays]
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for i, a in enumerate(arrays):
        if a.ndim != ndim:
            raise ValueError(f"concatenate: array {i} has rank {a.ndim}, but array 0 has rank {ndim}")
    axis = canonical_axis(axis, ndim)
    if len(arrays) == 1:
        return arrays[0]
    return lax_structural.concatenate(arrays, axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays along a new axis."""
    if not len(arrays):
        raise ValueError("stack needs at least one array")
    arrays = [asarray(a) for a in arrays]
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise ValueError(f"stack: all arrays need the same shape; array 0 has {shape}, array {i} has {a.shape}")
    axis = canonical_axis(axis, len(shape) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def hstack(arrays: Sequence[Any]) -> Any:
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1)


def vstack(arrays: Sequence[Any]) -> Any:
    return concatenate([atleast_2d(a) for a in arrays], 0)
