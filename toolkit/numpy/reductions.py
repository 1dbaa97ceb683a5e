"""Reductions with numpy's ``axis``/``keepdims``/``dtype`` conventions: sums,
products, extrema, ``any``/``all``, moments, arg-extrema, ``count_nonzero``,
``allclose``/``array_equal``, and the cumulative ``cumsum``/``cumprod`` (with
the array-API ``cumulative_sum``/``cumulative_prod``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import reductions as lax_reductions
from toolkit.lax import structural as lax_structural
from toolkit.lax import windowed as lax_windowed
from toolkit.numpy._core import asarray, canonical_axes, canonical_axis, check_arraylike, is_array
from toolkit.numpy.shapes import _flatten_if_none, concatenate, ravel
from toolkit.numpy.ufuncs import (
    conj, equal, greater, isclose, isnan, logical_and, logical_or, multiply, not_equal, real, sqrt, subtract,
    true_divide,
)
from toolkit.numpy.ufuncs import where as where_  # (the reductions' where= arguments take the plain name)


def _keep(result: Any, shape: tuple, axes: tuple, keepdims: bool) -> Any:
    if not keepdims:
        return result
    return lax_structural.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _promote_integers(dtype: np.dtype) -> np.dtype:
    """``sum``/``prod`` accumulate bools and narrower integers in the default integer type, as JAX
    (int32, or int64 with x64 on; unsigned ones in uint32/uint64)."""
    default = dtypes.default_int_dtype()
    if dtypes.is_bool(dtype) or (dtypes.is_signed(dtype) and dtype.itemsize < default.itemsize):
        return default
    if dtypes.is_unsigned(dtype) and dtype.itemsize < default.itemsize:
        return dtypes.uint64 if default == dtypes.int64 else dtypes.uint32
    return dtype


def _upcast_low_precision(dtype: np.dtype) -> np.dtype:
    """JAX's ``_upcast_f16``: float16 and bfloat16 sums, means and variances are computed in float32."""
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def check_where(name: str, where: Any) -> Any:
    """``where`` (a reduction's mask) as a boolean array, or None; JAX's errors for anything else."""
    if where is None:
        return None
    check_arraylike(name, where)
    where = asarray(where)
    if where.dtype != dtypes.bool_:
        raise ValueError(f"toolkit.numpy.{name}: where must be None or a boolean array; got dtype={where.dtype}.")
    return where


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to toolkit.numpy.{name} is not supported.")


def _identity(kind: str, dtype: np.dtype) -> np.ndarray:
    """The identity of a reduction (what a masked-out element becomes)."""
    if kind in ("max", "min"):
        sign = -1 if kind == "max" else 1
        if dtypes.is_bool(dtype):
            return np.asarray(kind == "min")
        if dtypes.is_integer(dtype):
            info = np.iinfo(dtype)
            return np.asarray(info.min if kind == "max" else info.max, dtype)
        return np.asarray(sign * np.inf, dtype)
    if kind == "and":
        return np.asarray(-1).astype(dtype)  # every bit set (True for booleans)
    return np.asarray({"sum": 0, "prod": 1, "any": False, "all": True, "or": 0, "xor": 0}[kind], dtype)


def _masked(a: Any, where: Any, kind: str) -> Any:
    where = lax_structural.broadcast_in_dim(where, a.shape, tuple(range(a.ndim - where.ndim, a.ndim))) \
        if tuple(where.shape) != tuple(a.shape) else where
    if where.ndim > a.ndim:
        raise ValueError(f"where mask of shape {where.shape} does not broadcast to the array's shape {a.shape}")
    fill = lax_structural.broadcast_in_dim(_identity(kind, a.dtype), a.shape, ())
    return lax_elementwise.select(where, a, fill)


_REDUCERS = {"sum": (lax_reductions.reduce_sum, lax_elementwise.add),
             "prod": (lax_reductions.reduce_prod, lax_elementwise.mul),
             "max": (lax_reductions.reduce_max, lax_elementwise.max),
             "min": (lax_reductions.reduce_min, lax_elementwise.min),
             "any": (lax_reductions.reduce_or, lax_elementwise.bitwise_or),
             "all": (lax_reductions.reduce_and, lax_elementwise.bitwise_and),
             # the bitwise ones (``bitwise_and.reduce``, ``logical_xor.reduce``: toolkit.numpy.universal_functions)
             "and": (lax_reductions.reduce_and, lax_elementwise.bitwise_and),
             "or": (lax_reductions.reduce_or, lax_elementwise.bitwise_or),
             "xor": (lax_reductions.reduce_xor, lax_elementwise.bitwise_xor)}


def _reduction(name: str, kind: str, a: Any, axis: Any, dtype: Any, out: Any, keepdims: bool, initial: Any,
               where: Any, *, promote_integers: bool = False, upcast: bool = False,
               preproc: Any = None) -> Any:
    """JAX's ``_reduction``: ``where`` masks with the identity, ``initial`` joins the result, float16/bfloat16
    compute in float32 when ``upcast`` (the result keeps the input's type); ``preproc`` checks or converts the
    array first (JAX's: booleans for ``logical_and.reduce``, integers only for ``bitwise_and.reduce``)."""
    _no_out(name, out)
    check_arraylike(name, a)
    a = asarray(a)
    where = check_where(name, where)
    has_identity = kind not in ("max", "min")
    if initial is None and not has_identity and where is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a where mask one has "
                         "to specify 'initial'")
    if preproc is not None:
        a = preproc(a)
    axes = canonical_axes(axis, a.ndim)
    if initial is None and not has_identity:
        for x in axes:
            if a.shape[x] == 0:
                raise ValueError(f"zero-size array to reduction operation {name} which has no identity "
                                 f"(dimension {x} of shape {a.shape})")
    if dtype is None:
        result_dtype = _promote_integers(a.dtype) if promote_integers else a.dtype
    else:
        result_dtype = dtypes.canonicalize_explicit_dtype(dtype, name)
    if kind in ("any", "all"):
        result_dtype = dtypes.bool_
    # JAX upcasts float16/bfloat16 only when no dtype is asked for (sum(x, dtype=float16) adds in float16).
    computation = _upcast_low_precision(result_dtype) \
        if upcast and dtype is None and dtypes.is_inexact(result_dtype) else result_dtype
    if a.dtype != computation:
        a = lax_elementwise.convert_element_type(a, computation)
    if dtypes.is_bool(computation) and kind in ("sum", "prod"):
        kind = "any" if kind == "sum" else "all"  # JAX's bool_op: a sum of booleans is their or, a product their and
    if where is not None:
        a = _masked(a, where, kind)
    reducer, combine = _REDUCERS[kind]
    result = reducer(a, axes)
    if initial is not None:
        init = asarray(initial, computation) if not is_array(initial) else \
            lax_elementwise.convert_element_type(initial, computation)
        if init.shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {init.shape}")
        result = combine(init, result)
    result = _keep(result, a.shape, axes, keepdims)
    if result.dtype == result_dtype and not result.weak_type:
        return result
    # Strongly typed, as JAX's (its _reduction ends in convert_element_type): sum(3) is a strong int32.
    return lax_elementwise.convert_element_type(result, result_dtype, weak_type=False)


@compiled_whole(static_argnames=("axis", "dtype", "keepdims", "promote_integers"), lists_as_tuples=True)
def sum(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    """The sum of ``a``'s elements over ``axis`` (an int, a tuple, or None for all), as ``jnp.sum``.

    Booleans and small integers sum in the default integer type (``promote_integers``); ``dtype`` overrides;
    float16/bfloat16 accumulate in float32; ``keepdims`` keeps the reduced dimensions with size 1; ``where``
    (a boolean mask) leaves elements out, ``initial`` is added. A list is a ``TypeError`` (as in JAX); an
    axis out of range a ``ValueError``.
    """
    return _reduction("sum", "sum", a, axis, dtype, out, keepdims, initial, where,
                      promote_integers=promote_integers, upcast=True)


@compiled_whole(static_argnames=("axis", "dtype", "keepdims", "promote_integers"), lists_as_tuples=True)
def prod(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    """The product of ``a``'s elements over ``axis``, as ``jnp.prod`` (arguments as :func:`sum`)."""
    return _reduction("prod", "prod", a, axis, dtype, out, keepdims, initial, where,
                      promote_integers=promote_integers, upcast=True)


def _minmax(kind: str, name: str):
    def fn(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Any:
        return _reduction(kind, kind, a, axis, None, out, keepdims, initial, where)  # amax's errors name max (JAX)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {kind}imum of ``a`` over ``axis``, as ``jnp.{name}``; ``initial`` joins the result, "
                  "``where`` (a boolean mask, which needs ``initial``) leaves elements out.\n\nReducing a "
                  "dimension of size 0 without ``initial`` is a ``ValueError`` (no identity). Complex numbers are "
                  "ordered by real part, then imaginary part, as in JAX.")
    # Named first: the jit is named after it. (JAX: a wrapper of its jitted _reduce_max/_reduce_min.)
    return compiled_whole(static_argnames=("axis", "keepdims"), lists_as_tuples=True)(fn)


max = _minmax("max", "max")
min = _minmax("min", "min")
amax = _minmax("max", "amax")
amin = _minmax("min", "amin")


@compiled_whole(static_argnames=("axis", "keepdims"), lists_as_tuples=True)
def any(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = None) -> Any:
    """Whether any element of ``a`` over ``axis`` (and ``where``) is nonzero (as ``jnp.any``); a boolean array."""
    return _reduction("any", "any", a, axis, None, out, keepdims, None, where)


@compiled_whole(static_argnames=("axis", "keepdims"), lists_as_tuples=True)
def all(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = None) -> Any:
    """Whether every element of ``a`` over ``axis`` (and ``where``) is nonzero (as ``jnp.all``); a boolean array."""
    return _reduction("all", "all", a, axis, None, out, keepdims, None, where)


def _count(a: Any, axes: tuple, keepdims: bool, where: Any, dtype: np.dtype) -> Any:
    """How many elements a reduction over ``axes`` sees: static (or symbolic) without ``where``, else the
    mask's sum in ``dtype``."""
    if where is None:
        n = 1
        for x in axes:
            n = n * a.shape[x]
        return np.asarray(n, dtype) if type(n) is int else n  # symbolic for polymorphic shapes
    mask = lax_structural.broadcast_in_dim(where, a.shape, tuple(range(a.ndim - where.ndim, a.ndim))) \
        if tuple(where.shape) != tuple(a.shape) else where
    return sum(mask, axes, dtype=dtype, keepdims=keepdims)


@compiled_whole(static_argnames=("axis", "dtype", "keepdims"), lists_as_tuples=True)
def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False, *,
         where: Any = None) -> Any:
    """The arithmetic mean over ``axis`` (as ``jnp.mean``): integers average in a float type, ``dtype``
    overrides, float16/bfloat16 are computed in float32; ``where`` averages only the masked-in elements."""
    _no_out("mean", out)
    check_arraylike("mean", a)
    a = asarray(a)
    where = check_where("mean", where)
    axes = canonical_axes(axis, a.ndim)
    result_dtype = dtypes.canonicalize_explicit_dtype(dtype, "mean") if dtype is not None else \
        (a.dtype if dtypes.is_inexact(a.dtype) else dtypes.to_inexact_dtype(a.dtype))
    # As JAX: float16/bfloat16 averaged in float32 only without a dtype; an integer dtype divides as integers.
    computation = _upcast_low_precision(result_dtype) if dtype is None else result_dtype
    total = sum(a, axes, dtype=computation, keepdims=keepdims, where=where)
    count = _count(a, axes, keepdims, where, computation)
    if dtypes.is_inexact(computation):
        result = true_divide(total, count)
    else:
        result = lax_elementwise.div(total, count if is_array(count) else asarray(count, computation))
    return result if result.dtype == result_dtype else lax_elementwise.convert_element_type(result, result_dtype)


_mean = mean  # var's ``mean=`` argument shadows the function inside var


def _var_types(a_dtype: np.dtype, dtype: np.dtype | None) -> tuple[np.dtype, np.dtype]:
    """JAX's ``_var_promote_types``: (computation dtype, result dtype)."""
    if dtype is not None:
        if not dtypes.is_complex(dtype) and dtypes.is_complex(a_dtype):
            raise ValueError("toolkit.numpy.var does not support a real dtype for the variance of complex values "
                             "(as jax.numpy.var)")
        computation = dtype
    elif not dtypes.is_inexact(a_dtype):
        dtype = computation = dtypes.to_inexact_dtype(a_dtype)
    else:
        dtype = np.array(0, a_dtype).real.dtype
        computation = a_dtype
    return _upcast_low_precision(computation), dtype


def _ddof_or_correction(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """JAX's var/std wrapper, on the arguments as given: ``correction`` replaces ``ddof``, which must be a
    Python int 0 then (its helper traces the number)."""
    correction = kwargs.get("correction")
    if correction is None:
        # JAX's wrapper always passes the count its helper subtracts (a traced number, 0 by default): the eager
        # program divides by a value it computes, as JAX's does (a constant divisor rounds otherwise).
        if len(args) > 4:
            return args, {k: v for k, v in kwargs.items() if k != "correction"}
        return args, {**{k: v for k, v in kwargs.items() if k != "correction"}, "ddof": kwargs.get("ddof", 0)}
    ddof = args[4] if len(args) > 4 else kwargs.get("ddof", 0)
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    kwargs = {k: v for k, v in kwargs.items() if k not in ("correction", "ddof")}
    if len(args) > 4:
        return args[:4] + (correction,) + args[5:], kwargs
    return args, {**kwargs, "ddof": correction}


@compiled_whole(static_argnames=("axis", "dtype", "keepdims"), lists_as_tuples=True, prepare=_ddof_or_correction)
def var(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int | float = 0, keepdims: bool = False, *,
        where: Any = None, mean: Any = None, correction: int | float | None = None) -> Any:
    """The variance over ``axis`` with ``ddof`` (or ``correction``) delta degrees of freedom, as ``jnp.var``.

    Complex values give the variance of their magnitude (a real array); float16/bfloat16 are computed in
    float32; ``where`` masks elements; ``mean`` is a precomputed mean (keepdims-shaped). Where ``N - ddof``
    is not positive the result is NaN, as in JAX.
    """
    _no_out("var", out)
    check_arraylike("var", a)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = asarray(a)
    where = check_where("var", where)
    axes = canonical_axes(axis, a.ndim)
    computation, result_dtype = _var_types(
        a.dtype, None if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, "var"))
    if a.dtype != computation:
        a = lax_elementwise.convert_element_type(a, computation)
    center = _mean(a, axes, dtype=computation, keepdims=True, where=where) if mean is None else asarray(mean, computation)
    centered = subtract(a, center)
    if dtypes.is_complex(centered.dtype):
        centered = real(multiply(centered, conj(centered)))
        computation = centered.dtype
    else:
        centered = multiply(centered, centered)
    count = _count(a, axes, keepdims, where, computation)
    if is_array(ddof):  # traced (an eager var is compiled whole, its ddof an argument, as JAX's _var's)
        normalizer = subtract(count, lax_elementwise.convert_element_type(ddof, computation))
    elif is_array(count) or isinstance(count, np.ndarray):
        normalizer = subtract(count, np.asarray(ddof, computation))
    else:
        normalizer = count - ddof
    total = sum(centered, axes, dtype=computation, keepdims=keepdims, where=where)
    result = true_divide(total, normalizer)
    if result.dtype != result_dtype:
        result = lax_elementwise.convert_element_type(result, result_dtype)
    if isinstance(normalizer, np.ndarray) and normalizer > 0:
        return result
    if not dtypes.is_inexact(result.dtype):  # JAX's where(normalizer > 0, result, nan): an integer dtype's
        return where_(greater(normalizer, 0), result, np.nan)  # result becomes a float
    if is_array(normalizer) or isinstance(normalizer, np.ndarray):  # N - ddof <= 0: NaN, as in JAX
        positive = lax_elementwise.gt(normalizer, np.zeros((), normalizer.dtype))
        nan = lax_structural.broadcast_in_dim(np.asarray(np.nan, result.dtype), result.shape, ())
        positive = positive if positive.shape == result.shape else \
            lax_structural.broadcast_in_dim(positive, result.shape, ())
        return lax_elementwise.select(positive, result, nan)
    return result


@compiled_whole(static_argnames=("axis", "dtype", "keepdims"), lists_as_tuples=True, prepare=_ddof_or_correction)
def std(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int | float = 0, keepdims: bool = False, *,
        where: Any = None, mean: Any = None, correction: int | float | None = None) -> Any:
    """The standard deviation, ``sqrt(var(...))`` with :func:`var`'s arguments (as ``jnp.std``)."""
    check_arraylike("std", a)
    if dtype is not None and not dtypes.is_inexact(dtypes.canonicalize_explicit_dtype(dtype, "std")):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {np.dtype(dtype)}")  # JAX's
    return sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _arg_reduction(reduce: Any, name: str):
    def fn(a: Any, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)
        a = asarray(a)
        keepdims = bool(keepdims)
        index = dtypes.default_int_dtype()  # int64 with x64 on, as JAX's
        if axis is None:  # over the flattened array
            return _keep(reduce(ravel(a), 0, index), a.shape, tuple(range(a.ndim)), keepdims)
        axis = canonical_axis(axis, a.ndim)
        return _keep(reduce(a, axis, index), a.shape, (axis,), keepdims)
    fn.__name__ = name
    fn.__doc__ = (f"Index of the first {name[3:]}imum along ``axis`` (of the flattened array when None), in the "
                  "default int type.")
    return compiled_whole(static_argnames=("axis", "keepdims"), lists_as_tuples=True)(fn)  # named first


argmax = _arg_reduction(lax_reductions.argmax, "argmax")
argmin = _arg_reduction(lax_reductions.argmin, "argmin")


# --- counting and closeness -----------------------------------------------------------------------

@compiled_whole(static_argnames=("axis", "keepdims"))
def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements (default integer dtype)."""
    check_arraylike("count_nonzero", a)
    a = asarray(a)
    nonzero = not_equal(a, np.zeros((), a.dtype)) if a.dtype != dtypes.bool_ else a
    return sum(nonzero, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


@compiled_whole(static_argnames=("equal_nan",))
def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """Whether ``isclose`` holds everywhere (a bool array of shape ())."""
    check_arraylike("allclose", a, b)
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and elements (a Python ``False`` when the shapes differ)."""
    a1, a2 = asarray(a1), asarray(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan and dtypes.is_inexact(a1.dtype):
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


# --- cumulative -----------------------------------------------------------------------------------

def _cumulative(name: str):
    def fn(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)
        a, axis = _flatten_if_none(asarray(a), axis)
        # JAX's _cumulative_reduction: the input's type is kept (int8 stays int8); bools count in the default
        # integer type; a bool dtype accumulates in it too and is converted back.
        requested = dtypes.canonicalize_explicit_dtype(dtype, name) if dtype is not None else None
        target = a.dtype if requested is None else requested
        if requested is not None and dtypes.is_bool(requested) and not dtypes.is_bool(a.dtype):
            a = not_equal(a, 0)  # JAX's a != 0 first (-1j is True; [-1, 1] must not cancel)
        if dtypes.is_bool(target):
            target = _promote_integers(target)
        if a.dtype != target:
            a = lax_elementwise.convert_element_type(a, target)
        result = getattr(lax_windowed, name)(a, axis=axis)
        if requested is not None and dtypes.is_bool(requested):
            result = lax_elementwise.convert_element_type(result, dtypes.bool_)
        return result
    fn.__name__ = name
    fn.__doc__ = (f"Cumulative {name[3:]} along ``axis`` (``None``: flattened), as ``jnp.{name}``: the input's "
                  f"dtype is kept (``int8`` stays ``int8``), bools accumulate in the default integer type."
                  f"\n\nExample::\n\n    {name}(asarray([1, 2, 3]))\n")
    return compiled_whole(static_argnames=("axis", "dtype"))(fn)  # named first: the jit is named after it


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")


def _array_api_cumulative(name: str, fn: Any, identity: int, promote_integers: bool = False):
    """``promote_integers``: narrow integers accumulate in the default ones, as ``jnp.cumulative_sum``'s (not its
    ``cumsum``'s, nor ``cumulative_prod``'s)."""
    def cumulative(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
        check_arraylike(name, x)
        x = asarray(x)
        if x.ndim == 0:
            raise ValueError(f"The input must be non-scalar to take a cumulative {name[11:]}, however a scalar "
                             f"value or scalar array was given.")
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to an explicit "
                                 "value. The axis argument is only optional for one-dimensional arrays.")
            axis = 0
        axis = canonical_axis(axis, x.ndim)
        if dtype is None and promote_integers and (dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype)):
            dtype = _promote_integers(x.dtype)
        out = fn(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(out.shape)
            shape[axis] = 1
            init = lax_structural.broadcast_in_dim(np.asarray(identity, out.dtype), tuple(shape), ())
            out = concatenate([init, out], axis=axis)
        return out
    cumulative.__name__ = name
    cumulative.__doc__ = (f"Array-API cumulative {name[11:]} along ``axis`` (optional for 1-D input); "
                          f"``include_initial`` prepends {identity}.")
    return cumulative


cumulative_sum = _array_api_cumulative("cumulative_sum", cumsum, 0, promote_integers=True)
cumulative_prod = _array_api_cumulative("cumulative_prod", cumprod, 1)
