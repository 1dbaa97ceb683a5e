"""``toolkit.scipy.sparse.linalg``: ``jax.scipy.sparse.linalg``'s Krylov solvers ``cg``, ``bicgstab``, ``gmres``.

``A`` and ``M`` are functions (or square matrices, or objects with ``@``) over pytrees of arrays; each solver
runs its iteration in ``toolkit.lax.while_loop`` and is wrapped in ``toolkit.lax.custom_linear_solve``, so
derivatives come from implicit differentiation (another solve), as JAX's. The iterations are JAX's, step for
step, so iterates (and the number of steps taken) agree with JAX's. ``info`` is ``None`` for ``cg`` and
``bicgstab`` and ``-1`` / ``0`` (NaN solution or not) for ``gmres``, as JAX reports them.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.numpy._core import is_array, result_dtype
from toolkit.scipy import linalg as sp_linalg
from toolkit.tree_util import Partial, tree_leaves, tree_map, tree_reduce, tree_structure

__all__ = ["bicgstab", "cg", "gmres"]

_HIGHEST = lax.Precision.HIGHEST
_dot = functools.partial(tnp.dot, precision=_HIGHEST)
_vdot = functools.partial(tnp.vdot, precision=_HIGHEST)


def _vdot_real_part(x: Any, y: Any) -> Any:
    # every such product in the solvers is z^H M z with M Hermitian positive definite: real by construction,
    # so the real-imaginary cross terms are dropped rather than computed and discarded
    result = _vdot(tnp.real(x), tnp.real(y))
    if tnp.iscomplexobj(x) or tnp.iscomplexobj(y):
        result += _vdot(tnp.imag(x), tnp.imag(y))
    return result


def _vdot_real_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x: Any) -> Any:
    xs = tree_leaves(x)
    return tnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar: Any, tree: Any) -> Any:
    return tree_map(functools.partial(operator.mul, scalar), tree)


def _add(x: Any, y: Any) -> Any:
    return tree_map(operator.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree_map(operator.sub, x, y)


@Partial
def _identity(x: Any) -> Any:
    return x


def _normalize_matvec(f: Any) -> Callable[[Any], Any]:
    """``f`` as a function computing matrix-vector products."""
    if callable(f):
        return f
    if isinstance(f, np.ndarray) or is_array(f):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return functools.partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _to_arrays(tree: Any) -> Any:
    # JAX's device_put of (b, x0): arrays (and tracers) pass through, other leaves become arrays
    return tree_map(lambda leaf: leaf if is_array(leaf) else tnp.asarray(leaf), tree)


def _cg_solve(A: Any, b: Any, x0: Any = None, *, maxiter: Any, tol: Any = 1e-5, atol: Any = 0.0,
              M: Any = _identity) -> Any:
    # SciPy's non-legacy tolerance: stop once |r|^2 <= max(tol^2 |b|^2, atol^2)
    bs = _vdot_real_tree(b, b)
    atol2 = tnp.maximum(tnp.square(tol) * bs, tnp.square(atol))

    def cond_fun(value: Any) -> Any:
        _, r, gamma, _, k = value
        rs = tnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value: Any) -> Any:
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))
    return x_final


def _bicgstab_solve(A: Any, b: Any, x0: Any = None, *, maxiter: Any, tol: Any = 1e-5, atol: Any = 0.0,
                    M: Any = _identity) -> Any:
    bs = _vdot_real_tree(b, b)
    atol2 = tnp.maximum(tnp.square(tol) * bs, tnp.square(atol))

    def cond_fun(value: Any) -> Any:
        _, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        # a negative k flags a breakdown (rho, omega or alpha zero)
        return (rs > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value: Any) -> Any:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        choose = functools.partial(tnp.where, exit_early)
        x_ = tree_map(choose, _add(x, _mul(alpha_, phat)), _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(choose, s, _sub(s, _mul(omega_, t)))
        k_ = tnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = tnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    dtype, weak = result_dtype(*tree_leaves(b))
    rho0 = alpha0 = omega0 = lax.convert_element_type(1, dtype, weak_type=weak)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, r0, alpha0, omega0, rho0, r0, r0, 0))
    return x_final


def _shapes(tree: Any) -> list[tuple[int, ...]]:
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _isolve(isolve_solve: Callable[..., Any], A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5,
            atol: Any = 0.0, maxiter: Any = None, M: Any = None, check_symmetric: bool = False) -> tuple[Any, None]:
    if x0 is None:
        x0 = tree_map(tnp.zeros_like, b)
    b, x0 = _to_arrays((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))  # SciPy's default
    A = _normalize_matvec(A)
    M = _normalize_matvec(_identity if M is None else M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")
    solve = functools.partial(isolve_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # a real positive-definite operator is symmetric; a complex Hermitian one is not (A^T = conj(A))
    symmetric = check_symmetric and all(not dtypes.is_complex(leaf.dtype) for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0, maxiter: Any = None,
       M: Any = None) -> tuple[Any, None]:
    """Solve ``A x = b`` for Hermitian positive-definite ``A`` by (preconditioned) conjugate gradients."""
    return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=True)


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0, maxiter: Any = None,
             M: Any = None) -> tuple[Any, None]:
    """Solve ``A x = b`` for a general ``A`` by (preconditioned) BiCGSTAB."""
    return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Any]:
    """``x / |x|`` and ``|x|``, both zero where ``|x| <= thresh`` (default: the dtype's epsilon)."""
    norm = _norm(x)
    dtype, weak = result_dtype(*tree_leaves(x))
    if thresh is None:
        thresh = dtypes.finfo(norm.dtype).eps
    thresh = tnp.real(tnp.asarray(thresh).astype(dtype))
    use_norm = norm > thresh
    norm_cast = lax.convert_element_type(norm, dtype, weak_type=weak)
    normalized_x = tree_map(lambda y: tnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized_x, tnp.where(use_norm, norm, 0.0)


def _project_on_columns(A: Any, v: Any) -> Any:
    """``A^H v``."""
    v_proj = tree_map(lambda X, y: tnp.einsum("...n,...->n", tnp.conj(X), y, precision=_HIGHEST), A, v)
    return tree_reduce(operator.add, v_proj)


def _iterative_classical_gram_schmidt(Q: Any, x: Any, xnorm: Any, max_iterations: int = 2) -> tuple[Any, Any]:
    """``x`` orthogonalized against ``Q``'s orthonormal columns, and its overlaps with them; classical
    Gram-Schmidt, repeated (up to ``max_iterations``) while the remainder shrinks below ``|x| / sqrt(2)``."""
    # "twice is enough": http://slepc.upv.es/documentation/reports/str1.pdf
    Q0 = tree_leaves(Q)[0]
    r = tnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    xnorm_scaled = xnorm / tnp.sqrt(2.0)

    def body_function(carry: Any) -> Any:
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        q = _sub(q, tree_map(lambda X: _dot(X, h), Q))
        r = _add(r, h)

        def qnorm_cond(carry: Any) -> Any:
            k, not_done, _, _ = carry
            return tnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry: Any) -> Any:
            k, _, q, qnorm_scaled = carry
            _, qnorm_ = _safe_normalize(q)
            return k, False, q, qnorm_ / tnp.sqrt(2.0)

        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm, (k, True, q, qnorm_scaled))
        return k + 1, q, r, qnorm_scaled

    def cond_function(carry: Any) -> Any:
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return tnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    carry = body_function((0, x, r, xnorm_scaled))
    _, q, r, _ = lax.while_loop(cond_function, body_function, carry)
    return q, r


def _kth_arnoldi_iteration(k: Any, A: Any, M: Any, V: Any, H: Any) -> tuple[Any, Any, Any]:
    """The k'th Arnoldi step: ``M(A(V[:, k]))`` orthonormalized into ``V[:, k + 1]``, its overlaps into
    ``H[k, :]``; a vector below ``eps`` times its norm before orthogonalization is an invariant subspace
    (breakdown) and is stored as zero."""
    dtype, _ = result_dtype(*tree_leaves(V))
    eps = dtypes.finfo(dtype).eps
    v = M(A(tree_map(lambda X: X[..., k], V)))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)
    return V, H, v_norm_1 == 0.0


def _rotate_vectors(H: Any, i: Any, cs: Any, sn: Any) -> Any:
    x1 = H[i]
    y1 = H[i + 1]
    H = H.at[i].set(tnp.conj(cs) * x1 - tnp.conj(sn) * y1)
    return H.at[i + 1].set(sn * x1 + cs * y1)


def _givens_rotation(a: Any, b: Any) -> tuple[Any, Any]:
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -tnp.where(a_lt_b, a, b) / tnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = tnp.where(b_zero, 1, tnp.where(a_lt_b, r * t, r))
    sn = tnp.where(b_zero, 0, tnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row: Any, givens: Any, k: Any) -> tuple[Any, Any]:
    """``H_row`` rotated by the first ``k`` stored Givens rotations, then by a new one (stored as ``givens[k]``)
    that zeroes its element ``k + 1``."""
    R_row = lax.fori_loop(0, k, lambda i, row: _rotate_vectors(row, i, *givens[i, :]), H_row)
    factors = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(factors)
    return _rotate_vectors(R_row, k, *factors), givens


def _krylov_basis(unit_residual: Any, restart: int) -> Any:
    return tree_map(lambda x: tnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)


def _gmres_incremental(A: Any, b: Any, x0: Any, unit_residual: Any, residual_norm: Any, ptol: Any,
                       restart: int, M: Any) -> tuple[Any, Any, Any]:
    """One GMRES restart, QR-factorizing the Arnoldi Hessenberg matrix with Givens rotations as it grows (and
    stopping early once the residual estimate reaches ``ptol``)."""
    V = _krylov_basis(unit_residual, restart)
    dtype = dtypes.result_type(*tree_leaves(b))
    # eye() keeps R nonsingular when the loop stops early
    R = tnp.eye(restart, restart + 1, dtype=dtype)
    givens = tnp.zeros((restart, 2), dtype=dtype)
    beta_vec = tnp.zeros((restart + 1), dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry: Any) -> Any:
        k, err, _, _, _, _ = carry
        return tnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry: Any) -> Any:
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        return k + 1, abs(beta_vec[k + 1]), V, R, beta_vec, givens

    _, _, V, R, beta_vec, _ = lax.while_loop(loop_cond, arnoldi_qr_step,
                                             (0, residual_norm, V, R, beta_vec, givens))
    y = sp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _lstsq(a: Any, b: Any) -> Any:
    # normal equations: cheaper than a full least-squares solve, and H is well conditioned
    a2 = _dot(tnp.conj(a.T), a)
    b2 = _dot(tnp.conj(a.T), b)
    return sp_linalg.solve(a2, b2, assume_a="pos")


def _gmres_batched(A: Any, b: Any, x0: Any, unit_residual: Any, residual_norm: Any, ptol: Any,
                   restart: int, M: Any) -> tuple[Any, Any, Any]:
    """One GMRES restart, building the whole Krylov basis and then solving its least-squares problem."""
    del ptol  # the batched method cannot stop within a restart
    V = _krylov_basis(unit_residual, restart)
    dtype, weak = result_dtype(*tree_leaves(b))
    H = lax.convert_element_type(tnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type=weak)

    def loop_cond(carry: Any) -> Any:
        _, _, breakdown, k = carry
        return tnp.logical_and(k < restart, tnp.logical_not(breakdown))

    def arnoldi_process(carry: Any) -> Any:
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(loop_cond, arnoldi_process, (V, H, False, 0))
    beta_vec = tnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_solve(A: Any, b: Any, x0: Any, atol: Any, ptol: Any, restart: int, maxiter: Any, M: Any,
                 gmres_func: Callable[..., Any]) -> Any:
    """Restarted GMRES: up to ``maxiter`` restarts, each from the previous one's solution, until
    ``|M(b - A x)| <= atol``; ``ptol`` is the tolerance within a restart."""
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond_fun(value: Any) -> Any:
        _, k, _, residual_norm = value
        return tnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value: Any) -> Any:
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(A, b, x, unit_residual, residual_norm, ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, 0, unit_residual, residual_norm))
    return x_final


def gmres(A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0, restart: int = 20,
          maxiter: Any = None, M: Any = None, solve_method: str = "batched") -> tuple[Any, Any]:
    """Solve ``A x = b`` for a general ``A`` by restarted (preconditioned) GMRES; ``info`` is ``-1`` if the
    solution is NaN, else ``0``."""
    if x0 is None:
        x0 = tree_map(tnp.zeros_like, b)
    A = _normalize_matvec(A)
    M = _normalize_matvec(_identity if M is None else M)
    b, x0 = _to_arrays((b, x0))
    size = sum(leaf.size for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    b_norm = _norm(b)
    atol = tnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * tnp.minimum(1.0, atol / b_norm)
    if solve_method == "incremental":
        gmres_func = _gmres_incremental
    elif solve_method == "batched":
        gmres_func = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'")

    def solve(A: Any, b: Any) -> Any:
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func)

    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = tnp.where(tnp.isnan(_norm(x)), -1, 0)
    return x, info
