"""``jax.scipy.linalg``'s matrix functions, with JAX 0.10.2's algorithms: ``expm`` (Pade approximant with scaling
and squaring), its Frechet derivative ``expm_frechet`` (``expm``'s forward-mode derivative, as JAX computes it),
``sqrtm`` (Bjorck and Hammarling's complex Schur method) and ``funm`` (Parlett's recurrence on the complex Schur
form, Golub and Van Loan's Algorithm 11.1.1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.ad.api import jvp
from toolkit.batching.api import vmap
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import linalg as lax_linalg
from toolkit.numpy import linalg as np_linalg
from toolkit.scipy.linalg.factorizations import _inexact, schur, solve_triangular
from toolkit.scipy.linalg.schur_forms import rsf2csf

__all__ = ["expm", "expm_frechet", "funm", "sqrtm"]


_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
         10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.),
}


def _pade(order: int):
    b = _PADE[order]

    def approximant(A: Any) -> tuple[Any, Any]:
        ident = tnp.eye(A.shape[0], A.shape[1], dtype=A.dtype)
        A2 = A @ A
        if order == 13:
            A4 = A2 @ A2
            A6 = A4 @ A2
            U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
            V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
            return U, V
        powers = [ident, A2]
        while len(powers) < order // 2 + 1:
            powers.append(powers[-1] @ A2 if len(powers) > 2 else A2 @ A2)
        U = A @ sum(b[2 * i + 1] * powers[i] for i in range(len(powers)))
        V = sum(b[2 * i] * powers[i] for i in range(len(powers)))
        return U, V
    return approximant


def _expm_2d(A: Any, upper_triangular: bool, max_squarings: int) -> Any:
    A_L1 = np_linalg.norm(A, 1)
    orders: tuple[int, ...]
    if A.dtype in (np.float64, np.complex128):
        maxnorm, conds, orders = 5.371920351148152, [0.01495585217958292, 0.253939833006323, 0.9504178996162932,
                                                      2.097847961257068], (3, 5, 7, 9, 13)
    else:
        maxnorm, conds, orders = 3.92572478313866, [0.4258730016922831, 1.880152677804762], (3, 5, 7)
    n_squarings = tnp.maximum(0, tnp.floor(tnp.log2(A_L1 / maxnorm)))
    A = A / (2 ** n_squarings).astype(A.dtype)
    idx = tnp.digitize(A_L1, tnp.asarray(np.asarray(conds, A_L1.dtype)))
    U, V = lax.switch(idx, [_pade(o) for o in orders], A)
    P, Q = U + V, -U + V
    if upper_triangular:
        R = solve_triangular(Q, P)
    else:
        R = np_linalg.solve(Q, P)

    def step(c: Any, i: Any) -> tuple[Any, None]:
        return lax.cond(i < n_squarings, lambda x: x @ x, lambda x: x, c), None
    R, _ = lax.scan(step, R, tnp.arange(max_squarings, dtype=n_squarings.dtype))
    return lax.cond(n_squarings > max_squarings, lambda r: tnp.full_like(r, np.nan), lambda r: r, R)


@compiled_whole(static_argnames=("upper_triangular", "max_squarings"))
def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential of (batches of) square matrices: JAX's Pade approximant with scaling and
    squaring (NaNs when more than ``max_squarings`` squarings would be needed)."""
    (A,) = _inexact("expm", A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={tuple(A.shape)!r}.")
    fn = lambda x: _expm_2d(x, upper_triangular, max_squarings)  # noqa: E731
    for _ in range(A.ndim - 2):
        fn = vmap(fn)
    return fn(A)


@compiled_whole(static_argnames=("method", "compute_expm"))
def expm_frechet(A: Any, E: Any, *, method: str | None = None, compute_expm: bool = True) -> Any:
    """The Frechet derivative of the matrix exponential at ``A`` in the direction ``E``: ``(expm(A), L(A, E))``, or
    ``L(A, E)`` alone when ``compute_expm`` is false. ``A`` and ``E`` are ``(..., N, N)`` of one shape and one
    inexact dtype.

    As JAX, this is ``jvp(expm, (A,), (E,))`` (``method`` is accepted and ignored), so it is differentiable in both
    ``A`` and ``E``. JAX checks ``A``'s squareness against ``A.shape[1]`` (rejecting valid batches such as
    ``(5, 3, 2, 2)``); toolkit checks the last two dimensions.
    """
    del method  # SciPy's choice of algorithm: JAX ignores it
    A_arr, E_arr = tnp.asarray(A), tnp.asarray(E)
    if A_arr.ndim < 2 or A_arr.shape[-2] != A_arr.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={tuple(A_arr.shape)}")
    if E_arr.ndim < 2 or E_arr.shape[-2] != E_arr.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={tuple(E_arr.shape)}")
    if A_arr.shape != E_arr.shape:
        raise ValueError("expected A and E to be the same shape, got "
                         f"A.shape={tuple(A_arr.shape)} E.shape={tuple(E_arr.shape)}")
    # JAX's jvp refuses an integer primal with an integer tangent; toolkit's would give a zero derivative.
    if not dtypes.is_inexact(A_arr.dtype) or A_arr.dtype != E_arr.dtype:
        raise TypeError("expm_frechet: A and E (the primal and tangent of expm's jvp) must have one floating or "
                        f"complex dtype, got A {A_arr.dtype} and E {E_arr.dtype}")
    expm_A, expm_frechet_AE = jvp(lambda a: expm(a, upper_triangular=False, max_squarings=16), (A_arr,), (E_arr,))
    return (expm_A, expm_frechet_AE) if compute_expm else expm_frechet_AE


# --- sqrtm -----------------------------------------------------------------------------------------------------------

def _sqrtm_triangular(T: Any) -> Any:
    """The upper triangular square root ``U`` (``U @ U = T``) of upper triangular ``T`` (Bjorck and Hammarling,
    1983): the diagonal is the principal square roots, then each column ``j`` bottom up from
    ``U[i, j] (U[i, i] + U[j, j]) = T[i, j] - sum_{i<k<j} U[i, k] U[k, j]``."""
    diag = tnp.sqrt(tnp.diag(T))
    n = diag.size
    U = tnp.diag(diag)
    zero = tnp.zeros((), U.dtype)

    def row_step(offset: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        j, U = carry
        i = j - 1 - offset
        known = lax.fori_loop(i + 1, j, lambda k, total: total + U[i, k] * U[k, j], zero)
        # JAX's guard: an exact zero where nothing is left to solve for (0/0 when two diagonal roots cancel).
        value = tnp.where(T[i, j] == known, zero, (T[i, j] - known) / (diag[i] + diag[j]))
        return j, U.at[i, j].set(value)

    def column_step(j: Any, U: Any) -> Any:
        _, U = lax.fori_loop(0, j, row_step, (j, U))
        return U

    return lax.fori_loop(0, n, column_step, U)


@compiled_whole()
def _sqrtm(A: Any) -> Any:
    T, Z = schur(A, output="complex")
    return Z @ _sqrtm_triangular(T) @ tnp.conj(Z.T)


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal square root of the square matrix ``A`` (``(N, N)``; no batch dimensions, as JAX): a complex
    ``X`` with ``X @ X = A``, by Bjorck and Hammarling's complex Schur method. Integers promote to the default
    float first.

    ``blocksize`` > 1 (SciPy's recursive blocking) is not implemented, as in JAX. Like every
    ``toolkit.scipy.linalg`` function, ``A`` must be an array (a list is a ``TypeError``; JAX's raises an
    ``AttributeError`` there).
    """
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


# --- funm ------------------------------------------------------------------------------------------------------------

@compiled_whole()
def _parlett_recurrence(F: Any, T: Any) -> tuple[Any, Any]:
    """Golub and Van Loan's Algorithm 11.1.1: ``f(T)`` for upper triangular ``T`` given its diagonal ``F``
    (``f`` of ``T``'s diagonal), superdiagonal by superdiagonal from ``T F = F T``; and the smallest
    ``|T[j, j] - T[i, i]|`` divided by (JAX's measure of how ill-conditioned the recurrence was)."""
    N = T.shape[0]
    min_denominator = tnp.abs(T[0, 0])

    def entry(i: Any, carry: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        p, F, min_denominator = carry
        j = i + p
        # 1-based (i, j) on superdiagonal p, as the book writes it.
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        between = (tnp.arange(N) >= i) & (tnp.arange(N) < j - 1)
        s = s + (tnp.where(between, T[i - 1], 0) @ tnp.where(between, F[:, j - 1], 0)
                 - tnp.where(between, F[i - 1], 0) @ tnp.where(between, T[:, j - 1], 0))
        denominator = T[j - 1, j - 1] - T[i - 1, i - 1]
        # A repeated eigenvalue leaves s undivided (JAX's choice): the result is then inaccurate, and the
        # error estimate says so through the zero denominator.
        s = tnp.where(denominator != 0, s / denominator, s)
        return p, F.at[i - 1, j - 1].set(s), tnp.minimum(min_denominator, tnp.abs(denominator))

    def superdiagonal(p: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        _, F, min_denominator = lax.fori_loop(1, N - p + 1, entry, (p, *carry))
        return F, min_denominator

    return lax.fori_loop(1, N, superdiagonal, (F, min_denominator))


@compiled_whole()
def _complex_schur(A: Any) -> tuple[Any, Any]:
    # As JAX: the real Schur form (which refuses integers), then rsf2csf.
    T, Z = lax_linalg.schur(A)
    return rsf2csf(T, Z)


@compiled_whole(static_argnames=("disp",))
def _funm_from_schur(f_of_eigenvalues: Any, T: Any, Z: Any, disp: bool) -> Any:
    F = tnp.diag(f_of_eigenvalues).astype(T.dtype)
    F, min_denominator = _parlett_recurrence(F, T)
    F = Z @ F @ tnp.conj(Z).T
    if disp:
        return F
    # JAX's tolerance: float32's epsilon for complex64, float64's otherwise.
    tol = np.finfo(np.float32 if F.dtype == np.complex64 else np.float64).eps
    min_denominator = tnp.where(min_denominator == 0.0, tol, min_denominator)
    err = tnp.where(tnp.any(tnp.isinf(F)), np.inf,
                    tnp.minimum(1, tnp.maximum(tol, (tol / min_denominator) * np_linalg.norm(tnp.triu(T, 1), 1))))
    return F, err


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """The matrix function ``func(A)`` of a square matrix ``A`` (``(N, N)``): ``func`` (scalar to scalar,
    applied to an array of eigenvalues) on the complex Schur form's diagonal, the rest by Parlett's recurrence.

    The result is complex (JAX does not return a real array when the imaginary parts vanish, unlike SciPy). With
    ``disp=False`` returns ``(F, err)``, ``err`` SciPy's estimate of the relative error (``inf`` if ``F`` has an
    infinity). ``A`` must be floating or complex (a ``TypeError`` from ``schur`` otherwise, as JAX's).

    Called eagerly, ``func`` runs eagerly (as in JAX) between two compiled programs: the Schur form, and the
    recurrence with the error estimate.
    """
    A_arr = tnp.asarray(A)
    if A_arr.ndim != 2 or A_arr.shape[0] != A_arr.shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = _complex_schur(A_arr)
    return _funm_from_schur(func(tnp.diag(T)), T, Z, disp)
