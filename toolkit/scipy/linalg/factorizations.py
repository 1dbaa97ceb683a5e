"""``jax.scipy.linalg``'s factorizations and solvers over ``toolkit.lax.linalg``'s LAPACK kernels.

SciPy's conventions, as JAX keeps them: ``cholesky`` is upper by default, factorizations
come as ``(factor, lower)`` / ``(lu, piv)`` pairs for the matching ``*_solve``, ``qr``'s
modes are ``'full'``, ``'economic'`` and ``'r'``. SciPy's ``overwrite_*`` and
``check_finite`` arguments are accepted and ignored (arrays are immutable; nothing is checked).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit import random
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import linalg as lax_linalg
from toolkit.lax.convolution import Precision
from toolkit.lax.decompositions import complex_dtype
from toolkit.lax.qdwh import qdwh
from toolkit.numpy import linalg as np_linalg
from toolkit.numpy._core import broadcast_shapes, promote_inexact

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "eigh_tridiagonal", "hessenberg", "inv", "lu",
           "lu_factor", "lu_solve", "polar", "qr", "qr_multiply", "schur", "solve", "solve_triangular", "svd"]


# JAX's factorizations and solvers take nested lists as arrays (``jnp.asarray``); these few refuse them (their
# JAX versions fail on a list, each in its own way), so toolkit raises one TypeError there.
_ARRAYS_ONLY = frozenset({"schur", "hessenberg", "expm"})


def _inexact(name: str, *args: Any) -> list[Any]:
    if name in _ARRAYS_ONLY:
        for x in args:
            if isinstance(x, (list, tuple)):
                raise TypeError(f"toolkit.scipy.linalg.{name} requires array arguments, got {type(x).__name__}")
    return promote_inexact(*(tnp.asarray(x) for x in args))


def _floating_only(name: str, a: Any) -> None:
    """JAX's check where its function takes floating or complex arrays only (no promotion of integers)."""
    dtype = tnp.asarray(a).dtype
    if not dtypes.is_inexact(dtype):
        raise TypeError(f"{name} does not accept dtype {dtype.name} at position 0. Accepted dtypes at position 0 are "
                        "subtypes of floating, complexfloating.")


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

    ``pivoting=True`` (LAPACK's ``geqp3``) adds the int32 column permutation ``p`` with
    ``a[..., :, p] = q @ r`` and ``|diag(r)|`` non-increasing: ``(q, r, p)``, or ``(r, p)`` for ``'r'``.
    """
    del overwrite_a, lwork, check_finite
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _inexact("qr", a)
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, *p) if pivoting else (r,)
    return (q, r, *p)


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
    if output == "real":  # a complex Schur form converts integers to complex first, as JAX's
        _floating_only("schur", a)
    (a,) = _inexact("schur", a)
    if output == "complex":
        a = a.astype(complex_dtype(a.dtype))
    t, z = lax_linalg.schur(a)
    return t, z


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The upper Hessenberg form ``h`` of square ``a``, and ``q`` with ``a = q h q^H`` when ``calc_q``."""
    del overwrite_a, check_finite
    _floating_only("hessenberg", a)
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



def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False) -> tuple[Any, Any]:
    """The QR decomposition ``a = Q R`` (``a``: ``[..., M, N]``, ``K = min(M, N)``) with ``Q`` applied to ``c``
    without forming it (LAPACK's ``geqrf`` then ``ormqr``): ``(Q @ c, R)`` for ``mode='left'`` (``c``:
    ``[..., K, P]``, result ``[..., M, P]``), ``(c @ Q, R)`` for ``mode='right'`` (``c``: ``[..., P, M]``,
    result ``[..., P, K]``); ``conjugate`` uses ``conj(Q)``. ``R`` is ``[..., K, N]``. A 1-D ``c`` is a column
    (``'left'``) or a row (``'right'``) and the result is raveled. Batch dimensions broadcast.

    Column pivoting (``pivoting=True``, LAPACK's ``geqp3``) is not available: a ``NotImplementedError``.
    """
    del overwrite_a, overwrite_c
    a, c = _inexact("qr_multiply", a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    if a.ndim < 2:
        raise ValueError(f"qr_multiply: a must have shape [..., M, N], got {tuple(a.shape)}")
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left":
        if c.shape[-2] != k:
            raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(a.shape)} "
                             f"so Q has {k} columns, but c has {c.shape[-2]} rows (expected {k}).")
    elif c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(a.shape)} "
                         f"so Q has {m} rows, but c has {c.shape[-1]} columns (expected {m}).")
    if pivoting:
        raise NotImplementedError("qr_multiply(pivoting=True) is not implemented in toolkit (LAPACK's geqp3)")
    batch = broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = tnp.broadcast_to(a, (*batch, *a.shape[-2:]))
    c = tnp.broadcast_to(c, (*batch, *c.shape[-2:]))
    r, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        # Q is M x M for ormqr: c's missing rows multiply Q's columns beyond K, which the economic Q lacks.
        c = tnp.concatenate([c, tnp.zeros((*c.shape[:-2], m - k, c.shape[-1]), dtype=c.dtype)], axis=-2)
    if conjugate:
        # c conj(Q) = (Q^H c^T)^T: transposing c (free under jit) turns the conjugate into LAPACK's adjoint,
        # and swaps the side Q multiplies from.
        c = tnp.swapaxes(c, -1, -2)
    product = lax_linalg.ormqr(r, taus, c, left=(mode == "left") != conjugate, transpose=conjugate)
    if conjugate:
        product = tnp.swapaxes(product, -1, -2)
    if mode == "right":
        product = product[..., :k]
    if onedim:
        product = tnp.ravel(product)
    return product, tnp.triu(r[..., :k, :])


# --- polar: QDWH (toolkit.lax.qdwh) or the SVD ----------------------------------------------------------


def _matmul_highest(a: Any, b: Any) -> Any:
    # JAX runs _polar_2d under default_matmul_precision("float32"): its products are Precision.HIGHEST.
    return tnp.matmul(a, b, precision=Precision.HIGHEST)


def _polar_matrix(a: Any, side: str, method: str, eps: float | None) -> tuple[Any, Any]:
    """The polar factors ``(unitary, posdef)`` of one matrix ``a`` (``m x n``)."""
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            # a^H = u' h' is a right decomposition of the tall a^H: a = h'^H u'^H.
            unitary, posdef, _, _ = qdwh(tnp.conj(a.T), is_hermitian=False, eps=eps)
            unitary, posdef = tnp.conj(unitary.T), tnp.conj(posdef.T)
        else:
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where side='right' "
                                      f"and m >= n side='left', got {tuple(a.shape)} with side={side!r}")
    elif method == "svd":
        u_svd, s_svd, vh_svd = lax_linalg.svd(a, full_matrices=False)
        s_svd = s_svd.astype(u_svd.dtype)
        unitary = _matmul_highest(u_svd, vh_svd)
        if side == "right":
            posdef = _matmul_highest(tnp.conj(vh_svd.T) * s_svd[None, :], vh_svd)
        else:
            posdef = _matmul_highest(u_svd * s_svd[None, :], tnp.conj(u_svd.T))
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


@compiled_whole(static_argnames=("side", "method", "eps"))
def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """The polar decomposition of ``a`` (``[..., m, n]``): ``(u, p)`` with ``a = u p`` (``side='right'``,
    ``p`` is ``n x n``) or ``a = p u`` (``side='left'``, ``p`` is ``m x m``), ``p`` Hermitian positive
    semidefinite and ``u`` with orthonormal columns (rows when ``n > m``): ``u = u_svd vh_svd`` for the
    SVD ``a = u_svd s vh_svd``.

    ``method='qdwh'`` (default) runs :func:`toolkit.lax.qdwh.qdwh`, which needs ``m >= n`` for
    ``side='right'`` and ``m < n`` for ``side='left'`` (``NotImplementedError`` otherwise, as JAX's);
    ``eps`` is its tolerance. ``method='svd'`` forms the factors from the SVD. As in JAX 0.10.2,
    ``max_iterations`` is accepted but not passed on: QDWH runs to its default limit of 10 steps.
    """
    del max_iterations  # JAX's _polar_2d takes it and does not pass it to qdwh; results agree with JAX's
    arr = tnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return tnp.vectorize(lambda matrix: _polar_matrix(matrix, side, method, eps), signature=signature)(arr)


# --- eigh_tridiagonal: bisection on Sturm counts, then inverse iteration -------------------------------


def _sturm_counts(alpha: Any, beta_sq: Any, pivmin: Any, alpha0_perturbation: Any, x: Any) -> Any:
    """For each shift in ``x``, how many eigenvalues of the symmetric tridiagonal matrix (diagonal ``alpha``,
    squared off-diagonal ``beta_sq``) are below it: the negative pivots of the LDL^T factorization of
    ``T - x I`` (Sturm's sequence), with pivots kept at least ``pivmin`` away from 0 to avoid overflow."""
    n = alpha.shape[0]

    # The first pivot: exactly 0 when x is alpha[0], which is replaced by a tiny perturbation.
    q = alpha[0] - x
    count = tnp.where(q < 0, tnp.ones(x.shape, dtype=np.int32), tnp.zeros(x.shape, dtype=np.int32))
    q = tnp.where(alpha[0] == x, alpha0_perturbation, q)

    def sturm_step(i: Any, q: Any, count: Any) -> tuple[Any, Any]:
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = tnp.where(q <= pivmin, count + 1, count)
        q = tnp.where(q <= pivmin, tnp.minimum(q, -pivmin), q)
        return q, count

    # (n - 1) % 16 steps unrolled ahead, then the loop in blocks of 16 unrolled steps (JAX's shape of it).
    blocksize = 16

    def steps(unroll: int) -> Any:
        def run(state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
            start, q, count = state
            for j in range(unroll):
                q, count = sturm_step(start + j, q, count)
            return start + unroll, q, count
        return run

    state = steps((n - 1) % blocksize)((1, q, count))
    _, _, count = lax.while_loop(lambda state: tnp.less(state[0], n), steps(blocksize), state)
    return count


def _tridiagonal_eigenvectors(alpha: Any, beta: Any, eigvals: Any, key: Any) -> Any:
    """The eigenvectors (rows) for ``eigvals`` (ascending) by inverse iteration from random vectors, those of
    eigenvalues closer than ``sqrt(eps) |T|`` orthonormalized together (by QR) after every step."""
    n = alpha.shape[0]
    k = eigvals.shape[0]
    dl = tnp.pad(tnp.conj(beta), (1, 0))
    du = tnp.pad(beta, (0, 1))

    # Clusters of close eigenvalues: their eigenvectors are not unique (their span is), so they are kept
    # mutually orthogonal explicitly. A cluster is a run [start, end) of neighbours closer than gaptol.
    gap = eigvals[1:] - eigvals[:-1]
    eps = np.finfo(eigvals.dtype).eps
    t_norm = tnp.maximum(tnp.abs(eigvals[0]), tnp.abs(eigvals[-1]))
    gaptol = tnp.sqrt(eps) * t_norm
    close = gap < gaptol
    left_neighbor_close = tnp.pad(close, (1, 0), constant_values=False)
    right_neighbor_close = tnp.pad(close, (0, 1), constant_values=False)
    cluster_start = tnp.logical_and(tnp.logical_not(left_neighbor_close), right_neighbor_close)
    cluster_end = tnp.logical_and(left_neighbor_close, tnp.logical_not(right_neighbor_close))
    max_clusters = k // 2 + 1
    starts = tnp.nonzero(cluster_start, size=max_clusters)[0]
    ends = tnp.nonzero(cluster_end, size=max_clusters)[0] + 1
    num_clusters = tnp.sum(cluster_start)
    arange_k = tnp.arange(k)

    solve_dtype = np.result_type(alpha.dtype, beta.dtype)
    base_dtype = np.finfo(solve_dtype).dtype
    v = random.normal(key, (k, n), dtype=base_dtype).astype(solve_dtype)
    v = v / np_linalg.norm(v, axis=-1, keepdims=True).astype(solve_dtype)

    def orthogonalize_close_eigenvectors(ev: Any) -> Any:
        def orthogonalize_cluster(i: Any, ev: Any) -> Any:
            start, end = starts[i], ends[i]
            # The cluster's rows as the first (end - start) rows of a k x n block, the rest zeroed.
            block = lax.dynamic_slice(tnp.pad(ev, ((0, k), (0, 0))), (start, 0), (k, n))
            mask = (arange_k < end - start).astype(ev.dtype)
            q, _ = np_linalg.qr((block * mask[:, None]).T)
            update = lax.dynamic_update_slice(tnp.zeros((2 * k, n), dtype=ev.dtype), q.T * mask[:, None],
                                              (start, 0))[:k, :]
            in_cluster = (arange_k >= start) & (arange_k < end)
            return tnp.where(in_cluster[:, None], update, ev)

        return lax.fori_loop(0, num_clusters, orthogonalize_cluster, ev)

    # The k shifted systems (T - eigvals[i] I) x_i = v_i, solved together as a batch.
    alpha_shifted = (alpha[None, :] - eigvals[:, None]).astype(solve_dtype)
    dl_batched = tnp.broadcast_to(dl[None, :], (k, n)).astype(solve_dtype)
    du_batched = tnp.broadcast_to(du[None, :], (k, n)).astype(solve_dtype)

    def inverse_iteration_step(state: tuple[Any, Any, Any, Any]) -> tuple[Any, Any, Any, Any]:
        i, v, norm_v, _ = state
        # Perturbed pivots: each shifted matrix is (nearly) singular by construction, its solution still finite.
        v_new = lax_linalg.tridiagonal_solve(dl_batched, alpha_shifted, du_batched, v[:, :, None].astype(solve_dtype),
                                             perturb_singular=True)
        v_new = tnp.squeeze(v_new, axis=-1)
        norm_v_new = np_linalg.norm(v_new, axis=-1, keepdims=True)
        v_new = v_new / norm_v_new.astype(v_new.dtype)
        v_new = orthogonalize_close_eigenvectors(v_new)
        return i + 1, v_new, tnp.squeeze(norm_v_new, axis=-1), norm_v

    def norms_still_growing(state: tuple[Any, Any, Any, Any]) -> Any:
        # At most 5 steps (LAPACK's xSTEIN), while some vector's norm still grows by 10% or more.
        i, _, norm_v, norm_v_old = state
        return tnp.logical_and(i < 5, tnp.any(norm_v >= 1.1 * norm_v_old))

    _, vectors, _, _ = lax.while_loop(norms_still_growing, inverse_iteration_step,
                                      (0, v, tnp.ones(k, dtype=eigvals.dtype), tnp.zeros(k, dtype=eigvals.dtype)))
    return vectors


@compiled_whole(static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """The eigenvalues (ascending), and unless ``eigvals_only`` the eigenvectors (columns), of the real
    symmetric (or complex Hermitian) tridiagonal matrix with diagonal ``d`` (``(N,)``) and off-diagonal ``e``
    (``(N - 1,)``), as JAX computes them: bisection on Sturm counts for all the wanted eigenvalues at once,
    from the Gershgorin interval, to an absolute tolerance ``max(tol, eps |T|)``; then inverse iteration
    from random vectors drawn with ``key`` (default ``random.key(42)``).

    ``select='a'``: all eigenvalues; ``'i'``: those of indices ``select_range[0] <= i <= select_range[1]``.
    ``select='v'`` (by value) is not implemented (``NotImplementedError``, as in JAX). ``d`` and ``e`` must have
    the same dtype, float32/float64 (complex too: the eigenvalues are real, the eigenvectors complex).
    """
    if not eigvals_only and key is None:
        key = random.key(42)
    alpha = tnp.asarray(d)
    beta = tnp.asarray(e)
    supported_dtypes = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, "
                        f"got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported_dtypes or beta.dtype not in supported_dtypes:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"toolkit.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        if eigvals_only:
            return tnp.real(alpha)
        return tnp.real(alpha), tnp.eye(n, dtype=alpha.dtype)

    if dtypes.is_complex(alpha.dtype):
        alpha = tnp.real(alpha)
        beta_sq = tnp.real(beta * tnp.conj(beta))
        beta_abs = tnp.sqrt(beta_sq)
    else:
        beta_abs = tnp.abs(beta)
        beta_sq = tnp.square(beta)

    # Gershgorin's circles bound the spectrum: [lambda_est_min, lambda_est_max], and |T|_2 <= t_norm.
    off_diag_abs_row_sum = tnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]], axis=0)
    lambda_est_max = tnp.amax(alpha + off_diag_abs_row_sum)
    lambda_est_min = tnp.amin(alpha - off_diag_abs_row_sum)
    t_norm = tnp.maximum(tnp.abs(lambda_est_min), tnp.abs(lambda_est_max))

    # The smallest pivot allowed in the Sturm sequence (LAPACK's safe minimum, scaled), against overflow.
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * tnp.maximum(1, tnp.amax(beta_sq))
    alpha0_perturbation = tnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = tnp.maximum(tol, abs_tol)
    # Each bisection step halves the interval: from |T| to eps |T| takes at most the mantissa's bits plus one.
    max_it = finfo.nmant + 1

    if select == "a":
        target_counts = tnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        target_counts = tnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")

    # Bisection for every wanted eigenvalue at once, from the Gershgorin interval slightly widened.
    fudge = 2.1
    norm_slack = tnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    target_shape = target_counts.shape
    lower = tnp.broadcast_to(lambda_est_min - norm_slack - 2 * fudge * pivmin, target_shape)
    upper = tnp.broadcast_to(lambda_est_max + norm_slack + fudge * pivmin, target_shape)
    mid = 0.5 * (upper + lower)
    pivmin = tnp.broadcast_to(pivmin, target_shape)
    alpha0_perturbation = tnp.broadcast_to(alpha0_perturbation, target_shape)

    def wider_than_tolerance(state: tuple[Any, Any, Any, Any]) -> Any:
        i, lower, _, upper = state
        return tnp.logical_and(tnp.less(i, max_it), tnp.less(abs_tol, tnp.amax(upper - lower)))

    def bisect(state: tuple[Any, Any, Any, Any]) -> tuple[Any, Any, Any, Any]:
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = tnp.where(counts <= target_counts, mid, lower)
        upper = tnp.where(counts > target_counts, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = lax.while_loop(wider_than_tolerance, bisect, (0, lower, mid, upper))
    if eigvals_only:
        return mid
    return mid, _tridiagonal_eigenvectors(alpha, beta, mid, key).T
