"""Primitives that move data without arithmetic: broadcast, reshape, transpose,
slices, padding, concatenation, reversal, iota and dynamic slicing."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes, sharding_types, tracing
from toolkit.core.avals import ShapedArray, canonicalize_shape, shape_size
from toolkit.core.families import Family
from toolkit.core.shape_poly import definitely_equal, max_dim
from toolkit.lax.elementwise import convert_element_type
from toolkit.lax.sharding import sharding_constraint_p
from toolkit.shard.mesh import AbstractMesh
from toolkit.lax.shape_rules import check_axes, dim_param, known_false, same_dtypes

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("structural")


def _broadcast_in_dim_rule(x: ShapedArray, *, shape: tuple, broadcast_dimensions: tuple) -> ShapedArray:
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must have one entry per "
                        f"operand dimension (operand shape {x.shape})")
    check_axes("broadcast_in_dim", broadcast_dimensions, len(shape), "broadcast dimension")
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must be increasing")
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            raise TypeError(f"broadcast_in_dim: operand dimension {i} of size {x.shape[i]} cannot broadcast to "
                            f"dimension {d} of size {shape[d]} (operand shape {x.shape}, target {shape})")
    return ShapedArray(shape, x.dtype, x.weak_type)


broadcast_in_dim_p = family.primitive("broadcast_in_dim", shape_rule=_broadcast_in_dim_rule)


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcast ``x`` to ``shape``; operand dimension ``i`` maps to ``broadcast_dimensions[i]``."""
    return broadcast_in_dim_p.bind(x, shape=canonicalize_shape(shape), broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast(x: Any, sizes: Sequence[int]) -> Any:
    """Add leading dimensions of ``sizes`` to ``x``."""
    ndim = np.ndim(x) if not hasattr(x, "ndim") else x.ndim
    sizes = tuple(sizes)
    return broadcast_in_dim(x, sizes + tuple(x.shape), tuple(range(len(sizes), len(sizes) + ndim)))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *, sharding: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (``jax.lax.full``).

    With ``dtype`` None a Python scalar stays weakly typed. ``sharding``, as in JAX
    0.10.2: a sharding over a concrete mesh places the array so when called eagerly
    (under a trace it is ignored); one over an abstract mesh (an array's type
    sharding, ``toolkit.typeof(x).sharding``) types the result, as ``out_sharding=`` does.
    """
    shape = canonicalize_shape(shape)
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
        if isinstance(fill_value, (bool, int, float, complex, np.generic, np.ndarray)):
            fill_value = np.asarray(fill_value, dtype)
        else:
            fill_value = convert_element_type(fill_value, dtype)
    if sharding is not None and isinstance(getattr(sharding, "mesh", None), AbstractMesh):  # a type sharding
        return sharding_types.with_out_sharding(broadcast_in_dim, (fill_value,),
                                                {"shape": shape, "broadcast_dimensions": ()}, sharding, "full", shape,
                                                primitive="broadcast_in_dim")
    out = broadcast_in_dim(fill_value, shape, ())
    if sharding is not None and not tracing.is_tracing():
        # Placed eagerly through the eager hook: outside a trace a sharding constraint is a transfer.
        out = sharding_constraint_p.bind(out, sharding=sharding)
    return out


def _reshape_rule(x: ShapedArray, *, new_sizes: tuple) -> ShapedArray:
    if shape_size(x.shape) != shape_size(new_sizes):
        raise TypeError(f"reshape: cannot reshape an array of shape {x.shape} ({shape_size(x.shape)} elements) "
                        f"into shape {new_sizes} ({shape_size(new_sizes)} elements)")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = family.primitive("reshape", shape_rule=_reshape_rule)


def reshape(x: Any, new_sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """``x`` with shape ``new_sizes`` (same number of elements, row-major order).

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the
    result's type on Explicit mesh axes, as in JAX: needed for reshapes whose sharding the rule cannot infer.
    """
    new_sizes = canonicalize_shape(new_sizes)
    if out_sharding is not None:
        return sharding_types.with_out_sharding(reshape, (x,), {"new_sizes": new_sizes}, out_sharding, "reshape", new_sizes,
                                 primitive="reshape")
    return reshape_p.bind(x, new_sizes=new_sizes)


def _transpose_rule(x: ShapedArray, *, permutation: tuple) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose: permutation {permutation} is not a permutation of the operand's "
                        f"{x.ndim} dimensions")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = family.primitive("transpose", shape_rule=_transpose_rule)


def transpose(x: Any, permutation: Sequence[int]) -> Any:
    return transpose_p.bind(x, permutation=tuple(int(p) for p in permutation))


def _slice_rule(x: ShapedArray, *, start_indices: tuple, limit_indices: tuple, strides: tuple | None) -> ShapedArray:
    if not len(start_indices) == len(limit_indices) == x.ndim:
        raise TypeError(f"slice: start_indices {start_indices} and limit_indices {limit_indices} need one entry "
                        f"per dimension of the operand of shape {x.shape}")
    strides = strides or (1,) * x.ndim
    shape = []
    for axis, (lo, hi, st, size) in enumerate(zip(start_indices, limit_indices, strides, x.shape)):
        if known_false(lambda: 0 <= lo <= hi <= size and st >= 1):
            raise TypeError(f"slice: [{lo}:{hi}:{st}] is out of bounds for dimension {axis} of size {size}")
        shape.append(0 if definitely_equal(hi, lo) else (hi - lo + st - 1) // st)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


slice_p = family.primitive("slice", shape_rule=_slice_rule)


def slice(x: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    return slice_p.bind(x, start_indices=tuple(start_indices), limit_indices=tuple(limit_indices),
                        strides=None if strides is None else tuple(strides))


def _pad_rule(x: ShapedArray, padding_value: ShapedArray, *, padding_config: tuple) -> ShapedArray:
    if padding_value.shape != () or padding_value.dtype != x.dtype:
        raise TypeError(f"pad: the padding value must be a scalar of the operand's dtype {x.dtype.name}, got "
                        f"{padding_value.str_short()}")
    if len(padding_config) != x.ndim:
        raise TypeError(f"pad: padding_config needs {x.ndim} (low, high, interior) triples, got {len(padding_config)}")
    shape = []
    for axis, (size, (lo, hi, interior)) in enumerate(zip(x.shape, padding_config)):
        if interior < 0:
            raise ValueError(f"pad: interior padding of dimension {axis} must be non-negative, got {interior}")
        new = lo + hi + size + max_dim(size - 1, 0) * interior
        if known_false(lambda: new >= 0):
            raise ValueError(f"pad: negative padding removes more than dimension {axis} of size {size} holds")
        shape.append(new)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


pad_p = family.primitive("pad", shape_rule=_pad_rule)


def pad(x: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    return pad_p.bind(x, padding_value, padding_config=tuple(tuple(dim_param(v) for v in c) for c in padding_config))



def _concatenate_rule(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise TypeError("concatenate needs at least one operand")
    dtype = same_dtypes("concatenate", *xs)
    ndim = xs[0].ndim
    if not 0 <= dimension < max(ndim, 1):
        raise ValueError(f"concatenate: dimension {dimension} is out of bounds for rank {ndim}")
    for i, x in enumerate(xs):
        if x.ndim != ndim or any(a != b for k, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if k != dimension):
            raise TypeError(f"concatenate: operand {i} has shape {x.shape}, which does not match {xs[0].shape} "
                            f"outside dimension {dimension}")
    size = 0
    for x in xs:
        size = size + x.shape[dimension]
    shape = list(xs[0].shape)
    shape[dimension] = size
    return ShapedArray(tuple(shape), dtype, all(x.weak_type for x in xs))


concatenate_p = family.primitive("concatenate", shape_rule=_concatenate_rule)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _rev_rule(x: ShapedArray, *, dimensions: tuple) -> ShapedArray:
    check_axes("rev", dimensions, x.ndim, "dimension")
    return x


rev_p = family.primitive("rev", shape_rule=_rev_rule)


def rev(x: Any, dimensions: Sequence[int]) -> Any:
    return rev_p.bind(x, dimensions=tuple(dimensions))


def _iota_rule(*, dtype: np.dtype, shape: tuple, dimension: int) -> ShapedArray:
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota: dimension {dimension} is out of bounds for shape {shape}")
    return ShapedArray(shape, dtype)


iota_p = family.primitive("iota", shape_rule=_iota_rule)


def iota(dtype: Any, size: int) -> Any:
    """``[0, 1, ..., size-1]``."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, *, out_sharding: Any = None) -> Any:
    """Values counting up along ``dimension`` of ``shape``; ``out_sharding``: the result's type, as in JAX."""
    if out_sharding is not None:
        shape = canonicalize_shape(shape)
        return sharding_types.with_out_sharding(broadcasted_iota, (), {"dtype": dtypes.canonicalize_dtype(dtype), "shape": shape,
                                                        "dimension": int(dimension)},
                                 out_sharding, "broadcasted_iota", shape, primitive="iota")
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=canonicalize_shape(shape), dimension=int(dimension))


def _dynamic_slice_rule(x: ShapedArray, *indices: ShapedArray, slice_sizes: tuple) -> ShapedArray:
    if len(indices) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError(f"dynamic_slice needs one start index and one size per dimension of the operand of shape "
                        f"{x.shape}; got {len(indices)} indices and sizes {slice_sizes}")
    for i, idx in enumerate(indices):
        if idx.shape != () or not dtypes.is_integer(idx.dtype):
            raise TypeError(f"dynamic_slice: start index {i} must be an integer scalar, got {idx.str_short()}")
    for axis, (s, d) in enumerate(zip(slice_sizes, x.shape)):
        if known_false(lambda: 0 <= s <= d):
            raise TypeError(f"dynamic_slice: slice size {s} does not fit dimension {axis} of size {d}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


dynamic_slice_p = family.primitive("dynamic_slice", shape_rule=_dynamic_slice_rule)


def dynamic_slice(x: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    """``x[start:start+size]`` per dimension, starts clamped into bounds (as XLA does)."""
    return dynamic_slice_p.bind(x, *start_indices, slice_sizes=tuple(dim_param(s) for s in slice_sizes))


def _dynamic_update_slice_rule(x: ShapedArray, update: ShapedArray, *indices: ShapedArray) -> ShapedArray:
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice: update dtype {update.dtype.name} differs from operand dtype "
                        f"{x.dtype.name}")
    if update.ndim != x.ndim or len(indices) != x.ndim:
        raise TypeError(f"dynamic_update_slice: update {update.shape} and {len(indices)} indices must match the "
                        f"rank of the operand {x.shape}")
    for axis, (u, d) in enumerate(zip(update.shape, x.shape)):
        if known_false(lambda: u <= d):
            raise TypeError(f"dynamic_update_slice: update dimension {axis} of size {u} exceeds the operand's {d}")
    for i, idx in enumerate(indices):
        if idx.shape != () or not dtypes.is_integer(idx.dtype):
            raise TypeError(f"dynamic_update_slice: start index {i} must be an integer scalar, got {idx.str_short()}")
    return x


dynamic_update_slice_p = family.primitive("dynamic_update_slice", shape_rule=_dynamic_update_slice_rule)


def dynamic_update_slice(x: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    return dynamic_update_slice_p.bind(x, update, *start_indices)


def _dimension_size_rule(*, dimension: Any, dtype: np.dtype) -> ShapedArray:
    return ShapedArray((), dtype, weak_type=True)


dimension_size_p = family.primitive("dimension_size", shape_rule=_dimension_size_rule)


def dimension_as_value(d: Any, dtype: Any = None) -> Any:
    """A dimension size (an int or a symbolic dimension) as a 0-d integer array.

    Symbolic sizes become a value computed at run time from the argument shapes,
    so ``x.sum() / x.shape[0]`` works for a polymorphic ``x``.
    """
    dtype = dtypes.canonicalize_dtype(dtype or dtypes.DEFAULT_INT)
    if not getattr(d, "_is_symbolic_dim", False):
        return np.asarray(d, dtype)
    return dimension_size_p.bind(dimension=d, dtype=dtype)
