"""Shape manipulation: reshaping, transposing and moving axes, adding and
removing dimensions, joining and splitting, flips, rolls and rotations,
tiling and repetition (padding is ``padding.py``).

Shapes are static: repeat counts, split points, pad widths and (static) roll
shifts are Python ints or symbolic dimensions (``repeat``'s counts may be a
traced array when ``total_repeat_length`` fixes the result's length). ``expand_dims``, ``stack`` and
the joining under ``concatenate`` are in ``_core`` (``asarray`` stacks nested
lists of arrays with them) and are named here too. Example::

    import toolkit.numpy as tnp
    tnp.block([[a, b], [c, d]])
    tnp.split(x, 3, axis=1)
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from toolkit.array import Array
from toolkit.core import dtypes, shape_poly, sharding_types
from toolkit.core.avals import aval_of, format_sharded_shape, shape_size
from toolkit.core.compiled_whole import compiled_whole
from toolkit.core.sharding_types import spec_of
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import structural as lax_structural
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.numpy import creation, scatter, ufuncs
from toolkit.numpy import _core
from toolkit.numpy._core import (
    asarray, broadcast_shapes, canonical_axes, canonical_axis, check_arraylike, eager_unsharded, is_array, join,
)
from toolkit.numpy.indexing import getitem
from toolkit.shard.explicit import canonicalize_out_sharding, out_type_sharding
from toolkit.shard.mesh import get_abstract_mesh
from toolkit.shard.partition_spec import PartitionSpec


# --- shape and axes -------------------------------------------------------------------------------

def reshape(a: Any, shape: Any, order: str = "C", *, copy: bool | None = None, out_sharding: Any = None) -> Any:
    """``a`` with shape ``shape`` (one entry may be -1), as ``jnp.reshape`` (JAX 0.10's ``shape=`` keyword;
    ``copy`` is accepted, arrays being immutable). A shape of another size is a ``TypeError``, as in JAX.
    ``order="F"`` reads and writes the elements in column-major order, as JAX's.

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``): the result's
    type on Explicit mesh axes, as in JAX (``toolkit.lax.reshape``'s); needed where it cannot be inferred.
    """
    check_arraylike("reshape", a)
    if order not in ("C", "F"):
        if order == "A":
            raise NotImplementedError("np.reshape order=A is not implemented.")
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")
    a = asarray(a)
    newshape = shape
    if isinstance(newshape, (int, np.integer)) or getattr(newshape, "_is_symbolic_dim", False):
        newshape = (newshape,)
    newshape = [int(d) if isinstance(d, (int, np.integer)) else d for d in newshape]
    if sum(1 for d in newshape if isinstance(d, int) and d == -1) > 1:
        raise TypeError(f"reshape: at most one dimension may be -1, got {tuple(newshape)}")
    if -1 in [d for d in newshape if isinstance(d, int)]:
        known = 1
        for d in newshape:
            if not (isinstance(d, int) and d == -1):
                known = known * d
        total = shape_size(a.shape)
        remainder = total % known if known != 0 else None
        if not (isinstance(remainder, int) and remainder == 0):
            if remainder is not None and not isinstance(total, int):  # symbolic: JAX's class and message
                raise shape_poly.InconclusiveDimensionOperation(
                    f"Cannot divide evenly the sizes of shapes {a.shape} and {tuple(newshape)}. "
                    f"The remainder {remainder} should be 0.")
            raise TypeError(f"cannot reshape an array of shape {a.shape} into shape {tuple(newshape)}")
        newshape = [total // known if isinstance(d, int) and d == -1 else d for d in newshape]
    newshape = tuple(newshape)
    if order == "F":
        # JAX's: the reversed shape read from the reversed dimensions, transposed back (the spec reversed too).
        reversed_dims = tuple(range(a.ndim))[::-1]
        if out_sharding is not None:
            out_sharding = canonicalize_out_sharding(out_sharding, "jnp.reshape")
            out_sharding = out_sharding.update(spec=PartitionSpec(*tuple(out_sharding.spec)[::-1]))
        return transpose(lax_structural.reshape(a, newshape[::-1], reversed_dims, out_sharding=out_sharding))
    if out_sharding is not None:
        return lax_structural.reshape(a, newshape, out_sharding=out_sharding)
    if tuple(a.shape) == newshape:
        return a
    return lax_structural.reshape(a, newshape)


def ravel(a: Any, order: str = "C", *, out_sharding: Any = None) -> Any:
    """``a`` flattened to one dimension (as ``jnp.ravel``; ``order`` ``"C"`` or ``"F"``)."""
    if type(a) is Array and a.ndim > 1 and order == "C" and out_sharding is None and eager_unsharded(a):
        return _ravel_compiled(a)  # JAX's jitted ravel (inline=True): one compiled call (a 1-D a is returned as is)
    check_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (-1,), order, out_sharding=out_sharding)


_ravel_compiled = compiled_whole()(lambda a: reshape(a, (-1,))).outside_traces  # type: ignore[attr-defined]


def _flatten_if_none(a: Any, axis: Any) -> tuple[Any, int]:
    """``(a, axis)`` with ``axis`` canonical; ``axis=None``: the flattened ``a`` and axis 0."""
    a = asarray(a)
    if axis is None:
        return ravel(a), 0
    return a, canonical_axis(axis, a.ndim)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """``a`` with its axes permuted by ``axes`` (default: reversed), as ``jnp.transpose``; ``axes`` must be a
    permutation of ``range(a.ndim)`` (negative entries count from the end).
    """
    check_arraylike("transpose", a)
    a = asarray(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    axes = tuple(canonical_axis(x, a.ndim) for x in axes)
    if axes == tuple(range(a.ndim)):
        return a
    return lax_structural.transpose(a, axes)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """``a`` with ``axis1`` and ``axis2`` interchanged (as ``jnp.swapaxes``); an axis out of range raises."""
    check_arraylike("swapaxes", a)
    a = asarray(a)
    perm = list(range(a.ndim))
    i, j = canonical_axis(axis1, a.ndim), canonical_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


@compiled_whole(static_argnames=("source", "destination"), lists_as_tuples=True)
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """``a`` with the axes ``source`` moved to the positions ``destination`` (ints or sequences of equal
    length), the others keeping their order (as ``jnp.moveaxis``).
    """
    check_arraylike("moveaxis", a)
    a = asarray(a)
    src = canonical_axes(source, a.ndim)
    dst = canonical_axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def permute_dims(a: Any, /, axes: tuple[int, ...]) -> Any:
    """``transpose(a, axes)``, the array-API name."""
    check_arraylike("permute_dims", a)
    return transpose(a, axes)


def matrix_transpose(x: Any, /) -> Any:
    """The last two axes swapped (rank >= 2)."""
    check_arraylike("matrix_transpose", x)
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={x.ndim}")
    return lax_structural.transpose(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


@compiled_whole(static_argnames=("axis", "start"))
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """``axis`` moved to just before position ``start`` (numpy's older ``moveaxis``)."""
    check_arraylike("rollaxis", a)
    a = asarray(a)
    axis = canonical_axis(axis, a.ndim)
    start = int(start)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"start={start} must satisfy {-a.ndim}<=start<={a.ndim}")
    if start < 0:
        start += a.ndim
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


# --- dimensions -----------------------------------------------------------------------------------

@compiled_whole(static_argnames=("axis",), lists_as_tuples=True)
def squeeze(a: Any, axis: Any = None) -> Any:
    """``a`` without its size-1 dimensions, or only those in ``axis`` (as ``jnp.squeeze``); naming an axis
    whose size is not 1 raises ``ValueError``.
    """
    check_arraylike("squeeze", a)
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


def expand_dims(a: Any, axis: Any) -> Any:
    """``a`` with size-1 axes inserted at the positions ``axis`` (an int or a tuple) of the result, as
    ``jnp.expand_dims``; positions out of range or repeated raise ``ValueError``.
    """
    check_arraylike("expand_dims", a)
    return _core.expand_dims(a, axis)  # in _core: asarray stacks nested lists of arrays with it


def _at_least(name: str, arys: tuple[Any, ...], ndim: int) -> Any:
    """JAX's ``atleast_{1,2}d``: each argument as an array of rank at least ``ndim`` (new axes in front); one
    argument gives an array, any other number a list."""
    check_arraylike(name, *arys)
    out = [_rank_at_least(a, ndim) for a in arys]
    return out[0] if len(out) == 1 else out


def _rank_at_least(a: Any, ndim: int) -> Any:
    """``a`` as an array of rank at least ``ndim``, new axes in front (the joining functions call this, not the
    compiled-whole ``atleast_*d``: an array of that rank already is returned as it is, with no jit call)."""
    a = asarray(a)
    return reshape(a, (1,) * (ndim - a.ndim) + tuple(a.shape)) if a.ndim < ndim else a


@compiled_whole()
def atleast_1d(*arys: Any) -> Any:
    """Each argument as an array of rank at least 1 (a scalar becomes shape ``(1,)``), as ``jnp.atleast_1d``:
    one argument gives an array, several a list."""
    return _at_least("atleast_1d", arys, 1)


@compiled_whole()
def atleast_2d(*arys: Any) -> Any:
    """Each argument as an array of rank at least 2 (new axes in front), as ``jnp.atleast_2d``: one argument
    gives an array, several a list."""
    return _at_least("atleast_2d", arys, 2)


@compiled_whole()
def atleast_3d(*arys: Any) -> Any:
    """Arrays viewed with at least three dimensions: ``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` ``(M, N, 1)``."""
    check_arraylike("atleast_3d", *arys)
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = lax_structural.reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = lax_structural.reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = lax_structural.reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def broadcast_to(array: Any, shape: Any, *, out_sharding: Any = None) -> Any:
    """``array`` broadcast to ``shape`` (as ``jnp.broadcast_to``; an int is a 1-D shape); a shape it cannot
    broadcast to raises ``ValueError``, a list or tuple ``array`` JAX's ``TypeError``.

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``): the result's type
    on Explicit mesh axes, as JAX's ``lax.broadcast_to(sharding=)``: each dimension of ``array`` sharded must
    keep its axes in the result (``ValueError`` naming both types otherwise); new or size-1 dimensions may be
    sharded anew.
    """
    check_arraylike("broadcast_to", array)
    if not isinstance(shape, tuple) and np.ndim(shape) == 0:
        shape = (shape,)
    if out_sharding is None:
        return _core.broadcast_to(array, shape)
    return _broadcast_to_typed(asarray(array), tuple(shape), out_sharding)


def _broadcast_to_typed(x: Any, shape: tuple, out_sharding: Any) -> Any:
    """:func:`broadcast_to` whose ``broadcast_in_dim`` is typed by ``out_sharding`` (JAX's ``lax.broadcast_to``)."""
    sharding = canonicalize_out_sharding(out_sharding, "jnp.broadcast_to")
    typed = None if sharding is None else out_type_sharding(sharding, shape)
    if typed is not None:
        aval = aval_of(x)
        lead = len(shape) - aval.ndim
        out_spec = tuple(typed.spec) + (None,) * (len(shape) - len(typed.spec))
        if lead >= 0 and not all(s is None or s == o for s, o in zip(spec_of(aval), out_spec[lead:])):
            # JAX's check: broadcasting never moves or drops the axes a dimension is split over.
            requested = f"{aval.dtype.name}[{format_sharded_shape(shape, out_spec)}]"
            raise ValueError(f"Incompatible types for broadcasting: input type={aval} and "
                             f"requested type={requested}")
    return sharding_types.with_out_sharding(_core.broadcast_to, (x,), {"shape": shape}, out_sharding,
                                            "jnp.broadcast_to", shape, primitive="broadcast_in_dim")


@compiled_whole()
def broadcast_arrays(*args: Any) -> list[Any]:
    """Each argument broadcast to their common shape (as ``jnp.broadcast_arrays``); shapes that do not
    broadcast raise ``ValueError``. An eager call is one compiled program, as JAX's jitted helper.
    """
    check_arraylike("broadcast_arrays", *args)
    shape = broadcast_shapes(*[np.shape(a) if not is_array(a) else a.shape for a in args])
    return [_core.broadcast_to(asarray(a), shape) for a in args]


# --- joining --------------------------------------------------------------------------------------

def _as_dtype(arrays: Sequence[Any], dtype: Any) -> Sequence[Any]:
    """The joining functions' ``dtype=``: each array converted to it before the join (as JAX's ``asarray``)."""
    if dtype is None:
        return arrays
    return asarray(arrays, dtype) if _is_one_array(arrays) else [asarray(a, dtype) for a in arrays]


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    """Join arrays along an existing axis (``axis=None`` flattens first); ``dtype`` converts them first."""
    if not _is_one_array(arrays):
        check_arraylike("concatenate", *arrays)
    if not len(arrays):
        raise ValueError("concatenate needs at least one array")
    arrays = _as_dtype(arrays, dtype)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    return join(arrays, axis)


def _is_one_array(arrays: Any) -> bool:
    """Whether a sequence argument of the joining functions is one array (joined along its first axis, as JAX's),
    rather than a list or tuple of arrays (whose elements JAX checks)."""
    return is_array(arrays) or isinstance(arrays, np.ndarray)


def stack(arrays: Sequence[Any], axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """Join arrays along a new axis (as ``jnp.stack``); the arrays must have one shape, ``dtype`` converts them."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if type(arrays) in (list, tuple) and arrays and dtype is None and type(axis) is int \
            and all([type(a) is Array and eager_unsharded(a) for a in arrays]):
        # Eagerly, one compiled call instead of a reshape per array and the concatenation (JAX dispatches all three)
        return _stack_compiled(axis, *arrays)
    if not _is_one_array(arrays):
        check_arraylike("stack", *arrays)
    return _core.stack(_as_dtype(arrays, dtype), axis)  # in _core: asarray stacks nested lists of arrays with it


@compiled_whole(static_argnames=("axis",))
def _stack_of(axis: int, *arrays: Any) -> Any:
    return _core.stack(arrays, axis)


_stack_compiled = _stack_of.outside_traces  # type: ignore[attr-defined]  # (stack: Arrays outside traces)


def hstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """The arrays joined column-wise: along axis 1, or axis 0 for 1-D arrays (as ``jnp.hstack``)."""
    if not _is_one_array(tup):
        check_arraylike("hstack", *tup)
    arrays = [_rank_at_least(a, 1) for a in tup]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """The arrays joined row-wise, 1-D ones as rows (as ``jnp.vstack``)."""
    if not _is_one_array(tup):
        check_arraylike("vstack", *tup)
    return concatenate([_rank_at_least(a, 2) for a in tup], 0, dtype=dtype)


def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack along the third axis (1-D and 2-D inputs are promoted to 3-D first)."""
    if not _is_one_array(tup):
        check_arraylike("dstack", *tup)
    def to3(a):
        a = asarray(a)
        if a.ndim == 0:
            return reshape(a, (1, 1, 1))
        if a.ndim == 1:
            return reshape(a, (1, a.shape[0], 1))
        if a.ndim == 2:
            return reshape(a, tuple(a.shape) + (1,))
        return a
    return concatenate([to3(a) for a in tup], 2, dtype=dtype)


def column_stack(tup: Sequence[Any]) -> Any:
    """Stack 1-D arrays as columns (2-D arrays are joined as they are)."""
    if not _is_one_array(tup):
        check_arraylike("column_stack", *tup)
    cols = []
    for a in tup:
        a = asarray(a)
        # JAX's atleast_2d(a).T below two dimensions: a scalar (one array's element) is a 1x1 column
        cols.append(reshape(a, (a.shape[0] if a.ndim else 1, 1)) if a.ndim < 2 else a)
    return concatenate(cols, 1)


@compiled_whole(static_argnames=("axis",))
def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` appended (flattened when ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)  # a list is ravel's refusal, as in JAX
    return concatenate([arr, values], axis)


def _block_depth(arrays: Any) -> int:
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError("toolkit.numpy.block does not allow empty list arguments.")
        depths = {_block_depth(a) for a in arrays}
        if len(depths) != 1:
            raise ValueError("Mismatched list depths in toolkit.numpy.block")
        return 1 + depths.pop()
    if isinstance(arrays, tuple):
        raise TypeError("toolkit.numpy.block does not allow tuples.")
    return 0


def _block(arrays: Any, depth: int, ndim: int) -> Any:
    if not isinstance(arrays, list):
        a = asarray(arrays)
        return lax_structural.reshape(a, (1,) * (ndim - a.ndim) + tuple(a.shape)) if a.ndim < ndim else a
    parts = [_block(a, depth - 1, ndim) for a in arrays]
    return concatenate(parts, axis=-depth)


def _max_ndim(arrays: Any) -> int:
    if isinstance(arrays, list):
        return max(_max_ndim(a) for a in arrays)
    return np.ndim(arrays) if not is_array(arrays) else arrays.ndim


@compiled_whole()
def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks (innermost lists concatenate along the last axis)."""
    depth = _block_depth(arrays)
    return _block(arrays, depth, max(depth, _max_ndim(arrays)))


# --- splitting ------------------------------------------------------------------------------------

def _split(a: Any, indices_or_sections: Any, axis: int, even: bool, name: str) -> list[Any]:
    check_arraylike(name, a)
    a = asarray(a)
    axis = canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: the number of sections must be positive, got {sections}")
        base, extra = divmod(n, sections)
        if even and not shape_poly.definitely_equal(extra, 0):
            raise ValueError(f"{name}: array split does not result in an equal division: axis {axis} of size {n} "
                             f"into {sections} sections")
        # Section i starts at i*base + min(i, extra): the first `extra` sections get one more element.
        bounds = [i * base + shape_poly.min_dim(i, extra) for i in range(sections)] + [n]
    else:
        points = [p if shape_poly.is_symbolic_dim(p) else int(p) for p in indices_or_sections]
        bounds = [0] + [shape_poly.min_dim(shape_poly.max_dim(p + n if p < 0 else p, 0), n) for p in points] + [n]
    if all(isinstance(b, int) for b in bounds) and bounds == sorted(bounds):
        # One split equation, as JAX's jnp.split: its transpose is one concatenate, not a pad per piece.
        return lax_structural.split(a, [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])], axis)
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * a.ndim
        index[axis] = slice(lo, shape_poly.max_dim(lo, hi))
        out.append(getitem(a, tuple(index)))
    return out


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections (an int, which must divide the axis) or at the given indices."""
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like ``split`` but sections may differ in size by one (the first ones are larger)."""
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 1 (axis 0 for 1-D arrays), as ``jnp.hsplit``."""
    check_arraylike("hsplit", ary)
    ary = asarray(ary)
    return _split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0, True, "hsplit")


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 0, as ``jnp.vsplit``."""
    return _split(ary, indices_or_sections, 0, True, "vsplit")


@compiled_whole(static_argnames=('axis',))
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    check_arraylike("unstack", x)
    x = asarray(x)
    if not -x.ndim <= int(axis) < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    axis = int(axis) % x.ndim
    moved = moveaxis(x, axis, 0)
    return tuple(squeeze(lax_structural.slice(moved, (i,) + (0,) * (x.ndim - 1),
                                                     (i + 1,) + tuple(moved.shape[1:])), 0)
                 for i in range(x.shape[axis]))


def _axis_slice(a: Any, axis: int, lo: int | None, hi: int | None, step: int | None = None) -> Any:
    index = [slice(None)] * a.ndim
    index[axis] = slice(lo, hi, step)
    return getitem(a, tuple(index))


# --- flips, rolls, rotations ----------------------------------------------------------------------

@compiled_whole(static_argnames=("axis",), lists_as_tuples=True)
def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes when ``None``)."""
    check_arraylike("flip", m)
    m = asarray(m)
    axes = canonical_axes(axis, m.ndim)
    return lax_structural.rev(m, axes) if axes else m


@compiled_whole(lists_as_tuples=True)
def fliplr(m: Any) -> Any:
    """``m`` with its columns (axis 1) reversed (as ``jnp.fliplr``); rank below 2 raises ``ValueError``."""
    check_arraylike("fliplr", m)
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("fliplr needs an array of rank at least 2")
    return flip(m, 1)


@compiled_whole(lists_as_tuples=True)
def flipud(m: Any) -> Any:
    """``m`` with its rows (axis 0) reversed (as ``jnp.flipud``); a scalar raises ``ValueError``."""
    check_arraylike("flipud", m)
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("flipud needs an array of rank at least 1")
    return flip(m, 0)


@compiled_whole(static_argnames=("k", "axes"))
def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards the second)."""
    check_arraylike("rot90", m)
    m = asarray(m)
    a0, a1 = canonical_axis(axes[0], m.ndim), canonical_axis(axes[1], m.ndim)
    if a0 == a1:
        raise ValueError("rot90: axes must be different")
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Shift elements along ``axis`` with wrap-around (``None``: the flattened array).

    ``shift`` may be a traced integer scalar (lowered to a ``dynamic_slice`` of the doubled array).
    """
    check_arraylike("roll", a)
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    # As JAX's: integer shifts select the program (its _roll_static), an array shift is traced (_roll_dynamic);
    # an eager call is that one program either way.
    if isinstance(shift, (int, np.integer)) or (isinstance(shift, (tuple, list))
                                                and all(isinstance(s, (int, np.integer)) for s in shift)):
        static = int(shift) if isinstance(shift, (int, np.integer)) else tuple(int(s) for s in shift)
        return _roll_static(a, static, tuple(int(x) for x in axes))
    return _roll_dynamic(a, shift if is_array(shift) or shape_poly.is_symbolic_dim(shift) else asarray(shift), axes)


def _roll_along(a: Any, shift: Any, axes: tuple) -> Any:
    """``roll(a, shift, axes)`` for an array ``a`` and a tuple of axes: the shifts and axes broadcast together
    (numpy's and JAX's: several shifts of one axis add up), each pair rolled in turn."""
    scalar = isinstance(shift, (int, np.integer)) or shape_poly.is_symbolic_dim(shift) or \
        (is_array(shift) and shift.ndim == 0)
    if is_array(shift) and shift.ndim > 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = (shift,) if scalar else tuple(shift)
    # Broadcast as numpy's shapes: one of either pairs with each of the other, also with none (fftshift of a 0-d).
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    elif len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, ax in zip(shifts, axes):
        ax = canonical_axis(ax, a.ndim)
        n = a.shape[ax]
        if shape_poly.definitely_equal(n, 0):
            continue
        if isinstance(s, (int, np.integer)) and type(n) is int:
            s = int(s) % n
            if s:
                a = lax_structural.concatenate([_axis_slice(a, ax, n - s, n), _axis_slice(a, ax, 0, n - s)], ax)
        else:
            # A traced shift, or a symbolic size or shift: the amount is known at run time only.
            if isinstance(s, (int, np.integer)) or shape_poly.is_symbolic_dim(s):
                s = lax_structural.dimension_as_value(s, np.int32) if shape_poly.is_symbolic_dim(s) else np.int32(s)
            # Any dtype converts to int32 as JAX's _roll_dynamic converts it (a float shift truncates, True is 1).
            if s.dtype != dtypes.int32 or getattr(s, "weak_type", False):
                s = lax_elementwise.convert_element_type(s, dtypes.int32)
            size = lax_structural.dimension_as_value(n, np.int32) if shape_poly.is_symbolic_dim(n) else np.int32(n)
            start = ufuncs.remainder(ufuncs.subtract(size, ufuncs.remainder(s, size)), size)
            doubled = lax_structural.concatenate([a, a], ax)
            starts = [np.int32(0)] * a.ndim
            starts[ax] = start
            a = lax_structural.clamped_dynamic_slice(doubled, starts, a.shape)
    return a


_roll_static = compiled_whole(static_argnames=("shift", "axes"))(_roll_along)
_roll_dynamic = compiled_whole(static_argnames=("axes",))(_roll_along)


# --- repetition -----------------------------------------------------------------------------------

def tile(A: Any, reps: Any) -> Any:
    """Repeat ``A`` ``reps`` times per axis (numpy's rank promotion on both sides)."""
    check_arraylike("tile", A)
    A = asarray(A)
    def count(r: Any) -> Any:
        return r if shape_poly.is_symbolic_dim(r) else int(r)  # symbolic counts (x.shape[0]) broadcast at run time

    scalar = isinstance(reps, (int, np.integer)) or shape_poly.is_symbolic_dim(reps)
    reps = (count(reps),) if scalar else tuple(count(r) for r in reps)
    if any(type(r) is int and r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(A.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - A.ndim) + tuple(A.shape)
    # Broadcast to (r0, d0, r1, d1, ...) and merge each pair.
    expanded = []
    dims = []
    for i, (r, d) in enumerate(zip(reps, shape)):
        expanded += [r, d]
        dims.append(2 * i + 1)
    A = reshape(A, shape)
    out = lax_structural.broadcast_in_dim(A, tuple(expanded), tuple(dims))
    return reshape(out, tuple(r * d for r, d in zip(reps, shape)))


def repeat(a: Any, repeats: Any, axis: int | None = None, *, total_repeat_length: int | None = None,
           out_sharding: Any = None) -> Any:
    """Repeat each element ``repeats`` times (an int, or one count per element), as ``jnp.repeat``.

    ``total_repeat_length``: the result's length along ``axis``; a longer repetition is cut there, a shorter one
    is padded with the axis's last element (JAX's). ``repeats`` may be a traced integer array (one count, or one
    per element) only when ``total_repeat_length`` is given, which fixes the result's shape: JAX's algorithm
    (:func:`_repeat_by_array`) then finds each output position's source element at run time; without it a
    traced ``repeats`` is JAX's ``ConcretizationTypeError``. A 0-d ``a`` with an ``axis`` gives a 1-d result
    of ``a`` (any axis, as JAX's). ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under
    ``toolkit.set_mesh``): the result's type on Explicit mesh axes; it is computed with those axes Auto and
    resharded, as JAX's. Under a mesh with Explicit axes and no ``out_sharding``, ``a``'s type is kept, and
    repeating along a sharded dimension is JAX's ``ValueError``.
    """
    if shape_poly.is_symbolic_dim(repeats) or isinstance(repeats, (int, np.integer)):
        check_arraylike("repeat", a)
    else:
        check_arraylike("repeat", a, repeats)  # a list of counts is refused too, as in JAX
    if axis is not None and np.ndim(a) == 0:
        a, axis = asarray(a), operator.index(axis)  # JAX's: a scalar's axis is not checked against its rank
    else:
        a, axis = _flatten_if_none(a, axis)
    by_array = is_array(repeats) and total_repeat_length is not None
    if is_array(repeats) and not by_array:
        if known_value(repeats) is None:
            aval = aval_of(repeats)
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: traced array with shape "
                f"{aval.dtype.name}{list(aval.shape)}\nWhen jit-compiling toolkit.numpy.repeat, the total number of "
                "repeats must be static. To fix this, either specify a static value for `repeats`, or pass a static "
                "value to `total_repeat_length`.")
        repeats = np.asarray(known_value(repeats))  # a concrete array: static counts, as JAX's concrete_or_error
    if shape_poly.is_symbolic_dim(repeats) and total_repeat_length is not None:
        raise ValueError("jnp.repeat with a non-constant `repeats` is supported only when `total_repeat_length` "
                         f"is None. ({repeats=} {total_repeat_length=})")
    if not by_array and not shape_poly.is_symbolic_dim(repeats):
        counts = np.asarray(repeats)
        if counts.dtype.kind not in "iu":
            raise TypeError(f"repeat: repeats must be integers, got {repeats!r}")
        repeats = int(counts) if counts.ndim == 0 else tuple(int(c) for c in counts.ravel())
    if out_sharding is None:
        context = get_abstract_mesh()
        if context is not None and context.explicit_axes:
            # JAX's: the result keeps a's type, computed with the Explicit axes Auto; the axis repeated along
            # must not be sharded (its pieces would change size).
            spec = spec_of(aval_of(a))
            if spec[axis] is not None:
                raise ValueError("Please pass sharding to `jnp.repeat` via `out_sharding` parameter.")
            out_sharding = PartitionSpec(*spec)
    if by_array:
        total = operator.index(total_repeat_length)  # type: ignore[arg-type]  # not None: by_array
        if out_sharding is None:
            return _repeat_by_array(a, repeats, axis=axis, total_repeat_length=total)
        shape = tuple(a.shape[:axis]) + (total,) + tuple(a.shape[axis + 1:])
        return sharding_types.with_out_sharding(
            _repeat_by_array, (a, repeats), {"axis": axis, "total_repeat_length": total}, out_sharding, "repeat",
            shape, how="auto")
    if out_sharding is None:
        return _repeat(a, repeats=repeats, axis=axis, total_repeat_length=total_repeat_length)
    if shape_poly.is_symbolic_dim(repeats):
        length = a.shape[axis] * repeats
    elif total_repeat_length is not None:
        length = int(total_repeat_length)
    else:
        length = repeats * a.shape[axis] if isinstance(repeats, int) else sum(repeats)
    shape = tuple(a.shape[:axis]) + (length,) + tuple(a.shape[axis + 1:])
    return sharding_types.with_out_sharding(
        _repeat, (a,), {"repeats": repeats, "axis": axis, "total_repeat_length": total_repeat_length},
        out_sharding, "repeat", shape, how="auto")


def _repeat(a: Any, *, repeats: Any, axis: int, total_repeat_length: int | None) -> Any:
    """:func:`repeat` of an array along a canonical ``axis``; ``repeats`` an int, a tuple or a symbolic size."""
    if a.ndim == 0:  # JAX's: one count, the scalar that many times (or total_repeat_length times)
        counts = np.ravel(repeats)
        if counts.shape != (1,):
            raise ValueError("`repeat` with a scalar parameter `a` is only implemented for scalar values of the "
                             "parameter `repeats`.")
        return creation.full([int(counts[0]) if total_repeat_length is None else total_repeat_length], a)
    n = a.shape[axis]
    if shape_poly.is_symbolic_dim(repeats):
        return _repeat_each(a, axis, repeats)
    counts = np.asarray(repeats)
    if (counts < 0).any():
        raise ValueError("repeat: repeats may not be negative")
    if counts.ndim == 0 and (total_repeat_length is None or total_repeat_length == n * int(counts)):
        return _repeat_each(a, axis, int(counts))
    if counts.ndim == 0:
        counts = np.full(n, int(counts))
    elif counts.shape != (n,) and counts.size != 1:
        raise ValueError(f"repeat: {counts.size} repeat counts for axis {axis} of size {n}")
    positions = np.repeat(np.arange(n), np.broadcast_to(counts, (n,)))
    if total_repeat_length is not None:
        # JAX's: cut at the length, or pad with the last element (its gather index runs out at n - 1).
        total = int(total_repeat_length)
        if n == 0:
            return a
        if total == 0:
            return _empty_repeat(a, axis)
        positions = np.concatenate([positions[:total], np.full(max(0, total - positions.size), n - 1)])
    index: list[slice | np.ndarray] = [slice(None)] * a.ndim
    index[axis] = positions
    return getitem(a, tuple(index))


def _empty_repeat(a: Any, axis: int) -> Any:
    # JAX's total_repeat_length=0: a new empty array of a's dtype (never weakly typed)
    return asarray(np.zeros(tuple(a.shape[:axis]) + (0,) + tuple(a.shape[axis + 1:]), a.dtype))


def _repeat_by_array(a: Any, repeats: Any, *, axis: int, total_repeat_length: int) -> Any:
    """:func:`repeat` by a traced ``repeats`` (one count, or one per element along ``axis``) to a static length:
    JAX's algorithm, which needs no intermediate of size ``sum(repeats)``.

    The exclusive cumulative sum of the counts is where each element's run starts ([1, 2, 0, 5] -> [0, 1, 3, 3]);
    a 1 is added at each start that falls inside the result (later starts are dropped, as a scatter drops
    out-of-range indices), and the inclusive cumulative sum of those marks, less one, is each output position's
    source element ([1, 1, 0, 2, 0, ...] -> [0, 1, 1, 3, 3, ...]): positions past ``sum(repeats)`` get the last
    element, and a longer repetition is cut. The gather's transpose gives the gradient with respect to ``a``.
    """
    from toolkit.numpy.reductions import cumsum  # function-level: reductions imports this module (a cycle)
    from toolkit.numpy.take import take  # function-level: take imports this module (a cycle)
    repeats = ravel(repeats)
    if a.ndim != 0:
        repeats = _core.broadcast_to(repeats, (a.shape[axis],))
    if a.ndim == 0:
        if repeats.shape != (1,):
            raise ValueError("`repeat` with a scalar parameter `a` is only implemented for scalar values of the "
                             "parameter `repeats`.")
        return creation.full([total_repeat_length], a)
    if total_repeat_length == 0:
        return _empty_repeat(a, axis)
    if a.shape[axis] == 0:
        return a
    exclusive_repeats = scatter.at_property(roll(repeats, 1))[0].set(0)
    run_starts = cumsum(exclusive_repeats)
    marks = scatter.at_property(creation.zeros([total_repeat_length], dtype="int32"))[run_starts].add(1)
    return take(a, ufuncs.subtract(cumsum(marks), 1), axis=axis)
def _repeat_each(a: Any, axis: int, r: Any) -> Any:
    """Every element ``r`` times along ``axis`` (``r`` an int or a symbolic size): broadcast, then merge."""
    shape = list(a.shape)
    expanded = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
    out = lax_structural.broadcast_in_dim(a, tuple(expanded), tuple(i for i in range(a.ndim + 1) if i != axis + 1))
    shape[axis] = a.shape[axis] * r
    return reshape(out, tuple(shape))
