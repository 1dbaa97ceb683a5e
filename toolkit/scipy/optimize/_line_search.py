"""The strong-Wolfe line search behind ``toolkit.scipy.optimize.minimize`` (JAX's
``jax._src.scipy.optimize.line_search``: Algorithms 3.5 and 3.6 of Nocedal & Wright, 1999).

Branches are taken with ``where`` masks rather than ``cond``, as JAX's, so both zooms run (one as a pass-through)
and the evaluation counts and iterates agree with JAX's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad import value_and_grad
from toolkit.core import dtypes
from toolkit.numpy._core import promote_inexact

_dot = functools.partial(tnp.dot, precision=lax.Precision.HIGHEST)


def _cubicmin(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimizer of the cubic through ``(a, fa)``, ``(b, fb)``, ``(c, fc)`` with slope ``fpa`` at ``a``."""
    dtype = tnp.result_type(a, fa, fpa, b, fb, c, fc)
    C = fpa
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = tnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    d2 = tnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
    A, B = _dot(d1, d2) / denom
    radical = B * B - 3.0 * A * C
    return a + (-B + tnp.sqrt(radical)) / (3.0 * A)


def _quadmin(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimizer of the parabola through ``(a, fa)``, ``(b, fb)`` with slope ``fpa`` at ``a``."""
    db = b - a
    B = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * B)


def _binary_replace(replace_bit: Any, original: dict, new: dict, keys: Any = None) -> dict:
    if keys is None:
        keys = new.keys()
    return {key: tnp.where(replace_bit, new[key], original[key]) for key in keys}


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(restricted_func_and_grad: Callable[[Any], Any], wolfe_one: Callable[..., Any],
          wolfe_two: Callable[..., Any], a_lo: Any, phi_lo: Any, dphi_lo: Any, a_hi: Any, phi_hi: Any,
          dphi_hi: Any, g_0: Any, pass_through: Any) -> _ZoomState:
    """Zoom into ``[a_lo, a_hi]`` by cubic, quadratic or bisection steps (Nocedal & Wright's Algorithm 3.6)."""
    state = _ZoomState(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi,
                       phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.0, phi_rec=(phi_lo + phi_hi) / 2.0,
                       a_star=1.0, phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0, nfev=0, ngev=0)
    delta1 = 0.2
    delta2 = 0.1

    def body(state: _ZoomState) -> _ZoomState:
        dalpha = state.a_hi - state.a_lo
        a = tnp.minimum(state.a_hi, state.a_lo)
        b = tnp.maximum(state.a_hi, state.a_lo)
        cchk = delta1 * dalpha
        qchk = delta2 * dalpha
        # an interval this small stops the search unsatisfied, and so the minimization
        threshold = tnp.where(dtypes.finfo(dalpha.dtype).bits < 64, 1e-5, 1e-10)
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        # the cubic minimizer may be NaN; the bounds checks then reject it
        a_j_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi, state.a_rec,
                              state.phi_rec)
        use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
        a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
        a_j_bisection = (state.a_lo + state.a_hi) / 2.0
        use_bisection = (~use_cubic) & (~use_quad)

        a_j = tnp.where(use_cubic, a_j_cubic, state.a_rec)
        a_j = tnp.where(use_quad, a_j_quad, a_j)
        a_j = tnp.where(use_bisection, a_j_bisection, a_j)

        phi_j, dphi_j, g_j = restricted_func_and_grad(a_j)
        phi_j = phi_j.astype(state.phi_lo.dtype)
        dphi_j = dphi_j.astype(state.dphi_lo.dtype)
        g_j = g_j.astype(state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        state = state._replace(**_binary_replace(hi_to_j, state._asdict(), dict(
            a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi, phi_rec=state.phi_hi)))
        state = state._replace(done=star_to_j | state.done, **_binary_replace(star_to_j, state._asdict(), dict(
            a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)))
        state = state._replace(**_binary_replace(hi_to_lo, state._asdict(), dict(
            a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo, a_rec=state.a_hi, phi_rec=state.phi_hi)))
        state = state._replace(**_binary_replace(lo_to_j & ~hi_to_lo, state._asdict(), dict(
            a_rec=state.a_lo, phi_rec=state.phi_lo)))
        state = state._replace(**_binary_replace(lo_to_j, state._asdict(), dict(
            a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)))
        state = state._replace(j=state.j + 1)
        # a higher cap than SciPy's 10, as JAX's: float32 zooms take longer to reach the same point
        return state._replace(failed=state.failed | (state.j >= 30))

    return lax.while_loop(lambda state: (~state.done) & (~pass_through) & (~state.failed), body, state)


class _LineSearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class _LineSearchResults(NamedTuple):
    """A line search's outcome: ``failed`` (strong Wolfe conditions not met), iteration and evaluation counts,
    the step ``a_k`` with the value ``f_k`` and gradient ``g_k`` there, and ``status`` (0 passed, 1 zoom failed,
    3 ``maxiter`` reached)."""

    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f: Callable[[Any], Any], xk: Any, pk: Any, old_fval: Any = None, old_old_fval: Any = None,
                gfk: Any = None, c1: float = 1e-4, c2: float = 0.9, maxiter: int = 20) -> _LineSearchResults:
    """A step along descent direction ``pk`` from ``xk`` satisfying the strong Wolfe conditions."""
    xk, pk = promote_inexact(xk, pk)

    def restricted_func_and_grad(t: Any) -> tuple[Any, Any, Any]:
        t = tnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, tnp.real(_dot(g, pk)), g

    evaluate_start = old_fval is None or gfk is None
    if evaluate_start:
        phi_0, dphi_0, gfk = restricted_func_and_grad(0)
    else:
        phi_0 = old_fval
        dphi_0 = tnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = tnp.where(candidate_start_value > 1, 1.0, candidate_start_value)
    else:
        start_value = 1

    def wolfe_one(a_i: Any, phi_i: Any) -> Any:
        # the negation of the sufficient-decrease condition
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i: Any) -> Any:
        return tnp.abs(dphi_i) <= -c2 * dphi_0

    # i starts at 1 as in Nocedal & Wright (SciPy starts at 0: https://github.com/scipy/scipy/issues/12157)
    state = _LineSearchState(done=tnp.array(False, dtype=bool), failed=tnp.array(False, dtype=bool), i=1,
                             a_i1=0.0, phi_i1=phi_0, dphi_i1=dphi_0, nfev=1 if evaluate_start else 0,
                             ngev=1 if evaluate_start else 0, a_star=0.0, phi_star=phi_0, dphi_star=dphi_0,
                             g_star=gfk)

    def body(state: _LineSearchState) -> _LineSearchState:
        # no amax: the step doubles, as SciPy's
        a_i = tnp.where(state.i == 1, start_value, state.a_i1 * 2.0)
        phi_i, dphi_i, g_i = restricted_func_and_grad(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.0) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, state.a_i1, state.phi_i1, state.dphi_i1,
                      a_i, phi_i, dphi_i, gfk, ~star_to_zoom1)
        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
        zoom2 = _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, state.a_i1,
                      state.phi_i1, state.dphi_i1, gfk, ~star_to_zoom2)
        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)

        star_keys = ["a_star", "phi_star", "dphi_star", "g_star"]
        state = state._replace(done=star_to_zoom1 | state.done, failed=(star_to_zoom1 & zoom1.failed) | state.failed,
                               **_binary_replace(star_to_zoom1, state._asdict(), zoom1._asdict(), keys=star_keys))
        state = state._replace(done=star_to_i | state.done, **_binary_replace(star_to_i, state._asdict(), dict(
            a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)))
        state = state._replace(done=star_to_zoom2 | state.done, failed=(star_to_zoom2 & zoom2.failed) | state.failed,
                               **_binary_replace(star_to_zoom2, state._asdict(), zoom2._asdict(), keys=star_keys))
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda state: (~state.done) & (state.i <= maxiter) & (~state.failed), body, state)

    status = tnp.where(state.failed, tnp.array(1), tnp.where(state.i > maxiter, tnp.array(3), tnp.array(0)))
    # below 64 bits a too small step leaves the optimizer stuck on a zero direction: floor its size
    alpha_k = tnp.asarray(state.a_star)
    alpha_k = tnp.where((dtypes.finfo(alpha_k.dtype).bits != 64) & (tnp.abs(alpha_k) < 1e-8),
                        tnp.sign(alpha_k) * 1e-8, alpha_k)
    return _LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1, nfev=state.nfev,
                              ngev=state.ngev, k=state.i, a_k=alpha_k, f_k=state.phi_star, g_k=state.g_star,
                              status=status)
