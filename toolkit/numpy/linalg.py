"""``toolkit.numpy.linalg``: ``jax.numpy.linalg`` 0.10.2 over ``toolkit.lax.linalg``'s LAPACK kernels.

Every function promotes its operands as JAX does (integers to the default float), takes
leading batch dimensions, and computes what ``jax.numpy.linalg`` computes, with the same
algorithm where the result depends on it (``det`` of 2x2 and 3x3 in closed form, LU
otherwise; ``solve``/``inv`` through LU; ``lstsq``/``pinv``/``matrix_rank`` through the SVD).
Results are JAX's named tuples (``EighResult``, ``SVDResult``, ...). The array-API products
(``matmul``, ``outer``, ``cross``, ``vecdot``, ``tensordot``, ``trace``, ``diagonal``,
``matrix_transpose``) are ``toolkit.numpy``'s, restricted as JAX restricts them here.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import decompositions as lax_linalg
from toolkit.numpy import creation, diagonals, reductions, shapes, sorting, ufuncs
from toolkit.numpy.einsum import einsum as _einsum
from toolkit.numpy.take import take_along_axis
from toolkit.numpy import tensor_contractions
from toolkit.numpy._core import (
    asarray, broadcast_shapes, broadcast_to, canonical_axis, check_arraylike, promote_inexact,
)

__all__ = [
    "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond", "cross", "det",
    "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd",
    "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm",
]


class EighResult(NamedTuple):
    """``eigh``'s result: real ascending ``eigenvalues`` and the ``eigenvectors`` (columns)."""
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    """``eig``'s result: complex ``eigenvalues`` and right ``eigenvectors`` (columns)."""
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """``qr``'s result."""
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: ``det = sign * exp(logabsdet)``."""
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    """``svd``'s result: ``a = U @ diag(S) @ Vh``."""
    U: Any
    S: Any
    Vh: Any


def _inexact(name: str, *args: Any) -> list[Any]:
    arrays = []
    for x in args:
        check_arraylike(f"jnp.linalg.{name}", x)  # the public functions check first, under JAX's names
        arrays.append(asarray(x))
    return promote_inexact(*arrays)


def _square(name: str, a: Any) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {tuple(a.shape)}.")


def _H(x: Any) -> Any:
    return ufuncs.conj(shapes.matrix_transpose(x))


def _symmetrize(x: Any) -> Any:
    return (x + _H(x)) / 2


def _diag(x: Any) -> Any:
    return diagonals.diagonal(x, axis1=-2, axis2=-1)


# --- decompositions ---------------------------------------------------------------


@compiled_whole(static_argnames=("upper", "symmetrize_input"))
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor of Hermitian positive-definite ``a`` (``[..., n, n]``): lower ``L`` with
    ``a = L @ L^H``, or its conjugate transpose with ``upper``. Not positive definite: NaNs."""
    check_arraylike("jnp.linalg.cholesky", a)
    (a,) = _inexact("cholesky", a)
    _square("cholesky", a)
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return ufuncs.conj(shapes.matrix_transpose(L)) if upper else L


@compiled_whole(static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """Singular value decomposition of ``[..., m, n]`` matrices: :class:`SVDResult` ``(U, S, Vh)``, or the
    descending singular values ``S`` without ``compute_uv``. ``hermitian`` computes it from ``eigh``."""
    check_arraylike("jnp.linalg.svd", a)
    (a,) = _inexact("svd", a)
    if a.ndim < 2:
        raise ValueError(f"Argument to svd must have at least 2 dimensions, got shape {tuple(a.shape)}")
    if hermitian:
        eigenvectors, eigenvalues = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = ufuncs.abs(eigenvalues)
        if compute_uv:
            sign = ufuncs.sign(eigenvalues)
            order = sorting.argsort(s, axis=-1)[..., ::-1]
            s = take_along_axis(s, order, axis=-1)
            sign = take_along_axis(sign, order, axis=-1)
            u = take_along_axis(eigenvectors, order[..., None, :], axis=-1)
            vh = _H(u * sign[..., None, :].astype(u.dtype))
            return SVDResult(u, s, vh)
        return sorting.sort(s, axis=-1)[..., ::-1]
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True, subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False, subset_by_index=subset_by_index)


def svdvals(x: Any, /) -> Any:
    """The singular values of ``[..., m, n]`` matrices, descending."""
    check_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors of general square matrices (complex): :class:`EigResult`."""
    check_arraylike("jnp.linalg.eig", a)
    (a,) = _inexact("eig", a)
    _square("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@compiled_whole()
def eigvals(a: Any) -> Any:
    """The (complex) eigenvalues of general square matrices."""
    check_arraylike("jnp.linalg.eigvals", a)
    (a,) = _inexact("eigvals", a)
    _square("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def _lower(UPLO: str | None) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")


@compiled_whole(static_argnames=("UPLO", "symmetrize_input"))
def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (real, ascending) and eigenvectors of Hermitian matrices: :class:`EighResult`.

    ``UPLO``: which triangle to read (``'L'``, the default, or ``'U'``).
    """
    check_arraylike("jnp.linalg.eigh", a)
    lower = _lower(UPLO)
    (a,) = _inexact("eigh", a)
    _square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@compiled_whole(static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """The real, ascending eigenvalues of Hermitian matrices."""
    check_arraylike("jnp.linalg.eigvalsh", a)
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


@compiled_whole(static_argnames=("mode",))
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition: :class:`QRResult` ``(Q, R)`` for modes ``'reduced'``/``'full'`` (``Q`` is ``m x k``),
    ``'complete'`` (``m x m``); ``R`` alone for ``'r'``; LAPACK's ``(a^T, taus)`` for ``'raw'``."""
    check_arraylike("jnp.linalg.qr", a)
    (a,) = _inexact("qr", a)
    if a.ndim < 2:
        raise ValueError(f"Argument to qr must have at least 2 dimensions, got shape {tuple(a.shape)}")
    if mode == "raw":
        r, taus = lax_linalg.geqrf(a)
        return QRResult(shapes.matrix_transpose(r), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)


# --- solving ----------------------------------------------------------------------


def _lu_solve_matrix(lu: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """``a x = b`` for ``[..., m, n]`` ``b`` given ``a``'s LU factors (equal batch dimensions)."""
    if trans == 0:
        x = take_along_axis(b, permutation[..., :, None], axis=-2)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    conj = trans == 2
    x = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
                                    conjugate_a=conj)
    inverse = sorting.argsort(permutation, axis=-1)
    return take_along_axis(x, inverse[..., :, None], axis=-2)


def lu_solve(lu: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """``a x = b`` (``trans`` 0), ``a^T x = b`` (1) or ``a^H x = b`` (2) from ``lax.linalg.lu``'s factors.

    ``b``: ``[..., m]`` when it has one dimension less than ``lu``, else ``[..., m, k]``;
    batch dimensions broadcast (``jax.lax.linalg.lu_solve``'s convention).
    """
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    lu, permutation, b = asarray(lu), asarray(permutation), asarray(b)
    if lu.ndim < 2 or lu.shape[-1] != lu.shape[-2]:
        raise ValueError(f"last two dimensions of LU decomposition must be equal, got shape {tuple(lu.shape)}")
    if b.ndim < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {tuple(b.shape)}")
    vector = lu.ndim == b.ndim + 1
    if vector:
        if b.shape[-1] != lu.shape[-1]:
            raise ValueError(f"When LU decomposition matrix and b have the same number of dimensions, last axis of LU "
                             f"decomposition matrix (shape {tuple(lu.shape)}) and b array (shape {tuple(b.shape)}) "
                             "must match")
        b = b[..., None]
    elif b.shape[-2] != lu.shape[-1]:
        raise ValueError(f"When LU decomposition matrix and b different numbers of dimensions, last axis of LU "
                         f"decomposition matrix (shape {tuple(lu.shape)}) and second to last axis of b array "
                         f"(shape {tuple(b.shape)}) must match")
    batch = broadcast_shapes(lu.shape[:-2], permutation.shape[:-1], b.shape[:-2])
    lu = broadcast_to(lu, (*batch, *lu.shape[-2:]))
    permutation = broadcast_to(permutation, (*batch, permutation.shape[-1]))
    b = broadcast_to(b, (*batch, *b.shape[-2:]))
    x = _lu_solve_matrix(lu, permutation, b, trans)
    return x[..., 0] if vector else x


@compiled_whole()
def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b`` for square ``a`` (``[..., m, m]``) through its LU factorization.

    ``b`` is a vector (``[m]``) only when it is one-dimensional (NumPy 2 and JAX >= 0.5);
    otherwise ``[..., m, n]``, batch dimensions broadcasting against ``a``'s.
    """
    check_arraylike("jnp.linalg.solve", a, b)
    a, b = _inexact("solve", a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={tuple(a.shape)}")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
                         f"got a={tuple(a.shape)} and b={tuple(b.shape)}")
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] and a.shape[-1] != b.shape[-2]:
        raise ValueError(f"Invalid shapes for solve: {tuple(a.shape)}, {tuple(b.shape)}. Prior to JAX v0.5.0, this "
                         "would have been treated as a batched 1-dimensional solve. To recover this behavior, use "
                         "solve(a, b[..., None]).squeeze(-1).")
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
                         f"got a={tuple(a.shape)} and b={tuple(b.shape)}")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, (*batch, *a.shape[-2:]))
    b = broadcast_to(b, (*batch, *b.shape[-2:]))
    lu, _, permutation = lax_linalg.lu(a)
    x = _lu_solve_matrix(lu, permutation, b)
    return x[..., 0] if vector else x


@compiled_whole()
def inv(a: Any) -> Any:
    """The inverse of square matrices ``[..., n, n]`` (``solve(a, I)``)."""
    check_arraylike("jnp.linalg.inv", a)
    (arr,) = _inexact("inv", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {tuple(arr.shape)}.")
    eye = creation.eye(arr.shape[-1], dtype=arr.dtype)
    return solve(arr, broadcast_to(eye, arr.shape))


def _det_2x2(a: Any) -> Any:
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a: Any) -> Any:
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    dtype = a.dtype
    lu, pivot, _ = lax_linalg.lu(a)
    diag = _diag(lu)
    is_zero = reductions.any(diag == 0, axis=-1)
    iota = np.arange(a.shape[-1], dtype=np.int32)
    parity = reductions.count_nonzero(pivot != iota, axis=-1)
    if dtypes.is_complex(dtype):
        sign = reductions.prod(diag / ufuncs.abs(diag).astype(dtype), axis=-1)
    else:
        sign = asarray(np.ones((), dtype))
        parity = parity + reductions.count_nonzero(diag < 0, axis=-1)
    sign = ufuncs.where(is_zero, asarray(np.zeros((), dtype)), sign * (-2 * (parity % 2) + 1).astype(dtype))
    logdet = ufuncs.where(is_zero, asarray(np.array(-np.inf, dtype)),
                          reductions.sum(ufuncs.log(ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, ufuncs.real(logdet)


def _slogdet_small(a: Any) -> tuple[Any, Any]:
    det_ = a[..., 0, 0] if a.shape[-1] == 1 else _det_2x2(a)
    return ufuncs.sign(det_), ufuncs.real(ufuncs.log(ufuncs.abs(det_)))


@compiled_whole(static_argnames=("method",))
def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """Sign and log of the absolute determinant (:class:`SlogdetResult`) of square matrices, via LU
    (``method=None``/``'lu'``; closed form for 1x1 and 2x2) or QR (``'qr'``, real only)."""
    check_arraylike("jnp.linalg.slogdet", a)
    (a,) = _inexact("slogdet", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {tuple(a.shape)}")
    if method is None or method == "lu":
        if a.shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        if dtypes.is_complex(a.dtype):
            raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
        n = a.shape[-1]
        r, taus = lax_linalg.geqrf(a)
        r_diag = _diag(r)
        log_abs_det = reductions.sum(ufuncs.log(ufuncs.abs(r_diag)), axis=-1)
        sign_diag = reductions.prod(ufuncs.sign(r_diag), axis=-1)
        sign_taus = reductions.prod(ufuncs.where(taus[..., :(n - 1)] != 0, -1, 1), axis=-1).astype(sign_diag.dtype)
        return SlogdetResult(sign_diag * sign_taus, log_abs_det)
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'.")


@compiled_whole()
def det(a: Any) -> Any:
    """The determinant of square matrices ``[..., n, n]`` (closed form for 2x2/3x3, LU otherwise)."""
    check_arraylike("jnp.linalg.det", a)
    (a,) = _inexact("det", a)
    shape = tuple(a.shape)
    if len(shape) >= 2 and shape[-1] == 2 and shape[-2] == 2:
        return _det_2x2(a)
    if len(shape) >= 2 and shape[-1] == 3 and shape[-2] == 3:
        return _det_3x3(a)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        sign, logdet = slogdet(a)
        return sign * ufuncs.exp(logdet).astype(sign.dtype)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {shape}")


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False) -> tuple[Any, Any, Any, Any]:
    """Least-squares solution of ``a @ x = b`` (``a``: ``[m, n]``; ``b``: ``[m]`` or ``[m, k]``) via the SVD:
    ``(x, residuals, rank, singular values)``. ``numpy_resid`` gives NumPy's empty residuals when
    the rank is deficient or ``m <= n``; the rank is then read from the device."""
    check_arraylike("jnp.linalg.lstsq", a, b)
    a, b = _inexact("lstsq", a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = b.ndim
    if b_orig_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = creation.empty(0, dtype=a.dtype)
        rank = asarray(np.array(0, dtypes.default_int_dtype()))
        x = creation.zeros((n, *b.shape[1:]), dtype=a.dtype)
    else:
        eps = float(dtypes.finfo(dtype).eps)
        if rcond is None:
            rcond_ = asarray(eps * max(n, m))
        else:
            rcond_ = ufuncs.where(asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= rcond_.astype(s.dtype) * s[0])
        rank = mask.sum()
        safe_s = ufuncs.where(mask, s, 1).astype(a.dtype)
        s_inv = ufuncs.where(mask, 1 / safe_s, 0)[:, None]
        uTb = tensor_contractions.matmul(ufuncs.conj(u).T, b)
        x = tensor_contractions.matmul(ufuncs.conj(vt).T, s_inv * uTb)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray(np.zeros((0,), dtypes.default_float_dtype()))
    else:
        resid = norm(b - tensor_contractions.matmul(a, x), axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse of ``[..., m, n]`` matrices from the SVD; singular values below
    ``rtol`` (default ``10 * max(m, n) * eps``) times the largest count as zero (``rcond``: old name)."""
    check_arraylike("jnp.linalg.pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (arr,) = _inexact("pinv", a)
    if arr.ndim < 2:
        raise ValueError(f"Argument to pinv must have at least 2 dimensions, got shape {tuple(arr.shape)}")
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return creation.empty(arr.shape[:-2] + (n, m), arr.dtype)
    arr = ufuncs.conj(arr)
    if rtol is None:
        rtol = 10.0 * max(m, n) * asarray(np.array(dtypes.finfo(arr.dtype).eps, dec_real(arr.dtype)))
    rtol = asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = shapes.expand_dims(rtol[..., None], tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = ufuncs.where(s > cutoff, s, np.inf).astype(u.dtype)
    res = tensor_contractions.matmul(shapes.matrix_transpose(vh), ufuncs.divide(shapes.matrix_transpose(u),
                                                                                s[..., None]))
    return res.astype(arr.dtype)


def dec_real(dtype: Any) -> np.dtype:
    """The real dtype of ``dtype``'s precision (``finfo`` of a complex dtype is its real part's)."""
    return lax_linalg.real_dtype(dtype)


@compiled_whole(static_argnames=("n",))
def matrix_power(a: Any, n: int) -> Any:
    """``a`` (``[..., m, m]``) to the integer power ``n`` by repeated squaring (``inv`` first for ``n < 0``)."""
    check_arraylike("jnp.linalg.matrix_power", a)
    arr = asarray(a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return broadcast_to(creation.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = abs(n)
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return arr @ arr @ arr
    z = result = None
    while n > 0:
        z = arr if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result


@compiled_whole(static_argnames=("hermitian",))
def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """The rank of ``[..., m, n]`` matrices: singular values above ``rtol`` times the largest (default
    ``max(m, n) * eps``); ``tol`` is an old name of ``rtol``."""
    check_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = _inexact("matrix_rank", M)
    if M.ndim < 2:
        return reductions.any(M != 0).astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = reductions.max(S, axis=-1) * np.asarray(max(M.shape[-2:])).astype(S.dtype) * \
            np.asarray(dtypes.finfo(S.dtype).eps, S.dtype)
    rtol = asarray(rtol)
    rtol = shapes.expand_dims(rtol, rtol.ndim)
    return reductions.sum(S > rtol, axis=-1)


@compiled_whole(static_argnames=("p",))
def cond(x: Any, p: Any = None) -> Any:
    """The condition number ``norm(x, p) * norm(inv(x), p)`` (for ``p`` None/2/-2: a ratio of singular values)."""
    check_arraylike("cond", x)
    arr = asarray(x)
    if arr.ndim < 2:
        raise ValueError(f"toolkit.numpy.linalg.cond: input array must be at least 2D; got arr.shape={arr.shape!r}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"toolkit.numpy.linalg.cond: input array must not be empty; got arr.shape={arr.shape!r}")
    if p is None or p == 2:
        s = svdvals(arr)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(arr)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"toolkit.numpy.linalg.cond: for p={p!r}, array must be square; got "
                             f"arr.shape={arr.shape!r}")
        r = norm(arr, ord=p, axis=(-2, -1)) * norm(inv(arr), ord=p, axis=(-2, -1))
    return ufuncs.where(ufuncs.isnan(r) & ~reductions.any(ufuncs.isnan(arr), axis=(-2, -1)), np.inf, r)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` under ``tensordot(., ., ind)``: shape ``a.shape[ind:] + a.shape[:ind]``."""
    check_arraylike("tensorinv", a)
    arr = asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind!r}")
    contracting, batch = arr.shape[:ind], arr.shape[ind:]
    flat = (math.prod(contracting), math.prod(batch))
    if flat[0] != flat[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` dimensions equals that of "
                         f"the remaining dimensions. got arr.shape={tuple(arr.shape)!r} with ind={ind!r}.")
    return shapes.reshape(inv(shapes.reshape(arr, flat)), (*batch, *contracting))


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """``x`` with ``tensordot(a, x, x.ndim) == b`` (``axes`` of ``a`` first moved to the end)."""
    check_arraylike("tensorsolve", a, b)
    a_arr, b_arr = asarray(a), asarray(b)
    if axes is not None:
        a_arr = shapes.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
    out_shape = a_arr.shape[b_arr.ndim:]
    if tuple(a_arr.shape[:b_arr.ndim]) != tuple(b_arr.shape):
        raise ValueError("After moving axes to end, leading shape of a must match shape of b. got "
                         f"a.shape={tuple(a_arr.shape)}, b.shape={tuple(b_arr.shape)}")
    if b_arr.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); got "
                         f"a.shape={tuple(a_arr.shape)}, b.ndim={b_arr.ndim}.")
    a_arr = shapes.reshape(a_arr, (b_arr.size, math.prod(out_shape)))
    return shapes.reshape(solve(a_arr, shapes.ravel(b_arr)), out_shape)


# --- norms ------------------------------------------------------------------------


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: Any = 2) -> Any:
    """The vector ``ord``-norm over ``axis`` (all axes by default): 2, 1, 0 (count), inf, -inf or any power."""
    check_arraylike("jnp.linalg.vector_norm", x)
    x = asarray(x)
    if ord is None or ord == 2:
        return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'toolkit.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-toolkit.numpy.inf' instead."
        raise ValueError(msg)
    if ord == np.inf:
        return reductions.max(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)  # JAX's: 0 when empty
    if ord == -np.inf:
        return reductions.min(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        # JAX counts in finfo(x.dtype).dtype: float16 counts in float16 (complex64 in float32). Integers and bools,
        # which JAX refuses there (finfo of an integer type), count in the default float, as numpy's norm does.
        float_dtype = np.dtype(dtypes.finfo(x.dtype).dtype) if dtypes.is_inexact(x.dtype) else \
            dtypes.default_float_dtype()
        return reductions.sum(x != 0, dtype=float_dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    abs_x = ufuncs.abs(x)
    ord_arr = np.asarray(ord, abs_x.dtype)
    out = reductions.sum(abs_x ** ord_arr, axis=axis, keepdims=keepdims)
    return ufuncs.power(out, np.asarray(1.0 / ord_arr, abs_x.dtype))


@compiled_whole(static_argnames=("ord", "axis", "keepdims"))
def norm(x: Any, ord: int | str | None = None, axis: None | tuple[int, ...] | int = None,
         keepdims: bool = False) -> Any:
    """A vector norm (one axis) or a matrix norm (two axes): NumPy's ``ord`` values ('fro', 'nuc', +-1,
    +-2, +-inf for matrices); ``axis=None`` with ``ord=None`` is the 2-norm of the flattened array."""
    check_arraylike("jnp.linalg.norm", x)
    (x,) = _inexact("norm", x)
    ndim = x.ndim
    if axis is None:
        if ord is None:
            return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), keepdims=keepdims))
        axes = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axes = tuple(canonical_axis(a, ndim) for a in axis)
    else:
        axes = (canonical_axis(axis, ndim),)
    if len(axes) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axes, keepdims=keepdims)
    if len(axes) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to compute a vector-norm, "
                         "or two axes to compute a matrix-norm.")
    row_axis, col_axis = axes
    if ord is None or ord in ("f", "fro"):
        return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axes, keepdims=keepdims))
    if ord in (1, -1):
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        column_sums = reductions.sum(ufuncs.abs(x), axis=row_axis, keepdims=keepdims)
        # JAX's max starts from 0 (an empty matrix's norm is 0); its min has no identity (an empty one raises).
        if ord == 1:
            return reductions.max(column_sums, axis=col_axis, keepdims=keepdims, initial=0)
        return reductions.min(column_sums, axis=col_axis, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        row_sums = reductions.sum(ufuncs.abs(x), axis=col_axis, keepdims=keepdims)
        if ord == np.inf:
            return reductions.max(row_sums, axis=row_axis, keepdims=keepdims, initial=0)
        return reductions.min(row_sums, axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        x = shapes.moveaxis(x, axes, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = reductions.max(s, axis=-1, initial=0)
        elif ord == -2:
            y = reductions.min(s, axis=-1)
        else:
            y = reductions.sum(s, axis=-1)
        if keepdims:
            y = shapes.expand_dims(y, axes)
        return y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: str | int = "fro") -> Any:
    """The matrix ``ord``-norm over the last two axes."""
    check_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


# --- products (the array API's linalg names) --------------------------------------


def matmul(x1: Any, x2: Any, /, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``x1 @ x2`` (``toolkit.numpy.matmul``)."""
    check_arraylike("jnp.linalg.matmul", x1, x2)
    return tensor_contractions.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """``toolkit.numpy.tensordot`` with the array API's keyword ``axes`` (default 2); ``out_sharding`` as its."""
    check_arraylike("jnp.linalg.tensordot", x1, x2)
    return tensor_contractions.tensordot(x1, x2, axes=axes, precision=precision,
                                         preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The conjugate dot product of ``x1`` and ``x2`` along ``axis`` (other dimensions broadcast)."""
    check_arraylike("jnp.linalg.vecdot", x1, x2)
    return tensor_contractions.vecdot(x1, x2, axis=axis, precision=precision,
                                      preferred_element_type=preferred_element_type)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two one-dimensional arrays (other ranks are a ``ValueError``)."""
    check_arraylike("jnp.linalg.outer", x1, x2)
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim!r} "
                         f"x2.ndim={x2.ndim!r}")
    return x1[:, None] * x2[None, :]


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of (arrays of) 3-vectors along ``axis``."""
    check_arraylike("jnp.linalg.outer", x1, x2)  # sic: JAX's name for cross's check
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
                         f"x1.shape[axis]={x1.shape[axis]!r} and x2.shape[axis]={x2.shape[axis]!r}")
    return tensor_contractions.cross(x1, x2, axis=axis)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The traces of the matrices in the last two axes of ``x``."""
    check_arraylike("jnp.linalg.trace", x)
    return diagonals.trace(asarray(x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The ``offset`` diagonals of the matrices in the last two axes of ``x``."""
    check_arraylike("jnp.linalg.diagonal", x)
    return diagonals.diagonal(asarray(x), offset=offset, axis1=-2, axis2=-1)


def matrix_transpose(x: Any, /) -> Any:
    """``x`` with its last two axes swapped."""
    check_arraylike("jnp.linalg.matrix_transpose", x)
    return shapes.matrix_transpose(x)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of a chain of matrices (first/last may be vectors), in the cheapest order (via ``einsum``)."""
    check_arraylike("jnp.linalg.multi_dot", *arrays)
    arrs = [asarray(a) for a in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2) and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the first and last array "
                         f"which may be 1 or 2 dimensional. Got array shapes {[tuple(a.shape) for a in arrs]}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of following array. "
                         f"Got array shapes {[tuple(a.shape) for a in arrs]}")
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if len(arrs) + 1 > len(letters):
        raise ValueError(f"multi_dot: at most {len(letters) - 1} arrays, got {len(arrs)}")
    terms = [letters[i] + letters[i + 1] for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        terms[0] = terms[0][1:]
    if arrs[-1].ndim == 1:
        terms[-1] = terms[-1][:1]
    out = (terms[0][0] if arrs[0].ndim == 2 else "") + (terms[-1][-1] if arrs[-1].ndim == 2 else "")
    return _einsum(",".join(terms) + "->" + out, *arrs, optimize="auto", precision=precision)

