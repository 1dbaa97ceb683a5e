"""Order statistics and weighted summaries of ``jax.numpy``: ``quantile``,
``percentile``, ``median`` and their NaN-ignoring versions (methods 'linear',
'lower', 'higher', 'midpoint', 'nearest': a sort along the reduced axes, then
a gather of the two neighbouring order statistics, as JAX does; 'inverted_cdf',
the only one taking ``weights``: the first sorted value whose cumulative weight
reaches ``q`` of the total), ``average``
(``weights``, ``returned``), ``ptp``, ``bincount`` (static ``length``) and
``digitize``. Example::

    tnp.quantile(x, tnp.asarray([0.25, 0.75]), axis=0)
    tnp.bincount(labels, weights=w, length=10)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from toolkit.core import dtypes, sharding_types, tracing
from toolkit.core.avals import aval_of
from toolkit.core.compiled_whole import compiled_whole
from toolkit.core.sharding_types import ShardingTypeError
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import sorting as lax_sorting
from toolkit.lax import structural as lax_structural
from toolkit.numpy._core import (
    asarray, broadcast_to, canonical_axes, canonical_axis, check_arraylike, convert, promote_inexact, result_dtype,
)
from toolkit.numpy import reductions, shapes, sorting, ufuncs
from toolkit.numpy.take import take_along_axis
from toolkit.shard.explicit import canonicalize_out_sharding
from toolkit.shard.named_sharding import NamedSharding
from toolkit.shard.partition_spec import PartitionSpec

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, squash_nans: bool, weights: Any = None) -> Any:
    # JAX's checks, in JAX's order.
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'")
    a = asarray(a)
    if weights is not None:
        weights = asarray(weights)
        if dtypes.is_complex(weights.dtype):
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method 'inverted_cdf' supports "
                                      "weights.")
        a, weights = promote_inexact(a, weights)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            reduced = canonical_axes(axis, a.ndim)
            if weights.shape != tuple(a.shape[d] for d in reduced):
                raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                                 f"{tuple(a.shape[d] for d in reduced)}")
            weights = lax_structural.broadcast_in_dim(weights, a.shape, reduced)
    elif not dtypes.is_inexact(a.dtype):  # float32 for int32 with x64 on too (JAX's to_inexact_dtype)
        a = lax_elementwise.convert_element_type(a, dtypes.to_inexact_dtype(a.dtype), a.weak_type)
    if dtypes.is_complex(a.dtype):
        raise ValueError("quantile does not support complex input, as the operation is poorly defined.")
    q = asarray(q)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    if not dtypes.is_inexact(q.dtype):
        q = lax_elementwise.convert_element_type(q, dtypes.to_inexact_dtype(q.dtype), q.weak_type)
    # Reduced axes moved last and merged into one.
    axes = canonical_axes(axis, a.ndim) if axis is not None else tuple(range(a.ndim))
    kept = [d for d in range(a.ndim) if d not in axes]
    keep_shape = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    order = kept + list(axes)
    n = math.prod(a.shape[d] for d in axes)
    merged = tuple(a.shape[d] for d in kept) + (n,)
    a = lax_structural.reshape(lax_structural.transpose(a, order) if order != list(range(a.ndim)) else a, merged)
    if weights is not None:
        weights = lax_structural.reshape(lax_structural.transpose(weights, order), merged)
    last = a.ndim - 1
    if method == "inverted_cdf":
        result = _inverted_cdf(a, q, weights, squash_nans)
        return lax_structural.reshape(result, q.shape + keep_shape) if keepdims else result
    if squash_nans:
        a = ufuncs.where(ufuncs.isnan(a), broadcast_to(np.asarray(np.nan, a.dtype), a.shape), a)  # positive NaNs
        a = lax_sorting.sort(a, last)
        counts = reductions.sum(ufuncs.logical_not(ufuncs.isnan(a)), last, dtype=q.dtype, keepdims=True)
    else:
        any_nan = reductions.any(ufuncs.isnan(a), last, keepdims=True)
        a = ufuncs.where(any_nan, broadcast_to(np.asarray(np.nan, a.dtype), a.shape), a)
        a = lax_sorting.sort(a, last)
        counts = broadcast_to(np.asarray(n, q.dtype), a.shape[:last] + (1,))
    # positions: q.shape + batch shape + (1,)
    qb = lax_structural.broadcast_in_dim(q, q.shape + counts.shape, tuple(range(q.ndim)))
    cb = lax_structural.broadcast_in_dim(counts, q.shape + counts.shape, tuple(range(q.ndim, q.ndim + counts.ndim)))
    one = broadcast_to(np.asarray(1, q.dtype), cb.shape)
    top = lax_elementwise.sub(cb, one)
    pos = lax_elementwise.mul(qb, top)
    low, high = lax_elementwise.floor(pos), lax_elementwise.ceil(pos)
    high_weight = lax_elementwise.sub(pos, low)
    low_weight = lax_elementwise.sub(one, high_weight)
    zero = broadcast_to(np.asarray(0, q.dtype), cb.shape)
    low = lax_elementwise.max(zero, lax_elementwise.min(low, top))
    high = lax_elementwise.max(zero, lax_elementwise.min(high, top))
    ab = lax_structural.broadcast_in_dim(a, q.shape + a.shape, tuple(range(q.ndim, q.ndim + a.ndim)))
    low_value = take_along_axis(ab, lax_elementwise.convert_element_type(low, np.int32), -1)
    high_value = take_along_axis(ab, lax_elementwise.convert_element_type(high, np.int32), -1)
    if method == "linear":
        result = lax_elementwise.add(lax_elementwise.mul(convert(low_value, q.dtype), low_weight),
                                     lax_elementwise.mul(convert(high_value, q.dtype), high_weight))
        result = convert(result, a.dtype, a.weak_type)  # JAX's linear result has the operand's dtype
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = ufuncs.where(lax_elementwise.le(high_weight, broadcast_to(np.asarray(0.5, q.dtype), cb.shape)),
                              low_value, high_value)
    else:
        result = lax_elementwise.mul(lax_elementwise.add(low_value, high_value),
                                     broadcast_to(np.asarray(0.5, low_value.dtype), low_value.shape))
    result = lax_structural.reshape(result, result.shape[:-1])  # drop the gathered axis
    if keepdims:
        result = lax_structural.reshape(result, q.shape + keep_shape)
    return result


def _inverted_cdf(a: Any, q: Any, weights: Any, squash_nans: bool) -> Any:
    """JAX's 'inverted_cdf' over ``a``'s last axis: per slice, the first sorted value whose cumulative weight
    (negative and NaN weights, and NaN values, weigh 0) reaches ``q`` of the total; NaN where a weight is bad, and
    where a value is NaN (``squash_nans``: where every value is). ``q``'s dimension comes first."""
    last = a.ndim - 1
    nan = broadcast_to(np.asarray(np.nan, a.dtype), a.shape)
    a = ufuncs.where(ufuncs.isnan(a) if squash_nans else reductions.any(ufuncs.isnan(a), last, keepdims=True), nan, a)
    if weights is None:
        a = lax_sorting.sort(a, last)
        weights = lax_structural.full_like(a, 1.0)
    else:
        a, weights = lax_sorting.sort_key_val(a, weights, last)
    bad_weights = ufuncs.logical_or(ufuncs.less(weights, 0), ufuncs.isnan(weights))
    nan_data = ufuncs.isnan(a)
    clean = ufuncs.where(ufuncs.logical_or(bad_weights, nan_data), lax_structural.full_like(weights, 0), weights)
    cumulative = reductions.cumsum(clean, axis=last)
    total = lax_structural.slice_in_dim(cumulative, a.shape[last] - 1, a.shape[last], axis=last)  # keeps the axis
    q_first = tuple(range(q.ndim))
    target = ufuncs.multiply(lax_structural.reshape(q, q.shape + (1,) * total.ndim),
                             lax_structural.expand_dims(total, q_first))
    below = ufuncs.less(lax_structural.expand_dims(cumulative, q_first), target)
    int_type = dtypes.default_int_dtype()
    index = reductions.sum(convert(below, int_type), axis=-1, keepdims=True)
    if squash_nans:
        valid = reductions.sum(ufuncs.logical_not(nan_data), last, dtype=q.dtype, keepdims=True)
    else:
        valid = broadcast_to(np.asarray(a.shape[last], q.dtype), total.shape)
    top = lax_structural.expand_dims(convert(ufuncs.subtract(valid, 1), int_type), q_first)
    index = ufuncs.maximum(0, ufuncs.minimum(index, top))
    ab = lax_structural.broadcast_in_dim(a, q.shape + a.shape, tuple(range(q.ndim, q.ndim + a.ndim)))
    result = take_along_axis(ab, index, -1)
    nan_slice = ufuncs.equal(valid, 0) if squash_nans else reductions.any(nan_data, last, keepdims=True)
    force_nan = lax_structural.expand_dims(ufuncs.logical_or(reductions.any(bad_weights, last, keepdims=True),
                                                             nan_slice), q_first)
    result = ufuncs.where(force_nan, broadcast_to(np.asarray(np.nan, a.dtype), result.shape), result)
    return lax_structural.reshape(result, result.shape[:-1])


def _check_args(name: str, a: Any, q: Any, out: Any, overwrite_input: bool, weights: Any) -> None:
    check_arraylike(name, a, q)  # lists are JAX's TypeError, under the public function's name
    if weights is not None:
        check_arraylike(name, weights)
    if overwrite_input or out is not None:
        raise ValueError(f"toolkit.numpy.{name} does not support overwrite_input=True or out != None")


@compiled_whole(static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def quantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """The ``q``-th quantiles (``q`` in [0, 1], scalar or 1-D; its dimension comes first) over ``axis``.
    A slice containing NaN gives NaN."""
    _check_args("quantile", a, q, out, overwrite_input, weights)
    return _quantile(a, q, axis, method, keepdims, False, weights)


@compiled_whole(static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``quantile`` ignoring NaNs (NaN for an all-NaN slice)."""
    _check_args("nanquantile", a, q, out, overwrite_input, weights)
    return _quantile(a, q, axis, method, keepdims, True, weights)


def _percent(q: Any) -> Any:
    q = asarray(q)
    if not dtypes.is_inexact(q.dtype):
        q = lax_elementwise.convert_element_type(q, dtypes.to_inexact_dtype(q.dtype), q.weak_type)
    return ufuncs.true_divide(q, 100)


@compiled_whole(static_argnames=("axis", "overwrite_input", "keepdims", "method", "out_sharding"))
def percentile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None,
               out_sharding: Any = None) -> Any:
    """``quantile`` with ``q`` in percent.

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``): the result's type
    on Explicit mesh axes; the quantile is computed with those axes Auto and resharded, as JAX's."""
    _check_args("percentile", a, q, out, overwrite_input, weights)
    if out_sharding is None:
        return _quantile(a, _percent(q), axis, method, keepdims, False, weights)
    # JAX asserts the kind before anything (AssertionError), then checks it as every out_sharding.
    assert isinstance(out_sharding, (NamedSharding, PartitionSpec))
    a, q = asarray(a), asarray(q)
    axes = canonical_axes(axis, a.ndim)
    kept = tuple(1 if d in axes else n for d, n in enumerate(a.shape)) if keepdims else \
        tuple(n for d, n in enumerate(a.shape) if d not in axes)
    return sharding_types.with_out_sharding(
        _quantile, (a, _percent(q)), {"axis": axis, "method": method, "keepdims": keepdims, "squash_nans": False,
                                      "weights": weights},
        out_sharding, "jnp.percentile", tuple(q.shape) + kept, how="auto")


@compiled_whole(static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``nanquantile`` with ``q`` in percent."""
    _check_args("nanpercentile", a, q, out, overwrite_input, weights)
    return _quantile(a, _percent(q), axis, method, keepdims, True, weights)


@compiled_whole(static_argnames=("axis", "overwrite_input", "keepdims"))
def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """The median over ``axis`` (midpoint of the two middle values)."""
    check_arraylike("median", a)
    return quantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


@compiled_whole(static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """The median ignoring NaNs."""
    check_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


@compiled_whole(static_argnames=("axis", "returned", "keepdims"), lists_as_tuples=True)
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, keepdims: bool = False) -> Any:
    """The (``weights``-)weighted mean over ``axis``; with ``returned`` also the sum of weights.

    1-D ``weights`` with an integer ``axis`` weigh along that axis."""
    check_arraylike("average", a, *(() if weights is None else (weights,)))
    a = asarray(a)
    if weights is None:
        avg = reductions.mean(a, axis, keepdims=keepdims)
        if axis is None:
            count = a.size
        else:
            count = math.prod(a.shape[d] for d in canonical_axes(axis, a.ndim))
        weights_sum = broadcast_to(np.asarray(count, avg.dtype), avg.shape)
    else:
        weights = asarray(weights)
        dtype, weak = result_dtype(a, weights)
        dtype = dtypes.to_inexact_dtype(dtype)
        a, weights = convert(a, dtype, a.weak_type), convert(weights, dtype, weights.weak_type)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if not isinstance(axis, (int, np.integer)):
                raise TypeError("Axis must be an integer when shapes of a and weights differ.")
            axis = canonical_axis(axis, a.ndim)
            if weights.ndim != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            if weights.shape[0] != a.shape[axis]:
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            weights = lax_structural.broadcast_in_dim(weights, a.shape, (axis,))
        weights_sum = reductions.sum(weights, axis, keepdims=keepdims)
        avg = ufuncs.true_divide(reductions.sum(ufuncs.multiply(a, weights), axis, keepdims=keepdims), weights_sum)
    if returned:
        if avg.shape != weights_sum.shape:
            weights_sum = broadcast_to(weights_sum, avg.shape)
        return avg, weights_sum
    return avg


@compiled_whole(static_argnames=("axis", "keepdims"), lists_as_tuples=True)
def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Peak to peak: ``max - min`` over ``axis``."""
    check_arraylike("ptp", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to toolkit.numpy.ptp is not supported.")
    return ufuncs.subtract(reductions.max(a, axis, keepdims=keepdims), reductions.min(a, axis, keepdims=keepdims))


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None,
             out_sharding: Any = None) -> Any:
    """Counts (or summed ``weights``) of each non-negative integer in 1-D ``x``.

    Under ``jit`` the output size must be static: pass ``length`` (values at or
    past it are dropped, negative values count as 0, as JAX's). ``out_sharding`` (a ``NamedSharding``, or a
    ``PartitionSpec`` under ``toolkit.set_mesh``): the result's type, which must be replicated (JAX's
    ``ShardingTypeError`` otherwise: the counts of every shard add up into every bin)."""
    check_arraylike("bincount", x)
    x = asarray(x)
    if not (dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype)):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype.name}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported for bincount.")
    if length is None:
        if tracing.is_tracing():
            raise ValueError("bincount: the output size depends on the values of x; pass a static `length` "
                             "under jit")
        length = max(int(minlength), int(np.max(np.asarray(x))) + 1 if x.shape[0] else 0)
    else:
        length = int(length)
    if weights is None:
        weights = broadcast_to(np.asarray(1, dtypes.default_int_dtype()), x.shape)
    else:
        weights = asarray(weights)
        x_type, w_type = aval_of(x), aval_of(weights)
        if weights.shape != x.shape or (x_type.sharding is not None and w_type.sharding is not None
                                        and x_type.sharding != w_type.sharding):
            raise ValueError(f"type of weights must match type of x. Got typeof(x)={x_type} and "
                             f"typeof(weights)={w_type}")
    sharding = canonicalize_out_sharding(out_sharding, "jnp.bincount")
    if sharding is not None and any(e is not None for e in sharding.spec):
        raise ShardingTypeError("out_sharding passed to `jnp.bincount` can only be fully replicated or fully "
                                "unreduced along all mesh axes")
    idx = ufuncs.maximum(convert(x, np.int32), 0)
    zeros = broadcast_to(np.asarray(0, weights.dtype), (length,))
    return zeros.at[idx].add(weights, mode="drop", out_sharding=sharding)


@compiled_whole(static_argnames=("right", "method"))
def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """Index of the bin of each ``x`` in the monotonic 1-D ``bins`` (increasing or decreasing)."""
    check_arraylike("digitize", x, bins)
    x, bins = asarray(x), asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return broadcast_to(np.asarray(0, np.int32), x.shape)
    side = "left" if right else "right"
    flat = shapes.ravel(x)
    inc = sorting.searchsorted(bins, flat, side=side)
    dec = ufuncs.subtract(bins.shape[0], sorting.searchsorted(shapes.flip(bins), flat, side=side))
    out = ufuncs.where(ufuncs.greater_equal(bins[-1], bins[0]), inc, dec)
    return lax_structural.reshape(convert(out, np.int32), x.shape)
