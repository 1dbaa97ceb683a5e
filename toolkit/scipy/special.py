"""``toolkit.scipy.special``: special functions with ``jax.scipy.special``'s meaning.

Arguments are promoted as JAX's ``promote_args_inexact`` does (integers to the
default float) and broadcast. The algorithms are JAX 0.10.2's (its series,
continued fractions, rational approximations and their constants), over
``toolkit.lax``'s special-function primitives (``toolkit/lax/special_functions.py``);
the longer ones are in the private modules beside this one, by group: error
functions (``_special_error_functions.py``), exponential and related integrals
(``_special_integrals.py``), hypergeometric functions (``_special_hypergeometric.py``), spherical harmonics
(``_special_harmonics.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad.api import jvp
from toolkit.ad.custom_derivatives import custom_jvp
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.nn import functions as nn_functions
from toolkit.nn.functions import logsumexp
from toolkit.scipy._special_arguments import inexact, polyval
from toolkit.scipy._special_error_functions import dawsn, erfcx, fresnel, wofz
from toolkit.scipy._special_harmonics import sph_harm_y
from toolkit.scipy._special_hypergeometric import hyp1f1, hyp2f1
from toolkit.scipy._special_integrals import exp1, expi, expn, owens_t, sici, spence

__all__ = ["bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn", "digamma",
           "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit", "expn", "factorial", "fresnel", "gamma",
           "gammainc", "gammaincc", "gammaln", "gammasgn", "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div",
           "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t",
           "poch", "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py", "xlogy",
           "zeta"]


def _inexact(name: str, *args: Any, real: bool = False) -> list[Any]:
    return inexact(name, *args, real=real)


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


@compiled_whole()
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
    """The Gamma function: ``gammasgn(x) * exp(gammaln(x))`` for real ``x``; for complex ``x``
    ``exp(loggamma(x))`` (Lanczos), NaN at the poles (0, -1, -2, ...) and at NaN, as JAX 0.10's."""
    (x,) = _inexact("gamma", x)
    if dtypes.is_complex(x.dtype):
        return _complex_gamma(x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def _complex_gamma(z: Any) -> Any:
    safe, z_safe = _poles_masked(z)
    return tnp.where(safe, tnp.asarray(complex(np.nan, np.nan), dtype=z.dtype), tnp.exp(_complex_loggamma(z_safe)))


def _poles_masked(z: Any) -> tuple[Any, Any]:
    """``(at_pole_or_nan, z with those entries 1)``: JAX's complex gamma and loggamma evaluate the safe ``z`` and
    select NaN afterwards, so the unselected branch keeps NaN out of gradients (0 * NaN through where's
    derivative)."""
    is_pole = (tnp.imag(z) == 0) & (tnp.real(z) == tnp.floor(tnp.real(z))) & (tnp.real(z) <= 0)
    safe = is_pole | tnp.isnan(z)
    return safe, tnp.where(safe, tnp.ones_like(z), z)


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


@custom_jvp
def poch(z: Any, m: Any) -> Any:
    """The rising factorial ``Gamma(z + m) / Gamma(z)`` (1 where ``m == 0``); JAX's derivatives
    (``(digamma(z + m) - digamma(z)) * poch`` in ``z``, ``digamma(z + m) * poch`` in ``m``, also where ``m == 0``)."""
    z, m = _inexact("poch", z, m, real=True)
    return tnp.where(m == 0, tnp.ones_like(z), gamma(z + m) / gamma(z))


poch.defjvps(lambda z_dot, primal_out, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
             lambda m_dot, primal_out, z, m: digamma(z + m) * poch(z, m) * m_dot)


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


@custom_jvp
def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN, as scipy); JAX's derivative, defined at ``x == 0``
    too (``log(y)`` in ``x``: the product rule, not the ``where``'s 0)."""
    x, y = _inexact("xlogy", x, y)
    return tnp.where((x != 0) | tnp.isnan(y), x * lax.log(y), tnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)


@custom_jvp
def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN); JAX's derivative (``log1p(y)`` in ``x``)."""
    x, y = _inexact("xlog1py", x, y)
    return tnp.where((x != 0) | tnp.isnan(y), x * lax.log1p(y), tnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)


@custom_jvp
def _xlogx(x: Any) -> Any:
    """``x log x``, 0 at 0; JAX's derivative ``log(x) + 1`` (-inf at 0, so ``entr``'s is inf, as JAX's)."""
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


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


@custom_jvp
def logit(x: Any) -> Any:
    """The inverse of :func:`expit`: ``log(x / (1 - x))``; JAX's derivative ``1 / (x (1 - x))`` (inf at 0 and 1)."""
    (x,) = _inexact("logit", x)
    return lax.log(x / (1 - x))


logit.defjvps(lambda g, ans, x: g / (x * (1 - x)))


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
    log_scale = -0.5 * lax.square(x) - lax.log(-x) - np.asarray(0.5 * np.log(2.0 * np.pi), x.dtype)  # JAX's square
    return log_scale + lax.log(_log_ndtr_series(x, series_order))


def _log_ndtr_series(x: Any, series_order: int) -> Any:
    # 1 + sum_{n>=1} (-1)^n (2n-1)!! / x^(2n)
    if series_order <= 0:
        return tnp.ones_like(x)
    x_2 = lax.square(x)
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


def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis``, by default over every element (scipy's and
    ``jax.scipy.special.softmax``'s default; ``toolkit.nn.softmax``'s is the last axis)."""
    return nn_functions.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """``x - logsumexp(x)`` over ``axis``, by default over every element (as :func:`softmax`)."""
    return nn_functions.log_softmax(x, axis=axis)


logsumexp = logsumexp


# --- gamma, beta and zeta functions (JAX 0.10.2's definitions) ------------------------------------------

# Lanczos coefficients (g = 7, n = 9) of JAX's complex log-gamma.
_LANCZOS_G = 7.0
_LANCZOS_COEFFS = np.array([0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
                            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
                            1.5056327351493116e-7])


def _complex_loggamma(z: Any) -> Any:
    """Lanczos' approximation with the reflection formula for ``Re(z) < 0.5`` (JAX's ``_complex_loggamma``)."""
    needs_reflection = tnp.real(z) < 0.5
    zz = tnp.where(needs_reflection, 1.0 - z, z) - 1.0
    coeffs = _LANCZOS_COEFFS.astype(z.dtype)
    ks = np.arange(1, 9).astype(z.dtype)
    ag = coeffs[0] + tnp.sum(coeffs[1:] / (tnp.expand_dims(zz, -1) + ks), axis=-1)
    t = zz + _LANCZOS_G + 0.5
    log_gamma = np.asarray(0.5 * np.log(2.0 * np.pi), z.dtype) + (zz + 0.5) * tnp.log(t) - t + tnp.log(ag)
    # A safe value in the unselected branch keeps NaN out of gradients (0 * NaN).
    z_safe = tnp.where(needs_reflection, z, tnp.full_like(z, 0.5))
    reflected = np.log(np.pi).astype(z.dtype) - tnp.log(tnp.sin(np.pi * z_safe)) - log_gamma
    return tnp.where(needs_reflection, reflected, log_gamma)


def _complex_loggamma_scipy(z: Any) -> Any:
    """SciPy's branch cuts: shift into the right half-plane, ``loggamma(z) = loggamma(z + n) - sum log(z + k)``."""
    safe, z_safe = _poles_masked(z)
    n = tnp.maximum(0, tnp.ceil(0.5 - tnp.real(z_safe)).astype(int))

    def cond(state):
        k, _ = state
        return tnp.any(k < n)

    def body(state):
        k, sum_log = state
        mask = k < n
        zk = tnp.where(mask, z_safe + k, tnp.ones_like(z_safe))
        return k + 1, sum_log + tnp.where(mask, tnp.log(zk), tnp.zeros_like(sum_log))

    _, sum_log = lax.while_loop(cond, body, (0, tnp.zeros_like(z_safe)))
    result = _complex_loggamma(z_safe + n) - sum_log
    return tnp.where(safe, tnp.full_like(z, complex(np.nan, np.nan)), result)


def loggamma(x: Any) -> Any:
    """The principal branch of ``log(Gamma(x))``: NaN for real ``x <= 0``; complex ``x`` as SciPy (branch cut on
    the negative real axis, NaN at the poles)."""
    (x,) = _inexact("loggamma", x)
    if dtypes.is_complex(x.dtype):
        return _complex_loggamma_scipy(x)
    return tnp.where(x > 0, lax.lgamma(x), tnp.full_like(x, np.nan))


def _algdiv(a: Any, b: Any) -> Any:
    """``log(Gamma(b) / Gamma(a + b))`` for ``b >= 8`` (cdflib's algdiv, as JAX's, assuming ``a <= b``)."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return tnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|``, accurate for large arguments (cdflib's algorithm for ``max(a, b) >= 8``, as JAX)."""
    a, b = _inexact("betaln", a, b)
    a, b = tnp.minimum(a, b), tnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return tnp.where(b < 8, small_b, large_b)


def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)`` (real arguments)."""
    a, b = _inexact("beta", a, b, real=True)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)`` (``toolkit.lax.betainc``; real arguments)."""
    a, b, x = _inexact("betainc", a, b, x, real=True)
    return lax.betainc(a, b, x)


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)`` (``toolkit.lax.igamma``)."""
    a, x = _inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)`` (``toolkit.lax.igammac``)."""
    a, x = _inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def polygamma(n: Any, x: Any) -> Any:
    """The ``n``-th derivative of :func:`digamma`; ``n`` must have an integer dtype (JAX's ``ValueError``)."""
    n_dtype = tnp.asarray(n).dtype
    if not (dtypes.is_integer(n_dtype) and not dtypes.is_bool(n_dtype)):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
    n, x = _inexact("polygamma", n, x, real=True)
    return lax.polygamma(n, x)


# (2k)! / B_{2k}, B the Bernoulli numbers: the Euler-Maclaurin terms of the zeta series (JAX's constants).
_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600, -10670622842880000 / 3617,
    5109094217170944000 / 43867, -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147, 759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217])


def _zeta_series_expansion(s: Any, a: Any) -> Any:
    """Hurwitz zeta by Euler-Maclaurin summation (Johansson 2015, formula (5)); JAX differentiates this."""
    dtype = np.dtype(s.dtype).type
    n = m = dtype(8) if s.dtype == np.float32 else dtype(16)
    k = np.arange(n, dtype=s.dtype)
    total = tnp.sum((tnp.expand_dims(a, -1) + k) ** -tnp.expand_dims(s, -1), -1)
    integral = (a + n) ** (dtype(1) - s) / (s - dtype(1))
    t0 = (a + n) ** -s
    # The running product (jnp.cumprod) written out: toolkit cannot differentiate a product window yet.
    ratios = [(s + j) / (a + n) for j in range(2 * int(m))]
    running = [ratios[0]]
    for r in ratios[1:]:
        running.append(running[-1] * r)
    t1 = tnp.stack(running[::2], axis=-1)
    t1 = tnp.clip(t1, max=np.finfo(s.dtype).max)
    t1 = t1 / _BERNOULLI_COEFS[:t1.shape[-1]].astype(s.dtype)
    return total + integral + t0 * (dtype(0.5) + t1.sum(-1))


@custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals: Any, tangents: Any) -> Any:
    # JAX's rule: the JVP of the Euler-Maclaurin series (its value is the primal too).
    return jvp(_zeta_series_expansion, primals, tangents)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``sum_k (k + q)**-x``; ``q=None`` (Riemann's) is JAX's ``NotImplementedError``.

    Differentiable in both arguments through the Euler-Maclaurin series, as JAX.
    """
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to compute the Hurwitz "
                                  "Zeta function.")
    x, q = _inexact("zeta", x, q)
    return _zeta(x, q)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers ``B_0 .. B_n`` (``n`` a concrete non-negative int), by Chowla and Hartung's algorithm."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"Argument n of bernoulli must be a concrete integer, got {n!r}")
    n = int(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = tnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = tnp.zeros(n + 1).at[:3].set(b3)
    m = tnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = (1. / np.pi ** 2) * tnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = tnp.arange(2, 50, dtype=bn.dtype)  # 2 ** -50 < 1e-15
    q2 = tnp.sum(k[:, None] ** -m[None, :], axis=0)
    return bn.at[4::2].set(q1 * (1 + q2))


# --- Bessel functions -------------------------------------------------------------------------------------

def i0e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
    (x,) = _inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: Any) -> Any:
    """The modified Bessel function of order 0, ``I0(x)``."""
    (x,) = _inexact("i0", x)
    return lax.exp(lax.abs(x)) * lax.bessel_i0e(x)


def i1e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
    (x,) = _inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: Any) -> Any:
    """The modified Bessel function of order 1, ``I1(x)``."""
    (x,) = _inexact("i1", x)
    return lax.exp(lax.abs(x)) * lax.bessel_i1e(x)


@compiled_whole(static_argnames=("v", "n_iter"))
def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """Bessel functions of the first kind ``J_0(z) .. J_v(z)``, stacked on a new leading axis.

    Miller's backward recurrence over ``n_iter`` steps, normalized by ``J_0 + 2 sum J_2k = 1`` (JAX's
    algorithm); ``v`` and ``n_iter`` are concrete ints, complex ``z`` is JAX's ``ValueError``.
    """
    for name, value in (("v", v), ("n_iter", n_iter)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"Argument {name} of bessel_jn must be a concrete integer, got {value!r}")
    (z,) = _inexact("bessel_jn", z)
    if dtypes.is_complex(z.dtype):
        raise ValueError("complex input not supported.")

    def step(carry, k):
        f0, f1, bs = carry
        f = 2.0 * (k + 1.0) * f1 / z - f0
        bs = tnp.where(tnp.mod(k, 2) == 0, bs + 2.0 * f, bs)
        return (f1, f, bs), f

    zero = tnp.zeros_like(z)
    init = (zero, tnp.full_like(z, 1e-16), zero)
    (_, _, bs), j_vals = lax.scan(step, init, tnp.arange(n_iter + 1, dtype=z.dtype), reverse=True)
    return j_vals[:int(v) + 1] / (bs - j_vals[0])


# --- the normal distribution's quantile -------------------------------------------------------------------

# Cephes' rational approximations of ndtri (JAX's constants).
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p: Any) -> Any:
    """The inverse of :func:`ndtr`: ``x`` with ``ndtr(x) = p`` (float32/float64 only; -inf at 0, inf at 1, NaN
    outside ``[0, 1]``), by Cephes' piecewise rational approximations."""
    p = tnp.asarray(p)
    if p.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={p.dtype} is not supported, see docstring for supported types.")
    dtype = p.dtype.type
    maybe_complement_p = tnp.where(p > dtype(-np.expm1(-2.)), dtype(1.) - p, p)
    # Any value that gives no NaN stands in for 0: its result is not used.
    sanitized = tnp.where(maybe_complement_p == dtype(0.), tnp.full_like(p, 0.5), maybe_complement_p)
    w = sanitized - dtype(0.5)
    ww = w * w
    x_for_big_p = w + w * ww * (polyval(_NDTRI_P0, ww) / polyval(_NDTRI_Q0, ww))
    x_for_big_p = x_for_big_p * -dtype(np.sqrt(2. * np.pi))
    z = lax.sqrt(dtype(-2.) * lax.log(sanitized))
    first_term = z - lax.log(z) / z
    x_for_small_p = first_term - polyval(_NDTRI_P2, 1 / z) / polyval(_NDTRI_Q2, 1 / z) / z
    x_otherwise = first_term - polyval(_NDTRI_P1, 1 / z) / polyval(_NDTRI_Q1, 1 / z) / z
    x = tnp.where(sanitized > dtype(np.exp(-2.)), x_for_big_p, tnp.where(z >= dtype(8.0), x_for_small_p, x_otherwise))
    x = tnp.where(p > dtype(1. - np.exp(-2.)), x, -x)
    infinity = tnp.full_like(p, np.inf)
    return tnp.where(p == dtype(0.0), -infinity, tnp.where(p == dtype(1.0), infinity, x))
