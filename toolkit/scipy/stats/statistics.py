"""Statistics of samples (``jax.scipy.stats.mode``, ``rankdata`` and ``sem``)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.batching.api import vmap
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax.structural import canonicalize_axis
from toolkit.numpy._core import check_arraylike
from toolkit.scipy.special import _inexact

__all__ = ["mode", "rankdata", "sem"]

_NAN_POLICIES = "{'propagate', 'omit', 'raise'}"


class ModeResult(NamedTuple):
    """What :func:`mode` returns: the modal values and how many times each occurs."""

    mode: Any
    count: Any


def _check_nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of {_NAN_POLICIES}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. Please check if "
            f"nans exist in `x` outside of the `{name}` function.")


def _mode_of_column(x: Any) -> tuple[Any, Any]:
    if x.size == 0:
        return (tnp.array(np.nan, dtype=dtypes.default_float_dtype()),
                tnp.array(0, dtype=dtypes.default_float_dtype()))
    values, counts = tnp.unique(x, return_counts=True, size=x.size)
    return values[tnp.argmax(counts)], counts.max()


@compiled_whole(static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most common value along ``axis`` (the smallest of equally common ones) and its count, as a
    ``ModeResult(mode, count)``; ``axis=None`` flattens ``a``."""
    check_arraylike("mode", a)
    x = tnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = canonicalize_axis(axis, x.ndim)

    input_shape = x.shape
    if keepdims:
        output_shape = tuple(1 if axis is None or i == axis else s for i, s in enumerate(input_shape))
    else:
        output_shape = () if axis is None else tuple(s for i, s in enumerate(input_shape) if i != axis)
    if axis is None:
        axis = 0
        x = x.ravel()

    x = tnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    values, counts = vmap(_mode_of_column, in_axes=1)(x)
    return ModeResult(values.reshape(output_shape), counts.reshape(output_shape))


def _invert_permutation(i: Any) -> Any:
    return tnp.empty_like(i).at[i].set(tnp.arange(i.size, dtype=i.dtype))


def _ranks(a: Any, method: str, out_dtype: np.dtype) -> Any:
    arr, sorter = lax.sort_key_val(a, tnp.arange(a.size))
    inv = _invert_permutation(sorter)
    if method == "ordinal":
        return (inv + 1).astype(out_dtype)
    # obs marks the first of each run of equal sorted values; dense is the run number of each element.
    obs = tnp.concatenate([tnp.array([True]), arr[1:] != arr[:-1]])
    dense = obs.cumsum()[inv]
    if method == "dense":
        return dense.astype(out_dtype)
    # count[k]: the number of elements before run k + 1 (the position of its first element).
    count = tnp.nonzero(obs, size=arr.size + 1, fill_value=obs.size)[0].astype(out_dtype)
    if method == "max":
        return count[dense]
    if method == "min":
        return count[dense - 1] + 1
    return .5 * (count[dense] + count[dense - 1] + 1)


@compiled_whole(static_argnames=("method", "axis", "nan_policy"))
def rankdata(a: Any, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate") -> Any:
    """The ranks (from 1) of ``a``'s values along ``axis`` (``None``: of the flattened ``a``), ties resolved by
    ``method`` (``"average"``, ``"min"``, ``"max"``, ``"dense"`` or ``"ordinal"``); all nan if any value is nan."""
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return tnp.apply_along_axis(rankdata, axis, a, method)

    a = tnp.ravel(a)
    out_dtype = dtypes.default_float_dtype()
    return lax.cond(tnp.any(tnp.isnan(a)),
                    lambda a: tnp.full_like(a, tnp.nan, out_dtype),
                    lambda a: _ranks(a, method, out_dtype), a)


@compiled_whole(static_argnames=("axis", "nan_policy", "keepdims"))
def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean along ``axis`` (``None``: of all values): ``std(a, ddof=ddof) /
    sqrt(n)``; ``nan_policy="omit"`` leaves the nans out of both."""
    check_arraylike("sem", a)
    (b,) = _inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / tnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~tnp.isnan(b)).sum(axis, keepdims=keepdims)
        return tnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / tnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
