"""``toolkit.scipy.special``'s gamma/beta/zeta, Bessel, error-function, integral and quantile functions (issue 23)
against ``jax.scipy.special`` in the same run: values on grids with edge cases, dtypes, errors, gradients of the
``custom_jvp`` functions, ``jit`` and ``vmap``. Also ``stats.norm.ppf``/``isf``."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.scipy import special, stats

jax = pytest.importorskip("jax")
jsp = pytest.importorskip("jax.scipy.special")
jstats = pytest.importorskip("jax.scipy.stats")

# One grid for the unary functions: both signs, zero, the interval boundaries the algorithms switch at
# (2, 4, 8, 16, 32, 64 for expi; 3.25 and 6.25 for dawsn; 4 and 8 for sici), large values, NaN and infinities.
X = np.array([-40.0, -9.0, -2.5, -1.0, -1e-3, 0.0, 1e-3, 0.5, 1.0, 1.6, 2.0, 3.25, 4.0, 5.0, 6.25, 8.0, 9.5, 17.0,
              33.0, 70.0, 200.0, np.nan, np.inf, -np.inf], np.float32)
UNIT = np.array([0.0, 1e-30, 1e-10, 0.01, 0.1, 0.135, 0.5, 0.865, 0.9, 0.999, 1.0, -0.5, 1.5, np.nan], np.float32)
A = np.array([0.5, 1.0, 2.0, 3.0, 0.1, 30.0, 2.0, 1e3, 8.0, 12.0, 0.0, -1.0], np.float32)
B = np.array([1.5, 0.2, 2.0, 9.0, 4.0, 0.5, 40.0, 2.0, 8.5, 1.0, 1.0, 2.0], np.float32)


def _close(ours, theirs, rtol=1e-5, atol=1e-6):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _close(o, t, rtol, atol)
        return
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype, ours.shape)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", ["erfcx", "dawsn", "expi", "exp1", "i0", "i0e", "i1", "i1e", "loggamma", "fresnel",
                                  "sici"])
def test_unary(name):
    _close(getattr(special, name)(X), getattr(jsp, name)(X), rtol=2e-5)


def test_spence_and_ndtri():
    _close(special.spence(np.abs(X)), jsp.spence(np.abs(X)))
    _close(special.spence(X), jsp.spence(X))
    _close(special.ndtri(UNIT), jsp.ndtri(UNIT))
    q = UNIT[:11]
    _close(stats.norm.ppf(q, 1.0, 2.0), jstats.norm.ppf(q, 1.0, 2.0))
    _close(stats.norm.isf(q), jstats.norm.isf(q))


@pytest.mark.parametrize("name", ["betaln", "beta", "gammainc", "gammaincc", "zeta", "owens_t", "expn"])
def test_binary(name):
    a, b = (np.round(A), B) if name == "expn" else (A, B)
    _close(getattr(special, name)(a, b), getattr(jsp, name)(a, b), rtol=2e-5)


def test_betainc_polygamma_bernoulli_bessel_jn():
    _close(special.betainc(A, B, np.linspace(0, 1, 12).astype(np.float32)),
           jsp.betainc(A, B, np.linspace(0, 1, 12).astype(np.float32)), rtol=2e-5)
    n = np.arange(12) % 4
    _close(special.polygamma(n, np.abs(B)), jsp.polygamma(n, np.abs(B)))
    for k in (0, 2, 3, 10):
        _close(special.bernoulli(k), jsp.bernoulli(k))
    z = np.abs(B).reshape(3, 4)
    _close(special.bessel_jn(z, v=3), jsp.bessel_jn(z, v=3), rtol=1e-4, atol=1e-5)
    _close(special.bessel_jn(np.float32(2.5), v=1, n_iter=30), jsp.bessel_jn(np.float32(2.5), v=1, n_iter=30))


def test_complex_arguments():
    z = (X[:20] + 1j * X[::-1][4:24] / 7).astype(np.complex64)
    _close(special.wofz(z), jsp.wofz(z), rtol=1e-4)
    _close(special.erfcx(z), jsp.erfcx(z), rtol=1e-4)
    _close(special.loggamma(z), jsp.loggamma(z), rtol=1e-4, atol=1e-5)
    _close(special.wofz(np.float32(0.5)), jsp.wofz(np.float32(0.5)))


def test_integer_and_python_arguments_promote():
    _close(special.gammainc(2, 3), jsp.gammainc(2, 3))
    _close(special.i0(np.arange(3)), jsp.i0(np.arange(3)))
    _close(special.zeta(2.0, 1.0), jsp.zeta(2.0, 1.0))
    _close(special.polygamma(1, 2.0), jsp.polygamma(1, 2.0))


def test_errors_name_what_was_wrong():
    with pytest.raises(ValueError, match="integer type"):
        special.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="Riemann zeta"):
        special.zeta(2.0)
    with pytest.raises(TypeError, match="not supported"):
        special.ndtri(np.array([0.5], np.int32))
    with pytest.raises(TypeError, match="not supported"):
        special.spence(np.array([0.5], np.float16))
    with pytest.raises(ValueError, match="complex"):
        special.dawsn(np.complex64(1))
    with pytest.raises(ValueError, match="complex"):
        special.expi(np.complex64(1))
    with pytest.raises(ValueError, match="non-negative"):
        special.bernoulli(-1)
    with pytest.raises(TypeError, match="concrete integer"):
        special.bernoulli(2.5)
    with pytest.raises(ValueError, match="complex"):
        special.bessel_jn(np.complex64(1), v=1)
    with pytest.raises(TypeError, match="concrete integer"):
        special.bessel_jn(1.0, v=1.5)
    with pytest.raises(NotImplementedError, match="complex"):
        special.fresnel(np.complex64(1))
    with pytest.raises(ValueError, match="real-valued"):
        special.sici(np.complex64(1))
    with pytest.raises(TypeError, match="list"):
        special.betaln([1.0], 2.0)


def _every_custom_derivative(sp):
    """One program holding every custom JVP (one compilation per side instead of one per function); the lax
    primitives' JVPs (gammainc, betainc, i0, polygamma, ...) are tested in tests/lax/test_special_functions.py."""
    def total(x, y):
        si, ci = sp.sici(x)
        s, c = sp.fresnel(x)
        return (sp.erfcx(x) + sp.dawsn(x) + sp.expi(x) + sp.exp1(x) + sp.expn(2.0, x) + sp.zeta(y + 1.0, x)
                + sp.owens_t(x, y) + si + ci + s + c + sp.betaln(x, y))
    return total


def test_gradients_match_jax():
    x = np.array([0.3, 1.0, 2.5, 5.0, 9.0], np.float32)
    y = np.array([0.5, 2.0, 1.5, 3.0, 0.7], np.float32)
    ours = toolkit.vmap(toolkit.grad(_every_custom_derivative(special), argnums=(0, 1)))(x, y)
    theirs = jax.vmap(jax.grad(_every_custom_derivative(jsp), argnums=(0, 1)))(x, y)
    _close(ours, theirs, rtol=1e-4, atol=1e-5)


def test_jit_and_vmap():
    x = np.abs(X[:20]).reshape(4, 5)
    for name in ("erfcx", "spence"):
        fn = getattr(special, name)
        eager = fn(x)
        _close(toolkit.jit(fn)(x), eager)
        _close(toolkit.vmap(fn, in_axes=1, out_axes=1)(x), eager)
    _close(toolkit.vmap(special.expn, in_axes=(None, 0))(np.float32(2), x),
           jax.vmap(jsp.expn, in_axes=(None, 0))(np.float32(2), x), rtol=2e-5)
    _close(toolkit.jit(special.sici)(x), jsp.sici(x), rtol=2e-5)


@pytest.mark.x64
def test_float64():
    x = X.astype(np.float64)
    for name in ("erfcx", "expi", "fresnel"):
        _close(getattr(special, name)(x), getattr(jsp, name)(x), rtol=1e-12, atol=1e-14)
    _close(special.ndtri(UNIT.astype(np.float64)), jsp.ndtri(UNIT.astype(np.float64)), rtol=1e-12)
    a, b = A.astype(np.float64), B.astype(np.float64)
    _close(special.zeta(a + 1.5, b), jsp.zeta(a + 1.5, b), rtol=1e-12)


def test_hyp2f1_cases_and_gradients():
    # The Gauss series, terminating polynomials (a = 0, -3, -2), the digamma transform near x = 1 (x = 0.95, 0.999),
    # the linear transformations, the pole c = -1, x = 1 and x > 1.
    a = np.array([0.5, 1.0, 2.0, 0.0, -3.0, 1.5, 2.0, 1.0, 0.5, 1.0, -2.0, 3.0], np.float32)
    b = np.array([1.5, 2.0, 2.0, 1.0, 2.0, 2.5, 4.0, 1.0, 0.5, 2.0, 1.5, 1.0], np.float32)
    c = np.array([2.5, 3.0, 4.5, 1.0, 1.5, 4.0, 6.0, 3.0, 1.5, 3.0, -1.0, 2.5], np.float32)
    x = np.array([0.3, -2.0, 0.95, 0.5, 0.7, 0.99, 1.0, 0.999, -0.5, 1.5, 0.2, 0.95], np.float32)
    _close(special.hyp2f1(a, b, c, x), jsp.hyp2f1(a, b, c, x), rtol=1e-4)
    # d/da and d/dx (d/db and d/dc are d/da's series with b or c's digamma terms).
    ours = toolkit.vmap(toolkit.grad(special.hyp2f1, argnums=(0, 3)))(a[:3], b[:3], c[:3], x[:3])
    theirs = jax.vmap(jax.grad(jsp.hyp2f1, argnums=(0, 3)))(a[:3], b[:3], c[:3], x[:3])
    _close(ours, theirs, rtol=1e-4)


def test_hyp1f1_values_and_gradients():
    a = np.array([0.5, 1.0, 2.0, 0.0, 3.0, -1.5, 2.0, 1.0], np.float32)
    b = np.array([1.5, 2.0, 2.0, 1.0, 0.0, 2.5, 4.0, 3.0], np.float32)
    x = np.array([0.3, -2.0, 5.0, 1.0, 1.0, 150.0, -120.0, 20.0], np.float32)
    _close(special.hyp1f1(a, b, x), jsp.hyp1f1(a, b, x), rtol=2e-5)
    ours = toolkit.vmap(toolkit.grad(special.hyp1f1, argnums=(0, 1, 2)))(a[:3], b[:3], x[:3])
    theirs = jax.vmap(jax.grad(jsp.hyp1f1, argnums=(0, 1, 2)))(a[:3], b[:3], x[:3])
    _close(ours, theirs, rtol=1e-4)
    with pytest.raises(ValueError, match="complex"):
        special.hyp1f1(1.0, 2.0, np.complex64(1))


def test_sph_harm_y():
    n, m = np.array([0, 1, 2, 3, 4, 2, 3]), np.array([0, 1, -1, 2, -3, 0, 3])
    theta = np.linspace(0.1, 3.0, 7).astype(np.float32)
    phi = np.linspace(-2, 2, 7).astype(np.float32)
    _close(special.sph_harm_y(n, m, theta, phi), jsp.sph_harm_y(n, m, theta, phi))
    _close(special.sph_harm_y(n, m, theta, phi, n_max=6), jsp.sph_harm_y(n, m, theta, phi, n_max=6))
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(n, m, theta, phi, diff_n=1)
    with pytest.raises(TypeError, match="n_max"):
        toolkit.jit(lambda n: special.sph_harm_y(n, m, theta, phi))(n)
