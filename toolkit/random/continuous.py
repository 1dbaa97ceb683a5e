"""Continuous distributions of ``jax.random`` (JAX 0.10.2) built on uniform, normal, exponential and gamma draws.

Each function repeats JAX's construction (same key splits, same operations in
the same order and dtypes, inside a ``toolkit.jit`` as JAX's ``_pareto``,
``_t``, ...), so for the same key it returns the same bits:

* ``pareto``: ``exp(exponential / b)``; ``lognormal``: ``exp(normal * sigma)``;
* ``t``: ``normal * sqrt((df/2) / gamma(df/2))`` from two split keys;
* ``chisquare``: ``2 * exp(loggamma(df/2))``; ``f``: a ratio of two chi-squares;
* ``maxwell``: the 2-norm of 3 normals; ``double_sided_maxwell``: it times a
  Rademacher sign, ``* scale + loc``;
* ``weibull_min``: ``(-log1p(-u)) ** (1/concentration) * scale``;
* ``rayleigh``: ``scale * sqrt(-2 log u)``; ``wald``: Michael-Schucany-Haas;
* ``triangular``: the inverse CDF; ``generalized_normal``: ``sign * gamma(1/p) ** (1/p)``;
  ``ball``: generalized normals over ``(sum |g|**p + exponential) ** (1/p)``;
* ``multivariate_normal``: ``mean + factor @ normal`` with the factor from
  ``cholesky``, ``eigh`` or ``svd`` of ``cov`` (``toolkit.numpy.linalg``, on the
  same LAPACK kernels as JAX's); ``orthogonal``: ``Q * sign(diag(R))`` of the QR
  of a normal matrix.
"""

from __future__ import annotations

import operator
from functools import partial
from typing import Any, Sequence

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.core.avals import canonicalize_shape
from toolkit.numpy import linalg as tlinalg
from toolkit.random.gamma_samplers import _gamma, check_all_safe_to_cast, check_broadcast_shapes
from toolkit.random.keys import check_prng_key
from toolkit.random.samplers import (
    _check_shape, _exponential, _float_dtype, _normal, _rademacher, _uniform,
)
from toolkit.random.prng_impls import PRNGImpl
from toolkit.stages import jit

__all__ = ["pareto", "lognormal", "t", "chisquare", "f", "maxwell", "double_sided_maxwell", "weibull_min",
           "rayleigh", "wald", "triangular", "generalized_normal", "ball", "multivariate_normal", "orthogonal"]


def _split(key: Any, impl: PRNGImpl, num: int = 2) -> Any:
    return impl.split(key, (num,))


def _checked(name: str, key: Any, dtype: Any, shape: Sequence[int] | None, *params: Any) -> tuple:
    """The raw key, its implementation, the float dtype and the sample shape, checked as JAX checks them."""
    data, impl, _ = check_prng_key(name, key)
    dtype = _float_dtype(name, dtype)
    shape = check_broadcast_shapes(name, shape, *params)
    check_all_safe_to_cast(name, dtype, *params)
    return data, impl, dtype, shape


# --- pareto, lognormal ------------------------------------------------------------------------

@partial(jit, static_argnums=(2, 3, 4))
def _pareto(key: Any, b: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    b = lax.convert_element_type(b, dtype)
    e = _exponential(key, shape, dtype, impl)
    return lax.exp(e / b)


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto values with shape parameter ``b`` (``jax.random.pareto``): ``exp(Exponential / b)``."""
    data, impl, dtype, shape = _checked("pareto", key, dtype, shape, b)
    return _pareto(data, b, shape, dtype, impl)


@partial(jit, static_argnums=(2, 3, 4))
def _lognormal(key: Any, sigma: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(_normal(key, shape, dtype, impl) * sigma)


def lognormal(key: Any, sigma: Any = np.float32(1), shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Log-normal values, ``exp(sigma * N(0, 1))`` (``jax.random.lognormal``)."""
    data, impl, _ = check_prng_key("lognormal", key)
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    if not dtypes.is_inexact(dtype):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, got {dtype}")
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    check_all_safe_to_cast("lognormal", dtype, sigma)
    return _lognormal(data, sigma, shape, dtype, impl)


# --- t, chisquare, f ----------------------------------------------------------------------------

@partial(jit, static_argnums=(2, 3, 4))
def _t(key: Any, df: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    df = lax.convert_element_type(df, dtype)
    keys = _split(key, impl)
    n = _normal(keys[0], shape, dtype, impl)
    half_df = lax.div(df, np.asarray(2, dtype))
    g = _gamma(keys[1], half_df, shape, dtype, False, impl)
    return n * tnp.sqrt(half_df / g)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t values with ``df`` degrees of freedom (``jax.random.t``)."""
    data, impl, dtype, shape = _checked("t", key, dtype, shape, df)
    return _t(data, df, shape, dtype, impl)


@partial(jit, static_argnums=(2, 3, 4))
def _chisquare(key: Any, df: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    df = lax.convert_element_type(df, dtype)
    two = np.asarray(2, dtype)
    half_df = lax.div(df, two)
    log_g = _gamma(key, half_df, shape, dtype, True, impl)
    return lax.mul(tnp.exp(log_g), two)


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Chi-square values with ``df`` degrees of freedom (``jax.random.chisquare``)."""
    data, impl, dtype, shape = _checked("chisquare", key, dtype, shape, df)
    return _chisquare(data, df, shape, dtype, impl)


@partial(jit, static_argnums=(3, 4, 5))
def _f(key: Any, dfnum: Any, dfden: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    keys = _split(key, impl)
    chi2_dfn = _chisquare(keys[1], dfnum, shape, dtype, impl)
    chi2_dfd = _chisquare(keys[0], dfden, shape, dtype, impl)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """F-distribution values with ``dfnum``/``dfden`` degrees of freedom (``jax.random.f``)."""
    data, impl, dtype, shape = _checked("f", key, dtype, shape, dfnum, dfden)
    return _f(data, dfnum, dfden, shape, dtype, impl)


# --- maxwell, double_sided_maxwell, weibull_min, rayleigh, wald, triangular ----------------------

@partial(jit, static_argnums=(1, 2, 3))
def _maxwell(key: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    x = _normal(key, (*shape, 3), dtype, impl)
    return tnp.sqrt(tnp.sum(tnp.real(x * tnp.conj(x)), axis=-1))  # JAX's norm(x, axis=-1), the same ops


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Maxwell values: the norm of three standard normals (``jax.random.maxwell``)."""
    data, impl, _ = check_prng_key("maxwell", key)
    return _maxwell(data, canonicalize_shape(shape), _float_dtype("maxwell", dtype), impl)


@partial(jit, static_argnums=(3, 4, 5))
def _double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    params_shapes = tuple(tnp.broadcast_shapes(loc.shape, scale.shape))
    if not shape:
        shape = params_shapes
    shape = tuple(shape) + params_shapes
    keys = _split(key, impl)
    maxwell_rvs = _maxwell(keys[0], shape, dtype, impl)
    random_sign = _rademacher(keys[1], shape, dtype, impl)
    return random_sign * maxwell_rvs * scale + loc


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Double-sided Maxwell values, ``sign * maxwell * scale + loc`` (``jax.random.double_sided_maxwell``).

    As JAX, the result shape is ``shape + broadcast(loc.shape, scale.shape)``.
    """
    data, impl, _ = check_prng_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell(data, loc, scale, canonicalize_shape(shape), dtype, impl)


@partial(jit, static_argnums=(3, 4, 5))
def _weibull_min(key: Any, scale: Any, concentration: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    random_uniform = _uniform(key, 0, 1, shape, dtype, impl)
    return tnp.power(-tnp.log1p(-random_uniform), 1.0 / concentration) * scale


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Weibull values by the inverse CDF (``jax.random.weibull_min``)."""
    data, impl, _ = check_prng_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    return _weibull_min(data, scale, concentration, canonicalize_shape(shape), dtype, impl)


@partial(jit, static_argnums=(2, 3, 4))
def _rayleigh(key: Any, scale: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    u = _uniform(key, 0., 1., shape, dtype, impl)
    scale = tnp.broadcast_to(scale.astype(dtype), shape)
    sqrt_u = lax.sqrt(lax.mul(lax.log(u), lax.full(shape, np.asarray(-2, dtype), dtype)))
    return lax.mul(scale, sqrt_u)


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Rayleigh values, ``scale * sqrt(-2 log U)`` (``jax.random.rayleigh``)."""
    data, impl, dtype, shape = _checked("rayleigh", key, dtype, shape, scale)
    return _rayleigh(data, scale, shape, dtype, impl)


@partial(jit, static_argnums=(2, 3, 4))
def _wald(key: Any, mean: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    keys = _split(key, impl)
    mean = tnp.broadcast_to(mean.astype(dtype), shape)
    v = _normal(keys[0], shape, dtype, impl)
    z = _uniform(keys[1], 0., 1., shape, dtype, impl)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) values with ``mean`` and unit shape (``jax.random.wald``)."""
    data, impl, dtype, shape = _checked("wald", key, dtype, shape, mean)
    return _wald(data, mean, shape, dtype, impl)


@partial(jit, static_argnums=(4, 5, 6))
def _triangular(key: Any, left: Any, mode: Any, right: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    left = tnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    right = tnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mode = tnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = _uniform(key, 0., 1., shape, dtype, impl)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: Any = None) -> Any:
    """Triangular values on [``left``, ``right``] peaking at ``mode`` (``jax.random.triangular``)."""
    data, impl, dtype, shape = _checked("triangular", key, dtype, shape, left, mode, right)
    return _triangular(data, left, mode, right, shape, dtype, impl)


# --- generalized_normal, ball ----------------------------------------------------------------------

@partial(jit, static_argnums=(2, 3, 4))
def _generalized_normal(key: Any, p: Any, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    keys = _split(key, impl)
    g = _gamma(keys[0], 1 / p, shape, dtype, False, impl)
    r = _rademacher(keys[1], shape, dtype, impl)
    return r * g ** (1 / p)


def generalized_normal(key: Any, p: float, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Generalized normal values with density ``∝ exp(-|x|**p)`` (``jax.random.generalized_normal``)."""
    shape = canonicalize_shape(shape)
    data, impl, _ = check_prng_key("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    return _generalized_normal(data, p, shape, dtype, impl)


def _concrete_index(value: Any, where: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        try:
            return operator.index(np.asarray(value).item())
        except Exception:
            raise TypeError(f"{where}: expected a concrete integer, got {value!r}") from None


@partial(jit, static_argnums=(2, 3, 4, 5))
def _ball(key: Any, p: Any, d: int, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    keys = _split(key, impl)
    g = _generalized_normal(keys[0], p, (*shape, d), dtype, impl)
    e = _exponential(keys[1], shape, dtype, impl)
    return g / (((tnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Points uniform in the ``d``-dimensional unit ``p``-norm ball (``jax.random.ball``)."""
    shape = canonicalize_shape(shape)
    data, impl, _ = check_prng_key("ball", key)
    dtype = _float_dtype("ball", dtype)
    d = _concrete_index(d, "The error occurred in jax.random.ball()")
    return _ball(data, p, d, shape, dtype, impl)


# --- multivariate_normal, orthogonal ------------------------------------------------------------

@partial(jit, static_argnums=(3, 4, 5, 6))
def _multivariate_normal(key: Any, mean: Any, cov: Any, shape: tuple | None, dtype: np.dtype, method: str,
                         impl: PRNGImpl) -> Any:
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = tuple(tnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = tlinalg.svd(cov)
        factor = u * tnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = tlinalg.eigh(cov)
        factor = v * tnp.sqrt(w[..., None, :])
    else:
        factor = tlinalg.cholesky(cov)
    normal_samples = _normal(key, tuple(shape) + tuple(mean.shape[-1:]), dtype, impl)
    return mean + tnp.einsum("...ij,...j->...i", factor, normal_samples)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """Multivariate normal values with ``mean`` ``(..., n)`` and covariance ``cov`` ``(..., n, n)``.

    ``jax.random.multivariate_normal``: the factor of ``cov`` comes from ``method``
    (``"cholesky"``, ``"eigh"`` or ``"svd"``; the last two accept singular ``cov``);
    the result has shape ``shape + mean.shape[-1:]``.
    """
    data, impl, _ = check_prng_key("multivariate_normal", key)
    mean, cov = tnp.asarray(mean), tnp.asarray(cov)
    if not dtypes.is_inexact(mean.dtype) or not dtypes.is_inexact(cov.dtype):
        dt = dtypes.result_type(mean, cov)
        dt = dt if dtypes.is_inexact(dt) else dtypes.default_float_dtype()
        mean, cov = mean.astype(dt), cov.astype(dt)
    elif mean.dtype != cov.dtype:
        dt = dtypes.result_type(mean, cov)
        mean, cov = mean.astype(dt), cov.astype(dt)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dtype}")
    return _multivariate_normal(data, mean, cov, None if shape is None else canonicalize_shape(shape), dtype, method,
                                impl)


@partial(jit, static_argnums=(1, 2, 3, 4, 5))
def _orthogonal(key: Any, n: int, m: int, shape: tuple, dtype: np.dtype, impl: PRNGImpl) -> Any:
    z = _normal(key, (*shape, max(n, m), min(n, m)), dtype, impl)
    q, r = tlinalg.qr(z)
    d = tnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * tnp.expand_dims(tnp.sign(d), -2)
    return tnp.swapaxes(x, -1, -2) if n < m else x


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None, m: int | None = None) -> Any:
    """Random ``n × m`` (default ``n × n``) matrices with orthonormal columns or rows, Haar-distributed.

    ``jax.random.orthogonal``: the QR decomposition of a normal matrix with the
    signs of ``diag(R)`` folded into ``Q``; shape ``shape + (n, m)``.
    """
    shape = canonicalize_shape(shape)
    data, impl, _ = check_prng_key("orthogonal", key)
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype)
    n = _concrete_index(n, "The error occurred in jax.random.orthogonal()")
    m_ = n if m is None else _concrete_index(m, "The error occurred in jax.random.orthogonal()")
    return _orthogonal(data, n, m_, shape, dtype, impl)
