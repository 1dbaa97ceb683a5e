"""JVP and transpose rules for ``toolkit/lax/decompositions.py``: JAX 0.10.2's rules, written over ``toolkit.numpy``.

Cholesky (Murray's forward rule), eigh and eig (nondegenerate perturbation theory), SVD,
QR (thin, wide and full-matrices cases), LU (De Hoog et al.), triangular solve (nonlinear
in ``a``, linear in ``b``: it has a transpose) and tridiagonal solve (likewise in ``b``).
The reflector-level primitives (geqrf, householder_product, tridiagonal) and the pivot
permutation have no derivative in JAX either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import toolkit.numpy as tnp
from toolkit.ad.jvp import defjvp
from toolkit.ad.registry import JVP_RULES, NO_JVP, TRANSPOSE_RULES
from toolkit.ad.values import Zero, add_any, instantiate, is_undefined, tangent_aval
from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.lax import decompositions as dec
from toolkit.numpy import linalg as tlinalg


def _T(x: Any) -> Any:
    return tnp.swapaxes(x, -1, -2)


def _H(x: Any) -> Any:
    return tnp.conj(_T(x)) if dtypes.is_complex(aval_of(x).dtype) else _T(x)


def _eye(n: int, dtype: Any) -> np.ndarray:
    return np.eye(n, dtype=dtype)


def _diagonal(x: Any) -> Any:
    return tnp.diagonal(x, axis1=-2, axis2=-1)


def _cholesky_jvp(primals, tangents):
    (x,), (sigma_dot,) = primals, tangents
    # The primal output is the primitive's own (LAPACK leaves the input's upper triangle there): reverse mode
    # reuses the equation's output for it, so the rule computes with the triangle and returns the raw factor.
    raw = dec.cholesky_p.bind(x)
    L = dec.tril(raw)
    n = aval_of(x).shape[-1]

    def phi(X):
        return dec.tril(X) / (1 + _eye(n, aval_of(X).dtype))

    tmp = dec.triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    L_dot = tnp.matmul(L, phi(dec.triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)))
    return raw, L_dot


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    (a,), (a_dot,) = primals, tangents
    aval = aval_of(a)
    n = aval.shape[-1]
    if not (subset_by_index is None or subset_by_index == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = dec.eigh_p.bind(dec.symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                                subset_by_index=subset_by_index, algorithm=algorithm)
    w = w_real.astype(aval.dtype)
    eye_n = _eye(n, aval.dtype)
    Fmat = 1 / (eye_n + w[..., np.newaxis, :] - w[..., np.newaxis]) - eye_n
    vdag_adot_v = tnp.matmul(tnp.matmul(_H(v), a_dot), v)
    dv = tnp.matmul(v, Fmat * vdag_adot_v)
    dw = _diagonal(tnp.real(vdag_adot_v))
    return [v, w_real], [dv, dw]


def _eig_vec_jvp(w, v, da):
    n = aval_of(w).shape[-1]
    eye_n = _eye(n, aval_of(w).dtype)
    Fmat = 1 / (eye_n + w[..., None, :] - w[..., None]) - eye_n
    P = tnp.matmul(tlinalg.solve(v, da), v)
    dw = _diagonal(P)
    U = tnp.matmul(v, Fmat * P)
    k = tnp.argmax(tnp.abs(v), axis=-2)
    mask = (tnp.arange(n)[:, None] == k[..., None, :]).astype(aval_of(v).dtype)
    c = (-tnp.real(tnp.sum(tnp.conj(v) * U, axis=-2))
         - 1j * tnp.imag(tnp.sum(mask * U, axis=-2)) / tnp.real(tnp.sum(mask * v, axis=-2))).astype(aval_of(v).dtype)
    return dw, U + v * c[..., None, :]


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs,
             implementation):
    (a,), (da,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the input that toolkit "
            "(like JAX) cannot check (see the enable_eigvec_derivs argument to toolkit.lax.linalg.eig). Pass "
            "enable_eigvec_derivs=True to toolkit.lax.linalg.eig to opt in.")
    outs = dec.eig(a, compute_left_eigenvectors=compute_left_eigenvectors, compute_right_eigenvectors=True,
                   enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)
    w, vr = outs[0], outs[-1]
    da = da.astype(aval_of(vr).dtype)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        return [w], [tnp.sum(tlinalg.solve(vr, da) * _T(vr), axis=-1)]
    dw, dvr = _eig_vec_jvp(w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        _, dvl = _eig_vec_jvp(tnp.conj(w), outs[1], _H(da))
        primal_out.append(outs[1])
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (A,), (dA,) = primals, tangents
    aval = aval_of(A)
    m, n = aval.shape[-2:]
    s, U, Vt = dec.svd_p.bind(A, full_matrices=False, compute_uv=True, subset_by_index=subset_by_index,
                              algorithm=algorithm)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    dtype = aval.dtype
    Ut, V = _H(U), _H(Vt)
    s_dim = s[..., None, :]
    dS = tnp.matmul(tnp.matmul(Ut, dA), V)
    ds = _diagonal(tnp.real(dS))
    if not compute_uv:
        return [s], [ds]
    k = aval_of(s).shape[-1]
    s_diffs = (s_dim + _T(s_dim)) * (s_dim - _T(s_dim))
    s_diffs_zeros = _eye(k, aval_of(s).dtype)
    F = 1 / (s_diffs + s_diffs_zeros) - s_diffs_zeros
    dSS = s_dim.astype(dtype) * dS
    SdS = _T(s_dim.astype(dtype)) * dS
    s_zeros = (s == 0).astype(aval_of(s).dtype)
    s_inv = 1 / (s + s_zeros) - s_zeros
    s_inv_mat = s_inv[..., None, :] * _eye(k, aval_of(s).dtype)
    dUdV_diag = .5 * (dS - _H(dS)) * s_inv_mat.astype(dtype)
    dU = tnp.matmul(U, F.astype(dtype) * (dSS + _H(dSS)) + dUdV_diag)
    dV = tnp.matmul(V, F.astype(dtype) * (SdS + _H(SdS)))
    if m > n:
        dAV = tnp.matmul(dA, V)
        dU = dU + (dAV - tnp.matmul(U, tnp.matmul(Ut, dAV))) / s_dim.astype(dtype)
    if n > m:
        dAHU = tnp.matmul(_H(dA), U)
        dV = dV + (dAHU - tnp.matmul(V, tnp.matmul(Vt, dAHU))) / s_dim.astype(dtype)
    return [s, U, Vt], [ds, dU, _H(dV)]


def _thin_qr_jvp(q, r, dx):
    dx_rinv = dec.triangular_solve(r, dx)  # a right-side solve by default
    qt_dx_rinv = tnp.matmul(_H(q), dx_rinv)
    lower = dec.tril(qt_dx_rinv, -1)
    do = lower - _H(lower)  # skew-symmetric
    n = aval_of(r).shape[-1]
    dtype = aval_of(qt_dx_rinv).dtype
    do = do + _eye(n, dtype) * (qt_dx_rinv - tnp.real(qt_dx_rinv).astype(dtype))  # the complex correction
    dq = tnp.matmul(q, do - qt_dx_rinv) + dx_rinv
    dr = tnp.matmul(qt_dx_rinv - do, r)
    return dq, dr


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    (x,), (dx,) = primals, tangents
    q, r, *p = dec.qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    dp = [Zero(tangent_aval(aval_of(p[0])))] if pivoting else []  # an integer permutation: no derivative
    if pivoting:
        # x[..., :, p] = q @ r: differentiate the permuted columns with p held fixed (JAX's dx[..., p]; taken along
        # the last axis so that a batch of matrices permutes each by its own p, where JAX's indexing raises).
        dx = tnp.take_along_axis(dx, p[0][..., None, :], axis=-1)
    m, n = aval_of(x).shape[-2:]
    if m < n:
        if pivoting:
            # r's last n - m columns are q^H x[..., :, p][..., m:]: the permuted x (JAX 0.10.2 takes x unpermuted
            # here, and its dr is wrong for wide matrices unless p leaves those columns in place).
            x = tnp.take_along_axis(x, p[0][..., None, :], axis=-1)
        x2, dx1, dx2, r1 = x[..., :, m:], dx[..., :, :m], dx[..., :, m:], r[..., :, :m]
        dq, dr1 = _thin_qr_jvp(q, r1, dx1)
        dr2 = tnp.matmul(_H(dq), x2) + tnp.matmul(_H(q), dx2)
        return [q, r, *p], [dq, tnp.concatenate([dr1, dr2], axis=-1), *dp]
    q_mn = q[..., :, :n] if full_matrices else q
    r_nn = r[..., :n, :n] if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return [q, r, *p], [dq_mn, dr_nn, *dp]
    # Full matrices with m > n (https://arxiv.org/pdf/2409.13374, eqs. 32-33), as JAX 0.10.2.
    q_nn, q_pn, q_mp = q_mn[..., :n, :], q_mn[..., n:, :], q[..., :, n:]
    dq_nn, dq_pn = dq_mn[..., :n, :], dq_mn[..., n:, :]
    z_pn_H = tlinalg.solve(_H(q_nn - _eye(n, aval_of(q).dtype)), _H(q_pn))
    z_pn = _H(z_pn_H)
    dq_mp = tnp.matmul(dq_mn, z_pn_H) - tnp.matmul(q_mn + tnp.matmul(q_mp, z_pn),
                                                    _H(dq_pn - tnp.matmul(z_pn, dq_nn)))
    dq = tnp.concatenate([dq_mn, dq_mp], axis=-1)
    zeros = tnp.zeros((*aval_of(dr_nn).shape[:-2], m - n, n), aval_of(dr_nn).dtype)
    return [q, r, *p], [dq, tnp.concatenate([dr_nn, zeros], axis=-2), *dp]


def _lu_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu, pivots, permutation = dec.lu_p.bind(a)
    aval = aval_of(a)
    *batch, m, n = aval.shape
    dtype = aval.dtype
    k = min(m, n)
    a_dot = tnp.take_along_axis(a_dot, permutation[..., :, None], axis=-2)
    nb = len(batch)
    lower = tnp.pad(dec.tril(lu[..., :, :k], -1), [(0, 0)] * nb + [(0, 0), (0, m - k)]) + _eye(m, dtype)
    u_eye = np.diag(np.concatenate([np.zeros(k), np.ones(n - k)])).astype(dtype)
    u = tnp.pad(dec.triu(lu[..., :k, :]), [(0, 0)] * nb + [(0, n - k), (0, 0)]) + u_eye
    la = dec.triangular_solve(lower, a_dot, left_side=True, transpose_a=False, lower=True, unit_diagonal=True)
    lau = dec.triangular_solve(u, la, left_side=False, transpose_a=False, lower=False)
    lu_dot = tnp.matmul(lower, dec.tril(lau, -1)) + tnp.matmul(dec.triu(lau), u)
    return [lu, pivots, permutation], [lu_dot, Zero(tangent_aval(aval_of(pivots))),
                                       Zero(tangent_aval(aval_of(permutation)))]


def _triangular_solve_jvp_a(g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    m, n = aval_of(b).shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = dec.tril(g_a, -k) if lower else dec.triu(g_a, k)
    g_a = -g_a
    g_a = _T(g_a) if transpose_a else g_a
    g_a = tnp.conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs):
        return dec.triangular_solve(a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                    conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)

    # Whichever order is cheaper, as JAX.
    if left_side:
        return a_inverse(tnp.matmul(g_a, ans)) if m > n else tnp.matmul(a_inverse(g_a), ans)
    return a_inverse(tnp.matmul(ans, g_a)) if m < n else tnp.matmul(ans, a_inverse(g_a))


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if is_undefined(a):
        raise ValueError("triangular_solve is not linear in its first operand")
    if isinstance(ct, Zero):
        return [None, None]
    return [None, dec.triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                              transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                              unit_diagonal=unit_diagonal)]


def _tridiagonal_product(dl, d, du, b):
    y = d[..., None] * b
    y = y.at[..., 1:, :].add(dl[..., 1:, None] * b[..., :-1, :])
    return y.at[..., :-1, :].add(du[..., :-1, None] * b[..., 1:, :])


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    ans = dec.tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(isinstance(t, Zero) for t in diags_dot):
        rhs = b_dot
    else:
        rhs = add_any(b_dot, -_tridiagonal_product(*(instantiate(t) for t in diags_dot), ans))
    return ans, dec.tridiagonal_solve_p.bind(*diags, instantiate(rhs), perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    if any(is_undefined(x) for x in (dl, d, du)):
        raise ValueError("tridiagonal_solve is linear in b only")
    if isinstance(ct, Zero):
        return [None, None, None, None]
    dl_t = tnp.concatenate([tnp.zeros_like(du[..., -1:]), du[..., :-1]], axis=-1)
    du_t = tnp.concatenate([dl[..., 1:], tnp.zeros_like(dl[..., :1])], axis=-1)
    return [None, None, None, dec.tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


JVP_RULES[dec.cholesky_p] = _cholesky_jvp
JVP_RULES[dec.eigh_p] = _eigh_jvp
JVP_RULES[dec.eig_p] = _eig_jvp
JVP_RULES[dec.svd_p] = _svd_jvp
JVP_RULES[dec.qr_p] = _qr_jvp
JVP_RULES[dec.lu_p] = _lu_jvp
JVP_RULES[dec.tridiagonal_solve_p] = _tridiagonal_solve_jvp
TRANSPOSE_RULES[dec.tridiagonal_solve_p] = _tridiagonal_solve_transpose
defjvp(dec.triangular_solve_p, _triangular_solve_jvp_a,
       lambda g_b, ans, a, b, **params: dec.triangular_solve_p.bind(a, g_b, **params))
TRANSPOSE_RULES[dec.triangular_solve_p] = _triangular_solve_transpose

for _p, _why in ((dec.geqrf_p, "LAPACK's Householder reflectors: JAX defines no derivative; differentiate qr"),
                 (dec.householder_product_p, "LAPACK's orgqr: JAX defines no derivative; differentiate qr"),
                 (dec.tridiagonal_p, "a reduction to tridiagonal form: JAX defines no derivative either"),
                 (dec.lu_pivots_to_permutation_p, "integer permutations: nothing to differentiate (JAX has no rule)"),
                 (dec.hessenberg_p, "LAPACK's gehrd reflectors: JAX defines no derivative either"),
                 (dec.schur_p, "the Schur form is not unique enough to differentiate: JAX defines no rule either"),
                 (dec.ormqr_p, "LAPACK's ormqr on reflectors: JAX defines no derivative either"),
                 (dec.cholesky_update_p, "a rank-1 factor update: JAX defines no derivative either"),
                 (dec.symmetric_product_p, "JAX defines no derivative for symmetric_product either")):
    NO_JVP[_p] = _why
