"""``toolkit.scipy.special``: special functions with ``jax.scipy.special``'s meaning.

Arguments are promoted as JAX's ``promote_args_inexact`` does (integers to the
default float) and broadcast. Functions whose JAX versions need numerical
kernels toolkit does not have yet (incomplete gamma and beta, Bessel, zeta,
hypergeometric, ``ndtri``, ``betaln``'s large-argument algorithm, ...) are
absent, not approximated: ``docs/differences-from-jax.md`` lists them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.nn.functions import log_softmax, logsumexp, softmax
from toolkit.numpy._core import promote_and_broadcast, promote_inexact

__all__ = ["boxcox", "boxcox1p", "comb", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "factorial", "gamma",
           "gammaln", "gammasgn", "kl_div", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
           "poch", "rel_entr", "softmax", "xlog1py", "xlogy"]


def _inexact(name: str, *args: Any, real: bool = False) -> list[Any]:
    """``args`` as arrays of their common inexact dtype, broadcast together (JAX's promote_args_inexact)."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(f"toolkit.scipy.special.{name} requires ndarray or scalar arguments, got "
                            f"{type(a).__name__} at position {i}.")
    out = promote_inexact(*args)
    if len(out) > 1:
        out = promote_and_broadcast(*out)
    out = [tnp.asarray(a) for a in out]
    if real and dtypes.is_complex(out[0].dtype):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return out


def erf(x: Any) -> Any:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``."""
    (x,) = _inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """The complementary error function ``1 - erf(x)``, accurate for large ``x``."""
    (x,) = _inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse of :func:`erf` on ``(-1, 1)``."""
    (x,) = _inexact("erfinv", x)
    return lax.erf_inv(x)


def gammaln(x: Any) -> Any:
    """``log|Gamma(x)|``."""
    (x,) = _inexact("gammaln", x)
    return lax.lgamma(x)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma, ``psi(x)``."""
    (x,) = _inexact("digamma", x)
    return lax.digamma(x)


def gammasgn(x: Any) -> Any:
    """The sign of ``Gamma(x)``: NaN at non-positive integers and NaN, -1 where Gamma is negative (and at -0.0)."""
    (x,) = _inexact("gammasgn", x, real=True)
    floor_x = tnp.floor(x)
    negative = x < 0
    nan_at = (negative & (x == floor_x)) | tnp.isnan(x)
    minus_at = (negative & (floor_x % 2 != 0)) | ((x == 0) & tnp.signbit(x))
    one = tnp.ones_like(x)
    return tnp.where(nan_at, tnp.full_like(x, np.nan), tnp.where(minus_at, -one, one))


def gamma(x: Any) -> Any:
    """The Gamma function (real arguments): ``gammasgn(x) * exp(gammaln(x))``."""
    (x,) = _inexact("gamma", x, real=True)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def factorial(n: Any, exact: bool = False) -> Any:
    """``n!`` as ``Gamma(n + 1)`` (0 for negative ``n``); ``exact=True`` is not supported, as in JAX."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _inexact("factorial", n)
    return tnp.where(n < 0, tnp.zeros_like(n), lax.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """The number of combinations of ``N`` things taken ``k`` at a time (floating point, as JAX)."""
    N, k = _inexact("comb", N, k)
    if repetition:
        return tnp.where((k == 0) & (N >= 0), tnp.ones_like(N), comb(N + k - 1, k))
    valid = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = tnp.where(valid, N, tnp.zeros_like(N))
    safe_k = tnp.where(valid, k, tnp.zeros_like(k))
    result = lax.exp(lax.lgamma(safe_n + 1) - lax.lgamma(safe_k + 1) - lax.lgamma(safe_n + 1 - safe_k))
    return tnp.where(valid, result, tnp.zeros_like(result))


def poch(z: Any, m: Any) -> Any:
    """The rising factorial ``Gamma(z + m) / Gamma(z)`` (1 where ``m == 0``)."""
    z, m = _inexact("poch", z, m, real=True)
    return tnp.where(m == 0, tnp.ones_like(z), gamma(z + m) / gamma(z))


def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate Gamma function of dimension ``d`` (a Python int)."""
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
        raise TypeError(f"d argument of multigammaln must be a concrete integer, got {d!r}")
    d = int(d)
    a, d_ = _inexact("multigammaln", a, d)
    constant = 0.25 * d_ * (d_ - 1) * np.log(np.pi).astype(a.dtype)
    b = tnp.arange(d, dtype=a.dtype) / 2
    terms = lax.lgamma(tnp.expand_dims(a, -1) - tnp.expand_dims(b, tuple(range(a.ndim))))
    return tnp.sum(terms, axis=-1) + constant


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN, as scipy)."""
    x, y = _inexact("xlogy", x, y)
    return tnp.where((x != 0) | tnp.isnan(y), x * lax.log(y), tnp.zeros_like(x))


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y = _inexact("xlog1py", x, y)
    return tnp.where((x != 0) | tnp.isnan(y), x * lax.log1p(y), tnp.zeros_like(x))


def _xlogx(x: Any) -> Any:
    return tnp.where(x != 0, x * lax.log(tnp.where(x != 0, x, tnp.ones_like(x))), tnp.zeros_like(x))


def entr(x: Any) -> Any:
    """Elementwise entropy ``-x log x`` (0 at 0, -inf for negative ``x``)."""
    (x,) = _inexact("entr", x, real=True)
    return tnp.where(x < 0, tnp.full_like(x, -np.inf), -_xlogx(x))


def rel_entr(p: Any, q: Any) -> Any:
    """Relative entropy ``p log(p / q)``: 0 where ``p == 0 <= q``, inf where undefined."""
    p, q = _inexact("rel_entr", p, q, real=True)
    both_positive = (p > 0) & (q > 0)
    p_zero = (p == 0) & (q >= 0)
    safe_p = tnp.where(both_positive, p, tnp.ones_like(p))
    safe_q = tnp.where(both_positive, q, tnp.ones_like(q))
    value = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    return tnp.where(both_positive, value, tnp.where(p_zero, tnp.zeros_like(p), tnp.full_like(p, np.inf)))


def kl_div(p: Any, q: Any) -> Any:
    """``rel_entr(p, q) - p + q``."""
    p, q = _inexact("kl_div", p, q, real=True)
    return rel_entr(p, q) - p + q


def expit(x: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    (x,) = _inexact("expit", x)
    return lax.logistic(x)


def logit(x: Any) -> Any:
    """The inverse of :func:`expit`: ``log(x / (1 - x))``."""
    (x,) = _inexact("logit", x)
    return lax.log(x / (1 - x))


def ndtr(x: Any) -> Any:
    """The standard normal CDF, from ``erf`` near 0 and ``erfc`` in the tails (float32/float64 only)."""
    x = tnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    half_sqrt_2 = np.asarray(0.5 * np.sqrt(2.0), x.dtype)
    w = x * half_sqrt_2
    z = tnp.abs(w)
    y = tnp.where(z < half_sqrt_2, 1 + lax.erf(w), tnp.where(w > 0, 2 - lax.erfc(z), lax.erfc(z)))
    return 0.5 * y


# Where log_ndtr switches method, per dtype (JAX's and TensorFlow Probability's values): below `lower` the
# asymptotic series, above `upper` log1p(-ndtr(-x)).
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate far into both tails (an asymptotic series below the lower segment)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = tnp.asarray(x)
    if x.dtype not in _LOG_NDTR_SEGMENTS:
        raise TypeError(f"x.dtype={x.dtype} is not supported.")
    lower, upper = _LOG_NDTR_SEGMENTS[x.dtype]
    lower_a, upper_a = np.asarray(lower, x.dtype), np.asarray(upper, x.dtype)
    # The min/max keep the unchosen branches finite, so their gradients are too (JAX does the same).
    above = -ndtr(-x)
    middle = lax.log(ndtr(tnp.maximum(x, lower_a)))
    below = _log_ndtr_lower(tnp.minimum(x, lower_a), series_order)
    return tnp.where(x > upper_a, above, tnp.where(x > lower_a, middle, below))


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    log_scale = -0.5 * x * x - lax.log(-x) - np.asarray(0.5 * np.log(2.0 * np.pi), x.dtype)
    return log_scale + lax.log(_log_ndtr_series(x, series_order))


def _log_ndtr_series(x: Any, series_order: int) -> Any:
    # 1 + sum_{n>=1} (-1)^n (2n-1)!! / x^(2n)
    if series_order <= 0:
        return tnp.ones_like(x)
    x_2 = x * x
    even_sum = tnp.zeros_like(x)
    odd_sum = tnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.asarray(_double_factorial(2 * n - 1), x.dtype) / x_2n
        if n % 2:
            odd_sum = odd_sum + y
        else:
            even_sum = even_sum + y
        x_2n = x_2n * x_2
    return 1 + even_sum - odd_sum


def _double_factorial(n: int) -> int:
    return int(np.prod(np.arange(n, 1, -2))) if n > 1 else 1


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log x`` where ``lmbda == 0``)."""
    x, lmbda = _inexact("boxcox", x, lmbda)
    is_zero = lmbda == 0
    safe = tnp.where(is_zero, tnp.ones_like(lmbda), lmbda)
    log_x = lax.log(x)
    return tnp.where(is_zero, log_x, lax.expm1(safe * log_x) / safe)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform of ``1 + x``."""
    x, lmbda = _inexact("boxcox1p", x, lmbda)
    is_zero = lmbda == 0
    safe = tnp.where(is_zero, tnp.ones_like(lmbda), lmbda)
    log1p_x = lax.log1p(x)
    return tnp.where(is_zero, log1p_x, lax.expm1(safe * log1p_x) / safe)


softmax = softmax
log_softmax = log_softmax
logsumexp = logsumexp
