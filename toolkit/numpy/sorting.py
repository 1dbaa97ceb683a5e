"""Sorting and searching: ``sort`` and ``argsort`` (stable, NaNs last,
``descending``), ``lexsort`` and ``searchsorted``. Example::

    tnp.sort(x, axis=0); tnp.argsort(x, stable=True)
    tnp.searchsorted(edges, values, side="right")
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import control_flow as lax_control_flow
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import sorting as lax_sorting
from toolkit.lax import structural as lax_structural
from toolkit.numpy import reductions
from toolkit.numpy._core import asarray, broadcast_to, canonical_axis, check_arraylike, convert, result_dtype
from toolkit.numpy.shapes import _flatten_if_none
from toolkit.numpy.take import take


@compiled_whole(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a: Any, axis: int | None = -1, *, kind: str | None = None, order: Any = None, stable: bool = True,
         descending: bool = False) -> Any:
    """A sorted copy of ``a`` along ``axis`` (``None``: flattened); NaNs sort last.

    Example::

        sort(asarray([3, 1, 2]))   # [1, 2, 3]
    """
    check_arraylike("sort", a)
    if order is not None:
        raise NotImplementedError("sort: `order` (structured arrays) is not supported")
    a, axis = _flatten_if_none(a, axis)
    if a.ndim == 0:
        raise ValueError("sort needs an array of rank at least 1 (or axis=None)")
    out = lax_sorting.sort(a, axis, is_stable=stable)
    return lax_structural.rev(out, (axis,)) if descending else out


@compiled_whole(static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a: Any, axis: int | None = -1, *, kind: str | None = None, order: Any = None, stable: bool = True,
            descending: bool = False, dtype: Any = None) -> Any:
    """Indices that sort ``a`` along ``axis``, as ``dtype`` (default: the default int type, int64 with x64 on, as
    JAX's); ties keep input order (also when ``descending``). ``kind`` and ``order`` are JAX's ``TypeError``s
    (``stable`` chooses the stability).

    Example::

        argsort(asarray([3, 1, 2]))   # [1, 2, 0]
    """
    check_arraylike("argsort", a)
    if kind is not None:
        raise TypeError("'kind' argument to argsort is not supported. Use stable=True or stable=False to specify "
                        "sort stability.")
    if order is not None:
        raise TypeError("'order' argument to argsort is not supported.")
    a, axis = _flatten_if_none(a, axis)
    if a.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    index = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, "argsort")
    if not descending:
        return lax_sorting.argsort(a, axis, is_stable=stable, index_dtype=index)
    # Stable descending: sort the reversed array ascending, reverse back, and map positions back.
    n = a.shape[axis]
    idx = lax_structural.rev(lax_sorting.argsort(lax_structural.rev(a, (axis,)), axis, is_stable=stable,
                                                 index_dtype=index), (axis,))
    return lax_elementwise.sub(broadcast_to(np.asarray(n - 1, index), idx.shape), idx)


@compiled_whole(static_argnames=("axis",))
def lexsort(keys: Sequence[Any], axis: int = -1) -> Any:
    """Indices sorting by several keys, the *last* key primary (numpy's convention); stable.

    Example::

        lexsort((first_names, surnames))   # by surname, then first name
    """
    keys = tuple(keys)
    check_arraylike("lexsort", *keys)
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("lexsort needs at least one key")
    shape = tuple(keys[0].shape)
    for i, k in enumerate(keys):
        if tuple(k.shape) != shape:
            raise ValueError(f"lexsort: all keys need the same shape; key 0 has {shape}, key {i} has {tuple(k.shape)}")
    if not shape:  # scalar keys (a 1-D array given as the keys): JAX's 0
        return lax_structural.full((), 0, dtypes.default_int_dtype())
    axis = canonical_axis(axis, len(shape))
    iota = lax_structural.broadcasted_iota(dtypes.default_int_dtype(), shape, axis)  # int64 with x64 on (JAX's)
    outs = lax_sorting.sort(tuple(reversed(keys)) + (iota,), axis, is_stable=True, num_keys=len(keys))
    return outs[-1]


_SEARCH_METHODS = ("compare_all", "scan", "scan_unrolled", "sort")


@compiled_whole(static_argnames=("side", "method"))
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan") -> Any:
    """Insertion points of ``v`` into the sorted 1-D ``a`` (NaNs count as largest, as in numpy's sort).

    ``method`` is JAX's algorithm, each as JAX computes it (so an unsorted ``a`` gives JAX's indices too):
    ``"scan"`` (the default) and ``"scan_unrolled"`` a binary search of ``ceil(log2(len(a) + 1))`` steps per
    value (a loop, or the steps unrolled), ``"sort"`` ranks in a co-sort of ``a`` and ``v``, ``"compare_all"``
    compares every value with every element of ``a`` and counts (O(len(a) * v.size)).
    """
    if method not in _SEARCH_METHODS:
        raise ValueError(f"invalid argument method={method!r}, expected one of {sorted(_SEARCH_METHODS)}")
    check_arraylike("searchsorted", a, v, *(() if sorter is None else (sorter,)))
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a = asarray(a)
    if a.ndim != 1:
        raise ValueError(f"searchsorted needs a 1-D sorted array, got shape {tuple(a.shape)}")
    if sorter is not None:
        a = take(a, sorter, mode="promise_in_bounds")
    dtype, weak = result_dtype(a, v)
    a, v = asarray(convert(a, dtype)), asarray(convert(v, dtype, weak))
    # (A symbolic length has no static number of halvings or sort positions: compared with every element.)
    static = type(a.shape[0]) is int and all(type(d) is int for d in v.shape)
    if method in ("scan", "scan_unrolled") and static:
        return _search_by_bisection(a, v, side, unrolled=method == "scan_unrolled")
    if method == "sort" and static:
        return _search_by_cosorting(a, v, side)
    av = lax_structural.broadcast_in_dim(a, tuple(v.shape) + (a.shape[0],), (v.ndim,))
    vv = lax_structural.broadcast_in_dim(v, tuple(v.shape) + (a.shape[0],), tuple(range(v.ndim)))
    if side == "left":
        before = _sort_less(av, vv)                    # a[i] < v
    else:
        before = lax_elementwise.bitwise_not(_sort_less(vv, av))     # a[i] <= v  <=>  not (v < a[i])
    return reductions.sum(before, axis=-1, dtype=dtypes.int32)


def _search_by_bisection(a: Any, v: Any, side: str, *, unrolled: bool) -> Any:
    """JAX's ``method="scan"``: per value, ``ceil(log2(n + 1))`` halvings of ``[low, high)`` (``uint32`` bounds),
    going left where the value sorts at or before (``"left"``; before, ``"right"``) ``a[mid]``; the result is
    ``high``."""
    n = a.shape[0]
    if n == 0:
        return lax_structural.full(v.shape, 0, dtypes.int32)
    u32 = np.dtype(np.uint32)

    def halve(bounds: tuple[Any, Any]) -> tuple[Any, Any]:
        low, high = bounds
        mid = lax_elementwise.add(low, lax_elementwise.div(lax_elementwise.sub(high, low), np.uint32(2)))
        at_mid = take(a, mid, mode="clip")
        go_left = lax_elementwise.bitwise_not(_sort_less(at_mid, v)) if side == "left" else _sort_less(v, at_mid)
        return (lax_elementwise.select(go_left, low, mid), lax_elementwise.select(go_left, mid, high))

    bounds = (lax_structural.full(v.shape, 0, u32), lax_structural.full(v.shape, n, u32))
    levels = int(np.ceil(np.log2(n + 1)))
    if unrolled:
        for _ in range(levels):
            bounds = halve(bounds)
    else:
        bounds = lax_control_flow.fori_loop(0, levels, lambda _, b: halve(b), bounds)
    return lax_elementwise.convert_element_type(bounds[1], dtypes.int32)


def _search_by_cosorting(a: Any, v: Any, side: str) -> Any:
    """JAX's ``method="sort"``: each value's rank in a stable co-sort with ``a`` (``v`` first for ``"left"``,
    after ``a`` for ``"right"``), less its rank among the values."""
    queries = lax_structural.reshape(v, (v.size,))

    def rank(x: Any) -> Any:
        iota = lax_structural.iota(dtypes.int32, x.shape[0])
        order = lax_sorting.sort((x, iota), 0, is_stable=True, num_keys=1)[1]
        return lax_sorting.sort((order, iota), 0, is_stable=True, num_keys=1)[1]  # the inverse permutation
    if side == "left":
        index = lax_structural.slice(rank(lax_structural.concatenate([queries, a], 0)), (0,), (v.size,))
    else:
        both = rank(lax_structural.concatenate([a, queries], 0))
        index = lax_structural.slice(both, (a.shape[0],), (a.shape[0] + v.size,))
    return lax_structural.reshape(lax_elementwise.sub(index, rank(queries)), tuple(v.shape))


def _sort_less(x: Any, y: Any) -> Any:
    """``x < y`` in sort order: NaN is largest; complex numbers by real part, then imaginary part (JAX's sort
    keys)."""
    if dtypes.is_complex(x.dtype):
        xr, yr = lax_elementwise.real(x), lax_elementwise.real(y)
        real_equal = lax_elementwise.bitwise_or(
            lax_elementwise.eq(xr, yr), lax_elementwise.bitwise_and(lax_elementwise.ne(xr, xr), lax_elementwise.ne(yr, yr)))
        return lax_elementwise.bitwise_or(_sort_less(xr, yr), lax_elementwise.bitwise_and(
            real_equal, _sort_less(lax_elementwise.imag(x), lax_elementwise.imag(y))))
    if not dtypes.is_inexact(x.dtype):
        return lax_elementwise.lt(x, y)
    x_nan, y_nan = lax_elementwise.ne(x, x), lax_elementwise.ne(y, y)
    return lax_elementwise.bitwise_or(lax_elementwise.lt(x, y), lax_elementwise.bitwise_and(y_nan, lax_elementwise.bitwise_not(x_nan)))
