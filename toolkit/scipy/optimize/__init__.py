"""``toolkit.scipy.optimize``: ``jax.scipy.optimize``'s ``minimize`` (methods ``"BFGS"`` and
``"l-bfgs-experimental-do-not-rely-on-this"``) and its :class:`OptimizeResults`.

Gradients come from ``toolkit.ad.value_and_grad``; each method is one ``toolkit.lax.while_loop`` around JAX's
strong-Wolfe line search, so iterates, counts and statuses agree with JAX's, under ``toolkit.jit`` as eagerly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from toolkit import numpy as tnp
from toolkit.scipy.optimize._bfgs import minimize_bfgs, minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize`.

    ``x`` the solution; ``success``; ``status`` (BFGS: 0 converged, 1 ``maxiter`` reached, 3 zoom failed,
    4 saddle point reached, 5 line search ``maxiter`` reached, -1 undefined); ``fun`` and ``jac`` at ``x``;
    ``hess_inv`` the final inverse-Hessian estimate (``None`` for L-BFGS); ``nfev``, ``njev`` evaluation counts;
    ``nit`` iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable[..., Any], x0: Any, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimize the scalar ``fun(x, *args)`` over 1-D ``x`` from ``x0`` by ``method`` (``"BFGS"``)."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to toolkit.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x: Any) -> Any:
        return fun(x, *args)

    # tol is accepted and, as in JAX, not used: gtol in options sets the tolerance
    if method.lower() == "bfgs":
        results = minimize_bfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=results.x_k, success=results.converged & tnp.logical_not(results.failed),
                               status=results.status, fun=results.f_k, jac=results.g_k, hess_inv=results.H_k,
                               nfev=results.nfev, njev=results.ngev, nit=results.k)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        lresults = minimize_lbfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=lresults.x_k, success=lresults.converged & tnp.logical_not(lresults.failed),
                               status=lresults.status, fun=lresults.f_k, jac=lresults.g_k, hess_inv=None,
                               nfev=lresults.nfev, njev=lresults.ngev, nit=lresults.k)
    raise ValueError(f"Method {method} not recognized")
