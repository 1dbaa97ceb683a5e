"""``jax.scipy.linalg``'s computations on Schur forms: ``rsf2csf`` (a real Schur form to the complex one) and
``solve_sylvester`` (the Bartels-Stewart algorithm on the complex Schur forms of ``A`` and ``B``, or the
eigendecomposition method).

Both follow JAX 0.10.2's algorithms step for step (Givens rotations chasing the 2x2 blocks of a real Schur form
from the bottom up; a back substitution over the triangular Sylvester equation from the bottom-right entry), so
results agree with JAX's to rounding. Both broadcast leading batch dimensions as ``jnp.vectorize`` does and run as
one compiled program when called eagerly, as JAX jits them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax.decompositions import complex_dtype
from toolkit.numpy import linalg as np_linalg
from toolkit.numpy._core import promote_inexact
from toolkit.scipy.linalg.factorizations import schur

__all__ = ["rsf2csf", "solve_sylvester"]


# --- rsf2csf ---------------------------------------------------------------------------------------------------------

def _rsf2csf_2d(T: Any, Z: Any) -> tuple[Any, Any]:
    T, Z = promote_inexact(T, Z)
    dtype = complex_dtype(T.dtype)
    T, Z = T.astype(dtype), Z.astype(dtype)
    eps = np.finfo(dtype).eps
    N = T.shape[0]
    if N == 1:
        return T, Z

    def split_block(m: Any, T: Any, Z: Any) -> tuple[Any, Any]:
        # A Givens rotation G on rows/columns m-1, m that makes T[m, m-1] zero: its first column is the
        # eigenvector direction of the 2x2 block for the eigenvalue mu[0] (shifted by T[m, m]).
        mu = np_linalg.eigvals(lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))) - T[m, m]
        r = np_linalg.norm(tnp.stack([mu[0], T[m, m - 1]])).astype(dtype)
        c = mu[0] / r
        s = T[m, m - 1] / r
        G = tnp.stack([tnp.stack([tnp.conj(c), s]), tnp.stack([-s, c])]).astype(dtype)

        # T <- G T on rows m-1, m (only columns >= m-1 change: the rest of those rows is zero) ...
        T_rows = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
        col_mask = tnp.arange(N) >= m - 1
        rotated_rows = G @ tnp.where(col_mask, T_rows, 0)
        T = lax.dynamic_update_slice_in_dim(T, tnp.where(~col_mask, T_rows, rotated_rows), m - 1, axis=0)
        # ... then T <- T G^H on columns m-1, m (rows >= m+1 are zero there), and Z <- Z G^H.
        T_cols = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
        row_mask = tnp.arange(N)[:, None] < m + 1
        rotated_cols = tnp.where(row_mask, T_cols, 0) @ tnp.conj(G).T
        T = lax.dynamic_update_slice_in_dim(T, tnp.where(~row_mask, T_cols, rotated_cols), m - 1, axis=1)
        Z_cols = lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
        Z = lax.dynamic_update_slice_in_dim(Z, Z_cols @ tnp.conj(G).T, m - 1, axis=1)
        return T, Z

    def step(i: Any, TZ: tuple[Any, Any]) -> tuple[Any, Any]:
        # From the bottom row up: a subdiagonal entry that is not negligible marks a 2x2 block to split.
        m = N - i
        T, Z = TZ
        T, Z = lax.cond(tnp.abs(T[m, m - 1]) > eps * (tnp.abs(T[m - 1, m - 1]) + tnp.abs(T[m, m])),
                        split_block, lambda m, T, Z: (T, Z), m, T, Z)
        return T.at[m, m - 1].set(0.0), Z

    return lax.fori_loop(1, N, step, (T, Z))


@compiled_whole(static_argnames=("check_finite",))
def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """The complex Schur form ``(T, Z)`` (``T`` upper triangular, ``A = Z T Z^H``) of a real Schur form ``(T, Z)``
    (``T`` quasi-upper-triangular, with 2x2 blocks for complex eigenvalue pairs), as SciPy's ``rsf2csf``.

    ``T`` and ``Z`` are ``(..., N, N)``, their batch dimensions broadcast; both results are complex (ints promote
    to the default float first). ``check_finite`` is accepted and ignored, as JAX ignores it.
    """
    del check_finite  # nothing is checked at run time (as JAX)
    T_arr, Z_arr = tnp.asarray(T), tnp.asarray(Z)
    if T_arr.ndim < 2 or T_arr.shape[-1] != T_arr.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z_arr.ndim < 2 or Z_arr.shape[-1] != Z_arr.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T_arr.shape[-1] != Z_arr.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {tuple(Z_arr.shape)} vs. T: {tuple(T_arr.shape)}")
    return tnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T_arr, Z_arr)


# --- solve_sylvester -------------------------------------------------------------------------------------------------

def _solve_triangular_sylvester(R: Any, S: Any, F: Any) -> Any:
    """``Y`` with ``R Y + Y S = F`` for upper triangular ``R`` (``m x m``) and lower triangular ``S`` (``n x n``):
    back substitution one entry at a time, from ``Y[m-1, n-1]`` to ``Y[0, 0]`` in row-major order, so every entry
    below and to the right of ``Y[i, j]`` is known when it is solved for."""
    m, n = F.shape
    zero = tnp.zeros((), F.dtype)

    def solve_entry(Y_flat: Any, index: Any) -> tuple[Any, None]:
        i, j = index // n, index % n
        Y = Y_flat.reshape((m, n))
        # sum_{k > i} R[i, k] Y[k, j] and sum_{k > j} Y[i, k] S[k, j]: the masks keep only solved entries.
        row_term = tnp.sum(tnp.where(tnp.arange(m) > i, R[i, :] * Y[:, j], zero))
        col_term = tnp.sum(tnp.where(tnp.arange(n) > j, Y[i, :] * S[:, j], zero))
        value = (F[i, j] - (row_term + col_term)) / (R[i, i] + S[j, j])
        return Y_flat.at[i * n + j].set(value), None

    Y_flat, _ = lax.scan(solve_entry, tnp.zeros((m * n,), F.dtype), tnp.arange(m * n - 1, -1, -1))
    return Y_flat.reshape((m, n))


def _solve_sylvester_2d(A: Any, B: Any, C: Any, *, method: str, tol: Any) -> Any:
    m, n = C.shape[-2:]
    if method == "schur":
        # A = U R U^H and B^H = V S V^H (complex Schur forms) turn A X + X B = C into R Y + Y S^H = U^H C V with
        # X = U Y V^H: a triangular system.
        R, U = schur(A, output="complex")
        S, V = schur(tnp.conj(B).T, output="complex")
        F = tnp.conj(U).T @ C.astype(R.dtype) @ V
        Y = _solve_triangular_sylvester(R, tnp.conj(S).T, F)
        X = U @ Y @ tnp.conj(V).T
    elif method == "eigen":
        # A = UA diag(RA) UA^-1, B = UB diag(RB) UB^-1: the equation is diagonal in those bases.
        RA, UA = np_linalg.eig(A)
        RB, UB = np_linalg.eig(B)
        F = np_linalg.solve(UA, C.astype(RA.dtype) @ UB)
        Y = F / (RA[:, None] + RB[None, :])
        X = UA[:m, :m] @ Y[:m, :n] @ np_linalg.inv(UB)[:n, :n]
    else:
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".')
    if not dtypes.is_complex(C.dtype):
        X = tnp.real(X)
    # Eigenvalues of A and -B (nearly) shared make the equation singular: NaNs then, as JAX.
    singular = tnp.any(tnp.abs(np_linalg.eigvals(A)[:, None] + np_linalg.eigvals(B)[None, :]) < tol)
    return lax.cond(singular, lambda: tnp.zeros_like(X) * np.nan, lambda: X)


@compiled_whole(static_argnames=("method",))
def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur", tol: float = 1e-8) -> Any:
    """``X`` solving the Sylvester equation ``A X + X B = C`` for ``A`` ``(..., m, m)``, ``B`` ``(..., n, n)`` and
    ``C`` ``(..., m, n)`` (batch dimensions broadcast; the three promoted to one inexact dtype).

    ``method``: ``"schur"`` (the default; Bartels-Stewart on the complex Schur forms of ``A`` and ``B^H``) or
    ``"eigen"`` (through the eigendecompositions of ``A`` and ``B``: faster, inaccurate for ill-conditioned or
    defective matrices). When some eigenvalue of ``A`` plus some eigenvalue of ``B`` has modulus below ``tol`` the
    equation is taken as singular and the result is all NaN. A real ``C`` (after promotion) gives a real ``X``.
    """
    A, B, C = promote_inexact(tnp.asarray(A), tnp.asarray(B), tnp.asarray(C))
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {tuple(A.shape)}\nB: {tuple(B.shape)}\n"
                         f"C: {tuple(C.shape)}")

    def solve_2d(A: Any, B: Any, C: Any) -> Any:
        return _solve_sylvester_2d(A, B, C, method=method, tol=tol)
    return tnp.vectorize(solve_2d, signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
