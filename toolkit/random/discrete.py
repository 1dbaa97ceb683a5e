"""Discrete distributions of ``jax.random`` (JAX 0.10.2): ``poisson``, ``binomial``, ``multinomial``, ``geometric``.

Bit-identical with JAX for the same key, because the loops are JAX's:

* ``poisson``: Knuth's multiplication method for ``lam < 10`` (a
  ``while_loop`` over the whole array, adding ``log(uniform)`` until it drops
  below ``-lam``) and Hörmann's transformed rejection otherwise; both run on
  the whole array and ``select`` picks per element, as in JAX (so both draw
  from the same key);
* ``binomial``: the geometric-sum inversion for ``n * min(p, 1-p) <= 10`` and
  BTRS (transformed rejection with Stirling tails) otherwise, in float dtypes;
* ``multinomial``: a ``scan`` of conditional binomials over the categories;
* ``geometric``: ``floor(log u / log1p(-p)) + 1``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.core.avals import canonicalize_shape
from toolkit.random.gamma_samplers import check_broadcast_shapes
from toolkit.random.keys import check_prng_key
from toolkit.random.prng_impls import THREEFRY2X32, PRNGImpl
from toolkit.random.samplers import _check_shape, _uniform
from toolkit.stages import jit

__all__ = ["poisson", "binomial", "multinomial", "geometric"]


def _split(key: Any, impl: PRNGImpl, num: int = 2) -> Any:
    return impl.split(key, (num,))


def _full(shape: tuple, value: Any, dtype: Any) -> Any:
    return lax.full(shape, np.asarray(value, dtype), dtype)


def _int_dtype(name: str, dtype: Any) -> np.dtype:
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    if not dtypes.is_integer(dtype):
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dtype}")
    return dtype


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


# --- poisson ----------------------------------------------------------------------------------

@partial(jit, static_argnums=(2, 3, 4, 5))
def _poisson_knuth(key: Any, lam: Any, shape: tuple, dtype: np.dtype, max_iters: Any, impl: PRNGImpl) -> Any:
    def body_fn(carry: tuple) -> tuple:
        i, k, rng, log_prod = carry
        keys = _split(rng, impl)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(keys[1], 0., 1., shape, np.dtype(np.float32), impl)
        return i + 1, k, keys[0], log_prod + tnp.log(u)

    def cond_fn(carry: tuple) -> Any:
        i, log_prod = carry[0], carry[3]
        return tnp.any(log_prod > -lam) & (i < max_iters)

    k_init = _full(shape, 0, dtype)
    log_rate_init = _full(shape, 0, np.float32)
    k = lax.while_loop(cond_fn, body_fn, (np.asarray(0, dtype), k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


@partial(jit, static_argnums=(2, 3, 4, 5))
def _poisson_rejection(key: Any, lam: Any, shape: tuple, dtype: np.dtype, max_iters: Any, impl: PRNGImpl) -> Any:
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        keys = _split(key, impl, 3)
        u = _uniform(keys[1], 0., 1., shape, lam.dtype, impl) - 0.5
        v = _uniform(keys[2], 0., 1., shape, lam.dtype, impl)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        return i + 1, k_out, accepted | accept, keys[0]

    def cond_fn(carry: tuple) -> Any:
        i, _, accepted, _ = carry
        return tnp.any(~accepted) & (i < max_iters)

    k_init = _full(shape, -1, lam.dtype)
    accepted = _full(shape, False, np.bool_)
    k = lax.while_loop(cond_fn, body_fn, (np.asarray(0, dtype), k_init, accepted, key))[1]
    return k.astype(dtype)


@partial(jit, static_argnums=(2, 3, 4))
def _poisson(key: Any, lam: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, _full(lam.shape, 0.0, lam.dtype))
    lam_rejection = lax.select(use_knuth, _full(lam.shape, 1e5, lam.dtype), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters, impl),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters, impl))
    return lax.select(lam == 0, tnp.zeros_like(result), result)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Poisson(``lam``) counts of integer ``dtype`` (``jax.random.poisson``; default int32, int64 under x64).

    ``lam`` is computed in float32 as in JAX; ``lam == 0`` gives 0. As JAX's, only for threefry2x32 keys
    (``NotImplementedError`` for the other implementations).
    """
    data, impl, _ = check_prng_key("poisson", key)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    if impl is not THREEFRY2X32:
        raise NotImplementedError(f"`poisson` is only implemented for the threefry2x32 RNG, not {impl}")
    if not dtypes.is_integer(dtype):
        raise ValueError(f"dtype argument to `poisson` must be an int dtype, got {dtype}")
    shape = tuple(np.shape(lam)) if shape is None else canonicalize_shape(shape)
    lam = tnp.broadcast_to(lam, shape)
    lam = lax.convert_element_type(lam, dtypes.float32)
    return _poisson(data, lam, shape, dtype, impl)


# --- binomial, multinomial -----------------------------------------------------------------------

_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287]


def _stirling_approx_tail(k: Any) -> Any:
    stirling_tail_vals = tnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_tail_values = k <= 9
    k = lax.clamp(np.asarray(0.0, k.dtype), k, np.asarray(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = tnp.floor(k)
    return lax.select(use_tail_values, stirling_tail_vals[tnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(key: Any, count: Any, prob: Any, shape: tuple, dtype: np.dtype, max_iters: Any,
                        impl: PRNGImpl) -> Any:
    log1minusprob = tnp.log1p(-prob)

    def body_fn(carry: tuple) -> tuple:
        i, num_geom, geom_sum, key = carry
        keys = _split(key, impl)
        subkey, key = keys[0], keys[1]
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(subkey, 0., 1., shape, prob.dtype, impl)
        geom = tnp.ceil(tnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond_fn(carry: tuple) -> Any:
        i, geom_sum = carry[0], carry[2]
        return tnp.any(geom_sum <= count) & (i < max_iters)

    carry = (np.int32(0), _full(shape, 0, prob.dtype), _full(shape, 0, prob.dtype), key)
    k = lax.while_loop(cond_fn, body_fn, carry)[1]
    return (k - 1).astype(dtype)


def _btrs(key: Any, count: Any, prob: Any, shape: tuple, dtype: np.dtype, max_iters: Any, impl: PRNGImpl) -> Any:
    stddev = tnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = tnp.floor((count + 1) * prob)

    def body_fn(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        keys = _split(key, impl, 3)
        u = _uniform(keys[1], 0., 1., shape, prob.dtype, impl)
        v = _uniform(keys[2], 0., 1., shape, prob.dtype, impl)
        u = u - 0.5
        us = 0.5 - tnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = tnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = tnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * tnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * tnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * tnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        return i + 1, k_out, accepted | accept, keys[0]

    def cond_fn(carry: tuple) -> Any:
        i, accepted = carry[0], carry[2]
        return tnp.any(~accepted) & (i < max_iters)

    carry = (np.int32(0), _full(shape, -1, prob.dtype), _full(shape, False, np.bool_), key)
    return lax.while_loop(cond_fn, body_fn, carry)[1].astype(dtype)


@partial(jit, static_argnums=(3, 4, 5))
def _binomial(key: Any, count: Any, prob: Any, shape: tuple | None, dtype: np.dtype, impl: PRNGImpl) -> Any:
    if shape is None:
        shape = tuple(tnp.broadcast_shapes(count.shape, prob.shape))
    else:
        _check_shape("binomial", shape, count.shape, prob.shape)
    if not dtypes.is_inexact(prob.dtype):
        prob = prob.astype(dtypes.default_float_dtype())
    count = lax.convert_element_type(count, prob.dtype)
    count = tnp.broadcast_to(count, shape)
    prob = tnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = tnp.isinf(count)
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, _full(q.shape, 0.01, q.dtype), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = tnp.floor(count)
    count_inv = lax.select(use_inversion, count, _full(count.shape, 0.0, count.dtype))
    count_btrs = lax.select(use_inversion, _full(count.shape, 1e4, count.dtype), count)
    q_btrs = lax.select(use_inversion, _full(q.shape, 0.5, q.dtype), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion, _binomial_inversion(key, count_inv, q, shape, dtype, max_iters, impl),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters, impl))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, tnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), tnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples, count.astype(dtype) - samples)


def _check_arraylike(name: str, *args: Any) -> None:
    for i, arg in enumerate(args):
        if isinstance(arg, (list, tuple, str)) or not (hasattr(arg, "dtype") or np.isscalar(arg)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(arg).__name__} at position {i}.")


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Binomial(``n``, ``p``) counts as floats (``jax.random.binomial``; float ``dtype``).

    NaN for ``p`` NaN or negative, or ``n`` NaN or negative; ``inf`` for ``n = inf``.
    """
    data, impl, _ = check_prng_key("binomial", key)
    _check_arraylike("binomial", n, p)
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dtype}")
    return _binomial(data, n, p, None if shape is None else canonicalize_shape(shape), dtype, impl)


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None, dtype: Any = None,
                unroll: int | bool = 1) -> Any:
    """Multinomial(``n``, ``p``) counts over the last axis of ``p`` (``jax.random.multinomial``).

    Conditional binomials, category by category (a ``scan``); result shape
    ``shape`` (default ``p.shape``), float ``dtype``.
    """
    data, impl, _ = check_prng_key("multinomial", key)
    _check_arraylike("multinomial", n, p)
    n, p = tnp.asarray(n), tnp.asarray(p)
    dt = dtypes.result_type(n, p)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float_dtype()
    n, p = n.astype(dt), p.astype(dt)
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    shape = tuple(p.shape) if shape is None else canonicalize_shape(shape)
    n = tnp.broadcast_to(n, shape[:-1])
    p = tnp.broadcast_to(p, shape)

    def f(remainder: Any, ratio_key: tuple) -> tuple:
        ratio, key = ratio_key
        count = _binomial(key, remainder, ratio.clip(0, 1), None, remainder.dtype, impl)
        return remainder - count, count

    p = tnp.moveaxis(p, -1, 0)
    remaining_probs = lax.cumsum(p, 0, reverse=True)
    ratios = p / tnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = impl.split(data, (ratios.shape[0],))
    _, counts = lax.scan(f, n, (ratios, keys), unroll=unroll)
    return tnp.moveaxis(counts, 0, -1).astype(dtype)


# --- geometric ------------------------------------------------------------------------------------

@partial(jit, static_argnums=(2, 3, 4))
def _geometric(key: Any, p: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.default_float_dtype())
    u = _uniform(key, 0., 1., shape, p.dtype, impl)
    u = tnp.where(u == 0, 1, u)
    log_u = lax.log(u)
    log_one_minus_p = tnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    return g.astype(dtype)


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Geometric(``p``) counts >= 1 of integer ``dtype`` (``jax.random.geometric``)."""
    data, impl, _ = check_prng_key("geometric", key)
    dtype = _int_dtype("geometric", dtype)
    shape = check_broadcast_shapes("geometric", shape, p)
    _check_arraylike("geometric", p)
    return _geometric(data, p, shape, dtype, impl)
