"""Primitives that move data without arithmetic: broadcast, reshape, transpose,
slices, padding, concatenation, reversal, iota and dynamic slicing; and ``jax.lax``'s
wrappers over them (``expand_dims``, ``squeeze``, ``collapse``, ``broadcast_to_rank``,
``full_like``, ``slice_in_dim``/``index_in_dim`` and their dynamic variants)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes, sharding_types, tracing
from toolkit.core.avals import ShapedArray, aval_of, canonicalize_shape, shape_size
from toolkit.core.families import Family
from toolkit.core.shape_poly import definitely_equal, is_symbolic_dim, max_dim
from toolkit.lax import elementwise
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


@family.function(binds=(broadcast_in_dim_p,))
def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int], *,
                     out_sharding: Any = None) -> Any:
    """Broadcast ``operand`` to ``shape``; operand dimension ``i`` maps to ``broadcast_dimensions[i]``.

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the result's
    type on Explicit mesh axes, as JAX's (instead of the operand's spec carried to its dimensions).
    """
    shape = canonicalize_shape(shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if out_sharding is not None:
        return sharding_types.with_out_sharding(
            broadcast_in_dim, (operand,), {"shape": shape, "broadcast_dimensions": broadcast_dimensions},
            out_sharding, "broadcast_in_dim", shape, primitive="broadcast_in_dim")
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=broadcast_dimensions)


def broadcast(operand: Any, sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """Add leading dimensions of ``sizes`` to ``operand``; ``out_sharding``: as :func:`broadcast_in_dim`'s."""
    operand_shape = _shape(operand)
    sizes = tuple(sizes)
    return broadcast_in_dim(operand, sizes + operand_shape, tuple(range(len(sizes), len(sizes) + len(operand_shape))),
                            out_sharding=out_sharding)


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


@family.function(binds=(reshape_p,))
def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None, *,
            out_sharding: Any = None) -> Any:
    """``operand`` with shape ``new_sizes`` (same number of elements, row-major order).

    ``dimensions`` (as JAX's): the order in which ``operand``'s dimensions are read, i.e. ``operand`` transposed by it first.
    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the
    result's type on Explicit mesh axes, as in JAX: needed for reshapes whose sharding the rule cannot infer.
    """
    new_sizes = canonicalize_shape(new_sizes)
    if dimensions is not None and tuple(int(d) for d in dimensions) != tuple(range(len(_shape(operand)))):
        operand = transpose(operand, tuple(int(d) for d in dimensions))
    if out_sharding is not None:
        return sharding_types.with_out_sharding(reshape, (operand,), {"new_sizes": new_sizes}, out_sharding, "reshape", new_sizes,
                                 primitive="reshape")
    return reshape_p.bind(operand, new_sizes=new_sizes)


def _transpose_rule(x: ShapedArray, *, permutation: tuple) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose: permutation {permutation} is not a permutation of the operand's "
                        f"{x.ndim} dimensions")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = family.primitive("transpose", shape_rule=_transpose_rule)


@family.function(binds=(transpose_p,))
def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permute the dimensions of ``operand`` (as ``jax.lax.transpose``): result dimension ``i`` is ``operand``'s
    ``permutation[i]``. A ``permutation`` that is not a permutation of ``range(operand.ndim)`` raises ``TypeError``.
    """
    return transpose_p.bind(operand, permutation=tuple(int(p) for p in permutation))


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


@family.function(binds=(slice_p,))
def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    """The static slice ``operand[start:limit:stride]`` in every dimension (as ``jax.lax.slice``).

    ``start_indices`` and ``limit_indices`` (and ``strides``, default 1) need one entry per dimension, with
    ``0 <= start <= limit <= size`` and ``stride >= 1``; otherwise ``TypeError`` naming the dimension.
    """
    return slice_p.bind(operand, start_indices=tuple(start_indices), limit_indices=tuple(limit_indices),
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


@family.function(binds=(pad_p,))
def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad ``operand`` with the scalar ``padding_value`` (as ``jax.lax.pad``).

    ``padding_config`` has one ``(low, high, interior)`` triple per dimension; ``low``/``high`` may be negative
    (they crop), ``interior`` may not. The padding value must be a scalar of ``operand``'s dtype (else ``TypeError``).
    """
    return pad_p.bind(operand, padding_value, padding_config=tuple(tuple(dim_param(v) for v in c) for c in padding_config))



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


@family.function(binds=(concatenate_p,))
def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join ``operands`` along ``dimension`` (as ``jax.lax.concatenate``).

    At least one operand; all of one dtype and of equal shape except along ``dimension`` (else ``TypeError``).
    """
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _split_rule(x: ShapedArray, *, sizes: tuple, axis: int) -> list[ShapedArray]:
    if not 0 <= axis < x.ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for an operand of rank {x.ndim}")
    def nonnegative(size: Any) -> Any:
        return lambda: size >= 0
    if any(known_false(nonnegative(s)) for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    total: Any = 0
    for size in sizes:
        total = total + size
    if known_false(lambda: total == x.shape[axis]):
        raise ValueError(f"Sum of sizes {total} must be equal to dimension {axis} of the operand shape "
                         f"{list(x.shape)}")
    shapes = []
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = size
        shapes.append(ShapedArray(tuple(shape), x.dtype, x.weak_type))
    return shapes


#: JAX's ``split``: one equation for all the pieces, whose transpose is one concatenate (pieces cut by
#: ``slice`` transpose to a pad each, summed: XLA gets three pads and two adds for a three-way split).
split_p = family.primitive("split", shape_rule=_split_rule, multiple_results=True)


@family.function(binds=(split_p,))
def split(operand: Any, sizes: Sequence[Any], axis: int = 0) -> list[Any]:
    """Cut ``operand`` along ``axis`` into consecutive pieces of ``sizes`` (as ``jax.lax.split``).

    The sizes must be nonnegative and sum to the axis's size (else ``ValueError``); a negative
    ``axis`` counts from the end.
    """
    ndim = aval_of(operand).ndim
    return list(split_p.bind(operand, sizes=tuple(dim_param(s) for s in sizes),
                             axis=canonicalize_axis(axis, ndim)))


def _rev_rule(x: ShapedArray, *, dimensions: tuple) -> ShapedArray:
    # JAX's checks and TypeErrors (its _check_shapelike, then uniqueness and range).
    if any(d < 0 for d in dimensions):
        raise TypeError(f"rev dimensions must have every element be nonnegative, got {dimensions}.")
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not max(dimensions) < x.ndim:
        raise TypeError(f"rev dimensions must all be less than operand ndim, got dimensions {dimensions} for operand "
                        f"ndim {x.ndim}.")
    return x


rev_p = family.primitive("rev", shape_rule=_rev_rule)


@family.function(binds=(rev_p,))
def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverse ``operand`` along each of ``dimensions`` (as ``jax.lax.rev``); a dimension out of range is a ``ValueError``."""
    return rev_p.bind(operand, dimensions=tuple(dimensions))


def _iota_rule(*, dtype: np.dtype, shape: tuple, dimension: int) -> ShapedArray:
    if np.dtype(dtype) == np.bool_:  # StableHLO's iota counts in numbers only; JAX's TypeError before lowering
        raise TypeError("iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
                        "complexfloating.")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota: dimension {dimension} is out of bounds for shape {shape}")
    return ShapedArray(shape, dtype)


iota_p = family.primitive("iota", shape_rule=_iota_rule)


def iota(dtype: Any, size: int) -> Any:
    """``[0, 1, ..., size-1]``."""
    return broadcasted_iota(dtype, (size,), 0)


@family.function(binds=(iota_p,))
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


def clamped_dynamic_slice(x: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    """The ``dynamic_slice`` primitive itself: starts clamped into bounds (a negative start to 0, as XLA does).

    For toolkit's own rules and library code, whose starts are computed (JAX's rules bind the primitive too);
    :func:`dynamic_slice` is the API, whose negative starts count from the end.
    """
    return dynamic_slice_p.bind(x, *start_indices, slice_sizes=tuple(dim_param(s) for s in slice_sizes))


def _wrapped_starts(shape: tuple, start_indices: Sequence[Any], allow_negative_indices: bool | Sequence[bool],
                    what: str) -> list[Any]:
    """JAX's ``_dynamic_slice_indices``: each signed start, if negative, plus its dimension's size."""
    if len(start_indices) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions ({len(start_indices)} "
                         f"vs {shape})")
    allowed = [allow_negative_indices] * len(shape) if isinstance(allow_negative_indices, bool) \
        else list(allow_negative_indices)
    if len(allowed) != len(shape):
        raise ValueError(f"{what}: allow_negative_indices has {len(allowed)} entries for {len(shape)} dimensions")
    return [_start_index(i, d, allow) for i, d, allow in zip(start_indices, shape, allowed)]


@family.function(binds=(dynamic_slice_p,))
def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand[start:start+size]`` per dimension (as ``jax.lax.dynamic_slice``): a negative start counts from the end
    (``allow_negative_indices``, per dimension or for all; ``False`` makes a negative Python int a ``ValueError``),
    then starts are clamped into bounds, as XLA does."""
    starts = _wrapped_starts(_shape(operand), start_indices, allow_negative_indices, "dynamic_slice")
    return clamped_dynamic_slice(operand, starts, slice_sizes)


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


def clamped_dynamic_update_slice(x: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """The ``dynamic_update_slice`` primitive itself: starts clamped so the update fits (a negative one to 0).

    For toolkit's own rules and library code; :func:`dynamic_update_slice` is the API.
    """
    return dynamic_update_slice_p.bind(x, update, *start_indices)


@family.function(binds=(dynamic_update_slice_p,))
def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand`` with ``update`` written at the (traced) ``start_indices`` (as ``jax.lax.dynamic_update_slice``).

    One integer scalar index per dimension; a negative one counts from the end (``allow_negative_indices``, as
    JAX's), then indices are clamped so the update fits, as in XLA. ``update`` must have ``operand``'s dtype and rank
    and fit inside it (else ``TypeError``).
    """
    starts = _wrapped_starts(_shape(operand), start_indices, allow_negative_indices, "dynamic_update_slice")
    return clamped_dynamic_update_slice(operand, update, starts)


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


# --- jax.lax's wrappers over these primitives: shapes, one-axis slices, full_like ----------------

def canonicalize_axis(axis: Any, ndim: int) -> int:
    """``axis`` in ``[0, ndim)``: a negative axis counts from the end; out of bounds raises ``ValueError``."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _shape(x: Any) -> tuple:
    return tuple(aval_of(x).shape)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` with size-1 dimensions inserted at ``dimensions`` (positions in the result)."""
    dimensions = tuple(dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    shape = list(_shape(array))
    ndim_out = len(shape) + len(dimensions)
    dims = [canonicalize_axis(d, ndim_out) for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    for d in sorted(dims):
        shape.insert(d, 1)
    return broadcast_in_dim(array, shape, [i for i in range(ndim_out) if i not in set(dims)])


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` without its size-1 ``dimensions``."""
    shape = _shape(array)
    dims = tuple(sorted(canonicalize_axis(d, len(shape)) for d in dimensions))
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions are not unique: {dims}")
    if any(is_symbolic_dim(shape[d]) or shape[d] != 1 for d in dims):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                         f"got shape={shape} and dimensions={dims}")
    if not dims and not isinstance(array, (np.ndarray, np.generic)) and not dtypes.is_python_scalar(array):
        return array  # an Array or tracer squeezed of nothing is itself; host values are made arrays below (JAX's)
    return reshape(array, tuple(s for i, s in enumerate(shape) if i not in dims))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Dimensions ``[start_dimension, stop_dimension)`` of ``operand`` merged into one (row-major)."""
    shape = _shape(operand)
    # the bounds ``slice(start, stop).indices(ndim)`` gives (here ``slice`` names the primitive's function)
    dims = range(len(shape))[start_dimension:stop_dimension]
    lo, hi = dims.start, dims.stop
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}[{start_dimension}:{stop_dimension}]")
    size = math.prod(shape[lo:hi])
    return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading size-1 dimensions added up to rank ``rank``."""
    ndim = len(_shape(x))
    if ndim == rank:
        return x if not dtypes.is_python_scalar(x) else reshape(x, ())
    return broadcast_in_dim(x, (1,) * (rank - ndim) + _shape(x), tuple(range(rank - ndim, rank)))


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None, sharding: Any = None) -> Any:
    """An array like ``x`` (its shape and dtype unless given) filled with the scalar ``fill_value``.

    Weakly typed when ``dtype`` is None and ``x`` is.
    """
    aval = aval_of(x)
    fill_shape = tuple(aval.shape) if shape is None else tuple(shape)
    weak = dtype is None and aval.weak_type
    dtype = dtypes.canonicalize_dtype(aval.dtype if dtype is None else dtype)
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    if hasattr(fill_value, "aval") or hasattr(fill_value, "_impl"):
        fill = elementwise.convert_element_type(fill_value, dtype, weak_type=weak)
    else:
        fill = np.asarray(fill_value, dtype)
        if weak:
            fill = elementwise.convert_element_type(fill, dtype, weak_type=True)
    return full(fill_shape, fill, sharding=sharding)


def typed_scalar(x: Any, value: float) -> Any:
    """``value`` typed like ``x`` for a binary operation with it, as JAX's ``lax._const``: a weakly typed 0-d value
    for a weak scalar ``x``, else a strong 0-d array of ``x``'s dtype (a weak array's constant is strong, so
    ``logaddexp2(2.5, int_array)`` is strong, as in JAX). lax's binary functions broadcast it."""
    aval = aval_of(x)
    if aval.weak_type and not aval.shape:
        return full_like(x, value)
    return np.asarray(value, aval.dtype)


# Slicing along one axis; the dynamic variants wrap negative indices like JAX's ``allow_negative_indices=True``.

def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1,
                 axis: int = 0) -> Any:
    """``operand[..., start_index:limit_index:stride, ...]`` along ``axis`` (negative bounds count from the end)."""
    shape = _shape(operand)
    axis = int(axis)
    size = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = size if limit_index is None else int(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The ``index``-th slice along ``axis``; a static index out of bounds raises ``IndexError``."""
    index, axis = int(index), int(axis)
    size = _shape(operand)[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _index_dtype(i: Any) -> np.dtype:
    if dtypes.is_python_scalar(i):
        return dtypes.DEFAULT_INT
    return dtypes.canonicalize_dtype(aval_of(i).dtype)


def _start_index(i: Any, size: Any, allow_negative: bool) -> Any:
    """A scalar start index with negative values wrapped (JAX's ``allow_negative_indices``)."""
    dtype = _index_dtype(i)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"index arguments to dynamic_slice must be integers of the same type, got: {dtype.name}")
    if isinstance(i, (int, np.integer)) and not is_symbolic_dim(size):
        if int(i) < 0:
            if not allow_negative:
                raise ValueError(f"Index {i} is out of bounds for dimension {size} if allow_negative_indices=False")
            i = int(i) + size
        return np.asarray(i, dtype)
    if dtypes.is_unsigned(dtype) or not allow_negative:
        return i
    size_value = dimension_as_value(size, dtype) if is_symbolic_dim(size) else np.asarray(size, dtype)
    zero = np.zeros((), dtype)
    if aval_of(i).weak_type:
        i = elementwise.convert_element_type(i, dtype)
    return elementwise.select(elementwise.lt(i, zero), elementwise.add(i, size_value), i)


def _starts(operand_shape: tuple, axis: int, start_index: Any, allow_negative: bool) -> list[Any]:
    start = _start_index(start_index, operand_shape[axis], allow_negative)
    zero = np.zeros((), _index_dtype(start))
    return [start if d == axis else zero for d in range(len(operand_shape))]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """``slice_size`` elements along ``axis`` from the (traced) ``start_index``, clamped into bounds."""
    shape = _shape(operand)
    axis = int(axis)
    sizes = list(shape)
    sizes[axis] = slice_size
    return clamped_dynamic_slice(operand, _starts(shape, axis, start_index, allow_negative_indices), sizes)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """The (traced) ``index``-th slice along ``axis``, the index clamped into bounds."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (int(axis),))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with ``update`` written along ``axis`` from the (traced) ``start_index``."""
    shape = _shape(operand)
    axis = int(axis)
    return clamped_dynamic_update_slice(operand, update, _starts(shape, axis, start_index, allow_negative_indices))


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with ``update`` (rank one less, or equal with size 1 along ``axis``) at ``index``."""
    axis = int(axis)
    if len(_shape(update)) != len(_shape(operand)):
        if len(_shape(update)) + 1 != len(_shape(operand)):
            raise ValueError(f"dynamic_update_index_in_dim: update of rank {len(_shape(update))} needs rank "
                             f"{len(_shape(operand))} or {len(_shape(operand)) - 1}")
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices=allow_negative_indices)
