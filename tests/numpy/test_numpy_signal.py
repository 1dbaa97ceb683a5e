"""toolkit.numpy.signal: ``diff`` against numpy; ``convolve``/``correlate``, ``interp``, ``ediff1d``,
``trapezoid`` and ``unwrap`` against ``jax.numpy`` 0.10.2 (also under ``jit``)."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import F, H, RNG, XI, assert_like_jax, compare_with_jax, jax_tol
from _vs_numpy import X, check


def test_diff():
    check(tnp.diff(X, axis=0), np.diff(X, axis=0))
    check(tnp.diff(X, n=2), np.diff(X, n=2))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(mode, jnp):
    a = RNG.standard_normal(7).astype(np.float32)
    v = RNG.standard_normal(3).astype(np.float32)
    for x, y in ((a, v), (v, a), (a, a[:4]), (np.arange(5), np.array([1, 2, 1]))):
        compare_with_jax("convolve", x, y, mode=mode, tol=1e-5)
        compare_with_jax("correlate", x, y, mode=mode, tol=1e-5)
    c = (a + 1j).astype(np.complex64)
    compare_with_jax("correlate", c, v, mode=mode, tol=1e-5)
    raises_like(lambda: tnp.convolve(a, v, mode="bad"), lambda: jnp.convolve(a, v, mode="bad"))
    raises_like(lambda: tnp.convolve(F, v), lambda: jnp.convolve(F, v))


def test_signal_helpers(jnp):
    xp = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    fp = np.array([1.0, -1.0, 3.0, 0.0], np.float32)
    x = np.linspace(-1, 5, 13).astype(np.float32)
    compare_with_jax("interp", x, xp, fp, tol=1e-6)
    compare_with_jax("interp", x, xp, fp, left=-5.0, right=7, tol=1e-6)
    compare_with_jax("interp", x, xp, fp, left="extrapolate", right="extrapolate", tol=1e-5)
    compare_with_jax("interp", x, xp, fp, period=3.0, tol=1e-5)
    compare_with_jax("interp", np.arange(5), np.arange(4), np.arange(4) * 2, tol=1e-6)
    raises_like(lambda: tnp.interp(x, xp, fp[:3]), lambda: jnp.interp(x, xp, fp[:3]))
    raises_like(lambda: tnp.interp(x, xp, fp, left="x"), lambda: jnp.interp(x, xp, fp, left="x"))
    compare_with_jax("ediff1d", XI)
    compare_with_jax("ediff1d", F, to_begin=np.array([-1.0, -2.0]), to_end=9, tol=1e-6)
    compare_with_jax("ediff1d", H, to_end=np.float16(3))
    for y in (F, XI, H):
        compare_with_jax("trapezoid", y, tol=jax_tol(y))
        compare_with_jax("trapezoid", y, dx=0.5, axis=0, tol=jax_tol(y))
        compare_with_jax("trapezoid", y, x=np.linspace(0, 1, 5).astype(np.float32) ** 2, tol=1e-5 if y is not H else 2e-2)
    p = np.cumsum(RNG.uniform(-3, 3, (3, 20)), axis=1).astype(np.float32)
    compare_with_jax("unwrap", p, tol=1e-5)
    compare_with_jax("unwrap", p.T, axis=0, tol=1e-5)
    compare_with_jax("unwrap", p, discont=4.0, tol=1e-5)
    f = toolkit.jit(lambda a, b: (tnp.convolve(a, b, mode="same"), tnp.interp(a, xp, fp), tnp.isin(a, b),
                                  tnp.unwrap(a * 3), tnp.trapezoid(a)))
    a = F[0]
    assert_like_jax(f(a, a[:3]), (jnp.convolve(a, a[:3], mode="same"), jnp.interp(a, xp, fp), jnp.isin(a, a[:3]),
                         jnp.unwrap(a * 3), jnp.trapezoid(a)), tol=1e-5)
