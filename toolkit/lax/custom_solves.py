"""``custom_linear_solve`` and ``custom_root``: solves differentiated implicitly, as ``jax.lax``'s.

The user's ``solve`` runs as written; reverse mode never differentiates through it. Instead
(JAX's rules): for ``x = A⁻¹ b`` the cotangent of ``b`` is ``transpose_solve(Aᵀ, x̄)`` and that of
what ``matvec`` closes over is ``-(∂(A x)/∂θ)ᵀ b̄``; for a root ``f(θ, x*) = 0`` the implicit function
theorem gives ``θ̄ = -(∂f/∂θ)ᵀ λ`` with ``λ`` the transpose of ``tangent_solve`` applied to ``x̄``.

The implementations are in ``toolkit/ad/custom_solves.py`` (they need differentiation, a layer
above ``lax``): ``toolkit.ad`` installs them here when it is imported (``import toolkit`` does).
Forward mode (``jvp``) through them is refused (JAX supports it; see docs/differences-from-jax.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["custom_linear_solve", "custom_root", "set_custom_solve_handlers"]

#: name -> implementation, installed by ``toolkit.ad.custom_solves``
_HANDLERS: dict[str, Callable[..., Any]] = {}


def set_custom_solve_handlers(linear_solve: Callable[..., Any], root: Callable[..., Any]) -> None:
    """Install the implementations of :func:`custom_linear_solve` and :func:`custom_root` (``toolkit.ad`` does)."""
    _HANDLERS["custom_linear_solve"] = linear_solve
    _HANDLERS["custom_root"] = root


def _handler(name: str) -> Callable[..., Any]:
    if name not in _HANDLERS:
        raise RuntimeError(f"lax.{name} needs toolkit.ad's implementation; import toolkit")
    return _HANDLERS[name]


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any, solve: Callable[[Callable[[Any], Any], Any], Any],
                        transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """``solve(matvec, b)``: x with ``matvec(x) == b``, differentiated implicitly (``jax.lax.custom_linear_solve``).

    ``matvec`` is linear and maps ``b``'s pytree to itself; ``solve(matvec, b)`` returns x (and
    an auxiliary value when ``has_aux``). Reverse mode needs ``transpose_solve(vecmat, b)``
    (``symmetric=True`` says ``matvec`` is its own transpose); gradients flow to ``b`` and to the
    floating values ``matvec`` closes over, never through ``solve``. A ``matvec`` or ``solve``
    whose output structure differs from ``b`` is a ``TypeError``.
    """
    return _handler("custom_linear_solve")(matvec, b, solve, transpose_solve, symmetric, has_aux)


def custom_root(f: Callable[[Any], Any], initial_guess: Any, solve: Callable[[Callable[[Any], Any], Any], Any],
                tangent_solve: Callable[[Callable[[Any], Any], Any], Any], has_aux: bool = False) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly (``jax.lax.custom_root``).

    Gradients reach the floating values ``f`` closes over through the implicit function theorem at the
    returned root (``tangent_solve(g, y)`` solves the linearized system ``g(x) = y``); ``solve`` is never
    differentiated and ``initial_guess`` gets a zero gradient. With ``has_aux`` ``solve`` returns
    ``(root, aux)``. Output structures unlike ``initial_guess``'s are a ``TypeError``.
    """
    return _handler("custom_root")(f, initial_guess, solve, tangent_solve, has_aux)
