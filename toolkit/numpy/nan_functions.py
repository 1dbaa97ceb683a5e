"""NaN-ignoring reductions of ``jax.numpy``: ``nansum``, ``nanprod``, ``nanmax``,
``nanmin``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanargmax``, ``nanargmin``,
``nancumsum`` and ``nancumprod``. NaNs are replaced by the reduction's identity
(integer inputs go to the plain reduction); all-NaN slices give NaN for
max/min/mean/var/std and -1 for the arg-reductions, as in JAX. Example::

    tnp.nanmean(tnp.asarray([1.0, tnp.nan, 3.0]))   # 2.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.numpy._core import asarray, broadcast_to, canonical_axes, check_arraylike
from toolkit.numpy import reductions, ufuncs


def _fill_nan(a: Any, value: Any) -> Any:
    return ufuncs.where(ufuncs.isnan(a), broadcast_to(np.asarray(value, a.dtype), a.shape), a)


def _masked(a: Any, where: Any, value: Any) -> Any:
    if where is None:
        return a
    return ufuncs.where(where, a, broadcast_to(np.asarray(value, a.dtype), a.shape))


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to toolkit.numpy.{name} is not supported.")


def _nan_fold(name: str, reduce: Any, identity: int, combine: Any, doc: str):
    """``nansum``/``nanprod``: NaNs (and masked-out elements) count as the fold's identity."""
    def fn(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)  # a list is JAX's TypeError
        a = asarray(a)
        if dtypes.is_inexact(a.dtype):
            a = _fill_nan(a, identity)
        res = reduce(_masked(a, where, identity), axis, dtype=dtype, keepdims=keepdims)
        return res if initial is None else combine(res, asarray(initial, res.dtype))
    fn.__name__, fn.__doc__ = name, doc
    return compiled_whole(static_argnames=("axis", "dtype", "keepdims"))(fn)  # named first: the jit is named after it


nansum = _nan_fold("nansum", reductions.sum, 0, ufuncs.add, "Sum treating NaNs as zero.")
nanprod = _nan_fold("nanprod", reductions.prod, 1, ufuncs.multiply, "Product treating NaNs as one.")


def _nan_minmax(name: str, reduce: Any, fill: float):
    def fn(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)  # a list is JAX's TypeError
        a = asarray(a)
        # JAX's: the plain reduction, with NaNs as the reduction's identity, takes initial and where itself
        # (where without initial is its ValueError); NaN marks an all-NaN slice only without an initial value.
        if not dtypes.is_inexact(a.dtype):
            return reduce(a, axis, keepdims=keepdims, initial=initial, where=where)
        res = reduce(_fill_nan(a, fill), axis, keepdims=keepdims, initial=initial, where=where)
        if initial is not None:
            return res
        all_nan = reductions.all(ufuncs.isnan(a), axis, keepdims=keepdims)
        return ufuncs.where(all_nan, broadcast_to(np.asarray(np.nan, res.dtype), res.shape), res)
    fn.__name__ = name
    fn.__doc__ = f"{name[3:].capitalize()}imum ignoring NaNs (NaN where a slice is all NaN)."
    return compiled_whole(static_argnames=("axis", "keepdims"))(fn)  # named first: the jit is named after it


nanmax = _nan_minmax("nanmax", reductions.max, -np.inf)
nanmin = _nan_minmax("nanmin", reductions.min, np.inf)


def _count(a: Any, axis: Any, keepdims: bool, where: Any) -> Any:
    present = ufuncs.logical_not(ufuncs.isnan(a))
    if where is not None:
        present = ufuncs.logical_and(present, where)
    return reductions.sum(present, axis, keepdims=keepdims)


@compiled_whole(static_argnames=("axis", "dtype", "keepdims"))
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            where: Any = None) -> Any:
    """Mean of the non-NaN elements (NaN for an all-NaN slice)."""
    _no_out("nanmean", out)
    check_arraylike("nanmean", a)  # a list is JAX's TypeError
    a = asarray(a)
    if not dtypes.is_inexact(a.dtype):  # JAX's: integers and booleans are mean()'s
        return reductions.mean(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    # JAX's: the non-NaN sum divided by their count, both in dtype (an integer dtype divides as integers)
    dtype = dtypes.to_inexact_dtype(a.dtype) if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, "mean")
    total = nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    count = reductions.sum(ufuncs.logical_not(ufuncs.isnan(a)), axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax_elementwise.div(total, count)


@compiled_whole(static_argnames=("axis", "dtype", "keepdims"))
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False,
           where: Any = None, mean: Any = None) -> Any:
    """Variance of the non-NaN elements (NaN where fewer than ``ddof + 1`` remain)."""
    _no_out("nanvar", out)
    check_arraylike("nanvar", a)  # a list is JAX's TypeError
    a = asarray(a)
    if not dtypes.is_inexact(a.dtype):  # float32 for int32 with x64 on too, as JAX's
        a = lax_elementwise.convert_element_type(a, dtypes.to_inexact_dtype(a.dtype))
    if dtype is not None:
        a = lax_elementwise.convert_element_type(a, dtypes.canonicalize_dtype(dtype))
    axes = canonical_axes(axis, a.ndim)
    center = nanmean(a, axes, keepdims=True, where=where) if mean is None else asarray(mean, a.dtype)
    centered = ufuncs.where(ufuncs.isnan(a), broadcast_to(np.asarray(0, a.dtype), a.shape), ufuncs.subtract(a, center))
    if dtypes.is_complex(centered.dtype):
        centered = ufuncs.real(ufuncs.multiply(centered, ufuncs.conj(centered)))
    else:
        centered = ufuncs.multiply(centered, centered)
    total = reductions.sum(_masked(centered, where, 0), axes, keepdims=keepdims)
    count = ufuncs.subtract(_count(a, axes, keepdims, where), ddof)
    result = ufuncs.true_divide(total, lax_elementwise.convert_element_type(count, total.dtype))
    return ufuncs.where(ufuncs.less_equal(count, 0), broadcast_to(np.asarray(np.nan, result.dtype), result.shape),
                        result)


@compiled_whole(static_argnames=("axis", "dtype", "keepdims"))
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False,
           where: Any = None, mean: Any = None) -> Any:
    """Standard deviation of the non-NaN elements."""
    check_arraylike("nanstd", a)  # a list is JAX's TypeError
    _no_out("nanstd", out)
    return ufuncs.sqrt(nanvar(a, axis, dtype, None, ddof, keepdims, where, mean))


def _nan_arg(name: str, reduce: Any, fill: float):
    def fn(a: Any, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)  # a list is JAX's TypeError
        a = asarray(a)
        keepdims = bool(keepdims)
        if not dtypes.is_inexact(a.dtype):
            return reduce(a, axis, keepdims=keepdims)
        nan = ufuncs.isnan(a)
        res = reduce(_fill_nan(a, fill), axis, keepdims=keepdims)
        all_nan = reductions.all(nan, axis, keepdims=keepdims)
        return ufuncs.where(all_nan, broadcast_to(np.asarray(-1, res.dtype), res.shape), res)
    fn.__name__ = name
    fn.__doc__ = f"Index of the {name[6:]}imum ignoring NaNs (-1 where a slice is all NaN)."
    return compiled_whole(static_argnames=("axis", "keepdims"), lists_as_tuples=True)(fn)  # named first


nanargmax = _nan_arg("nanargmax", reductions.argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", reductions.argmin, np.inf)


def _nan_cumulative(name: str, cumulative: Any, fill: int):
    def fn(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)  # a list is JAX's TypeError
        a = asarray(a)
        if dtypes.is_inexact(a.dtype):
            a = _fill_nan(a, fill)
        return cumulative(a, axis, dtype)
    fn.__name__ = name
    fn.__doc__ = f"Cumulative {name[6:]} treating NaNs as {fill} (``None`` axis: flattened)."
    return compiled_whole(static_argnames=("axis", "dtype"))(fn)  # named first: the jit is named after it


nancumsum = _nan_cumulative("nancumsum", reductions.cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", reductions.cumprod, 1)
