"""The quasi-Newton minimizers behind ``toolkit.scipy.optimize.minimize``: BFGS (JAX's
``jax._src.scipy.optimize.bfgs``, Nocedal & Wright's Algorithm 6.1) and L-BFGS (``..._lbfgs``, Algorithm 7.5,
with Sorber et al.'s generalization to complex variables), each one ``toolkit.lax.while_loop``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad import value_and_grad
from toolkit.numpy import linalg as np_linalg
from toolkit.scipy.optimize._line_search import line_search

_dot = functools.partial(tnp.dot, precision=lax.Precision.HIGHEST)
_einsum = functools.partial(tnp.einsum, precision=lax.Precision.HIGHEST)


class _BFGSResults(NamedTuple):
    """BFGS's state and outcome: ``converged``, ``failed`` (a line search failed), iteration ``k``, evaluation
    counts, the iterate ``x_k`` with ``f_k``, ``g_k`` and inverse-Hessian estimate ``H_k``, and ``status``."""

    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def minimize_bfgs(fun: Callable[[Any], Any], x0: Any, maxiter: int | None = None, norm: Any = np.inf,
                  gtol: float = 1e-5, line_search_maxiter: int = 10) -> _BFGSResults:
    """Minimize ``fun`` from ``x0`` by BFGS, until ``|grad|_norm < gtol`` or ``maxiter`` iterations."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    d = x0.shape[0]
    initial_H = tnp.eye(d, dtype=x0.dtype)
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(converged=np_linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1, nhev=0,
                         x_k=x0, f_k=f_0, g_k=g_0, H_k=initial_H, old_old_fval=f_0 + np_linalg.norm(g_0) / 2,
                         status=0, line_search_status=0)

    def cond_fun(state: _BFGSResults) -> Any:
        return tnp.logical_not(state.converged) & tnp.logical_not(state.failed) & (state.k < maxiter)

    def body_fun(state: _BFGSResults) -> _BFGSResults:
        p_k = -_dot(state.H_k, state.g_k)
        ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k, old_old_fval=state.old_old_fval, gfk=state.g_k,
                         maxiter=line_search_maxiter)
        state = state._replace(nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev, failed=ls.failed,
                               line_search_status=ls.status)
        s_k = ls.a_k * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = ls.f_k
        g_kp1 = ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k = tnp.reciprocal(_dot(y_k, s_k))
        sy_k = s_k[:, np.newaxis] * y_k[np.newaxis, :]
        w = tnp.eye(d, dtype=rho_k.dtype) - rho_k * sy_k
        H_kp1 = _einsum("ij,jk,lk", w, state.H_k, w) + rho_k * s_k[:, np.newaxis] * s_k[np.newaxis, :]
        # a step with y.s = 0 leaves the estimate as it was
        H_kp1 = tnp.where(tnp.isfinite(rho_k), H_kp1, state.H_k)
        converged = np_linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(converged=converged, k=state.k + 1, x_k=x_kp1, f_k=f_kp1, g_k=g_kp1, H_k=H_kp1,
                              old_old_fval=state.f_k)

    state = lax.while_loop(cond_fun, body_fun, state)
    # 0 converged, 1 maxiter reached, 2 + the line search's status when it failed, -1 otherwise
    status = tnp.where(state.converged, 0, tnp.where(state.k == maxiter, 1, tnp.where(
        state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)


class _LBFGSResults(NamedTuple):
    """L-BFGS's state and outcome: as :class:`_BFGSResults`, with the last ``maxcor`` steps ``s``, gradient
    changes ``y`` and ``1 / y.s`` in place of an inverse Hessian, and ``status`` 0 nominal, 1 ``maxiter``,
    2 ``maxfun``, 3 ``maxgrad``, 4 insufficient progress (``ftol``), 5 line search failed."""

    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def minimize_lbfgs(fun: Callable[[Any], Any], x0: Any, maxiter: float | None = None, norm: Any = np.inf,
                   maxcor: int = 10, ftol: float = 2.220446049250313e-09, gtol: float = 1e-05,
                   maxfun: float | None = None, maxgrad: float | None = None, maxls: int = 20) -> _LBFGSResults:
    """Minimize ``fun`` from ``x0`` by L-BFGS with ``maxcor`` corrections, until ``|grad|_norm < gtol`` or
    one of the limits (``maxiter``, ``maxfun``, ``maxgrad``, ``ftol``) stops it."""
    d = len(x0)
    dtype = tnp.asarray(x0).dtype
    # at least one termination condition
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    # the absent limits as infinities, so that >= still works
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    initial = _LBFGSResults(converged=tnp.array(False, dtype=bool), failed=tnp.array(False, dtype=bool), k=0,
                            nfev=1, ngev=1, x_k=x0, f_k=f_0, g_k=g_0, s_history=tnp.zeros((maxcor, d), dtype=dtype),
                            y_history=tnp.zeros((maxcor, d), dtype=dtype),
                            rho_history=tnp.zeros((maxcor,), dtype=dtype), gamma=1.0, status=0, ls_status=0)

    def cond_fun(state: _LBFGSResults) -> Any:
        return (~state.converged) & (~state.failed)

    def body_fun(state: _LBFGSResults) -> _LBFGSResults:
        p_k = _two_loop_recursion(state)
        ls = line_search(f=fun, xk=state.x_k, pk=p_k, old_fval=state.f_k, gfk=state.g_k, maxiter=maxls)
        s_k = tnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = ls.f_k
        g_kp1 = ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k_inv = tnp.real(_dot(y_k, s_k))
        rho_k = tnp.reciprocal(rho_k_inv).astype(y_k.dtype)
        gamma = rho_k_inv / tnp.real(_dot(tnp.conj(y_k), y_k))

        status = tnp.array(0)
        status = tnp.where(state.f_k - f_kp1 < ftol, 4, status)
        status = tnp.where(state.ngev >= maxgrad, 3, status)
        status = tnp.where(state.nfev >= maxfun, 2, status)
        status = tnp.where(state.k >= maxiter, 1, status)
        status = tnp.where(ls.failed, 5, status)
        converged = np_linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(
            converged=converged, failed=(status > 0) & (~converged), k=state.k + 1, nfev=state.nfev + ls.nfev,
            ngev=state.ngev + ls.ngev, x_k=x_kp1.astype(state.x_k.dtype), f_k=f_kp1.astype(state.f_k.dtype),
            g_k=g_kp1.astype(state.g_k.dtype), s_history=_update_history_vectors(state.s_history, s_k),
            y_history=_update_history_vectors(state.y_history, y_k),
            rho_history=_update_history_scalars(state.rho_history, rho_k), gamma=gamma.astype(state.g_k.dtype),
            status=tnp.where(converged, 0, status), ls_status=ls.status)

    return lax.while_loop(cond_fun, body_fun, initial)


def _two_loop_recursion(state: _LBFGSResults) -> Any:
    """The search direction ``-H_k g_k`` from the stored corrections (Nocedal & Wright's Algorithm 7.4)."""
    dtype = state.rho_history.dtype
    his_size = len(state.rho_history)
    curr_size = tnp.where(state.k < his_size, state.k, his_size)
    q = -tnp.conj(state.g_k)
    a_his = tnp.zeros_like(state.rho_history)

    def body_fun1(j: Any, carry: Any) -> Any:
        i = his_size - 1 - j
        q, a_his = carry
        a_i = state.rho_history[i] * tnp.real(_dot(tnp.conj(state.s_history[i]), q)).astype(dtype)
        return q - a_i * tnp.conj(state.y_history[i]), a_his.at[i].set(a_i)

    q, a_his = lax.fori_loop(0, curr_size, body_fun1, (q, a_his))
    q = state.gamma * q

    def body_fun2(j: Any, q: Any) -> Any:
        i = his_size - curr_size + j
        b_i = state.rho_history[i] * tnp.real(_dot(state.y_history[i], q)).astype(dtype)
        return q + (a_his[i] - b_i) * state.s_history[i]

    return lax.fori_loop(0, curr_size, body_fun2, q)


def _update_history_vectors(history: Any, new: Any) -> Any:
    return tnp.roll(history, -1, axis=0).at[-1, :].set(new)


def _update_history_scalars(history: Any, new: Any) -> Any:
    return tnp.roll(history, -1, axis=0).at[-1].set(new)
