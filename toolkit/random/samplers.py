"""Samplers of ``jax.random`` (JAX 0.10.2), bit-identical for the same key.

Each sampler follows JAX's construction step by step, with the same
operations in the same order and dtypes, inside a ``toolkit.jit`` (as JAX
jits its ``_uniform``, ``_normal``, ...; bounds and probabilities are traced
arguments, so a Python float bound is a weak ``float32`` converted in the
program, exactly as in JAX):

* ``uniform``: ``bits >> (nbits - nmant) | bits(1.0)``, bitcast, ``- 1``,
  ``* (maxval - minval) + minval``, ``max(minval, .)``; 16-bit floats with
  fewer than 8 mantissa bits (bfloat16) draw 8-bit random numbers;
* ``normal``: ``sqrt(2) * erf_inv(uniform(nextafter(-1, 0), 1))`` (complex:
  two halves from ``split`` over ``sqrt(2)``);
* ``truncated_normal``: ``sqrt(2) * erf_inv(uniform(erf(lo/sqrt2), erf(hi/sqrt2)))``
  clipped to the open interval;
* ``bernoulli``: ``uniform < p`` (mode ``"high"``: two uniforms);
* ``randint``: two ``split`` keys, ``2 * nbits`` random bits reduced modulo
  the span with JAX's multiplier identity (8/16-bit dtypes sampled in 32 bits);
* ``permutation``/``shuffle``: rounds of a stable sort by 32-bit random keys;
* ``choice``: ``randint`` (with replacement), ``permutation`` (without), or
  cumulative ``p`` + ``searchsorted`` / Gumbel top-k when ``p`` is given;
* ``gumbel`` (modes ``"low"``/``"high"``/``"highest"``; float32 ``"highest"``
  turns 64 random bits into a float with ``clz``, as JAX's ``_safe_int_to_float``), ``categorical`` (Gumbel max / top-k),
  ``exponential``, ``logistic``, ``laplace``, ``cauchy``, ``rademacher``.

Random bits and key splits come from the key's implementation (``check_prng_key`` returns it; the
jitted bodies take it as their last, static argument), so every sampler works with each of JAX's PRNGs.
``tests/random/test_random.py`` compares every sampler bitwise with ``jax.random``.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Sequence

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.core.avals import canonicalize_shape
from toolkit.lax.autodiff import stop_gradient
from toolkit.random import threefry
from toolkit.random.keys import check_prng_key
from toolkit.random.prng_impls import PRNGImpl
from toolkit.stages import jit

__all__ = ["uniform", "normal", "truncated_normal", "bernoulli", "randint", "permutation", "shuffle", "choice",
           "gumbel", "categorical", "exponential", "logistic", "laplace", "cauchy", "rademacher"]

UINT_DTYPES = threefry.UINT_DTYPES


# --- helpers -------------------------------------------------------------------

def _float_dtype(name: str, dtype: Any) -> np.dtype:
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
    return dtype


def _check_shape(name: str, shape: tuple, *param_shapes: Sequence[int]) -> None:
    if param_shapes:
        shape_ = tnp.broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != tuple(shape_):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                             f"result of broadcasting the shapes must equal the shape argument, but got result "
                             f"{tuple(shape_)} for shape argument {tuple(shape)}.")


def _bcast(x: Any, shape: tuple) -> Any:
    """``x`` broadcast (numpy rules) to ``shape``."""
    if tuple(x.shape) == tuple(shape):
        return x
    return tnp.broadcast_to(x, shape)


def _full(shape: tuple, value: Any, dtype: Any) -> Any:
    return lax.full(shape, np.asarray(value, dtype), dtype)


def _shape_of(x: Any) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else tuple(np.shape(x))


def _bits(key: Any, bit_width: int, shape: tuple, impl: PRNGImpl) -> Any:
    return impl.random_bits(key, bit_width, tuple(shape))


def _split2(key: Any, impl: PRNGImpl) -> tuple[Any, Any]:
    keys = impl.split(key, (2,))
    return keys[0], keys[1]


# --- uniform ---------------------------------------------------------------------

def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0., maxval: Any = 1.) -> Any:
    """Uniform values in ``[minval, maxval)`` of ``shape`` and float ``dtype`` (``jax.random.uniform``)."""
    data, impl, _ = check_prng_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    return _uniform(data, minval, maxval, canonicalize_shape(shape), dtype, impl)


@partial(jit, static_argnums=(3, 4, 5))
def _uniform(key: Any, minval: Any, maxval: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    _check_shape("uniform", shape)
    minval = lax.convert_element_type(minval, dtype)
    maxval = lax.convert_element_type(maxval, dtype)
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    bits = _bits(key, rng_bits, shape, impl)
    uint_dtype = UINT_DTYPES[nbits]
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint_dtype)
    float_bits = lax.shift_right_logical(bits, _full(shape, rng_bits - nmant, uint_dtype))
    float_bits = lax.bitwise_or(float_bits, _full(shape, np.array(1.0, dtype).view(uint_dtype), uint_dtype))
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), _full(shape, 1.0, dtype))
    minval, maxval = _bcast(minval, shape), _bcast(maxval, shape)
    return lax.max(minval, lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval))


# --- normal ------------------------------------------------------------------------

def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal values of ``shape`` and float or complex ``dtype`` (``jax.random.normal``)."""
    data, impl, _ = check_prng_key("normal", key)
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    if not dtypes.is_inexact(dtype):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dtype}")
    return _normal(data, canonicalize_shape(shape), dtype, impl)


@partial(jit, static_argnums=(1, 2, 3))
def _normal(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    if dtypes.is_complex(dtype):
        sqrt2 = np.array(np.sqrt(2), dtype)
        key_re, key_im = _split2(key, impl)
        real_dtype = np.array(0, dtype).real.dtype
        re = lax.convert_element_type(_normal_real(key_re, shape, real_dtype, impl), dtype)
        im = lax.convert_element_type(_normal_real(key_im, shape, real_dtype, impl), dtype)
        return (re + 1j * im) / sqrt2
    return _normal_real(key, shape, dtype, impl)


@partial(jit, static_argnums=(1, 2, 3))
def _normal_real(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
    hi = np.array(1., dtype)
    u = _uniform(key, lo, hi, shape, dtype, impl)
    return lax.mul(_full(shape, np.sqrt(2), dtype), lax.erf_inv(u))


# --- truncated_normal -------------------------------------------------------------

def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Standard normal values truncated to ``(lower, upper)`` (``jax.random.truncated_normal``)."""
    if shape is not None:
        shape = canonicalize_shape(shape)
    data, impl, _ = check_prng_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    return _truncated_normal(data, lower, upper, shape, dtype, impl)


@partial(jit, static_argnums=(3, 4, 5))
def _truncated_normal(key: Any, lower: Any, upper: Any, shape: tuple | None, dtype: np.dtype,
                      impl: PRNGImpl) -> Any:
    if shape is None:
        shape = tnp.broadcast_shapes(lower.shape, upper.shape)
    else:
        _check_shape("truncated_normal", shape, lower.shape, upper.shape)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(tnp.divide(lower, sqrt2))
    b = lax.erf(tnp.divide(upper, sqrt2))
    u = _uniform(key, a, b, shape, dtype, impl)
    out = lax.mul(_full(shape, sqrt2, dtype), lax.erf_inv(u))
    lo = lax.nextafter(stop_gradient(lower), _full(lower.shape, np.inf, dtype))
    hi = lax.nextafter(stop_gradient(upper), _full(upper.shape, -np.inf, dtype))
    return tnp.minimum(hi, tnp.maximum(lo, out))


# --- bernoulli, rademacher ------------------------------------------------------

def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None, mode: str = "low") -> Any:
    """Booleans that are True with probability ``p`` (``jax.random.bernoulli``)."""
    if shape is not None:
        shape = canonicalize_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    data, impl, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype_of(p)
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype.name}.")
    return _bernoulli(data, p, shape, mode, impl)


@partial(jit, static_argnums=(2, 3, 4))
def _bernoulli(key: Any, p: Any, shape: tuple | None, mode: str, impl: PRNGImpl) -> Any:
    if shape is None:
        shape = tuple(p.shape)
    else:
        _check_shape("bernoulli", shape, p.shape)
    dtype = p.dtype
    if mode == "high":
        u = _uniform(key, 0., 1., (2, *shape), dtype, impl)
        u1, u2 = u[0], u[1]
        u2 = u2 * 2 ** -dtypes.finfo(dtype).nmant
        return tnp.less(u2, p - u1)
    return tnp.less(_uniform(key, 0., 1., shape, dtype, impl), p)


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """-1 or 1 with equal probability (``jax.random.rademacher``; default dtype int32)."""
    data, impl, _ = check_prng_key("rademacher", key)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    return _rademacher(data, canonicalize_shape(shape), dtype, impl)


@partial(jit, static_argnums=(1, 2, 3))
def _rademacher(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    b = _bernoulli(key, 0.5, shape, "low", impl).astype(dtype)
    return (2 * b - 1).astype(dtype)


# --- randint ------------------------------------------------------------------------

def _convert_and_clip_integer(val: Any, dtype: np.dtype) -> Any:
    vinfo, info = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo = np.asarray(max(int(info.min), int(vinfo.min)), val.dtype)
    hi = np.asarray(min(int(info.max), int(vinfo.max)), val.dtype)
    return tnp.clip(val, lo, hi).astype(dtype)


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform integers in ``[minval, maxval)`` (``jax.random.randint``; default dtype int32)."""
    data, impl, _ = check_prng_key("randint", key)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    shape = canonicalize_shape(shape)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype.name}")
    info = dtypes.iinfo(dtype)
    sampling = dtype
    if info.bits < 32:  # sampled in 32 bits to avoid bias, as JAX
        sampling = dtypes.int32
        minval = tnp.clip(tnp.asarray(minval).astype(dtypes.int32), int(info.min), int(info.max))
        maxval = tnp.clip(tnp.asarray(maxval).astype(dtypes.int32), int(info.min), int(info.max) + 1)
    return _randint(data, minval, maxval, shape, sampling, impl).astype(dtype)


@partial(jit, static_argnums=(3, 4, 5))
def _randint(key: Any, minval: Any, maxval: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    _check_shape("randint", shape, minval.shape, maxval.shape)
    if not dtypes.is_integer(minval.dtype):
        minval = minval.astype(dtypes.default_int_dtype())
    if not dtypes.is_integer(maxval.dtype):
        maxval = maxval.astype(dtypes.default_int_dtype())
    maxval_out_of_range = tnp.greater(
        maxval, _convert_and_clip_integer(tnp.asarray(np.asarray(dtypes.iinfo(dtype).max, dtype)), maxval.dtype))
    minval = _bcast(_convert_and_clip_integer(minval, dtype), shape)
    maxval = _bcast(_convert_and_clip_integer(maxval, dtype), shape)
    maxval_out_of_range = _bcast(maxval_out_of_range, shape)
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    k1, k2 = _split2(key, impl)
    higher_bits, lower_bits = _bits(k1, nbits, shape, impl), _bits(k2, nbits, shape, impl)
    udt = UINT_DTYPES[nbits]
    span = lax.convert_element_type(lax.sub(maxval, minval), udt)
    span = lax.select(lax.le(maxval, minval), _full(shape, 1, udt), span)
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, _full(shape, 1, udt)), span)
    multiplier = lax.rem(_full(shape, 2 ** (nbits // 2), udt), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    random_offset = lax.rem(random_offset, span)
    return lax.add(minval, lax.convert_element_type(random_offset, dtype))


# --- permutation, shuffle, choice ----------------------------------------------------

@partial(jit, static_argnums=(2, 3))
def _shuffle(key: Any, x: Any, axis: int, impl: PRNGImpl) -> Any:
    exponent = 3  # JAX's (tjablin@'s) static number of sort rounds
    uint32max = dtypes.iinfo(np.uint32).max
    num_rounds = int(np.ceil(exponent * np.log(max(1, x.size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        key, subkey = _split2(key, impl)
        sort_keys = _bits(subkey, 32, x.shape, impl)
        _, x = lax.sort((sort_keys, x), dimension=axis, is_stable=True, num_keys=1)
    return x


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _concrete_int(x: Any, what: str) -> int:
    try:
        return int(np.asarray(x))
    except Exception as e:  # a tracer
        raise TypeError(f"{what} must be a concrete integer, not a traced value") from e


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``arange(x)`` or of ``x`` along ``axis`` (``jax.random.permutation``)."""
    data, impl, _ = check_prng_key("permutation", key)
    ndim = len(_shape_of(x))
    axis = _canonical_axis(axis, ndim or 1)
    if not ndim:
        if not dtypes.is_integer(dtypes.dtype_of(x)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = _concrete_int(x, "argument x of jax.random.permutation()")
        return _shuffle(data, tnp.arange(r), axis, impl)
    x = tnp.asarray(x)
    if independent or ndim == 1:
        return _shuffle(data, x, axis, impl)
    ind = _shuffle(data, tnp.arange(x.shape[axis]), 0, impl)
    return tnp.take(x, ind, axis)


def shuffle(key: Any, x: Any, axis: int = 0) -> Any:
    """``x`` shuffled along ``axis`` (the deprecated ``jax.random.shuffle``: independent shuffles)."""
    data, impl, _ = check_prng_key("shuffle", key)
    x = tnp.asarray(x)
    return _shuffle(data, x, _canonical_axis(axis, x.ndim), impl)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None, axis: int = 0,
           mode: str | None = None) -> Any:
    """A random sample of ``a`` (or ``arange(a)``) of ``shape`` (``jax.random.choice``)."""
    check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    arr = tnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = _concrete_int(a, "The error occurred in jax.random.choice()")
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return tnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
                         "when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else tnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = tnp.asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dtypes.default_float_dtype())
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {tuple(p_arr.shape)} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = tnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
            ind = tnp.searchsorted(p_cuml, r).astype(dtypes.default_int_dtype())
        else:
            g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + tnp.log(p_arr)
            ind = lax.top_k(g, n_draws)[1].astype(dtypes.default_int_dtype())
        result = ind if arr.ndim == 0 else tnp.take(arr, ind, axis)
    return result.reshape(tuple(shape) if arr.ndim == 0 else
                          tuple(arr.shape[0:axis]) + tuple(shape) + tuple(arr.shape[axis + 1:]))


# --- gumbel, categorical ---------------------------------------------------------------

def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel values (``jax.random.gumbel``; mode ``"low"`` default, ``"high"``)."""
    data, impl, _ = check_prng_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return _gumbel(data, canonicalize_shape(shape), dtype, mode, impl)


def _safe_int_to_float(bits: Any) -> Any:
    """``uint32[2, ...]`` (a 64-bit fixed-point fraction) as ``float32[...]`` in (0, 1), exactly as JAX rounds it."""
    finfo = dtypes.finfo(np.float32)
    hiclz, loclz = lax.clz(bits[0]), lax.clz(bits[1])
    hi, lo = bits[0], bits[1]
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        tnp.where(hiclz == 32, lax.shift_left(lo, loclz), lax.shift_right_logical(lo, finfo.bits - hiclz)))
    mantissa = lax.shift_right_logical(mantissa, np.array(finfo.bits - finfo.nmant - 1, dtype=np.uint32))
    mantissa = lax.bitwise_and(mantissa, np.array((1 << finfo.nmant) - 1, dtype=np.uint32))
    exp = lax.shift_left(-finfo.minexp - tnp.where(hiclz == 32, 32 + loclz, hiclz), np.array(finfo.nmant, np.uint32))
    exp = lax.bitwise_and(exp, np.array((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1)), dtype=np.uint32))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), np.dtype(np.float32))


@partial(jit, static_argnums=(1, 2, 3, 4))
def _gumbel(key: Any, shape: tuple, dtype: np.dtype, mode: str, impl: PRNGImpl) -> Any:
    info = dtypes.finfo(dtype)
    if dtype == dtypes.float32 and mode == "highest":
        # 64 random bits as a fixed-point number in (0, 1): values below 0.5 use log1p of 1 - x
        bits = _bits(key, 32, (2, *shape), impl)
        neg = lax.bitwise_not(bits)
        lo_bits = neg[1]
        carry = tnp.stack([lo_bits == np.uint32(0xFFFFFFFF), tnp.ones_like(lo_bits)]).astype(np.uint32)
        neg = neg + carry  # 1 - bits in u64 fixed point
        flip_mask = bits[0] < np.uint32(1 << 31)
        x = _safe_int_to_float(tnp.where(flip_mask, bits, neg))
        return tnp.where(flip_mask, -tnp.log(-tnp.log1p(-x)), -tnp.log(-tnp.log(x)))
    if mode in ("high", "highest"):
        u = _uniform(key, 0., 1., (2, *shape), dtype, impl)
        high, low = u[0], u[1]
        x = tnp.where(high >= 0.5, high, high + 2 ** -(info.nmant) * low + info.tiny)
        return -tnp.log(-tnp.log1p(-x))
    return -tnp.log(-tnp.log(_uniform(key, info.tiny, 1., shape, dtype, impl)))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None, replace: bool = True,
                mode: str | None = None) -> Any:
    """Samples of categorical distributions given by unnormalized log-probabilities (``jax.random.categorical``)."""
    check_prng_key("categorical", key)
    logits_arr = tnp.asarray(logits)
    batch_shape = tuple(np.delete(np.array(logits_arr.shape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonicalize_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= len(logits_arr.shape)
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % len(logits_arr.shape), logits_arr.shape[axis])
        g = gumbel(key, (*shape_prefix, *logits_shape), logits_arr.dtype, mode=mode)
        return tnp.argmax(g + tnp.expand_dims(logits_arr, tuple(range(len(shape_prefix)))), axis=axis)
    logits_arr = logits_arr + gumbel(key, logits_arr.shape, logits_arr.dtype, mode=mode)
    k = math.prod(shape_prefix)
    if k > logits_arr.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                         f"categories ({logits_arr.shape[axis]}).")
    _, indices = lax.top_k(tnp.moveaxis(logits_arr, axis, -1), k)
    perm = (indices.ndim - 1, *range(indices.ndim - 1))
    return tnp.reshape(tnp.transpose(indices, perm), shape)


# --- simple transforms of uniform ----------------------------------------------------

def _simple(name: str, body):
    def sampler(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
        data, impl, _ = check_prng_key(name, key)
        return compiled(data, canonicalize_shape(shape), _float_dtype(name, dtype), impl)
    compiled = jit(body, static_argnums=(1, 2, 3))
    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = f"Standard {name} values of ``shape`` and float ``dtype`` (``jax.random.{name}``)."
    return sampler


def _exponential(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    u = _uniform(key, 0., 1., shape, dtype, impl)
    return lax.neg(lax.log1p(lax.neg(u)))


def _logistic(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    x = _uniform(key, dtypes.finfo(dtype).tiny, 1., shape, dtype, impl)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def _laplace(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    u = _uniform(key, -1. + dtypes.finfo(dtype).epsneg, 1., shape, dtype, impl)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _cauchy(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    u = _uniform(key, dtypes.finfo(dtype).eps, 1., shape, dtype, impl)
    return lax.tan(lax.mul(_full(shape, np.pi, dtype), lax.sub(u, _full(shape, 0.5, dtype))))


exponential = _simple("exponential", _exponential)
logistic = _simple("logistic", _logistic)
laplace = _simple("laplace", _laplace)
cauchy = _simple("cauchy", _cauchy)
