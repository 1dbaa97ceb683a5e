"""Array editing of ``jax.numpy``, functional (each returns a new array; numpy's in-place forms ask for
``inplace=False`` as JAX's do): ``delete``, ``insert``, ``place``, ``put``, ``put_along_axis``,
``fill_diagonal``, ``compress``, ``extract``, ``choose``, ``resize``, ``trim_zeros``, ``diagflat``,
``dsplit``, ``array_equiv``, and ``partition``/``argpartition`` (through ``lax.top_k``).

Example::

    tnp.delete(x, 1, axis=0)                          # x without its second row
    tnp.put(x, tnp.asarray([0, 2]), 9.0, inplace=False)
    tnp.compress(mask, x, axis=0, size=3)             # static shape under jit
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import sorting as lax_sorting
from toolkit.lax import structural as lax_structural
from toolkit.numpy import creation, index_tricks, nonzero_indices, reductions, scatter, shapes, sorting, ufuncs
from toolkit.numpy._core import asarray, broadcast_to, canonical_axis, check_arraylike, convert, is_array


def _array(name: str, *xs: Any) -> list[Any]:
    check_arraylike(name, *xs)
    return [x if is_array(x) else asarray(x) for x in xs]


def _concrete(x: Any, what: str) -> np.ndarray:
    value = known_value(x)  # a concrete trace (eager grad) knows it
    if value is None:
        raise ConcretizationTypeError(f"{what} must be concrete (a value known when tracing), not a traced array")
    return np.asarray(value)


def _tile_to_size(arr: Any, size: int) -> Any:
    n = arr.shape[0]
    if n != size:
        arr = shapes.tile(arr, -(-size // n))[:size]
    return arr


def _axis_index(axis: int, index: Any) -> tuple:
    return (slice(None),) * axis + (index,)


def delete(arr: Any, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries ``obj`` (an int, a slice, integer indices or a boolean mask) along
    ``axis`` (``None``: of the flattened array), as ``jnp.delete``. Index arrays must be concrete unless
    ``assume_unique_indices`` (then they may be traced: the result's length is static)."""
    (a,) = _array("delete", arr)
    if axis is None:
        a, axis = shapes.ravel(a), 0
    axis = canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    try:
        index = operator.index(obj)
    except TypeError:
        pass
    else:
        index = canonical_axis(index, n, "index")
        return shapes.concatenate([a[_axis_index(axis, slice(0, index))], a[_axis_index(axis, slice(index + 1, None))]],
                                  axis=axis)
    if isinstance(obj, slice):
        obj, assume_unique_indices = np.arange(n)[obj], True
    check_arraylike("delete", a, obj)
    if dtypes.is_integer(np.dtype(obj.dtype)) and assume_unique_indices:
        idx = shapes.ravel(asarray(obj))
        idx = ufuncs.clip(ufuncs.where(ufuncs.less(idx, 0), ufuncs.add(idx, n), idx), 0, n)
        idx = ufuncs.subtract(sorting.sort(idx), lax_structural.iota(idx.dtype, idx.shape[0]))
        keep = lax_structural.iota(idx.dtype, n - idx.shape[0])
        keep = ufuncs.add(keep, reductions.sum(ufuncs.greater_equal(keep[None, :], idx[:, None]), 0, dtype=idx.dtype))
        return a[_axis_index(axis, keep)]
    obj_array = _concrete(obj, "the 'obj' array argument of jnp.delete()")
    if np.issubdtype(obj_array.dtype, np.integer):
        mask = np.ones(n, dtype=bool)
        mask[obj_array] = False
    elif obj_array.dtype == bool:
        if obj_array.shape != (n,):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be one-dimensional "
                             "with length matching specified axis.")
        mask = ~obj_array
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={obj_array.dtype}; must be integer or bool.")
    return a[_axis_index(axis, np.flatnonzero(mask))]


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` inserted before the indices ``obj`` (an int, a slice or 1-D integer indices)
    along ``axis`` (``None``: the flattened array), as ``jnp.insert``; ``values`` take ``arr``'s dtype."""
    a, _, values = _array("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    if axis is None:
        a, axis = shapes.ravel(a), 0
    axis = canonical_axis(axis, a.ndim)
    n_input = a.shape[axis]
    indices = asarray(np.arange(*obj.indices(n_input))) if isinstance(obj, slice) else asarray(obj)
    if indices.ndim > 1:
        raise ValueError(f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}")
    if not dtypes.is_integer(indices.dtype):
        if indices.size == 0 and not is_array(obj):
            indices = convert(indices, dtypes.default_int_dtype())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values = convert(values, a.dtype)
    if values.ndim < a.ndim:
        values = shapes.reshape(values, (1,) * (a.ndim - values.ndim) + tuple(values.shape))
    if indices.size == 1:
        index = shapes.ravel(indices)[0]
        if indices.ndim == 0:
            values = shapes.moveaxis(values, 0, axis)
        indices = broadcast_to(index, (values.shape[axis],))
    n_insert = np.broadcast_shapes(tuple(indices.shape), (values.shape[axis],))[0]
    out_shape = list(a.shape)
    out_shape[axis] += n_insert
    out = creation.zeros(tuple(out_shape), a.dtype)
    indices = ufuncs.clip(ufuncs.where(ufuncs.less(indices, 0), ufuncs.add(indices, n_input), indices), 0, n_input)
    values_at = scatter.at_property(indices)[sorting.argsort(indices)].add(
        lax_structural.iota(indices.dtype, n_insert))
    keep = scatter.at_property(creation.ones((n_input + n_insert,), bool))[values_at].set(False)
    arr_at = nonzero_indices.nonzero(keep, size=n_input)[0]
    values = broadcast_to(values, tuple(n_insert if i == axis else d for i, d in enumerate(out_shape)))
    out = scatter.at_property(out)[_axis_index(axis, values_at)].set(values)
    return scatter.at_property(out)[_axis_index(axis, arr_at)].set(a)


def _no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """``arr`` with the positions where ``mask`` is true set from ``vals`` in order (repeated as needed),
    as ``jnp.place``; needs ``inplace=False``."""
    data, mask, vals = _array("place", arr, mask, vals)
    vals = shapes.ravel(vals)
    _no_inplace("place", inplace)
    if data.size != mask.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    indices = nonzero_indices.nonzero(shapes.ravel(mask), size=mask.size, fill_value=mask.size)[0]
    flat = scatter.at_property(shapes.ravel(data))[indices].set(_tile_to_size(vals, indices.shape[0]), mode="drop")
    return shapes.reshape(flat, data.shape)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed), as ``jnp.put``; ``mode``
    ``None`` drops out-of-range indices, ``"clip"`` clamps and ``"wrap"`` wraps them ("raise" is not
    supported); needs ``inplace=False``."""
    _no_inplace("put", inplace)
    arr, ind, v = _array("put", a, ind, v)
    ind, v = shapes.ravel(ind), shapes.ravel(v)
    if not arr.size or not ind.size or not v.size:
        return arr
    v = _tile_to_size(v, ind.shape[0])
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind, scatter_mode = ufuncs.clip(ind, 0, arr.size - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind, scatter_mode = ufuncs.remainder(ind, arr.size), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return scatter.at_property(arr)[index_tricks.unravel_index(ind, arr.shape)].set(v, mode=scatter_mode)


@compiled_whole(static_argnames=("axis", "inplace", "mode"))
def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, inplace: bool = True, *,
                   mode: str | None = None) -> Any:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
    ``take_along_axis``), as ``jnp.put_along_axis``; needs ``inplace=False``."""
    _no_inplace("put_along_axis", inplace)
    arr, indices, values = _array("put_along_axis", arr, indices, values)
    original_shape = arr.shape
    if axis is None:
        arr, axis = shapes.ravel(arr), 0
    if arr.ndim != indices.ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                         f"arr.ndim={arr.ndim} and indices.ndim={indices.ndim}.")
    axis = canonical_axis(axis, arr.ndim)
    try:
        values = broadcast_to(values, indices.shape)
    except ValueError as e:
        raise ValueError("put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
                         f"values.shape={values.shape} and indices.shape={indices.shape}.") from e
    idx = list(index_tricks.indices(arr.shape, sparse=True))
    idx[axis] = indices
    return shapes.reshape(scatter.at_property(arr)[tuple(idx)].set(values, mode=mode), original_shape)


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """``a`` with its main diagonal set to ``val`` (a scalar or values repeated along it), as
    ``jnp.fill_diagonal``; needs ``inplace=False`` (``wrap=True`` is not supported)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a, val = _array("fill_diagonal", a, val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and not all(n == a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = index_tricks.diag_indices(n, a.ndim)
    return scatter.at_property(a)[idx].set(val if val.ndim == 0 else _tile_to_size(shapes.ravel(val), n))


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None, fill_value: Any = 0,
             out: None = None) -> Any:
    """The slices of ``a`` along ``axis`` (``None``: the flattened array) where the 1-D ``condition`` is
    true, as ``jnp.compress``; with a static ``size`` the first ``size`` of them, padded with
    ``fill_value`` (traceable), else ``condition`` must be concrete."""
    condition, arr, fill_value = _array("compress", condition, a, fill_value)
    condition = convert(condition, np.bool_)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if condition.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis, arr = 0, shapes.ravel(arr)
    else:
        arr = shapes.moveaxis(arr, axis, 0)
    extra = condition[arr.shape[0]:]
    condition = condition[:arr.shape[0]]
    arr = arr[:condition.shape[0]]
    if size is None:
        if np.any(_concrete(extra, "compress's condition")):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[np.flatnonzero(_concrete(condition, "compress's condition without size="))]
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array axis;"
                         f" got size={size} for a.shape[axis]={arr.shape[0]}")
    else:
        mask = shapes.reshape(condition, (condition.shape[0],) + (1,) * (arr.ndim - 1))
        arr = ufuncs.where(mask, arr, convert(fill_value, arr.dtype))
        result = arr[sorting.argsort(condition, stable=True, descending=True)][:size]
    return shapes.moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of ``arr`` (flattened) where ``condition`` (flattened) is true, as ``jnp.extract``;
    ``size``/``fill_value`` as ``compress``'s."""
    check_arraylike("extreact", condition, arr, fill_value)  # sic: JAX 0.10.2's name for the check
    return compress(shapes.ravel(condition), shapes.ravel(arr), size=size, fill_value=fill_value)


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Elementwise ``choices[a]`` (all broadcast together), as ``jnp.choose``: ``mode`` ``"raise"`` needs a
    concrete ``a`` and checks its range, ``"wrap"`` wraps and ``"clip"`` clamps it."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a, *choices = _array("choose", a, *choices)
    if not dtypes.is_integer(a.dtype):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        values = _concrete(a, "jnp.choose's index array with mode='raise' (use mode='wrap' or mode='clip' under jit)")
        if np.any((values < 0) | (values >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = ufuncs.remainder(a, n)
    elif mode == "clip":
        a = ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    a, *choices = shapes.broadcast_arrays(a, *choices)
    return shapes.stack(choices)[(a,) + tuple(index_tricks.indices(a.shape, sparse=True))]


@compiled_whole(static_argnames=("new_shape",))
def resize(a: Any, new_shape: Any) -> Any:
    """``a`` (flattened) repeated or cut to fill ``new_shape``, as ``jnp.resize``."""
    check_arraylike("resize", a)
    new_shape = (operator.index(new_shape),) if not isinstance(new_shape, (tuple, list)) else tuple(
        operator.index(d) for d in new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = shapes.ravel(asarray(a))
    new_size = int(np.prod(new_shape))
    if arr.size == 0 or new_size == 0:
        return creation.zeros(new_shape, arr.dtype)
    return shapes.reshape(_tile_to_size(arr, new_size), new_shape)


def trim_zeros(filt: Any, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Any:
    """``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros along ``axis`` (all axes by
    default), as ``jnp.trim_zeros``; ``filt`` must be concrete (the result's shape depends on it)."""
    (filt,) = _array("trim_zeros", filt)
    values = _concrete(filt, "the 'filt' argument of trim_zeros()")
    axes = set(range(values.ndim) if axis is None else
               (canonical_axis(ax, values.ndim) for ax in ((axis,) if isinstance(axis, int) else axis)))
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt
    index = []
    for ax in range(values.ndim):
        if ax not in axes:
            index.append(slice(None))
            continue
        mask = np.any(values != 0, axis=tuple(i for i in range(values.ndim) if i != ax))
        if not mask.any():
            index.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in trim else None
        stop = values.shape[ax] - int(mask[::-1].argmax()) if "b" in trim else None
        index.append(slice(start, stop))
    return filt[tuple(index)]


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal, as ``jnp.diagflat``."""
    check_arraylike("diagflat", v)
    flat = shapes.ravel(asarray(v))
    n = flat.shape[0] + abs(k)
    rows = np.arange(flat.shape[0])
    positions = rows + k + rows * n if k >= 0 else rows + (rows - k) * n
    out = scatter.at_property(creation.zeros((n * n,), flat.dtype))[positions].set(flat)
    return shapes.reshape(out, (n, n))


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``ary`` split along its third axis (``split(ary, indices_or_sections, axis=2)``), as ``jnp.dsplit``;
    ``ary`` must have at least 3 dimensions."""
    (a,) = _array("dsplit", ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return shapes.split(a, indices_or_sections, axis=2)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether ``a1`` and ``a2`` broadcast together and are equal everywhere, as ``jnp.array_equiv``
    (``False`` when their shapes do not broadcast)."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(tuple(a1.shape), tuple(a2.shape))
    except ValueError:
        return asarray(False)
    return reductions.all(ufuncs.equal(a1, a2))


def _partition_operand(name: str, a: Any, kth: int, axis: int) -> tuple[Any, int, int]:
    (arr,) = _array(name, a)
    if dtypes.is_complex(arr.dtype):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonical_axis(axis, arr.ndim)
    kth = canonical_axis(kth, arr.shape[axis], "kth")
    return shapes.swapaxes(arr, axis, -1), kth, axis


def _negated_for_bottom(arr: Any) -> Any:
    if dtypes.is_unsigned(arr.dtype):  # -(x + 1) maps unsigned 0 to the largest value, keeping the order reversed
        return ufuncs.negative(ufuncs.add(arr, np.asarray(1, arr.dtype)))
    if dtypes.is_bool(arr.dtype):  # JAX negates, which bool refuses
        raise TypeError("partition: neg does not accept dtype bool (JAX's error); convert the array to an integer type")
    return ufuncs.negative(arr)


@compiled_whole(static_argnames=("kth", "axis"))
def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """``a`` rearranged along ``axis`` so that position ``kth`` holds the value it would have when sorted,
    smaller values before it and larger after (each side in ``top_k``'s order), as ``jnp.partition``."""
    arr, kth, axis = _partition_operand("partition", a, kth, axis)
    bottom = lax_sorting.top_k(_negated_for_bottom(arr), kth + 1)[0]
    bottom = _negated_for_bottom(bottom)
    top = lax_sorting.top_k(arr, arr.shape[-1] - kth - 1)[0]
    return shapes.swapaxes(shapes.concatenate([bottom, top], axis=-1), -1, axis)


@compiled_whole(static_argnames=("kth", "axis"))
def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """The indices that ``partition(a, kth, axis)`` would take along ``axis``, as ``jnp.argpartition``."""
    check_arraylike("partition", a)  # JAX's name for argpartition's check
    arr, kth, axis = _partition_operand("argpartition", a, kth, axis)
    bottom_ind = lax_sorting.top_k(_negated_for_bottom(arr), kth + 1)[1]
    # The top indices come from a 0/1 proxy (0 at the bottom's positions): duplicates cannot be taken twice.
    proxy = put_along_axis(creation.ones(arr.shape, np.float32), bottom_ind, 0.0, axis=-1, inplace=False)
    top_ind = lax_sorting.top_k(proxy, arr.shape[-1] - kth - 1)[1]
    return shapes.swapaxes(shapes.concatenate([bottom_ind, top_ind], axis=-1), -1, axis)
