"""``jax.scipy.linalg``'s factorizations and solvers over ``toolkit.lax.linalg``'s LAPACK kernels.

SciPy's conventions, as JAX keeps them: ``cholesky`` is upper by default, factorizations
come as ``(factor, lower)`` / ``(lu, piv)`` pairs for the matching ``*_solve``, ``qr``'s
modes are ``'full'``, ``'economic'`` and ``'r'``. SciPy's ``overwrite_*`` and
``check_finite`` arguments are accepted and ignored (arrays are immutable; nothing is checked).
"""

from __future__ import annotations

from typing import Any


from toolkit import numpy as tnp
from toolkit.lax import linalg as lax_linalg
from toolkit.lax.decompositions import complex_dtype
from toolkit.numpy import linalg as np_linalg
from toolkit.numpy._core import broadcast_shapes, promote_inexact

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "hessenberg", "inv", "lu", "lu_factor", "lu_solve", "qr",
           "schur", "solve", "solve_triangular", "svd"]


def _inexact(name: str, *args: Any) -> list[Any]:
    for x in args:
        if isinstance(x, (list, tuple)):
            raise TypeError(f"toolkit.scipy.linalg.{name} requires array arguments, got {type(x).__name__}")
    return promote_inexact(*(tnp.asarray(x) for x in args))


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The Cholesky factor of Hermitian positive-definite ``a``: upper ``U`` with ``a = U^H U`` (default), or
    lower ``L``. Only the chosen triangle of ``a`` is read (no symmetrization, as SciPy)."""
    del overwrite_a, check_finite
    (a,) = _inexact("cholesky", a)
    np_linalg._square("cholesky", a)
    l_ = lax_linalg.cholesky(a if lower else tnp.conj(tnp.matrix_transpose(a)), symmetrize_input=False)
    return l_ if lower else tnp.conj(tnp.matrix_transpose(l_))


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, bool]:
    """``(cholesky(a, lower), lower)``, the factorization :func:`cho_solve` takes."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _batched(a: Any, b: Any, vector: bool) -> tuple[Any, Any]:
    """``a`` (``[..., n, n]``) and ``b`` (``[..., n]`` or ``[..., n, k]``) broadcast to a common batch, ``b``
    as matrices."""
    if vector:
        b = b[..., None]
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return tnp.broadcast_to(a, (*batch, *a.shape[-2:])), tnp.broadcast_to(b, (*batch, *b.shape[-2:]))


def _check_rhs(name: str, a: Any, b: Any) -> bool:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: the matrix must have shape [..., n, n], got {tuple(a.shape)}")
    vector = b.ndim == 1 or (a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1])
    size = b.shape[-1] if vector else (b.shape[-2] if b.ndim >= 2 else None)
    if size != a.shape[-1]:
        raise ValueError(f"{name}: incompatible shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return vector


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """Solve ``a x = b`` given ``cho_factor(a)``; ``b`` is ``[..., n]`` or ``[..., n, k]``."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    vector = _check_rhs("cho_solve", c, b)
    c, x = _batched(c, b, vector)
    x = lax_linalg.triangular_solve(c, x, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, x, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)
    return x[..., 0] if vector else x


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug: Any = None, check_finite: bool = True) -> Any:
    """Solve ``op(a) x = b`` for triangular ``a``; ``trans``: 0/'N', 1/'T' (transpose) or 2/'C' (adjoint)."""
    del overwrite_b, debug, check_finite
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = _inexact("solve_triangular", a, b)
    vector = _check_rhs("solve_triangular", a, b)
    a, x = _batched(a, b, vector)
    x = lax_linalg.triangular_solve(a, x, left_side=True, lower=lower, transpose_a=transpose_a,
                                    conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """``(lu, piv)``: LU with partial pivoting in LAPACK's packed form (0-based row swaps)."""
    del overwrite_a, check_finite
    (a,) = _inexact("lu_factor", a)
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solve ``a x = b`` (``trans`` 0), ``a^T x = b`` (1) or ``a^H x = b`` (2) given ``lu_factor(a)``."""
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, b = _inexact("lu_solve", lu_, b)
    vector = _check_rhs("lu_solve", lu_, b)
    perm = lax_linalg.lu_pivots_to_permutation(tnp.asarray(pivots), lu_.shape[-2])
    lu_b, x = _batched(lu_, b, vector)
    perm = tnp.broadcast_to(perm, (*lu_b.shape[:-2], perm.shape[-1]))
    x = np_linalg.lu_solve(lu_b, perm, x, trans)
    return x[..., 0] if vector else x


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """``(p, l, u)`` with ``a = p @ l @ u`` (``p`` a permutation matrix), or ``(p @ l, u)`` with ``permute_l``."""
    del overwrite_a, check_finite
    (a,) = _inexact("lu", a)
    if a.ndim != 2:
        raise ValueError(f"toolkit.scipy.linalg.lu: a must be a matrix, got shape {tuple(a.shape)}")
    lu_, _, permutation = lax_linalg.lu(a)
    m, n = a.shape
    p = tnp.real((permutation[None, :] == tnp.arange(m, dtype=permutation.dtype)[:, None]).astype(a.dtype))
    k = min(m, n)
    l_ = tnp.tril(lu_, -1)[:, :k] + tnp.eye(m, k, dtype=a.dtype)
    u = tnp.triu(lu_)[:k, :]
    if permute_l:
        return tnp.matmul(p, l_), u
    return p, l_, u


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True) -> Any:
    """``(q, r)`` (``mode='full'``: ``q`` is ``m x m``; ``'economic'``: ``m x k``) or ``(r,)`` for ``'r'``.
    Column pivoting is not available (a ``NotImplementedError``)."""
    del overwrite_a, lwork, check_finite
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _inexact("qr", a)
    q, r = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    return (r,) if mode == "r" else (q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """``(u, s, vh)`` or ``s`` (``compute_uv=False``); ``lapack_driver`` is ignored, as JAX ignores it."""
    del overwrite_a, check_finite, lapack_driver
    (a,) = _inexact("svd", a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals: Any = None, type: int = 1,
         check_finite: bool = True) -> Any:
    """``(w, v)`` (or ``w``) of a Hermitian ``a``, reading its ``lower`` triangle. The generalized problem
    (``b``), ``eigvals`` and ``type != 1`` are not implemented (as in JAX)."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _inexact("eigh", a)
    np_linalg._square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """``toolkit.numpy.linalg.inv``."""
    del overwrite_a, check_finite
    return np_linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """``toolkit.numpy.linalg.det``."""
    del overwrite_a, check_finite
    return np_linalg.det(a)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Any:
    """Solve ``a x = b``: LU (``assume_a`` 'gen', 'sym', 'her') or Cholesky ('pos', reading the ``lower``
    or upper triangle)."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    a, b = _inexact("solve", a, b)
    return cho_solve(cho_factor(a, lower=lower), b)


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """The Schur decomposition ``a = Z T Z^H``: ``(T, Z)``; ``output='complex'`` converts ``a`` to complex
    first (``T`` then upper triangular)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got output={output!r}.")
    (a,) = _inexact("schur", a)
    if output == "complex":
        a = a.astype(complex_dtype(a.dtype))
    t, z = lax_linalg.schur(a)
    return t, z


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The upper Hessenberg form ``h`` of square ``a``, and ``q`` with ``a = q h q^H`` when ``calc_q``."""
    del overwrite_a, check_finite
    (a,) = _inexact("hessenberg", a)
    n = a.shape[-1]
    if n == 0:
        return (tnp.zeros_like(a), tnp.zeros_like(a)) if calc_q else tnp.zeros_like(a)
    a_out, taus = lax_linalg.hessenberg(a)
    h = tnp.triu(a_out, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    batch = a_out.shape[:-2]
    q = tnp.block([[tnp.ones(batch + (1, 1), dtype=a_out.dtype), tnp.zeros(batch + (1, n - 1), dtype=a_out.dtype)],
                   [tnp.zeros(batch + (n - 1, 1), dtype=a_out.dtype), q]])
    return h, q


# --- expm: JAX's Pade approximant with scaling and squaring ---------------------------------
