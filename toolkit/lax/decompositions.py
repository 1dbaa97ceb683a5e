"""Matrix decompositions on LAPACK: ``jax.lax.linalg``'s primitives and user functions.

Every primitive takes a batch of matrices (leading dimensions are batch dimensions, as
JAX's) and lowers on CPU to the same ``lapack_*_ffi`` custom calls JAX 0.10.2 emits, with
the same layouts, ``mhlo.backend_config`` and ``num_batch_dims`` (``lowering/rules/decompositions.py``):
toolkit-lowered programs and their artifacts call the kernels JAX's do, which jaxlib
registers (``toolkit/runtime/executable.py``). A factorization LAPACK reports as failed
(``info != 0``) gives NaNs, as JAX's.

The user functions are ``jax.lax.linalg``'s: :func:`cholesky`, :func:`eig`, :func:`eigh`,
:func:`lu`, :func:`lu_pivots_to_permutation`, :func:`qr`, :func:`geqrf`,
:func:`householder_product`, :func:`svd`, :func:`triangular_solve`, :func:`tridiagonal`,
:func:`tridiagonal_solve`, :func:`hessenberg`, :func:`schur`, :func:`ormqr`, :func:`cholesky_update`,
:func:`symmetric_product`; ``toolkit.lax.linalg`` re-exports them.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.lax import elementwise, structural

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("decompositions")

#: The dtypes LAPACK has kernels for (the prefixes s, d, c, z).
LAPACK_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


class EigImplementation(enum.Enum):
    """Which eig implementation to use (``jax.lax.linalg.EigImplementation``); CPU has LAPACK only."""

    LAPACK = "lapack"
    MAGMA = "magma"
    CUSOLVER = "cusolver"


class EighImplementation(enum.Enum):
    """Which eigh algorithm to use (``jax.lax.linalg.EighImplementation``); CPU has QR (syevd) only."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which SVD algorithm to use (``jax.lax.linalg.SvdAlgorithm``); CPU has gesdd (DEFAULT) and gesvd (QR)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of ``dtype``'s precision (complex64 -> float32, complex128 -> float64)."""
    return np.dtype(np.float64 if np.dtype(dtype) in (np.float64, np.complex128) else np.float32)


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype of ``dtype``'s precision."""
    return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128) else np.complex64)


#: The floating types XLA's own ``triangular_solve`` takes beyond LAPACK's (``stablehlo.triangular_solve``, as JAX
#: lowers a float16/bfloat16 one on CPU).
XLA_TRIANGULAR_SOLVE_DTYPES = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _check_operand(name: str, x: ShapedArray, rank: int = 2, *, square: bool = False,
                   dtypes_: Sequence[np.dtype] | None = LAPACK_DTYPES, what: str = "Input 0") -> None:
    """``x``'s dtype among ``dtypes_`` (None: any), rank at least ``rank``, square if asked."""
    if dtypes_ is not None and x.dtype not in dtypes_:
        accepted = ", ".join(d.name for d in dtypes_)
        raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are {accepted}.")
    if x.ndim < rank:
        raise TypeError(f"{what} to {name} must have rank at least {rank}, but got shape={tuple(x.shape)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to {name} must be a square matrix (shape [..., n, n]). "
                         f"Got shape {tuple(x.shape)}.")


def _same_batch(name: str, *xs: tuple[ShapedArray, int]) -> tuple:
    batches = [tuple(x.shape[:x.ndim - rank]) for x, rank in xs]
    if any(b != batches[0] for b in batches[1:]):
        raise TypeError(f"All inputs to {name} must have the same batch dimensions, got {batches}")
    return batches[0]


def _out(shape: Sequence[Any], dtype: Any) -> ShapedArray:
    return ShapedArray(tuple(shape), np.dtype(dtype))


# --- Cholesky ---------------------------------------------------------------------


def _cholesky_rule(x: ShapedArray) -> ShapedArray:
    _check_operand("cholesky", x, square=True)
    return _out(x.shape, x.dtype)


cholesky_p = family.primitive("cholesky", shape_rule=_cholesky_rule)


def symmetrize(x: Any) -> Any:
    """``(x + x^H) / 2`` over the last two dimensions (what :func:`cholesky` and :func:`eigh` factor), with
    ``jax.numpy``'s operators as JAX's: booleans add as ``or``, and integers and booleans divide as floats (the
    inexact type of their promotion with a Python int: float32 for int32, as ``true_divide``)."""
    xt = _H(x)
    dtype = aval_of(x).dtype
    total = elementwise.bitwise_or(x, xt) if dtypes.is_bool(dtype) else elementwise.add(x, xt)
    if not dtypes.is_inexact(dtype):
        promoted, _ = dtypes.result_type_with_weak((dtype, False), (dtypes.default_int_dtype(), True))
        total = elementwise.convert_element_type(total, dtypes.to_inexact_dtype(promoted))
    return elementwise.div(total, _full_like(total, 2))


def _T(x: Any) -> Any:
    n = aval_of(x).ndim
    return structural.transpose(x, (*range(n - 2), n - 1, n - 2))


def _H(x: Any) -> Any:
    xt = _T(x)
    return elementwise.conj(xt) if dtypes.is_complex(aval_of(x).dtype) else xt


def _full_like(x: Any, value: Any, dtype: Any = None) -> Any:
    aval = aval_of(x)
    return structural.full(aval.shape, value, dtype or aval.dtype)


def tri_mask(shape: Sequence[Any], k: int = 0) -> Any:
    """A boolean ``[..., n, m]`` array: True where column <= row + k (numpy's ``tri``), broadcast over batches."""
    n, m = shape[-2], shape[-1]
    rows = structural.broadcasted_iota(np.int32, tuple(shape), len(shape) - 2)
    cols = structural.broadcasted_iota(np.int32, tuple(shape), len(shape) - 1)
    if k:
        rows = elementwise.add(rows, structural.full(tuple(shape), k, np.int32))
    del n, m
    return elementwise.ge(rows, cols)


def tril(x: Any, k: int = 0) -> Any:
    """The lower triangle (on and below diagonal ``k``) of each matrix of ``x``; zeros elsewhere."""
    aval = aval_of(x)
    return elementwise.select(tri_mask(aval.shape, k), x, _full_like(x, 0))


def triu(x: Any, k: int = 0) -> Any:
    """The upper triangle (on and above diagonal ``k``) of each matrix of ``x``; zeros elsewhere."""
    aval = aval_of(x)
    return elementwise.select(tri_mask(aval.shape, k - 1), _full_like(x, 0), x)


@family.function(binds=(cholesky_p,))
def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor ``L`` (``x = L L^H``) of each matrix of ``x`` (``jax.lax.linalg.cholesky``).

    ``x``: ``[..., n, n]``, float32/float64/complex64/complex128, Hermitian positive definite
    (``symmetrize_input`` first replaces it by ``(x + x^H) / 2``). A matrix that is not
    positive definite gives NaNs. The strictly upper triangle of ``L`` is zero.
    """
    if symmetrize_input:  # any dtype: symmetrizing makes integers and booleans floats, as JAX's
        _check_operand("cholesky", aval_of(x), square=True, dtypes_=None)
        x = symmetrize(x)
    return tril(cholesky_p.bind(x))


# --- eigendecompositions -------------------------------------------------------------


def _eigh_rule(x: ShapedArray, *, lower: bool, sort_eigenvalues: bool, subset_by_index: Any,
               algorithm: Any) -> list[ShapedArray]:
    _check_operand("eigh", x, square=True)
    n = x.shape[-1]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    batch = tuple(x.shape[:-2])
    return [_out(batch + (n, d), x.dtype), _out(batch + (d,), real_dtype(x.dtype))]


eigh_p = family.primitive("eigh", shape_rule=_eigh_rule, multiple_results=True)


@family.function(binds=(eigh_p,))
def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index: tuple[int, int] | None = None,
         algorithm: EighImplementation | None = None) -> tuple[Any, Any]:
    """Eigenvectors and eigenvalues ``(v, w)`` of Hermitian matrices (``jax.lax.linalg.eigh``).

    ``x``: ``[..., n, n]``; only the ``lower`` (or upper) triangle is read, after
    ``symmetrize_input``. ``w`` is real and ascending; ``x v = v diag(w)``. On CPU
    ``subset_by_index`` must be None or ``(0, n)`` and ``algorithm`` None or QR.
    """
    aval = aval_of(x)
    # Symmetrizing makes integers and booleans floats (JAX's): their dtype is checked after it.
    _check_operand("eigh", aval, square=True, dtypes_=None if symmetrize_input else LAPACK_DTYPES)
    n = aval.shape[-1]
    if subset_by_index is not None:
        subset_by_index = (int(subset_by_index[0]), int(subset_by_index[1]))
        if subset_by_index != (0, n):
            raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm not in (None, EighImplementation.QR):
        raise NotImplementedError(f"eigh: the {algorithm} implementation is not supported on CPU")
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=subset_by_index, algorithm=algorithm)
    return v, w


def _eig_rule(x: ShapedArray, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
              enable_eigvec_derivs: bool, implementation: Any) -> list[ShapedArray]:
    _check_operand("eig", x, square=True)
    c = complex_dtype(x.dtype)
    outs = [_out(x.shape[:-1], c)]
    outs += [_out(x.shape, c)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))
    return outs


eig_p = family.primitive("eig", shape_rule=_eig_rule, multiple_results=True)


@family.function(binds=(eig_p,))
def eig(x: Any, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: EigImplementation | None = None) -> list[Any]:
    """Eigenvalues and (left, right) eigenvectors of general square matrices (``jax.lax.linalg.eig``).

    Returns ``[w, vl, vr]`` without the eigenvectors not asked for; all complex. Only
    eigenvalues are differentiable unless ``enable_eigvec_derivs`` (JAX's rule).
    """
    if implementation not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    return list(eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors),
                           enable_eigvec_derivs=bool(enable_eigvec_derivs), implementation=implementation))


# --- LU ---------------------------------------------------------------------------


def _lu_rule(x: ShapedArray) -> list[ShapedArray]:
    _check_operand("lu", x)
    *batch, m, n = x.shape
    return [_out(x.shape, x.dtype), _out((*batch, min(m, n)), np.int32), _out((*batch, m), np.int32)]


lu_p = family.primitive("lu", shape_rule=_lu_rule, multiple_results=True)


@family.function(binds=(lu_p,))
def lu(x: Any) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting (``jax.lax.linalg.lu``): ``(lu, pivots, permutation)``.

    ``x``: ``[..., m, n]``. ``lu`` holds ``L`` (unit diagonal, below) and ``U`` (on and
    above the diagonal); ``pivots[i]`` is the row swapped with row ``i`` (0-based);
    ``permutation`` applies them: ``x[..., permutation, :] = L @ U``.
    """
    out, pivots, permutation = lu_p.bind(x)
    return out, pivots, permutation


def _lu_pivots_to_permutation_rule(pivots: ShapedArray, *, permutation_size: int) -> ShapedArray:
    if pivots.dtype != np.int32:
        raise TypeError(f"lu_pivots_to_permutation does not accept dtype {pivots.dtype.name}. Accepted dtypes "
                        "are int32.")
    if pivots.ndim < 1:
        raise TypeError(f"Input 0 to lu_pivots_to_permutation must have rank at least 1, but got shape="
                        f"{tuple(pivots.shape)}")
    if not permutation_size >= pivots.shape[-1]:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the trailing dimension of the "
                         f"pivots. Got pivots size {pivots.shape[-1]}")
    return _out((*pivots.shape[:-1], permutation_size), np.int32)


lu_pivots_to_permutation_p = family.primitive("lu_pivots_to_permutation",
                                              shape_rule=_lu_pivots_to_permutation_rule)


@family.function(binds=(lu_pivots_to_permutation_p,))
def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation (``[..., permutation_size]`` int32) that the row swaps ``pivots`` (``[..., k]``) apply."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# --- QR ---------------------------------------------------------------------------


def _geqrf_rule(x: ShapedArray) -> list[ShapedArray]:
    _check_operand("geqrf", x)
    *batch, m, n = x.shape
    return [_out(x.shape, x.dtype), _out((*batch, min(m, n)), x.dtype)]


geqrf_p = family.primitive("geqrf", shape_rule=_geqrf_rule, multiple_results=True)


@family.function(binds=(geqrf_p,))
def geqrf(a: Any) -> tuple[Any, Any]:
    """LAPACK's ``geqrf``: ``(a, taus)`` with ``R`` in the upper triangle and Householder reflectors below."""
    out, taus = geqrf_p.bind(a)
    return out, taus


def _householder_product_rule(a: ShapedArray, taus: ShapedArray) -> ShapedArray:
    _check_operand("householder_product", a)
    _check_operand("householder_product", taus, 1, what="Input 1")
    if taus.dtype != a.dtype:
        raise TypeError(f"householder_product requires arguments of equal dtypes, got {a.dtype.name} and "
                        f"{taus.dtype.name}")
    _same_batch("householder_product", (a, 2), (taus, 1))
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as many rows as columns, "
                         f"got shape {tuple(a.shape)}")
    if taus.shape[-1] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows than the minimum of "
                         "the first argument's rows and columns.")
    return _out(a.shape, a.dtype)


householder_product_p = family.primitive("householder_product", shape_rule=_householder_product_rule)


@family.function(binds=(householder_product_p,))
def householder_product(a: Any, taus: Any) -> Any:
    """The product of the elementary Householder reflectors ``(a, taus)`` of :func:`geqrf` (LAPACK's ``orgqr``)."""
    return householder_product_p.bind(a, taus)


def _qr_rule(x: ShapedArray, *, pivoting: bool, full_matrices: bool, use_magma: Any) -> list[ShapedArray]:
    _check_operand("qr", x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    outs = [_out((*batch, m, k), x.dtype), _out((*batch, k, n), x.dtype)]
    if pivoting:
        # The column permutation: int32 whatever x64 says, as JAX's (LAPACK's jpvt is a 32-bit integer array).
        outs.append(_out((*batch, n), np.int32))
    return outs


qr_p = family.primitive("qr", shape_rule=_qr_rule, multiple_results=True)


@family.function(binds=(qr_p,))
def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None) -> Any:
    """QR decomposition ``(q, r)`` of ``[..., m, n]`` matrices (``jax.lax.linalg.qr``), or ``(q, r, p)``.

    ``full_matrices``: ``q`` is ``m x m`` and ``r`` ``m x n`` (else ``m x k`` and ``k x n``,
    ``k = min(m, n)``). ``pivoting=True`` is the rank-revealing, column-pivoted decomposition
    (LAPACK's ``geqp3``): ``x[..., :, p] = q @ r`` with ``p`` an int32 ``[..., n]`` permutation
    chosen so that ``|diag(r)|`` is non-increasing. ``use_magma`` only matters on GPU.
    """
    outs = qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices), use_magma=use_magma)
    return tuple(outs)


# --- SVD --------------------------------------------------------------------------


def _svd_rule(x: ShapedArray, *, full_matrices: bool, compute_uv: bool, subset_by_index: Any,
              algorithm: Any) -> list[ShapedArray]:
    _check_operand("svd", x)
    *batch, m, n = x.shape
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and subset_by_index != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    s = _out((*batch, rank), real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    return [s, _out((*batch, m, m if full_matrices else rank), x.dtype),
            _out((*batch, n if full_matrices else rank, n), x.dtype)]


svd_p = family.primitive("svd", shape_rule=_svd_rule, multiple_results=True)


@family.function(binds=(svd_p,))
def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: SvdAlgorithm | None = None) -> Any:
    """Singular value decomposition (``jax.lax.linalg.svd``): ``(u, s, vh)``, or ``s`` without ``compute_uv``.

    ``s`` is real and descending; ``x = u @ diag(s) @ vh``. CPU: ``algorithm`` None,
    DEFAULT or DIVIDE_AND_CONQUER (gesdd) or QR (gesvd); ``subset_by_index`` None or everything.
    """
    aval = aval_of(x)
    _check_operand("svd", aval)
    rank = min(aval.shape[-2:])
    if subset_by_index is not None:
        subset_by_index = (int(subset_by_index[0]), int(subset_by_index[1]))
        if subset_by_index != (0, rank):
            raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv:
        s, u, vh = outs
        return u, s, vh
    return outs[0]


# --- triangular solve -------------------------------------------------------------


def _triangular_solve_rule(a: ShapedArray, b: ShapedArray, *, left_side: bool, lower: bool, transpose_a: bool,
                           conjugate_a: bool, unit_diagonal: bool) -> ShapedArray:
    _check_operand("triangular_solve", a, square=True, dtypes_=LAPACK_DTYPES + XLA_TRIANGULAR_SOLVE_DTYPES)
    _check_operand("triangular_solve", b, what="Input 1", dtypes_=LAPACK_DTYPES + XLA_TRIANGULAR_SOLVE_DTYPES)
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve requires arguments of equal dtypes, got {a.dtype.name} and "
                        f"{b.dtype.name}")
    if a.ndim != b.ndim:
        raise TypeError("All inputs to triangular_solve must have the same number of batch dimensions, but got "
                        f"{[a.ndim - 2, b.ndim - 2]} batch dimensions for the inputs.")
    _same_batch("triangular_solve", (a, 2), (b, 2))
    common = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != common:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {tuple(a.shape)} and "
                         f"{tuple(b.shape)}.")
    return _out(b.shape, b.dtype)


triangular_solve_p = family.primitive("triangular_solve", shape_rule=_triangular_solve_rule)


@family.function(binds=(triangular_solve_p,))
def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False) -> Any:
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for ``x`` (``jax.lax.linalg.triangular_solve``).

    ``a``: ``[..., m, m]``, only its ``lower`` (or upper) triangle read; ``op`` transposes
    and/or conjugates it; ``unit_diagonal`` assumes ones on the diagonal. ``b``:
    ``[..., m, n]`` (``left_side``) or ``[..., n, m]``, or one dimension less (a vector).
    """
    a_aval, b_aval = aval_of(a), aval_of(b)
    conjugate_a = bool(conjugate_a) and dtypes.is_complex(a_aval.dtype)
    singleton = b_aval.ndim == a_aval.ndim - 1
    if singleton:
        b = structural.expand_dims(b, (b_aval.ndim if left_side else b_aval.ndim - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a),
                                  conjugate_a=conjugate_a, unit_diagonal=bool(unit_diagonal))
    if singleton:
        n = aval_of(out).ndim
        out = structural.squeeze(out, (n - 1 if left_side else n - 2,))
    return out


# --- tridiagonal ------------------------------------------------------------------


def _tridiagonal_rule(a: ShapedArray, *, lower: bool) -> list[ShapedArray]:
    _check_operand("tridiagonal", a)
    n = a.shape[-1]
    if a.shape[-2] != n or n == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {tuple(a.shape)}.")
    batch, r = tuple(a.shape[:-2]), real_dtype(a.dtype)
    return [_out(a.shape, a.dtype), _out(batch + (n,), r), _out(batch + (n - 1,), r), _out(batch + (n - 1,), a.dtype)]


tridiagonal_p = family.primitive("tridiagonal", shape_rule=_tridiagonal_rule, multiple_results=True)


@family.function(binds=(tridiagonal_p,))
def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Any, Any, Any, Any]:
    """Reduce Hermitian matrices to tridiagonal form (``jax.lax.linalg.tridiagonal``): ``(a, d, e, taus)``.

    ``d`` is the diagonal, ``e`` the first sub- (``lower``) or super-diagonal, ``a``
    and ``taus`` the Householder reflectors (LAPACK's ``sytrd``/``hetrd``).
    """
    arr, d, e, taus = tridiagonal_p.bind(a, lower=bool(lower))
    return arr, d, e, taus


def _tridiagonal_solve_rule(dl: ShapedArray, d: ShapedArray, du: ShapedArray, b: ShapedArray, *,
                            perturb_singular: bool) -> ShapedArray:
    for i, x in enumerate((dl, d, du)):
        _check_operand("tridiagonal_solve", x, 1, what=f"Input {i}")
    _check_operand("tridiagonal_solve", b, 2, what="Input 3")
    if len({dl.dtype, d.dtype, du.dtype, b.dtype}) != 1:
        raise TypeError("tridiagonal_solve requires arguments of equal dtypes, got "
                        f"{[x.dtype.name for x in (dl, d, du, b)]}")
    if dl.shape != d.shape or dl.shape != du.shape:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same shape.")
    if tuple(dl.shape) != tuple(b.shape[:-1]):
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the dimensions "
                        "of the diagonal arguments.")
    return _out(b.shape, b.dtype)


tridiagonal_solve_p = family.primitive("tridiagonal_solve", shape_rule=_tridiagonal_solve_rule)


@family.function(binds=(tridiagonal_solve_p,))
def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False) -> Any:
    """Solve tridiagonal systems ``A X = B`` (``jax.lax.linalg.tridiagonal_solve``).

    ``dl``, ``d``, ``du``: ``[..., m]`` sub-diagonal (``dl[..., 0]`` unused), diagonal and
    super-diagonal (``du[..., -1]`` unused); ``b``: ``[..., m, n]``. By default LAPACK's ``gtsv``
    (NaNs for a singular system). ``perturb_singular=True`` is jaxlib's
    ``tridiagonal_solve_perturbed_ffi`` kernel instead: LU with partial pivoting whose tiny pivots
    are replaced by ``eps * max |U(i, j)|``-sized ones, so a (numerically) singular system still
    has a finite solution — what inverse iteration for eigenvectors needs.
    """
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


# --- Hessenberg and Schur (CPU only in JAX too) ----------------------------------


def _hessenberg_rule(a: ShapedArray) -> list[ShapedArray]:
    _check_operand("hessenberg", a, square=True)
    return [_out(a.shape, a.dtype), _out((*a.shape[:-2], a.shape[-1] - 1), a.dtype)]


hessenberg_p = family.primitive("hessenberg", shape_rule=_hessenberg_rule, multiple_results=True)


@family.function(binds=(hessenberg_p,))
def hessenberg(a: Any) -> tuple[Any, Any]:
    """Reduce square matrices to upper Hessenberg form (``jax.lax.linalg.hessenberg``, LAPACK's ``gehrd``).

    Returns ``(a, taus)``: the Hessenberg matrix in the upper triangle and first
    subdiagonal of ``a``, the Householder reflectors below it with their factors ``taus``.
    """
    out, taus = hessenberg_p.bind(a)
    return out, taus


def _schur_rule(x: ShapedArray, *, compute_schur_vectors: bool, sort_eig_vals: bool,
                select_callable: Any) -> list[ShapedArray]:
    _check_operand("schur", x, square=True)
    return [_out(x.shape, x.dtype)] * (2 if compute_schur_vectors else 1)


schur_p = family.primitive("schur", shape_rule=_schur_rule, multiple_results=True)


@family.function(binds=(schur_p,))
def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> Any:
    """The Schur decomposition ``x = Q T Q^H`` (``jax.lax.linalg.schur``, LAPACK's ``gees``): ``(T, Q)``,
    or ``T`` alone without ``compute_schur_vectors``. ``T`` is quasi-upper-triangular for real ``x``.
    Sorting the eigenvalues is not implemented (as in JAX: ``NotImplementedError``).
    """
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    outs = schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors), sort_eig_vals=False,
                        select_callable=select_callable)
    return (outs[0], outs[1]) if compute_schur_vectors else (outs[0],)


# --- products with factors: ormqr, cholesky_update, symmetric_product --------------


def _ormqr_rule(a: ShapedArray, taus: ShapedArray, c: ShapedArray, *, left: bool, transpose: bool) -> ShapedArray:
    _check_operand("ormqr", a)
    _check_operand("ormqr", taus, 1, what="Input 1")
    _check_operand("ormqr", c, what="Input 2")
    if len({a.dtype, taus.dtype, c.dtype}) != 1:
        raise TypeError(f"ormqr requires arguments of equal dtypes, got {[x.dtype.name for x in (a, taus, c)]}")
    _same_batch("ormqr", (a, 2), (taus, 1), (c, 2))
    m = a.shape[-2]
    if left and c.shape[-2] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as the Householder matrix "
                         f"a. Got a shape {tuple(a.shape)} and c shape {tuple(c.shape)}.")
    if not left and c.shape[-1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns as the Householder "
                         f"matrix a has rows. Got a shape {tuple(a.shape)} and c shape {tuple(c.shape)}.")
    return _out(c.shape, c.dtype)


ormqr_p = family.primitive("ormqr", shape_rule=_ormqr_rule)


@family.function(binds=(ormqr_p,))
def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q @ c``, ``Q^H @ c`` (``transpose``), ``c @ Q`` or ``c @ Q^H`` (``left=False``) for the ``Q`` of
    :func:`geqrf`'s reflectors ``(a, taus)``, without forming ``Q`` (LAPACK's ``ormqr``/``unmqr``)."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


def _cholesky_update_rule(r: ShapedArray, w: ShapedArray) -> ShapedArray:
    real = tuple(d for d in LAPACK_DTYPES if not dtypes.is_complex(d))
    _check_operand("cholesky_update", r, dtypes_=real)
    _check_operand("cholesky_update", w, 1, dtypes_=real, what="Input 1")
    if r.ndim != 2 or w.ndim != 1:
        raise TypeError(f"cholesky_update takes one matrix and one vector (no batch dimensions), got shapes "
                        f"{tuple(r.shape)} and {tuple(w.shape)}")
    if r.shape[0] != r.shape[1] or w.shape[0] != r.shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the same "
                         f"size as input. Got shapes {tuple(r.shape)} and {tuple(w.shape)} instead")
    if r.dtype != w.dtype:
        raise TypeError(f"cholesky_update requires arguments of equal dtypes, got {r.dtype.name} and {w.dtype.name}")
    return _out(r.shape, r.dtype)


cholesky_update_p = family.primitive("cholesky_update", shape_rule=_cholesky_update_rule)


@family.function(binds=(cholesky_update_p,))
def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The upper Cholesky factor of ``R^T R + w w^T`` from the upper factor ``R`` of ``R^T R``, by Givens
    rotations in O(n^2) (``jax.lax.linalg.cholesky_update``; real, unbatched, as JAX)."""
    return cholesky_update_p.bind(r_matrix, w_vector)


def _symmetric_product_rule(a: ShapedArray, c: ShapedArray, *, alpha: float, beta: float) -> ShapedArray:
    real = tuple(d for d in LAPACK_DTYPES if not dtypes.is_complex(d))
    _check_operand("symmetric_product", a, dtypes_=real)
    _check_operand("symmetric_product", c, dtypes_=real, what="Input 1")
    if a.dtype != c.dtype:
        raise TypeError(f"symmetric_product requires arguments of equal dtypes, got {a.dtype.name} and "
                        f"{c.dtype.name}")
    _same_batch("symmetric_product", (a, 2), (c, 2))
    if a.shape[-2] != c.shape[-1] or c.shape[-2] != c.shape[-1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a square matrix of "
                         f"shape (n, n). Got shapes {tuple(a.shape)} and {tuple(c.shape)}.")
    return _out(c.shape, c.dtype)


symmetric_product_p = family.primitive("symmetric_product", shape_rule=_symmetric_product_rule)


@family.function(binds=(symmetric_product_p,))
def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False) -> Any:
    """``alpha * a @ a^T + beta * c`` (``jax.lax.linalg.symmetric_product``); ``symmetrize_output`` mirrors
    the lower triangle into the upper one."""
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        result = elementwise.add(tril(result), _T(tril(result, -1)))
    return result
