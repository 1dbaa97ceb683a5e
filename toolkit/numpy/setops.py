"""Set operations of ``jax.numpy``: ``isin`` (JAX's methods: all pairs by default, or by bisection or a co-sort),
``unique`` (static output shape under ``jit`` with ``size=``) and the two-array set functions (``intersect1d``
looks values up by bisection).

Example::

    tnp.isin(labels, tnp.asarray([1, 3]))      # True where a label is 1 or 3
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from toolkit.array import Array
from toolkit.core import dtypes
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import sorting as lax_sorting
from toolkit.lax import structural as lax_structural
from toolkit.numpy import creation, reductions, scatter, shapes, sorting, statistics, take, ufuncs
from toolkit.numpy import nonzero_indices
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.numpy._core import asarray, check_arraylike, convert, result_dtype
from toolkit.core.compiled_whole import compiled_whole


@compiled_whole(static_argnames=("assume_unique", "invert", "method"), lists_as_tuples=True)
def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Any:
    """True where ``element`` occurs in ``test_elements``, as ``jnp.isin`` by JAX's ``method``: ``"auto"`` and
    ``"compare_all"`` compare every pair (O(n * m)), ``"binary_search"`` looks each element up in the sorted test
    elements, ``"sort"`` finds equal neighbours in a co-sort (both O((n + m) log(n + m)))."""
    check_arraylike("isin", element, test_elements)
    element, test = asarray(element), shapes.ravel(asarray(test_elements))
    if element.size == 0 or test.size == 0:
        return creation.full(element.shape, invert, np.bool_)
    if method in ("auto", "compare_all"):
        hit = reductions.any(ufuncs.equal(shapes.expand_dims(element, -1), test), -1)
        return ufuncs.logical_not(hit) if invert else hit
    if method not in ("binary_search", "sort"):
        raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', 'binary_search', "
                         "'sort', and 'auto'")
    dtype, _ = result_dtype(element, test)
    flat, test = convert(shapes.ravel(element), dtype), convert(test, dtype)
    if method == "binary_search":
        ordered = sorting.sort(test)
        at = take.take(ordered, sorting.searchsorted(ordered, flat), mode="clip")
        hit = ufuncs.not_equal(flat, at) if invert else ufuncs.equal(flat, at)
    else:
        hit = _isin_by_cosorting(flat, test, assume_unique, invert)
    return shapes.reshape(hit, element.shape)


def _isin_by_cosorting(flat: Any, test: Any, assume_unique: bool, invert: bool) -> Any:
    """JAX's ``method="sort"``: co-sort the (unique) elements with the test elements; an element whose next
    neighbour is equal occurs among them (``invert``: is not equal)."""
    n = flat.shape[0]
    if assume_unique:
        values, back = flat, None
    else:
        values, back = unique(flat, size=n, return_inverse=True, fill_value=reductions.max(test))
    both = lax_structural.concatenate([values, test], 0)
    aux, order = lax_sorting.sort((both, lax_structural.iota(dtypes.int32, both.shape[0])), 0, is_stable=True,
                                  num_keys=1)
    neighbours = (ufuncs.not_equal if invert else ufuncs.equal)(aux[1:], aux[:-1])
    start = creation.ones((n,), np.bool_) if invert else creation.zeros((n,), np.bool_)
    hit = scatter.at_property(start)[order[:-1]].set(neighbours, mode="drop")
    return hit if back is None else take.take(hit, shapes.ravel(back))


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None, fill_value: Any = None,
           sorted: bool = True) -> Any:
    """The sorted unique elements of the flattened ``ar``, as ``jnp.unique``; with ``return_index``,
    ``return_inverse``, ``return_counts`` a tuple adding first indices, the inverse (``ar``'s shape) and counts.

    Without ``size`` the array must be concrete (the count depends on the data); under ``jit`` pass a static
    ``size``: the first ``size`` unique values, padded with ``fill_value`` (by default the smallest value).
    NaNs count as one value when ``equal_nan``.

    With ``axis``, the unique slices along ``axis`` (``(*ar.shape[:axis], n_unique, *ar.shape[axis + 1:])``),
    sorted lexicographically; the indices, inverse and counts are 1-D along that axis (the inverse has
    ``ar.shape[axis]`` entries, not ``ar``'s shape), as JAX's. ``sorted`` is unused, as in JAX.
    """
    check_arraylike("unique", ar)
    del sorted  # the result is always sorted, as JAX's
    if size is None:
        ar = _value_if_known(ar)
    if axis is not None:
        return _unique_along(asarray(ar), return_index, return_inverse, return_counts, axis, equal_nan, size,
                             fill_value)
    if size is not None:
        size = operator.index(size)  # JAX's TypeError for a float or a list
    flat = shapes.ravel(asarray(ar))
    shape = tuple(ar.shape) if hasattr(ar, "shape") else np.shape(ar)
    if type(flat) is Array and flat.shape[0]:
        # Called eagerly: the count from one program, then the rest as one program at that size (bound an
        # operation at a time, a first call compiled ~20 programs). In a trace, the operations join its program.
        fill = None if size is None or fill_value is None else _as_dtype_of(fill_value, flat)
        if size is None:
            # The sort once, as JAX's: the count comes back with what it sorted, and the rest reads those.
            perm, aux, mask, count = _sort_and_count(flat, equal_nan)
            return _unique_from_sorted_whole(perm, aux, mask, return_index, return_inverse, return_counts,
                                             int(count), None, shape)
        return _unique_whole(flat, return_index, return_inverse, return_counts, equal_nan, size, fill, shape)
    return _unique_flat(flat, return_index, return_inverse, return_counts, equal_nan, size, fill_value, shape)


def _sorted_and_firsts(flat: Any, equal_nan: bool) -> tuple[Any, Any, Any]:
    """``(perm, sorted values, mask)``: the stable sort of 1-D ``flat`` and where each distinct value starts."""
    flat = _one_complex_nan(flat)
    perm = sorting.argsort(flat, stable=True)
    aux = take.take(flat, perm)
    return perm, aux, _firsts(aux, equal_nan)


def _one_complex_nan(flat: Any) -> Any:
    """JAX's workaround: a NaN in either part of a complex value becomes nan+0j, so such values sort (and compare)
    as one NaN."""
    if dtypes.is_complex(flat.dtype):
        return ufuncs.where(ufuncs.isnan(flat), asarray(np.asarray(np.nan, flat.dtype)), flat)
    return flat


def _firsts(aux: Any, equal_nan: bool) -> Any:
    """Where each distinct value of the sorted 1-D ``aux`` starts (NaNs one value when ``equal_nan``)."""
    if not aux.shape[0]:
        return asarray(np.zeros((0,), bool))
    differs = ufuncs.not_equal(aux[1:], aux[:-1])
    if equal_nan and dtypes.is_inexact(aux.dtype):
        differs = ufuncs.logical_and(differs, ufuncs.logical_not(
            ufuncs.logical_and(ufuncs.isnan(aux[1:]), ufuncs.isnan(aux[:-1]))))
    return shapes.concatenate([asarray(np.ones((1,), bool)), differs])


@compiled_whole(static_argnames=("equal_nan",))
def _sort_and_count(flat: Any, equal_nan: bool) -> tuple[Any, Any, Any, Any]:
    """:func:`_sorted_and_firsts` of 1-D ``flat`` and how many distinct values it holds (``unique``'s length)."""
    perm, aux, mask = _sorted_and_firsts(flat, equal_nan)
    return perm, aux, mask, reductions.sum(mask, dtype=dtypes.default_int_dtype())


def _unique_flat(flat: Any, return_index: bool, return_inverse: bool, return_counts: bool, equal_nan: bool,
                 size: int | None, fill_value: Any, shape: tuple) -> Any:
    """:func:`unique` of the flattened array ``flat`` (``shape`` the array's shape, for the inverse)."""
    perm, aux, mask = _sorted_and_firsts(flat, equal_nan)
    return _unique_from_sorted(perm, aux, mask, return_index, return_inverse, return_counts, size, fill_value, shape)


def _unique_from_sorted(perm: Any, aux: Any, mask: Any, return_index: bool, return_inverse: bool,
                        return_counts: bool, size: int | None, fill_value: Any, shape: tuple) -> Any:
    """:func:`unique` from :func:`_sorted_and_firsts`'s ``(perm, aux, mask)`` of the flattened array."""
    n = aux.shape[0]
    ind = nonzero_indices.nonzero(mask, size=size)[0] if n else lax_structural.iota(dtypes.default_int_dtype(), 0)
    count = ind.shape[0]
    result = take.take(aux, ind) if n else aux
    if size is not None and fill_value is not None:
        fill = _as_dtype_of(fill_value, result)
        if n:
            valid = ufuncs.less(lax_structural.iota(dtypes.default_int_dtype(), count), reductions.sum(mask))
            result = ufuncs.where(valid, result, fill)
        else:
            result = creation.full((count,), fill, result.dtype)
    extras = []
    if return_index:
        extras.append(take.take(perm, ind) if n else ind)
    if return_inverse or return_counts:
        group = ufuncs.subtract(reductions.cumsum(mask), np.asarray(1, dtypes.default_int_dtype())) if n else ind
        inverse = scatter.at_property(creation.zeros((n,), group.dtype))[perm].set(group) if n else ind
        if return_inverse:
            extras.append(shapes.reshape(inverse, shape))
        if return_counts:
            extras.append(statistics.bincount(inverse, length=count) if n else ind)
    return (result, *extras) if extras else result


_unique_whole = compiled_whole(static_argnames=("return_index", "return_inverse", "return_counts", "equal_nan",
                                                "size", "shape"))(_unique_flat)
_unique_from_sorted_whole = compiled_whole(static_argnames=("return_index", "return_inverse", "return_counts",
                                                            "size", "shape"))(_unique_from_sorted)


# --- unique along an axis: JAX's _unique_sorted_mask and _unique, the slices sorted by a multi-operand lax.sort ---

_UNIQUE_SIZE_HINT = ("To make jnp.unique() compatible with JIT and other transforms, you can specify a concrete value "
                     "for the size argument, which will determine the output size.")


def _unique_along(arr: Any, return_index: bool, return_inverse: bool, return_counts: bool, axis: Any,
                  equal_nan: bool, size: Any, fill_value: Any) -> Any:
    """:func:`unique` with ``axis``: JAX's checks in its order, then one program (eagerly: one to count the
    unique slices, one at that size, as the flattened form)."""
    if size is None:
        if known_value(arr) is None:  # a concrete trace (eager grad) knows it
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where concrete value is expected: traced array with shape "
                f"{np.dtype(arr.dtype).name}[{','.join(map(str, arr.shape))}].\nThe error arose for the first argument of jnp.unique(). "
                + _UNIQUE_SIZE_HINT)
    else:
        if known_value(size) is None:
            raise ConcretizationTypeError(
                "The error arose for the size argument of jnp.unique(). " + _UNIQUE_SIZE_HINT)
        size = operator.index(size)  # JAX's TypeError for a float
    axis = operator.index(axis)  # a float or a tuple: Python's TypeError, as JAX's
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {arr.ndim}")
    axis %= arr.ndim
    if arr.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, fill_value must be specified")
    fill = None if size is None or fill_value is None else fill_value
    if size is None:
        # The count from the concrete data; at that size JAX's size=None results are computed exactly (no padding).
        size = int(_unique_slices_count(arr, axis, equal_nan))
    return _unique_along_sized(arr, return_index, return_inverse, return_counts, axis, equal_nan, size, fill)


def _unique_sorted_mask(ar: Any, axis: int, equal_nan: bool) -> tuple[Any, Any, Any]:
    """``(sorted slices, mask, perm)``: ``ar``'s slices along ``axis`` moved first and sorted lexicographically
    (stable), where each distinct slice starts, and the permutation that sorts them (JAX's ``_unique_sorted_mask``).

    Slices of no elements: one slice, ``perm == [0]``, as in JAX (the unique result then has one empty slice)."""
    aux = shapes.moveaxis(ar, axis, 0)
    if dtypes.is_complex(aux.dtype):
        # JAX's workaround: a NaN in either part becomes nan+0j, so such values sort (and compare) as one NaN.
        aux = ufuncs.where(ufuncs.isnan(aux), asarray(np.asarray(np.nan, aux.dtype)), aux)
    n, *slice_shape = aux.shape
    int_dtype = dtypes.default_int_dtype()
    if math.prod(slice_shape) == 0:
        n = 1
        perm = creation.zeros((1,), int_dtype)
        aux = creation.zeros((1, *slice_shape), aux.dtype)  # aux[perm] of no elements
    else:
        # JAX's lexsort of the slices' columns, the first column primary: one sort with every column a key.
        rows = shapes.reshape(aux, (n, math.prod(slice_shape)))
        columns = [rows[:, j] for j in range(rows.shape[1])]
        perm = lax_sorting.sort((*columns, lax_structural.iota(int_dtype, n)), 0, is_stable=True,
                                num_keys=len(columns))[-1]
        aux = take.take(aux, perm, axis=0)
    if aux.size:
        later, earlier = aux[1:], aux[:-1]
        differs = ufuncs.not_equal(later, earlier)
        if equal_nan and dtypes.is_inexact(aux.dtype):
            # numpy's documented rule (complex too): two NaNs are one value.
            differs = ufuncs.logical_and(differs, ufuncs.logical_not(
                ufuncs.logical_and(ufuncs.isnan(later), ufuncs.isnan(earlier))))
        differs = reductions.any(differs, tuple(range(1, aux.ndim)))
        mask = shapes.concatenate([asarray(np.ones((1,), bool)), differs])
    else:
        mask = creation.zeros((n,), bool)
    return aux, mask, perm


@compiled_whole(static_argnames=("axis", "equal_nan"))
def _unique_slices_count(ar: Any, axis: int, equal_nan: bool) -> Any:
    """How many distinct slices ``ar`` has along ``axis`` (unique's length without ``size``)."""
    return reductions.sum(_unique_sorted_mask(ar, axis, equal_nan)[1], dtype=dtypes.default_int_dtype())


@compiled_whole(static_argnames=("return_index", "return_inverse", "return_counts", "axis", "equal_nan", "size"))
def _unique_along_sized(ar: Any, return_index: bool, return_inverse: bool, return_counts: bool, axis: int,
                        equal_nan: bool, size: int, fill_value: Any) -> Any:
    """:func:`unique` along ``axis`` at a static ``size`` (JAX's ``_unique``): the first ``size`` unique slices,
    padded with ``fill_value`` when given (else with the first one: index 0 pads ``nonzero``)."""
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    int_dtype = dtypes.default_int_dtype()
    if mask.shape[0]:
        ind = nonzero_indices.nonzero(mask, size=size)[0]
    else:  # no slices: nonzero's padding alone (its index arithmetic would divide by the zero length)
        ind = creation.zeros((size,), int_dtype)
    result = take.take(aux, ind, axis=0) if aux.size else aux
    if fill_value is not None:
        fill = _as_dtype_of(fill_value, result)  # JAX's .astype
        if result.shape[0]:
            valid = ufuncs.less(_iota(size), reductions.sum(mask))
            result = ufuncs.where(shapes.expand_dims(valid, tuple(range(1, result.ndim))), result, fill)
        else:
            result = creation.full((size, *result.shape[1:]), fill, result.dtype)
    outs = [shapes.moveaxis(result, 0, axis)]
    if return_index:
        outs.append(take.take(perm, ind) if aux.size else perm)
    if return_inverse:
        if aux.size:
            group = ufuncs.subtract(reductions.cumsum(mask), np.asarray(1, int_dtype))
            outs.append(scatter.at_property(creation.zeros(mask.shape, int_dtype))[perm].set(group))
        else:
            outs.append(creation.zeros((ar.shape[axis],), int_dtype))
    if return_counts:
        if aux.size:
            # The distances between the starts of the groups, the last one's end the number of slices.
            starts = nonzero_indices.nonzero(mask, size=size + 1)[0]
            n = mask.shape[0]
            starts = shapes.concatenate([starts[:1], ufuncs.where(starts[1:], starts[1:], np.asarray(n, int_dtype))])
            outs.append(ufuncs.subtract(starts[1:], starts[:-1]))
        elif ar.shape[axis]:
            outs.append(creation.full((1,), ar.shape[axis], int_dtype))
        else:
            outs.append(creation.zeros((0,), int_dtype))
    return tuple(outs) if len(outs) > 1 else outs[0]


# --- the set operations of 1-D arrays: intersect1d, setdiff1d, setxor1d, union1d -------------------------------------
# Each has a static-shape form (``size=``, traceable under ``jit``) that the data-dependent form reuses: without
# ``size`` the result's length is read from the concrete data first, then the static form runs at that size.


def _iota(n: int) -> Any:
    return lax_structural.iota(dtypes.default_int_dtype(), n)


def _sorts_last(dtype: Any) -> Any:
    """A value of ``dtype`` that sorts after every other (NaN for inexact types, the largest for the rest)."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.asarray(np.nan, dtype)
    if dtype == np.bool_:
        return np.asarray(True)
    return np.asarray(np.iinfo(dtype).max, dtype)


def _sorted_unique(arr: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    """``(values, first indices, valid)`` of a non-empty 1-D ``arr``: its sorted unique values padded to
    ``arr``'s length, the index of each in ``arr``, and which positions hold a value (not padding)."""
    n = arr.shape[0]
    if assume_unique:
        perm = sorting.argsort(arr, stable=True)
        return take.take(arr, perm), perm, asarray(np.ones((n,), bool))
    # One sort: unique's, whose mask of first occurrences also counts the values (NaNs once, as unique's).
    perm, aux, mask = _sorted_and_firsts(arr, equal_nan=True)
    values, first = _unique_from_sorted(perm, aux, mask, True, False, False, n, None, (n,))
    return values, first, ufuncs.less(_iota(n), reductions.sum(mask, dtype=dtypes.default_int_dtype()))


def _sorted_distinct(arr: Any, assume_unique: bool) -> tuple[Any, Any]:
    """``(values, valid)`` of a non-empty 1-D ``arr``, as :func:`_sorted_unique`'s without the indices, from
    one-operand sorts: the repeats of the sorted values replaced by a value that sorts last and sorted again, so the
    distinct values come first (a real value equal to that filler among them as often as it is distinct)."""
    n = arr.shape[0]
    if assume_unique:
        return sorting.sort(arr), asarray(np.ones((n,), bool))
    values = sorting.sort(_one_complex_nan(arr))
    firsts = _firsts(values, equal_nan=True)  # unique's: NaNs one value
    distinct = sorting.sort(ufuncs.where(firsts, values, _sorts_last(values.dtype)))
    return distinct, ufuncs.less(_iota(n), reductions.sum(firsts, dtype=dtypes.default_int_dtype()))


def _concrete_count(name: str, count: Any) -> int:
    try:
        return int(count)
    except (TypeError, ConcretizationTypeError) as e:
        raise ConcretizationTypeError(
            f"{name}: the size of the result depends on the data; inside jit pass a static size= "
            f"(and fill_value=) to {name}") from e


def _host(name: str, x: Any) -> np.ndarray:
    value = known_value(x)  # a concrete trace (eager grad) knows it
    if value is None:
        raise ConcretizationTypeError(
            f"{name}: the size of the result depends on the data; inside jit pass a static size= "
            f"(and fill_value=) to {name}")
    return np.asarray(value)


def _as_dtype_of(fill_value: Any, like: Any) -> Any:
    """``fill_value`` in ``like``'s dtype as JAX's ``.astype`` and ``full_like`` convert it: a value the dtype cannot
    hold wraps or truncates (``-1`` as ``uint8`` is 255), where ``asarray(-1, uint8)`` refuses it."""
    if isinstance(fill_value, (bool, int, float, complex, np.generic, np.ndarray)):  # on the host, as numpy's astype
        return asarray(np.asarray(fill_value).astype(like.dtype))
    return lax_elementwise.convert_element_type(asarray(fill_value), like.dtype)


def _fill_operand(fill_value: Any) -> Any:
    """A padding value as an operand of JAX's ``where`` (``setxor1d``, ``intersect1d``): a Python scalar stays one
    (weakly typed there), anything else an array of its own dtype; the result's type is their promotion."""
    return fill_value if dtypes.is_python_scalar(fill_value) else asarray(fill_value)


def _fill_like_jax(vals: Any, num: Any, fill_value: Any) -> Any:
    # JAX's padding: fill_value where given, else the smallest valid value (0 when there is none).
    valid = ufuncs.less(_iota(vals.shape[0]), num)
    if fill_value is not None:
        return ufuncs.where(valid, vals, fill_value)  # JAX's where: a fill of another type promotes the result
    if vals.shape[0] == 0:
        return vals
    vals = ufuncs.where(valid, vals, reductions.max(vals))
    return ufuncs.where(valid, vals, reductions.min(vals))


def _promoted_flat(name: str, ar1: Any, ar2: Any) -> tuple[Any, Any]:
    check_arraylike(name, ar1, ar2)
    # JAX's promote_dtypes: a weak type is kept (intersect1d(int_array, 2.5) is a weak float) and a Python int
    # converts as it does everywhere (uint8 with -2 is 254).
    dtype, weak = result_dtype(ar1, ar2)
    return shapes.ravel(asarray(convert(ar1, dtype, weak))), shapes.ravel(asarray(convert(ar2, dtype, weak)))


def _weak_as(out: Any, arr: Any) -> Any:
    """``out`` weakly typed when ``arr`` (the promoted input it holds values of) is, as JAX's set functions keep
    their input's weak type (``intersect1d(int_array, 2.5)`` is a weak float)."""
    if getattr(arr, "weak_type", False) and not out.weak_type:
        return lax_elementwise.convert_element_type(out, out.dtype, weak_type=True)
    return out


def _value_if_known(x: Any) -> Any:
    """JAX's ``concrete_or_error(None, x)`` where its set functions call it (``unique`` without ``size``): in a
    concrete trace (an eager ``grad``) a tracer of a known array is replaced by that array, so what is computed
    from it is a constant of the trace, with a zero derivative, as JAX's. Anything else is returned as it is."""
    value = known_value(x)
    return x if value is None else value


def _static_size(name: str, size: Any) -> int:
    try:
        size = operator.index(size)
    except TypeError as e:
        raise TypeError(f"{name}: size must be a static integer, got {size!r}") from e
    if size < 0:
        raise ValueError(f"{name}: size must be non-negative, got {size}")
    return size


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted values found in both ``ar1`` and ``ar2`` (flattened), as ``jnp.intersect1d``; with
    ``return_indices`` also the index of each in ``ar1`` and in ``ar2`` (first occurrences).

    Without ``size`` the inputs must be concrete. With a static ``size`` the result has that length:
    padded with ``fill_value`` (default: the smallest value found, 0 if none); padded indices are
    ``ar1.size`` and ``ar2.size``.
    """
    arr1, arr2 = _promoted_flat("intersect1d", ar1, ar2)
    if size is None and not assume_unique:  # JAX's unique of each: constants of a concrete trace
        arr1, arr2 = _value_if_known(arr1), _value_if_known(arr2)
    if size is None:  # the length from the concrete values (numpy's rule is the same: NaNs never match)
        size = np.intersect1d(_host("intersect1d", arr1), _host("intersect1d", arr2), assume_unique).shape[0]
    fill = None if fill_value is None else _fill_operand(fill_value)
    vals, ind1, ind2 = _intersect1d_sized(arr1, arr2, assume_unique, _static_size("intersect1d", size), fill,
                                          bool(return_indices))
    vals = _weak_as(vals, arr1)
    return (vals, ind1, ind2) if return_indices else vals


@compiled_whole(static_argnames=("assume_unique", "size", "return_indices"))
def _intersect1d_sized(arr1: Any, arr2: Any, assume_unique: bool, size: int, fill_value: Any,
                       return_indices: bool) -> tuple[Any, Any, Any]:
    """``intersect1d`` at a static ``size``: called eagerly, one program (~70 compiled one by one before). Without
    ``return_indices`` the values only, from one-operand sorts (an argsort costs ~5x a sort on XLA CPU)."""
    n1, n2 = arr1.shape[0], arr2.shape[0]
    int_dtype = dtypes.default_int_dtype()
    if n1 == 0 or n2 == 0:
        zeros = creation.zeros((size,), arr1.dtype)
        return (_fill_like_jax(zeros, asarray(np.asarray(0, int_dtype)), fill_value),
                creation.full((size,), n1, int_dtype), creation.full((size,), n2, int_dtype))
    if return_indices:
        u1, first1, valid1 = _sorted_unique(arr1, assume_unique)
        u2, first2, valid2 = _sorted_unique(arr2, assume_unique)
    else:
        (u1, valid1), (u2, valid2) = _sorted_distinct(arr1, assume_unique), _sorted_distinct(arr2, assume_unique)
    # Each of ar1's values looked up in ar2's sorted ones by bisection (O((n1 + n2) log n2), not every pair):
    # the padding after ar2's values sorts last, so it is never found before an equal valid value.
    searched = ufuncs.where(valid2, u2, _sorts_last(u2.dtype))
    pos2 = lax_elementwise.min(sorting.searchsorted(searched, u1), np.asarray(n2 - 1, np.int32))
    hit = ufuncs.logical_and(ufuncs.equal(take.take(searched, pos2), u1), take.take(valid2, pos2))
    mask = ufuncs.logical_and(valid1, hit)
    num = reductions.sum(mask, dtype=int_dtype)
    where_ = nonzero_indices.nonzero(mask, size=size, fill_value=n1)[0]
    vals = scatter.at_property(u1)[where_].get(mode="fill", fill_value=0)
    if not return_indices:
        return _fill_like_jax(vals, num, fill_value), None, None
    found = ufuncs.less(_iota(size), num)
    ind1 = ufuncs.where(found, scatter.at_property(first1)[where_].get(mode="fill", fill_value=n1), n1)
    pos2 = scatter.at_property(pos2)[where_].get(mode="fill", fill_value=0)
    ind2 = ufuncs.where(found, take.take(first2, pos2), n2)
    return _fill_like_jax(vals, num, fill_value), convert(ind1, int_dtype), convert(ind2, int_dtype)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The unique values of ``ar1`` (flattened) not in ``ar2``, sorted (in ``ar1``'s order when
    ``assume_unique``), as ``jnp.setdiff1d``; ``ar1``'s dtype.

    Without ``size`` the inputs must be concrete; with a static ``size`` the result is padded with
    ``fill_value`` (default 0).
    """
    check_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = shapes.ravel(asarray(ar1)), shapes.ravel(asarray(ar2))
    if size is not None:
        size = _static_size("setdiff1d", size)
    fill = _as_dtype_of(0 if fill_value is None else fill_value, arr1)  # JAX's full_like(arr1, fill_value)
    n1 = arr1.shape[0]
    if n1 == 0:
        return creation.full((size or 0,), fill, arr1.dtype)
    if size is None and not assume_unique:  # JAX's unique of arr1: a constant of a concrete trace
        arr1 = _value_if_known(arr1)
    values, mask, num = _setdiff1d_candidates(arr1, arr2, assume_unique)
    if size is None:
        size = _concrete_count("setdiff1d", num)
    return _weak_as(_picked(values, mask, num, size, fill), arr1)


@compiled_whole(static_argnames=("assume_unique",))
def _setdiff1d_candidates(arr1: Any, arr2: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    """``setdiff1d``'s candidates (non-empty ``arr1``), which of them to keep, and how many."""
    if assume_unique:
        values, valid = arr1, asarray(np.ones((arr1.shape[0],), bool))
    else:
        values, _, valid = _sorted_unique(arr1, False)
    mask = ufuncs.logical_and(valid, isin(values, arr2, invert=True, method="binary_search"))
    return values, mask, reductions.sum(mask, dtype=dtypes.default_int_dtype())


@compiled_whole(static_argnames=("size",))
def _picked(values: Any, mask: Any, num: Any, size: int, fill: Any) -> Any:
    """The first ``size`` of ``values`` where ``mask``, the ``num`` found then ``fill``."""
    picked = take.take(values, nonzero_indices.nonzero(mask, size=size)[0])
    return ufuncs.where(ufuncs.less(_iota(size), num), picked, fill)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted values in exactly one of ``ar1`` and ``ar2`` (flattened), as ``jnp.setxor1d``.

    Without ``size`` the inputs must be concrete; with a static ``size`` the result is padded with
    ``fill_value`` (default: the smallest value found, 0 if none).
    """
    arr1, arr2 = _promoted_flat("setxor1d", ar1, ar2)
    n1, n2 = arr1.shape[0], arr2.shape[0]
    if size is not None:
        size = _static_size("setxor1d", size)
    if n1 + n2 == 0:
        return creation.zeros((size or 0,), arr1.dtype)
    if size is None and not assume_unique:  # JAX's unique of each: constants of a concrete trace
        arr1, arr2 = _value_if_known(arr1), _value_if_known(arr2)
    candidates, mask, num = _setxor1d_candidates(arr1, arr2, assume_unique)
    if size is None:
        size = _concrete_count("setxor1d", num)
    fill = None if fill_value is None else _fill_operand(fill_value)  # (as intersect1d's)
    return _weak_as(_setxor1d_sized(candidates, mask, num, size, fill), arr1)


@compiled_whole(static_argnames=("assume_unique",))
def _setxor1d_candidates(arr1: Any, arr2: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    """``setxor1d``'s sorted candidates (the inputs not both empty), which of them to keep, and how many.

    JAX's algorithm: the distinct values of each input (all of them with ``assume_unique``), sorted together; a
    value kept is one that differs from both neighbours. With plain one-operand sorts: XLA CPU's sort of values
    with a payload (an argsort) costs ~5x one of the values alone. Each input's repeats become a value that sorts
    last, so the ``total`` distinct values come first, in order; positions from ``total`` on are never kept (a
    real value equal to that filler is among the first ``total``, as often as it is distinct)."""
    parts, total = [], None
    for a in (arr1, arr2):
        if a.shape[0] == 0:
            continue
        values = sorting.sort(_one_complex_nan(a))
        if assume_unique:
            parts.append(values)
            count = asarray(np.asarray(values.shape[0], dtypes.default_int_dtype()))
        else:
            firsts = _firsts(values, equal_nan=True)  # unique's: NaNs one value
            parts.append(ufuncs.where(firsts, values, _sorts_last(values.dtype)))
            count = reductions.sum(firsts, dtype=dtypes.default_int_dtype())
        total = count if total is None else ufuncs.add(total, count)
    candidates = sorting.sort(shapes.concatenate(parts))
    n = candidates.shape[0]
    position = _iota(n)
    real = ufuncs.less(position, total)
    if n > 1:  # differs from the one before and the one after (NaN differs from NaN: JAX keeps both inputs' NaNs)
        before = ufuncs.not_equal(candidates[1:], candidates[:-1])
        after_ok = ufuncs.logical_or(before, ufuncs.greater_equal(position[1:], total))
        unlike_before = shapes.concatenate([asarray(np.ones((1,), bool)), before])
        unlike_after = shapes.concatenate([after_ok, asarray(np.ones((1,), bool))])
        mask = ufuncs.logical_and(real, ufuncs.logical_and(unlike_before, unlike_after))
    else:
        mask = real
    return candidates, mask, reductions.sum(mask, dtype=dtypes.default_int_dtype())


@compiled_whole(static_argnames=("size",))
def _setxor1d_sized(candidates: Any, mask: Any, num: Any, size: int, fill_value: Any) -> Any:
    """The first ``size`` of the kept ``candidates``, padded as JAX pads."""
    where_ = nonzero_indices.nonzero(mask, size=size, fill_value=candidates.shape[0])[0]
    vals = scatter.at_property(candidates)[where_].get(mode="fill", fill_value=0)
    return _fill_like_jax(vals, num, fill_value)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values of ``ar1`` and ``ar2`` together (flattened), as ``jnp.union1d``; ``size``
    and ``fill_value`` as ``unique``'s (without ``size`` the inputs must be concrete)."""
    check_arraylike("union1d", ar1, ar2)
    if size is not None:
        size = _static_size("union1d", size)
    return unique(shapes.concatenate([ar1, ar2], axis=None), size=size, fill_value=fill_value)
