"""toolkit.numpy's polynomial functions (poly ... roots) against jax.numpy 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check

P = np.array([1.0, -3.0, 2.0], np.float32)
Q = np.array([2.0, 1.0], np.float32)
XS = np.arange(6.0, dtype=np.float32)


def test_poly():
    check(lambda m: m.poly(np.array([1.0, 2.0, 3.0], np.float32)), tol=1e-5)
    check(lambda m: m.poly(np.array([[1.0, 2.0], [0, 3.0]], np.float32)), tol=1e-5)
    check(lambda m: m.poly(np.array([1, 2])))
    check(lambda m: m.poly(np.zeros((0,), np.float32)))
    check(lambda m: m.poly(np.ones((2, 3))))


def test_arithmetic():
    def cases(m, p, q):
        return (m.polyadd(p, q), m.polysub(q, p), m.polymul(p, q), m.polydiv(p, q), m.polyder(p), m.polyint(p),
                m.polyint(p, 2, k=np.array([1.0, 2.0], np.float32)), m.polyval(p, q))
    check(cases, P, Q, tol=1e-5, only_jit=True)
    check(lambda m: (m.polyadd(np.array([1, 2]), np.array([3])), m.polyder(np.array([1, 2, 3, 4]), 2),
                     m.polyval(np.array([1, 2, 3]), 2), m.polyval(P, 3.0), m.polyint(P, 0)))


def test_trim_leading_zeros():
    check(lambda m: m.polymul(np.array([0.0, 0, 1, 2]), Q, trim_leading_zeros=True))
    check(lambda m: m.polydiv(P, np.array([1.0, -1.0], np.float32), trim_leading_zeros=True), tol=1e-6)


def test_polyfit():
    check(lambda m, x: m.polyfit(x, x ** 2, 2), XS, tol=1e-3, only_jit=True)
    check(lambda m: m.polyfit(XS, XS ** 2 + 1, 1, full=True)[:3], tol=1e-3)
    check(lambda m: m.polyfit(XS, XS ** 2 + 1, 1, cov=True), tol=1e-3)
    check(lambda m: m.polyfit(XS, np.stack([XS, XS ** 2], 1), 1, w=np.ones(6, np.float32)), tol=1e-3)


@pytest.mark.x64
def test_polyfit_x64():
    check(lambda m: m.polyfit(np.arange(8.0), np.arange(8.0) ** 3, 3), tol=1e-8)


def test_roots():
    check(lambda m: m.sort_complex(m.roots(P)), tol=1e-4)
    check(lambda m: m.sort_complex(m.roots(np.array([0, 0, 1.0, -3.0, 2.0], np.float32))), tol=1e-4)
    check(lambda m, p: m.roots(p, strip_zeros=False), np.array([0, 0, 1.0, -3.0, 2.0], np.float32), tol=1e-4,
          only_jit=True)
    check(lambda m: m.roots(np.array([2.0])))
    check(lambda m: m.roots(np.ones((2, 2))))
    with pytest.raises(toolkit.ConcretizationTypeError, match="strip_zeros=False"):
        toolkit.jit(tnp.roots)(P)


def test_errors():
    check(lambda m: m.polyder(P, -1))
    check(lambda m: m.polyint(P, -1))
    check(lambda m: m.polyint(P, 2, k=np.ones(3)))
    check(lambda m: m.polyfit(XS, XS, -1))
    check(lambda m: m.polyfit(np.ones((2, 2)), XS, 1))
    check(lambda m: m.polyfit(XS, XS[:3], 1))
    check(lambda m: m.polyfit(XS, np.ones((6, 2, 2)), 1))
    check(lambda m: m.polyfit(XS[:2], XS[:2], 2, cov=True))
    check(lambda m: m.polyadd([1.0], P))
