"""Error-function relatives of ``toolkit.scipy.special``: ``erfcx``, ``dawsn``, ``wofz`` and ``fresnel``.

JAX 0.10.2's algorithms and constants: Weideman's rational approximation of the Faddeeva function,
the asymptotic series of ``erfcx`` where ``exp(x**2)`` overflows, Cody-Paciorek-Thacher's rational
approximations of Dawson's integral and Cephes' Fresnel integrals; each has JAX's ``custom_jvp``.
Half-precision arguments are computed in float32 and converted back, as JAX's.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad.custom_derivatives import custom_jvp
from toolkit.core import dtypes
from toolkit.scipy._special_arguments import inexact, polyval

__all__ = ["dawsn", "erfcx", "fresnel", "wofz"]

_WOFZ_L = 4.7568284600108841
_WOFZ_C = [
    -1.3034426067909105e-12, 3.741183837373847e-12, 8.030427700497756e-12, -2.154359355749088e-11,
    -5.544244996323793e-11, 1.165824698850374e-10, 4.1537441121999766e-10, -5.231020211492061e-10,
    -3.2080151339721323e-09, 8.124886421653591e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07, 4.401531731283225e-06,
    6.821031944357515e-06, -2.1409619201999998e-05, -0.0001307544925457942, -0.00024532980270038237,
    0.00039259136070109705, 0.004519541105349309, 0.0190061557848455, 0.05730440352983728, 0.14060716226893755,
    0.2954445107150874, 0.5460139720639338, 0.9019254893648001, 1.345544169234545, 1.8256696296324815,
    2.2635372999002676, 2.5722534081245696
]
_DAWSN_AN = [
    1.1368149897175597e-11, 8.492622676674738e-10, 1.9443420417555306e-08, 9.531517412544844e-07,
    3.078283098749132e-06, 0.00035251336852028877, -0.0008501498467244109, 0.04226182230055466,
    -0.09174803717734524, 1.0
]
_DAWSN_AD = [
    2.403720730667626e-11, 1.488646813684934e-09, 5.212652810105416e-08, 1.2725847827318697e-06,
    2.324902498207895e-05, 0.00032552474182605793, 0.003488058146571626, 0.027944853119882897, 0.15887424196012057,
    0.5749186294893204, 1.0
]
_DAWSN_BN = [
    0.5089551564179009, -0.24475441814269785, 0.09415123353035344, -0.021871125514203903, 0.003662076123295692,
    -0.0004232091144603888, 3.5964130479389666e-05, -2.1464035171996896e-06, 9.100107800763914e-08,
    -2.4027452082825098e-09, 3.592333854409284e-11
]
_DAWSN_BD = [
    1.0, -0.6318398698733682, 0.2367067882282487, -0.053180636700322324, 0.008480417185862954,
    -0.0009479967684866654, 7.810255929445524e-05, -4.558751532524426e-06, 1.8910035811142186e-07,
    -4.913246913319206e-09, 7.184664032357345e-11
]
_DAWSN_CN = [
    -0.5905928605347732, 0.6292352427243688, -0.17285897538038814, 0.016483704782518965, -0.0004868276130204627
]
_DAWSN_CD = [
    1.0, -2.698200571975449, 1.7327079904594784, -0.3937085822819395, 0.03442789240412334, -0.0009736552260409412
]
_FRESNL_SN_32 = [
    1.6476294637887e-09, -1.522754752581096e-07, 8.4247488085024e-06, -0.0003120693124703272, 0.007244727626597022,
    -0.09228055941124598, 0.5235987735681432
]
_FRESNL_SN_64 = [
    -2991.8191940101983, 708840.0452577386, -62974148.62058625, 2548908805.7337637, -44297951805.96978,
    318016297876.5678
]
_FRESNL_CN_32 = [
    1.416802502367354e-08, -1.157231412229871e-06, 5.387223446683264e-05, -0.001604381798862293,
    0.02818489036795073, -0.2467398198317899, 0.9999999760004487
]
_FRESNL_CN_64 = [
    -4.9884311457357354e-08, 9.504280628298596e-06, -0.0006451914356839651, 0.018884331939670384,
    -0.20552590095501388, 1.0
]
_FRESNL_FN_32 = [
    -1903009855649.792, 135594238805.0252, -4158143148.511033, 73438484.63587323, -873235.6681548485,
    8560.51546627547, -103.2877601091159, 2.999401847870011
]
_FRESNL_FN_64 = [
    0.4215435550436775, 0.1434079197807589, 0.011522095507358577, 0.000345017939782574, 4.6361374928786735e-06,
    3.055689837902576e-08, 1.0230451416490724e-10, 1.7201074326816183e-13, 1.3428327623306275e-16,
    3.763297112699879e-20
]
_FRESNL_GN_32 = [
    -186084399762.465, 12783506733.93208, -377938771.3202229, 6492611.570598858, -77877.89623358162,
    860.2931494734327, -14.93439396592284, 0.9999841934744914
]
_FRESNL_GN_64 = [
    0.5044420736433832, 0.1971028335255234, 0.018764858409257526, 0.0006840793809153931, 1.1513882611188428e-05,
    9.828524436884223e-08, 4.4534441586175015e-10, 1.0826804113902088e-12, 1.375554606332618e-15,
    8.363544356306774e-19, 1.8695871016278324e-22
]
_FRESNL_SD_64 = [
    1.0, 281.3762688899943, 45584.78108065326, 5173438.887700964, 419320245.8981112, 22441179564.534092,
    607366389490.0846
]
_FRESNL_CD_64 = [
    3.99982968972496e-12, 9.154392157746574e-10, 1.2500186247959882e-07, 1.2226278902417902e-05,
    0.0008680295429417843, 0.04121420907221998, 1.0
]
_FRESNL_FD_64 = [
    1.0, 0.7515863983533789, 0.11688892585919138, 0.0064405152650885865, 0.00015593440916415301,
    1.8462756734893055e-06, 1.1269922476399903e-08, 3.6014002958937136e-11, 5.887545336215784e-14,
    4.5200143407412973e-17, 1.2544323709001127e-20
]
_FRESNL_GD_64 = [
    1.0, 1.4749575992512833, 0.33774898912002, 0.02536037414203388, 0.0008146791071843061, 1.2754507566772912e-05,
    1.0431458965757199e-07, 4.6068072814652043e-10, 1.1027321506624028e-12, 1.3879653125957886e-15,
    8.391588162831187e-19, 1.8695871016278324e-22
]


def _upcast_half(fn: Any, x: Any) -> Any:
    if x.dtype in (np.float32, np.float64):
        return fn(x)
    return fn(x.astype(np.float32)).astype(x.dtype)


# --- Faddeeva ---------------------------------------------------------------------------------------------

def _wofz_upper(z: Any) -> Any:
    """``w(z)`` in the upper half-plane (Weideman 1994, N = 32)."""
    re = tnp.real(z)
    big_l = lax.complex(tnp.full_like(re, _WOFZ_L), tnp.zeros_like(re))
    iz = lax.complex(-tnp.imag(z), re)
    denom = big_l - iz
    p = polyval(_WOFZ_C, (big_l + iz) / denom)
    one_over_sqrtpi = lax.complex(tnp.full_like(re, 1. / np.sqrt(np.pi)), tnp.zeros_like(re))
    return 2 * p / (denom * denom) + one_over_sqrtpi / denom


@custom_jvp
def _wofz(z: Any) -> Any:
    upper = tnp.imag(z) >= 0
    w_upper = _wofz_upper(tnp.where(upper, z, -z))
    return tnp.where(upper, w_upper, 2 * tnp.exp(-(z * z)) - w_upper)


@_wofz.defjvp
def _wofz_jvp(primals: Any, tangents: Any) -> Any:
    (z,), (g,) = primals, tangents
    ans = _wofz(z)
    re = tnp.real(z)
    return ans, g * (-(2 * z * ans) + lax.complex(tnp.zeros_like(re), tnp.full_like(re, 2. / np.sqrt(np.pi))))


def wofz(z: Any) -> Any:
    """The Faddeeva function ``w(z) = exp(-z**2) erfc(-iz)`` (real arguments become complex)."""
    (z,) = inexact("wofz", z)
    if not dtypes.is_complex(z.dtype):
        z = z.astype(np.complex128 if z.dtype == np.float64 else np.complex64)
    return _wofz(z)


# --- erfcx ------------------------------------------------------------------------------------------------

# (-1)^k (2k-1)!! / 2^k, highest degree first: erfcx(x) ~ P(1/x^2) / (sqrt(pi) x).
_ERFCX_ASYMPTOTIC = [7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, .75, -.5, 1.]


def _erfcx_impl(x: Any) -> Any:
    # Beyond sqrt(log(max)), exp(x**2) overflows: use the asymptotic series (9 terms for float64, 5 for float32).
    nterms = 9 if x.dtype == np.float64 else 5
    large = x > np.sqrt(np.log(ml_dtypes.finfo(x.dtype).max))
    safe_x = tnp.where(large, tnp.ones_like(x), x)
    direct = tnp.exp(safe_x * safe_x) * lax.erfc(safe_x)
    asymptotic = polyval(_ERFCX_ASYMPTOTIC[-nterms:], 1. / (x * x)) / (x * np.asarray(np.sqrt(np.pi), x.dtype))
    return tnp.where(large, asymptotic, direct)


@custom_jvp
def _erfcx(x: Any) -> Any:
    return _upcast_half(_erfcx_impl, x)


@_erfcx.defjvp
def _erfcx_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (g,) = primals, tangents
    ans = _erfcx(x)
    return ans, g * (2 * x * ans - np.asarray(2. / np.sqrt(np.pi), x.dtype))


def erfcx(x: Any) -> Any:
    """The scaled complementary error function ``exp(x**2) erfc(x)``, finite where ``erfc`` underflows;
    complex ``x`` goes through :func:`wofz` (``erfcx(x) = w(ix)``)."""
    (x,) = inexact("erfcx", x)
    if dtypes.is_complex(x.dtype):
        return _wofz(lax.complex(-tnp.imag(x), tnp.real(x)))
    return _erfcx(x)


# --- Dawson's integral ------------------------------------------------------------------------------------

def _dawsn_impl(x: Any) -> Any:
    # Three regions of |x| (Cody, Paciorek, Thacher 1970); each evaluated at a safe stand-in outside its region,
    # so the unused branches stay finite. Odd symmetry restores the sign.
    ax = tnp.abs(x)
    one = tnp.ones_like(ax)
    t = 1. / (ax * ax)
    r1 = ax < 3.25
    r2 = (ax >= 3.25) & (ax < 6.25)
    r3 = ax >= 6.25
    ax1 = tnp.where(r1, ax, one)
    val1 = ax1 * polyval(_DAWSN_AN, ax1 * ax1) / polyval(_DAWSN_AD, ax1 * ax1)
    t2, ax2 = tnp.where(r2, t, one), tnp.where(r2, ax, one)
    val2 = (0.5 / ax2) * (1. + t2 * polyval(_DAWSN_BN, t2) / polyval(_DAWSN_BD, t2))
    t3, ax3 = tnp.where(r3, t, one), tnp.where(r3, ax, one)
    val3 = (0.5 / ax3) * (1. + t3 * polyval(_DAWSN_CN, t3) / polyval(_DAWSN_CD, t3))
    return tnp.sign(x) * tnp.where(r1, val1, tnp.where(ax < 6.25, val2, val3))


@custom_jvp
def _dawsn(x: Any) -> Any:
    return _upcast_half(_dawsn_impl, x)


@_dawsn.defjvp
def _dawsn_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (g,) = primals, tangents
    ans = _dawsn(x)
    return ans, g * (1. - 2. * x * ans)


def dawsn(x: Any) -> Any:
    """Dawson's integral ``exp(-x**2) * integral_0^x exp(t**2) dt`` (real arguments)."""
    (x,) = inexact("dawsn", x, real=True)
    return _dawsn(x)


# --- Fresnel integrals ------------------------------------------------------------------------------------

def _sincos_pi_x2_half(x: Any) -> tuple[Any, Any]:
    """``sin(pi x**2 / 2)`` and ``cos(pi x**2 / 2)``, reducing ``x**2 / 2`` modulo 2 exactly (SciPy's sinpi)."""
    x = tnp.abs(x)
    s = tnp.fmod(x, 2.0)
    r = tnp.fmod(s * (x - s / 2), 2.0)
    sinpi = tnp.where(r < 0.5, tnp.sin(np.pi * r),
                      tnp.where(r > 1.5, tnp.sin(np.pi * (r - 2.0)), -tnp.sin(np.pi * (r - 1.0))))
    cospi = tnp.where(r == 0.5, tnp.zeros_like(r),
                      tnp.where(r < 1.0, -tnp.sin(np.pi * (r - 0.5)), tnp.sin(np.pi * (r - 1.5))))
    return sinpi, cospi


@custom_jvp
def _fresnel(xxa: Any) -> Any:
    original_dtype = xxa.dtype
    if xxa.dtype != np.float64:
        xxa = xxa.astype(np.float32)  # half precision: the series overflow or lose accuracy
    single = xxa.dtype == np.float32
    x = tnp.abs(xxa)
    x2 = x * x
    t = x2 * x2
    if single:
        s_small = x * x2 * polyval(_FRESNL_SN_32, t)
        c_small = x * polyval(_FRESNL_CN_32, t)
    else:
        s_small = x * x2 * polyval(_FRESNL_SN_64, t) / polyval(_FRESNL_SD_64, t)
        c_small = x * polyval(_FRESNL_CN_64, t) / polyval(_FRESNL_CD_64, t)
    sinpi, cospi = _sincos_pi_x2_half(x)
    if single:
        c_large: Any = 0.5
        s_large: Any = 0.5
    else:
        c_large = 0.5 + 1 / (np.pi * x) * sinpi
        s_large = 0.5 - 1 / (np.pi * x) * cospi
    t = np.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if single:
        f = 1.0 - u * polyval(_FRESNL_FN_32, u)
        g = t * polyval(_FRESNL_GN_32, u)
    else:
        f = 1.0 - u * polyval(_FRESNL_FN_64, u) / polyval(_FRESNL_FD_64, u)
        g = t * polyval(_FRESNL_GN_64, u) / polyval(_FRESNL_GD_64, u)
    t = np.pi * x
    c_other = 0.5 + (f * sinpi - g * cospi) / t
    s_other = 0.5 - (f * cospi + g * sinpi) / t
    is_inf = tnp.isinf(xxa)
    small = x2 < 2.5625
    large = x > 36974.0
    half = tnp.full_like(x, 0.5)
    s = tnp.where(is_inf, half, tnp.where(small, s_small, tnp.where(large, s_large, s_other)))
    c = tnp.where(is_inf, half, tnp.where(small, c_small, tnp.where(large, c_large, c_other)))
    neg = xxa < 0.0
    s, c = tnp.where(neg, -s, s), tnp.where(neg, -c, c)
    return s.astype(original_dtype), c.astype(original_dtype)


@_fresnel.defjvp
def _fresnel_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (x_dot,) = primals, tangents
    sinpi, cospi = _sincos_pi_x2_half(x)
    return _fresnel(x), (sinpi * x_dot, cospi * x_dot)


def fresnel(x: Any) -> tuple[Any, Any]:
    """The Fresnel integrals ``(S(x), C(x))`` of ``sin(pi t**2 / 2)`` and ``cos(pi t**2 / 2)`` from 0 to ``x``
    (real arguments; complex is JAX's ``NotImplementedError``)."""
    (x,) = inexact("fresnel", x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    return _fresnel(x)
