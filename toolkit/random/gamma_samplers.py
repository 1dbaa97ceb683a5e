"""Gamma-family samplers of ``jax.random`` (JAX 0.10.2): ``gamma``, ``loggamma``, ``beta``, ``dirichlet``.

Bit-identical with JAX for the same key because every step is JAX's:

* the key is split into one key per output element (``split(key, a.size)``);
* each element runs Marsaglia and Tsang's method as JAX's ``_gamma_one``:
  an outer ``while_loop`` draws ``(X, V, U)`` until the squeeze or the log test
  accepts, an inner ``while_loop`` draws normals until ``1 + c * x > 0``; for
  ``a < 1`` the sample of ``a + 1`` is boosted by ``U**(1/a)`` (in log space,
  ``loggamma``, by ``-Exponential / a``). JAX lowers this as a ``vmap`` over the
  elements (a while loop whose predicate is batched): so does toolkit;
* the derivative with respect to ``a`` is JAX's implicit reparameterization,
  ``d sample / d a = -(d/da P(a, x)) / p(x; a)``, computed as JAX's
  ``random_gamma_grad`` (the series and the continued fraction of the
  regularized incomplete gamma function and their ``a``-derivatives, ported
  from ``jax._src.lax.special``); it is a ``custom_jvp`` here, where JAX has
  a primitive, so ``grad``/``jvp``/``vmap`` all work;
* ``beta`` is ``Ga / (Ga + Gb)`` from two ``loggamma`` draws scaled by their
  maximum, ``dirichlet`` the softmax of ``loggamma`` draws.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Sequence

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad import custom_jvp
from toolkit.batching import vmap
from toolkit.core import dtypes, tracing
from toolkit.core.avals import aval_of, canonicalize_shape
from toolkit.lax.autodiff import stop_gradient
from toolkit.lax.custom_batching import FlatVmapRule, custom_vmap_call_p
from toolkit.random.keys import check_prng_key
from toolkit.random.prng_impls import THREEFRY2X32, PRNGImpl
from toolkit.random.samplers import _check_shape, _exponential, _float_dtype, _normal_real, _uniform
from toolkit.stages import jit

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "random_gamma_grad", "check_all_safe_to_cast",
           "check_broadcast_shapes"]


# --- argument checks shared by the samplers with parameters -----------------------------------

def check_broadcast_shapes(name: str, shape: Sequence[int] | None, *args: Any) -> tuple:
    """The sample shape: ``shape`` checked against the parameters' shapes, or their broadcast when ``None``."""
    arg_shapes = [tuple(np.shape(a)) if not hasattr(a, "shape") else tuple(a.shape) for a in args]
    if shape is None:
        return tuple(tnp.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shape = canonicalize_shape(shape)
    _check_shape(name, shape, *arg_shapes)
    return shape


def check_all_safe_to_cast(name: str, dtype: np.dtype, *args: Any) -> None:
    """Raise ``TypePromotionError`` (as JAX) when a parameter's dtype cannot be cast to ``dtype`` without loss."""
    for arg in args:
        in_dtype = dtypes.dtype_of(arg)
        if in_dtype == dtype:
            continue
        if dtypes.result_type(arg, dtype) != dtype:
            raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely cast argument of type "
                                            f"{in_dtype} to {dtype}")


def _c(x: Any, value: Any) -> Any:
    """``value`` as a scalar of ``x``'s dtype (JAX's ``lax._const``)."""
    return np.asarray(value, x.dtype)


def _split(key: Any, impl: PRNGImpl, num: int = 2) -> Any:
    return impl.split(key, (num,))


# --- Marsaglia-Tsang, one element ------------------------------------------------------------

def _gamma_one(key: Any, alpha: Any, log_space: bool, impl: PRNGImpl) -> Any:
    dtype = alpha.dtype
    zero, one, two, minus_one = (lax.full((), np.asarray(v, dtype), dtype) for v in (0, 1, 2, -1))
    one_over_two, one_over_three, squeeze_const = _c(alpha, 0.5), _c(alpha, 1. / 3.), _c(alpha, 0.0331)

    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kXVU: tuple) -> Any:
        _, X, V, U = kXVU
        return lax.bitwise_and(
            lax.ge(U, lax.sub(one, lax.mul(squeeze_const, lax.mul(X, X)))),
            lax.ge(lax.log(U), lax.add(lax.mul(X, one_over_two),
                                       lax.mul(d, lax.add(lax.sub(one, V), lax.log(V))))))

    def body_fn(kXVU: tuple) -> tuple:
        def next_kxv(kxv: tuple) -> tuple:
            keys = _split(kxv[0], impl)
            x = _normal_real(keys[1], (), dtype, impl)
            return keys[0], x, lax.add(one, lax.mul(x, c))

        keys = _split(kXVU[0], impl, 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv, (keys[1], zero, minus_one))
        X = lax.mul(x, x)
        V = lax.mul(lax.mul(v, v), v)
        U = _uniform(keys[2], 0., 1., (), dtype, impl)
        return keys[0], X, V, U

    keys = _split(key, impl)
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (keys[0], zero, one, two))
    subkey = keys[1]
    if log_space:
        log_samples = lax.neg(_exponential(subkey, (), dtype, impl))
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = lax.sub(one, _uniform(subkey, 0., 1., (), dtype, impl))
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _gamma_impl(key: Any, a: Any, log_space: bool, impl: PRNGImpl) -> Any:
    shape = tuple(a.shape)
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return a
    if impl is not THREEFRY2X32:
        # JAX maps the other implementations' elements one by one (lax.map), threefry2x32's with vmap.
        return _gamma_mapped(key, a, log_space, impl)
    keys = impl.split(key, (n,))
    alphas = tnp.reshape(a, (n,))
    # Under vmap with batched keys and unbatched `a`, JAX's batching rule broadcasts `a` to the batch
    # before any arithmetic on it; toolkit's vmap would keep `a` (and d, c) unbatched, and XLA then
    # rounds the loop differently (1 ulp, seen on CPU). Tying `a` to the keys by a select that never
    # picks NaN (a uint32 converted to float is never negative) batches it exactly where JAX does.
    never = lax.lt(lax.convert_element_type(keys[:, 0], alphas.dtype), lax.full((n,), _c(alphas, 0), alphas.dtype))
    alphas = lax.select(never, lax.full((n,), _c(alphas, np.nan), alphas.dtype), alphas)
    samples = vmap(partial(_gamma_one, log_space=log_space, impl=impl))(keys, alphas)
    return tnp.reshape(samples, shape)


def _gamma_mapped(keys: Any, a: Any, log_space: bool, impl: PRNGImpl) -> Any:
    """Gamma samples for implementations other than threefry2x32, as JAX's ``random_gamma_p`` computes them.

    ``keys`` is ``(*batch, *key_shape)`` raw key data and ``a`` ``(*batch, *rest)``: each key is split into one
    key per element of ``rest`` (a ``vmap`` of the implementation's split over the batch), and the elements
    run one at a time (``lax.map``). Under ``vmap`` JAX's batching rule moves the batch in front of keys and
    ``a`` (broadcasting an unbatched one) and re-binds the primitive, so every element still runs unbatched on
    its own key: for rbg and unsafe_rbg, whose bits (and unsafe_rbg's splits) under ``vmap`` come from the
    first key of a batch, that decides the values, for the others the rounding. A ``custom_vmap_call`` gives
    this function that rule, again under nested ``vmap``\\ s.
    """
    def mapped(keys: Any, a: Any) -> list[Any]:
        batch = tuple(keys.shape[:len(keys.shape) - impl.key_ndim])
        keys_count, count = math.prod(batch), math.prod(a.shape[len(batch):])
        split = vmap(lambda k: impl.split(k, (count,)))(tnp.reshape(keys, (keys_count, *impl.key_shape)))
        element_keys = tnp.reshape(split, (keys_count * count, *impl.key_shape))
        alphas = tnp.reshape(a, (keys_count * count,))
        samples = lax.map(lambda ka: _gamma_one(ka[0], ka[1], log_space, impl), (element_keys, alphas))
        return [tnp.reshape(samples, tuple(a.shape))]

    if not tracing.is_tracing():
        return mapped(keys, a)[0]
    call, captured = tracing.trace_flat(mapped, [aval_of(keys), aval_of(a)])

    def batch_in_front(axis_size: Any, in_batched: list[bool], args: list[Any]) -> tuple[list[Any], list[bool]]:
        batched_keys, batched_a = (x if b else tnp.broadcast_to(x, (axis_size, *x.shape))
                                   for x, b in zip(args, in_batched))
        return [_gamma_mapped(batched_keys, batched_a, log_space, impl)], [True]

    out, = custom_vmap_call_p.bind(keys, a, *captured, call=call,
                                   rule=FlatVmapRule("random_gamma_batching", batch_in_front),
                                   num_consts=len(captured))
    return out


@partial(custom_jvp, nondiff_argnums=(2, 3))
def _random_gamma(key: Any, a: Any, log_space: bool, impl: PRNGImpl) -> Any:
    return _gamma_impl(key, a, log_space, impl)


@_random_gamma.defjvp
def _random_gamma_jvp(log_space: bool, impl: PRNGImpl, primals: tuple, tangents: tuple) -> tuple:
    key, a = primals
    a_dot = tangents[1]
    ans = _random_gamma(key, a, log_space, impl)
    return ans, lax.mul(a_dot, _gamma_grad(ans, a, log_space))


def _gamma_grad(sample: Any, a: Any, log_space: bool) -> Any:
    if log_space:
        # d[log(sample)] = d[sample] / sample; exp(log_sample) may round to 0: use the smallest float instead
        samples = lax.exp(sample)
        tiny = lax.full(samples.shape, np.asarray(dtypes.finfo(samples.dtype).tiny, samples.dtype), samples.dtype)
        samples = lax.select(lax.eq(samples, lax.full(samples.shape, _c(samples, 0), samples.dtype)), tiny, samples)
        return lax.div(random_gamma_grad(a, samples), samples)
    return random_gamma_grad(a, sample)


# --- d sample / d a (JAX's random_gamma_grad) -------------------------------------------------

def _any(pred: Any) -> Any:
    return tnp.any(pred) if pred.ndim else pred


def _full_like(x: Any, value: Any) -> Any:
    return lax.full(x.shape, np.asarray(value, x.dtype), x.dtype)


def _igamma_series(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype) -> Any:
    eps = np.asarray(dtypes.finfo(dtype).eps, dtype)

    def body_fn(vals: tuple) -> tuple:
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = r + _c(r, 1.)
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
        conditional = lax.bitwise_and(enabled, lax.gt(tnp.abs(dc_da / dans_da), eps))
        return (conditional, *(lax.select(enabled, new, old)
                               for new, old in zip((r, c, ans, x, dc_da, dans_da), vals[1:])))

    init = (enabled, a, _full_like(a, 1), _full_like(a, 1), x, _full_like(a, 0), _full_like(a, 0))
    vals = lax.while_loop(lambda v: _any(v[0]), body_fn, init)
    ans, dans_da = vals[3], vals[6]
    dlogax_da = lax.log(x) - lax.digamma(a + _c(a, 1))
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype) -> Any:
    eps = np.asarray(dtypes.finfo(dtype).eps, dtype)

    def cond_fn(vals: tuple) -> Any:
        return lax.bitwise_and(lax.lt(vals[5], _c(vals[5], 2000)), _any(vals[0]))

    def body_fn(vals: tuple) -> tuple:
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = c + _c(c, 1)
        y = y + _c(y, 1)
        z = z + _c(z, 2)
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        qk_is_nonzero = lax.ne(qk, _full_like(qk, 0))
        r = pk / qk
        t = lax.select(qk_is_nonzero, tnp.abs(lax.div(lax.sub(ans, r), r)), _full_like(r, 1))
        ans = lax.select(qk_is_nonzero, r, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = lax.select(qk_is_nonzero, lax.div(dpk_da - ans * dqk_da, qk), dans_da)
        grad_conditional = lax.select(qk_is_nonzero, tnp.abs(dans_da_new - dans_da), _full_like(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = lax.gt(tnp.abs(pk), lax.reciprocal(lax.full(pk.shape, eps, dtype)))

        def scaled(v: Any) -> Any:
            return lax.select(rescale, lax.mul(v, lax.full(v.shape, eps, dtype)), v)

        pkm2, pkm1, qkm2, qkm1 = scaled(pkm2), scaled(pkm1), scaled(qkm2), scaled(qkm1)
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = scaled(dpkm2_da), scaled(dqkm2_da), scaled(dpkm1_da), scaled(dqkm1_da)
        conditional = lax.bitwise_and(enabled, lax.gt(grad_conditional, _full_like(grad_conditional, eps)))
        new = (ans, t, y, z)
        rest = (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        return (conditional, *(lax.select(enabled, n, o) for n, o in zip(new, vals[1:5])), c,
                *(lax.select(enabled, n, o) for n, o in zip(rest, vals[6:])))

    y = _c(a, 1) - a
    z = x + y + _c(x, 1)
    c = lax.full((), _c(x, 0), x.dtype)
    pkm2 = _full_like(x, 1)
    qkm2 = x
    pkm1 = x + _c(x, 1)
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = _full_like(x, 1)
    dpkm2_da, dqkm2_da, dpkm1_da = _full_like(x, 0), _full_like(x, 0), _full_like(x, 0)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    init = (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)
    vals = lax.while_loop(cond_fn, body_fn, init)
    ans, dans_da = vals[1], vals[14]
    dlogax_da = lax.log(x) - lax.digamma(a)
    return lax.neg(lax.mul(lax.add(dans_da, lax.mul(ans, dlogax_da)), x))


def random_gamma_grad(a: Any, x: Any) -> Any:
    """``d x / d a`` of a Gamma(``a``) sample ``x`` (``jax.lax.random_gamma_grad``), elementwise.

    ``a`` and ``x`` are float arrays of one shape and dtype; NaN where ``a <= 0``,
    ``x < 0`` or either is NaN, 0 where ``x == 0``.
    """
    a, x = tnp.asarray(a), tnp.asarray(x)
    if a.dtype != x.dtype or tuple(a.shape) != tuple(x.shape) or not dtypes.is_float(a.dtype):
        raise TypeError("random_gamma_grad takes float arrays of one shape and dtype, got "
                        f"{a.dtype}{list(a.shape)} and {x.dtype}{list(x.shape)}")
    dtype = a.dtype
    is_nan = lax.bitwise_or(lax.ne(a, a), lax.ne(x, x))
    x_is_zero = lax.eq(x, _full_like(x, 0))
    domain_error = lax.bitwise_or(lax.lt(x, _full_like(x, 0)), lax.le(a, _full_like(a, 0)))
    use_igammac = lax.bitwise_and(lax.gt(x, _full_like(x, 1)), lax.gt(x, a))
    ax = a * lax.log(x) - x - lax.lgamma(a)
    underflow = lax.lt(ax, _full_like(ax, -np.log(dtypes.finfo(dtype).max)))
    ax = lax.exp(ax)
    enabled = lax.bitwise_not(lax.bitwise_or(lax.bitwise_or(lax.bitwise_or(x_is_zero, domain_error), underflow),
                                             is_nan))
    output = lax.select(
        use_igammac,
        lax.neg(_igammac_continued_fraction(ax, x, a, lax.bitwise_and(enabled, use_igammac), dtype)),
        _igamma_series(ax, x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_igammac)), dtype))
    output = lax.select(x_is_zero, _full_like(output, 0), output)
    return lax.select(lax.bitwise_or(domain_error, is_nan), _full_like(a, np.nan), output)


# --- public samplers --------------------------------------------------------------------------

@partial(jit, static_argnums=(2, 3, 4, 5))
def _gamma(key: Any, a: Any, shape: tuple | None, dtype: np.dtype, log_space: bool, impl: PRNGImpl) -> Any:
    if shape is None:
        shape = tuple(a.shape)
    else:
        _check_shape("gamma", shape, a.shape)
    a = lax.convert_element_type(a, dtype)
    if tuple(a.shape) != tuple(shape):
        a = tnp.broadcast_to(a, shape)
    return _random_gamma(key, a, log_space, impl)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Standard Gamma(``a``) values (``jax.random.gamma``): shape ``shape`` or ``a.shape``; float ``dtype``.

    Differentiable with respect to ``a`` (implicit reparameterization, as JAX).
    """
    data, impl, _ = check_prng_key("gamma", key)
    dtype = _float_dtype("gamma", dtype)
    return _gamma(data, a, None if shape is None else canonicalize_shape(shape), dtype, False, impl)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """The log of standard Gamma(``a``) values, computed in log space (``jax.random.loggamma``).

    More accurate than ``log(gamma(...))`` for small ``a``; differentiable in ``a``.
    """
    data, impl, _ = check_prng_key("loggamma", key)
    dtype = _float_dtype("gamma", dtype)  # JAX's message names `gamma`
    return _gamma(data, a, None if shape is None else canonicalize_shape(shape), dtype, True, impl)


@partial(jit, static_argnums=(3, 4, 5))
def _beta(key: Any, a: Any, b: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    a = lax.convert_element_type(a, dtype)
    b = lax.convert_element_type(b, dtype)
    keys = _split(key, impl)
    a = tnp.broadcast_to(a, shape)
    b = tnp.broadcast_to(b, shape)
    log_gamma_a = _gamma(keys[0], a, shape, dtype, True, impl)
    log_gamma_b = _gamma(keys[1], b, shape, dtype, True, impl)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = tnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = tnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Beta(``a``, ``b``) values in [0, 1] (``jax.random.beta``); differentiable in ``a`` and ``b``."""
    data, impl, _ = check_prng_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    check_all_safe_to_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    return _beta(data, a, b, shape, dtype, impl)


def _softmax_last(x: Any) -> Any:
    unnormalized = tnp.exp(x - stop_gradient(tnp.max(x, axis=-1, keepdims=True)))
    return unnormalized / tnp.sum(unnormalized, axis=-1, keepdims=True)


@partial(jit, static_argnums=(2, 3, 4))
def _dirichlet(key: Any, alpha: Any, shape: tuple | None, dtype: np.dtype, impl: PRNGImpl) -> Any:
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    if shape is None:
        shape = tuple(alpha.shape[:-1])
    else:
        _check_shape("dirichlet", shape, alpha.shape[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    log_gamma_samples = _gamma(key, alpha, tuple(shape) + tuple(alpha.shape[-1:]), dtype, True, impl)
    return _softmax_last(log_gamma_samples)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Dirichlet(``alpha``) values, shape ``shape + alpha.shape[-1:]`` (``jax.random.dirichlet``).

    Each row sums to 1; differentiable in ``alpha``.
    """
    data, impl, _ = check_prng_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    return _dirichlet(data, alpha, None if shape is None else canonicalize_shape(shape), dtype, impl)
