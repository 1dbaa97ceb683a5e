"""Exponential and trigonometric integrals and relatives of ``toolkit.scipy.special``: ``expi``, ``exp1``,
``expn``, ``sici``, ``spence`` and ``owens_t``.

JAX 0.10.2's algorithms and constants (Cephes' rational approximations on ``expi``'s seven intervals and
``sici``'s three, the series and continued fraction of ``expn``, Cephes' ``spence``, Owen's T by a
13-point Gauss-Legendre quadrature) and JAX's ``custom_jvp`` derivatives.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad.custom_derivatives import custom_jvp
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.scipy._special_arguments import inexact, polyval

__all__ = ["exp1", "expi", "expn", "owens_t", "sici", "spence"]

_EXPINT1_A = [
    -5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557, -331338.13311781443,
    1592627.1633849454
]
_EXPINT1_B = [
    1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726, -729494.9239640528,
    1592627.1633849454
]
_EXPINT2_A = [
    0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367, -0.44095070487016,
    0.046656238059358916, -0.0015450426796734852, 7.059980605299618e-05
]
_EXPINT2_B = [
    1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072, 0.02291647179034212, 0.0044501504397287525,
    0.00017274396122065214, 3.953167195549672e-05
]
_EXPINT3_A = [
    -1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623, 0.029946746941137137,
    -0.001038086040188744, 4.371064420753005e-05, 2.141783679522603e-06
]
_EXPINT3_B = [
    1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476, 0.024498682410218877, 0.0008832165941927797,
    0.00045909522995113536, -4.729848351866523e-06, 2.66519553739071e-06
]
_EXPINT4_A = [
    -2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566, 0.00023728804404931798,
    -8.343219561192553e-05, 1.3634087956052505e-05, -3.655412321999254e-07, 1.4649417339759612e-08,
    6.17640786371036e-10
]
_EXPINT4_B = [
    1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924, 0.002761106850817353,
    -0.00020891480122840484, 1.7085289388076754e-05, -4.4593117963566865e-07, 1.3946349303538475e-08,
    6.150865933977338e-10
]
_EXPINT5_A = [
    -0.24581193676740204, -0.14833822533220778, 0.07248291795735552, -0.013483156873809405, 0.001342775069788637,
    -7.942465637159712e-05, 2.644179518984236e-06, -4.239473659313765e-08
]
_EXPINT5_B = [
    1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984, -0.01601745692712991,
    0.001496414899205908, -8.462452563778485e-05, 2.7289384034767266e-06, -4.239462431819542e-08
]
_EXPINT6_A = [
    0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484, 0.0015100821468651906,
    -2.5231370954995714e-05
]
_EXPINT6_B = [
    1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008, 0.0015605448811273888,
    -2.5231370936032347e-05
]
_EXPINT7_A = [
    -0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935, -0.003076541477344756,
    0.00017471193164549074, -6.1037116822741705e-06, 1.218032765428652e-07, -1.0860761027932903e-09
]
_EXPINT7_B = [
    1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805, 0.039308526882338234, -0.003414684558602365,
    0.00018668443707035555, -6.345146083130515e-06, 1.239754287483207e-07, -1.0860761027931265e-09
]
_SPENCE_A = [
    4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903, 0.8796913117545303, 2.7114985119655346,
    4.256971560081218, 3.297713409852251, 1.0
]
_SPENCE_B = [
    0.0006909904889125533, 0.02540437639325444, 0.2829748606025681, 1.4117259775183106, 3.6380053334513707,
    5.03278880143317, 3.547713409852251, 1.0
]
_SICI_SN = [
    -8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06, 0.0009769454381704354,
    -0.04134703162294066, 1.0
]
_SICI_SD = [
    2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07, 9.964121220438756e-05,
    0.01420852393261499, 1.0
]
_SICI_CN = [
    2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06, -0.0004740072068734079,
    0.028915965260755523, -1.0
]
_SICI_CD = [
    4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06, 0.00031744202477503275,
    0.051002805623644606, 4.0
]
_SICI_FN4 = [
    4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304, 0.006810201324725182,
    0.00010893658065032867, 5.489002234213736e-07
]
_SICI_FD4 = [
    1.0, 8.16496634205391, 7.308288225055645, 1.867922579501842, 0.1787920529631499, 0.007017106683227897,
    0.00011003435715391573, 5.489002527562557e-07
]
_SICI_GN4 = [
    0.08710016989731142, 0.6113791099522193, 0.3971802963923375, 0.07485277376284691, 0.005388686814621773,
    0.00016199979459893403, 1.9796387414096365e-06, 7.825790407440903e-09
]
_SICI_GD4 = [
    1.0, 1.6440220241335535, 0.666296701268988, 0.09887717612776888, 0.006223963454417684, 0.0001732210814741771,
    2.0265918208634397e-06, 7.825792189335346e-09
]
_SICI_FN8 = [
    0.4558808734704653, 0.7137152741001467, 0.16030015822231947, 0.01160642294081244, 0.00034955644244785906,
    4.8621543082645475e-06, 3.200927900910049e-08, 9.41779576128513e-11, 9.70507110881952e-14
]
_SICI_FD8 = [
    1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129, 0.00035869648188185157,
    4.924350643178815e-06, 3.21956939101046e-08, 9.437205903502767e-11, 9.70507110881952e-14
]
_SICI_GN8 = [
    0.6973599534432762, 0.33041097930563207, 0.03848787676499743, 0.001717182390523479, 3.4894116550227946e-05,
    3.471311670841167e-07, 1.7040445278204452e-09, 3.859459254302766e-12, 3.1404009894636335e-15
]
_SICI_GD8 = [
    1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258, 0.0019028442667439953, 3.684755044425611e-05,
    3.5704322344374083e-07, 1.7269374896631615e-09, 3.878301660239547e-12, 3.1404009894636335e-15
]
_OWENS_T_QUAD_PTS = [
    0.0035082039676451716, 0.031279042338030756, 0.08526682628321945, 0.16245071730812277, 0.25851196049125436,
    0.3680755384069753, 0.485010929056047, 0.6027751415261857, 0.7147788421775323, 0.814755109887601,
    0.8971102975594897, 0.9572380808594426, 0.991788329746297
]
_OWENS_T_QUAD_WTS = [
    0.018831438115323503, 0.01856708624397765, 0.018042093461223385, 0.017263829606398752, 0.016243219975989858,
    0.014994592034116705, 0.013535474469662087, 0.011886351605820165, 0.010070377242777432, 0.008113054574229958,
    0.006041900952847024, 0.0038862217010742057, 0.001679303108454609
]


# --- expi ---------------------------------------------------------------------------------------------------

def _expint1(x: Any) -> Any:
    # 0 < x <= 2
    return x * (polyval(_EXPINT1_A, x) / polyval(_EXPINT1_B, x)) + np.euler_gamma + tnp.log(x)


def _expint_k(a: list[float], b: list[float]) -> Any:
    # The intervals beyond 2: exp(x) / x * (1 + w A(w) / B(w)), w = 1/x.
    def evaluate(x: Any) -> Any:
        w = 1.0 / x
        f = w * (polyval(a, w) / polyval(b, w)) + 1.0
        return tnp.exp(x) * w * f
    return evaluate


_EXPI_PIECES = [_expint1] + [_expint_k(a, b) for a, b in (
    (_EXPINT2_A, _EXPINT2_B), (_EXPINT3_A, _EXPINT3_B), (_EXPINT4_A, _EXPINT4_B), (_EXPINT5_A, _EXPINT5_B),
    (_EXPINT6_A, _EXPINT6_B), (_EXPINT7_A, _EXPINT7_B))]


def _expi_pos(x: Any) -> Any:
    conds = [(0 < x) & (x <= 2)] + [(2 ** i < x) & (x <= 2 ** (i + 1)) for i in range(1, 6)]
    return tnp.piecewise(x, conds, _EXPI_PIECES)


def _expi_neg(x: Any) -> Any:
    return -exp1(-x)


@custom_jvp
@compiled_whole()  # JAX's expi is custom_jvp(jit(...)): an eager call is one program
def _expi(x: Any) -> Any:
    return tnp.piecewise(x, [x < 0], [_expi_neg, _expi_pos])


@_expi.defjvp
def _expi_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (x_dot,) = primals, tangents
    return _expi(x), tnp.exp(x) / x * x_dot


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x)``, the principal value of ``integral_{-inf}^x exp(t) / t dt``."""
    (x,) = inexact("expi", x, real=True)
    return _expi(x)


# --- expn ---------------------------------------------------------------------------------------------------

def _expn1(x: Any, n: Any) -> Any:
    # The power series (x <= 1).
    eps = ml_dtypes.finfo(x.dtype).eps
    psi = -np.euler_gamma - tnp.log(x)
    # JAX's fori_loop over float bounds, which is this while loop: psi += 1/i for i = 1 .. n-1.
    _, psi = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1.0, c[1] + 1.0 / c[0]), (tnp.ones_like(n), psi))
    n1 = tnp.where(n == 1, n + n, n)
    zero, one = tnp.zeros_like(x), tnp.ones_like(x)
    init = {"x": x, "z": -x, "xk": zero, "yk": one, "pk": one - n,
            "ans": tnp.where(n == 1, zero, one / (one - n1)), "t": tnp.full_like(x, np.inf)}

    def body(d):
        d = dict(d)
        d["xk"] = d["xk"] + 1.0
        d["yk"] = d["yk"] * (d["z"] / d["xk"])
        d["pk"] = d["pk"] + 1.0
        d["ans"] = d["ans"] + tnp.where(d["pk"] != 0, d["yk"] / tnp.where(d["pk"] != 0, d["pk"], one), zero)
        d["t"] = tnp.where(d["ans"] != 0, tnp.abs(d["yk"] / d["ans"]), one)
        return d

    d = lax.while_loop(lambda d: (d["x"] > 0) & (d["t"] > eps), body, init)
    return d["z"] ** (n - 1.0) * psi / tnp.exp(lax.lgamma(n)) - d["ans"]


def _expn2(x: Any, n: Any) -> Any:
    # The continued fraction (x > 1).
    big = np.asarray(1.44115188075855872e17, x.dtype)
    eps = ml_dtypes.finfo(x.dtype).eps
    one = tnp.ones_like(x)
    init = {"k": tnp.ones_like(n), "pkm2": one, "qkm2": x, "pkm1": one, "qkm1": x + n, "ans": one / (x + n),
            "t": tnp.full_like(x, np.inf), "r": tnp.zeros_like(x), "x": x}

    def body(d):
        d = dict(d)
        x = d["x"]
        d["k"] = k = d["k"] + 1.0
        odd = k % 2 == 1
        yk = tnp.where(odd, one, x)
        xk = tnp.where(odd, n + (k - 1.0) / 2.0, k / 2.0)
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nz = qk != 0
        d["r"] = r = tnp.where(nz, pk / qk, d["r"])
        d["t"] = tnp.where(nz, tnp.abs((d["ans"] - r) / r), one)
        d["ans"] = tnp.where(nz, r, d["ans"])
        d["pkm2"], d["pkm1"], d["qkm2"], d["qkm1"] = d["pkm1"], pk, d["qkm1"], qk
        is_big = tnp.abs(pk) > big
        for key in ("pkm1", "pkm2", "qkm1", "qkm2"):
            d[key] = tnp.where(is_big, d[key] / big, d[key])
        return d

    d = lax.while_loop(lambda d: (d["x"] > 0) & (d["t"] > eps), body, init)
    return d["ans"] * tnp.exp(-x)


def _expn3(x: Any, n: Any) -> Any:
    # The asymptotic expansion (n >= 5000).
    xk = x + n
    yk = 1.0 / (xk * xk)
    t = n
    ans = yk * t * (6.0 * x * x - 8.0 * t * x + t * t)
    ans = yk * (ans + t * (t - 2.0 * x))
    ans = yk * (ans + t)
    return (ans + 1.0) * tnp.exp(-x) / xk


@compiled_whole()  # JAX's expn is custom_jvp(vectorize(jit(...))): an eager call, batched, is one program
def _expn_scalar(n: Any, x: Any) -> Any:
    conds = [(n < 0) | (x < 0), (x == 0) & (n < 2), (x == 0) & (n >= 2), (n == 0) & (x >= 0), n >= 5000, x > 1]
    n1 = tnp.where(n == 1, n + n, n)
    values = [np.nan, np.inf, 1.0 / n1, tnp.exp(-x) / x, _expn3, _expn2, _expn1]
    return tnp.piecewise(x, conds, values, n=n)


_expn_elementwise = tnp.vectorize(_expn_scalar)


def _expn_impl(n: Any, x: Any) -> Any:
    return _expn_elementwise(n, x)


_expn = custom_jvp(_expn_impl, nondiff_argnums=(0,))


@_expn.defjvp
def _expn_jvp(n: Any, primals: Any, tangents: Any) -> Any:
    (x,), (x_dot,) = primals, tangents
    return _expn(n, x), -x_dot * _expn(n - 1.0, x)


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x) = integral_1^inf exp(-x t) / t**n dt`` (NaN for ``n < 0`` or
    ``x < 0``); differentiable in ``x``."""
    n, x = inexact("expn", n, x, real=True)
    return _expn(n, x)


def exp1(x: Any) -> Any:
    """The exponential integral ``E_1(x) = integral_1^inf exp(-x t) / t dt``."""
    (x,) = inexact("exp1", x, real=True)
    return _expn(tnp.ones_like(x), x)


# --- spence -------------------------------------------------------------------------------------------------

def _spence_calc(x: Any) -> Any:
    x2_bool = x > 2.0
    x = tnp.where(x2_bool, 1.0 / x, x)
    x1_5_bool = x > 1.5
    x_5_bool = x < 0.5
    x2_bool = x2_bool | x1_5_bool
    w = tnp.where(x1_5_bool, 1.0 / x - 1.0, tnp.where(x_5_bool, -x, x - 1.0))
    y = -w * polyval(_SPENCE_A, w) / polyval(_SPENCE_B, w)
    y = tnp.where(x_5_bool, np.pi ** 2 / 6.0 - tnp.log(x) * tnp.log(1.0 - x) - y, y)
    return tnp.where(x2_bool, -0.5 * tnp.log(x) ** 2 - y, y)


def spence(x: Any) -> Any:
    """Spence's function (the dilogarithm) ``integral_1^x log(t) / (1 - t) dt`` for ``x >= 0`` (NaN below; float32
    and float64 only)."""
    x = tnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    return tnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0], [np.nan, 0, np.pi ** 2 / 6, _spence_calc])


# --- sici ---------------------------------------------------------------------------------------------------

def _sici_series(x: Any) -> tuple[Any, Any]:
    # 0 <= x <= 4
    t = x * x
    si = (x * polyval(_SICI_SN, t)) / polyval(_SICI_SD, t)
    ci = np.euler_gamma + tnp.log(x) + t * polyval(_SICI_CN, t) / polyval(_SICI_CD, t)
    return tnp.where(x == 0, tnp.zeros_like(x), si), tnp.where(x == 0, tnp.full_like(x, -np.inf), ci)


def _sici_asymptotic(x: Any) -> tuple[Any, Any]:
    # 4 < x <= 1e9: auxiliary functions f and g by rational approximations below and above 8.
    s, c = tnp.sin(x), tnp.cos(x)
    z = 1.0 / (x * x)
    f4 = polyval(_SICI_FN4, z) / (x * polyval(_SICI_FD4, z))
    g4 = z * polyval(_SICI_GN4, z) / polyval(_SICI_GD4, z)
    f8 = polyval(_SICI_FN8, z) / (x * polyval(_SICI_FD8, z))
    g8 = z * polyval(_SICI_GN8, z) / polyval(_SICI_GD8, z)
    below = x < 8.0
    f, g = tnp.where(below, f4, f8), tnp.where(below, g4, g8)
    return (np.pi / 2) - f * c - g * s, f * s - g * c


def _sici_far(x: Any) -> tuple[Any, Any]:
    # x > 1e9
    si = tnp.where(tnp.isposinf(x), tnp.full_like(x, np.pi / 2), (np.pi / 2) - tnp.cos(x) / x)
    ci = tnp.where(tnp.isposinf(x), tnp.zeros_like(x), tnp.sin(x) / x)
    return si, ci


@custom_jvp
@compiled_whole()  # JAX's sici is custom_jvp(jit(...)): an eager call is one program
def _sici(x: Any) -> Any:
    x_abs = tnp.abs(x)
    si_series, ci_series = _sici_series(x_abs)
    si_asymptotic, ci_asymptotic = _sici_asymptotic(x_abs)
    si_far, ci_far = _sici_far(x_abs)
    near = x_abs <= 4
    middle = (x_abs > 4) & (x_abs <= 1e9)
    si = tnp.select([near, middle], [si_series, si_asymptotic], si_far)
    ci = tnp.select([near, middle], [ci_series, ci_asymptotic], ci_far)
    return tnp.sign(x) * si, tnp.where(tnp.isneginf(x), tnp.full_like(ci, np.nan), ci)


@_sici.defjvp
def _sici_jvp(primals: Any, tangents: Any) -> Any:
    (p,), (t,) = primals, tangents
    return _sici(p), (tnp.sinc(p / np.pi) * t, tnp.cos(p) / p * t)


def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals ``(Si(x), Ci(x))`` (real arguments; ``Ci`` is NaN at -inf, -inf at 0)."""
    (x,) = inexact("sici", x)
    if tnp.iscomplexobj(x):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    return _sici(x)


# --- Owen's T -----------------------------------------------------------------------------------------------

def _owens_t_quadrature(h: Any, a: Any) -> Any:
    # JAX's nodes and weights are numpy float64 arrays, strongly typed in the default float: float16 arguments are
    # integrated and answered in float32 (float64 under x64, as float32 ones are then), as there.
    default_float = dtypes.canonicalize_dtype(np.float64)
    points = np.asarray(_OWENS_T_QUAD_PTS, default_float)
    r = tnp.expand_dims(a * a, -1) * points
    integrand = tnp.exp(-0.5 * tnp.expand_dims(h * h, -1) * (1. + r)) / (1. + r)
    return a * (integrand @ np.asarray(_OWENS_T_QUAD_WTS, default_float))


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    sign_a, h, abs_a = tnp.sign(a), tnp.abs(h), tnp.abs(a)
    root_2 = np.asarray(np.sqrt(2), h.dtype)
    h_normed = h / root_2
    modified_a = tnp.where(abs_a <= 1., abs_a, 1. / abs_a)
    modified_h = tnp.where(abs_a <= 1., h, abs_a * h)
    result = _owens_t_quadrature(modified_h, modified_a)
    # Exact values at h = 0 and a = 1.
    result = tnp.where(modified_h == 0., tnp.arctan(modified_a) / (2 * np.pi), result)
    result = tnp.where(modified_a == 1.,
                       0.125 * lax.erfc(-modified_h / root_2) * lax.erfc(modified_h / root_2), result)
    # |a| > 1: T(h, a) from T(ah, 1/a).
    normh, normah = lax.erfc(h_normed), lax.erfc(abs_a * h_normed)
    result = tnp.where(abs_a > 1., tnp.where(abs_a * h <= 0.67,
                                             0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result,
                                             0.25 * (normh + normah - normh * normah) - result), result)
    result = sign_a * result
    return tnp.where(tnp.isnan(a) | tnp.isnan(h), tnp.full_like(result, np.nan), result)


@_owens_t.defjvp
def _owens_t_jvp(primals: Any, tangents: Any) -> Any:
    (h, a), (dh, da) = primals, tangents
    result = _owens_t(h, a)
    root_2 = np.asarray(np.sqrt(2), h.dtype)
    dout_dh = -tnp.exp(-0.5 * h * h) * lax.erf(a * h / root_2) / (2. * np.asarray(np.sqrt(2. * np.pi), h.dtype))
    dout_da = tnp.exp(-0.5 * (a * a + 1.) * h * h) / (2. * np.pi * (a * a + 1.))
    return result, (dout_dh * dh + dout_da * da).astype(result.dtype)


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``T(h, a) = 1/(2 pi) integral_0^a exp(-h**2 (1 + x**2) / 2) / (1 + x**2) dx``."""
    h, a = inexact("owens_t", h, a)
    return _owens_t(h, a)
