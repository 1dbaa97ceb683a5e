"""``toolkit.lax.linalg`` against ``jax.lax.linalg``: values, the LAPACK custom calls in the IR, JVPs, transposes,
vmap and errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.lax import linalg as tl

jax = pytest.importorskip("jax")
jnp = jax.numpy
jl = jax.lax.linalg

from tests.linalg._comparison import all_close, close  # noqa: E402  (after jax is known present)

RNG = np.random.default_rng(1)
A = RNG.normal(size=(4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
TALL = RNG.normal(size=(5, 3)).astype(np.float32)
WIDE = RNG.normal(size=(3, 5)).astype(np.float32)
B = RNG.normal(size=(4, 2)).astype(np.float32)
BATCH = RNG.normal(size=(2, 4, 4)).astype(np.float32)
CA = (RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))).astype(np.complex64)


def test_lu_is_bit_for_bit_jax():
    for x in (A, TALL, WIDE, BATCH, CA):
        ours, theirs = tl.lu(x), jl.lu(x)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


def test_factorizations_match_jax():
    close(tl.cholesky(SPD), jl.cholesky(SPD))
    close(tl.cholesky(BATCH @ np.swapaxes(BATCH, 1, 2) + 4 * np.eye(4, dtype=np.float32)),
           jl.cholesky(BATCH @ np.swapaxes(BATCH, 1, 2) + 4 * np.eye(4, dtype=np.float32)))
    close(tl.eigh(SPD)[1], jl.eigh(SPD)[1])
    close(tl.svd(TALL, compute_uv=False), jl.svd(TALL, compute_uv=False))
    raw, taus = jnp.linalg.qr(TALL, mode="raw")  # jax.lax.linalg has no public geqrf
    close(tl.geqrf(TALL), (raw.T, taus))
    close(tl.householder_product(*tl.geqrf(TALL)), jl.householder_product(raw.T, taus))
    for x in (TALL, WIDE, A):
        for full in (True, False):
            close(tl.qr(x, full_matrices=full), jl.qr(x, full_matrices=full))
    close(tl.svd(A, full_matrices=False), jl.svd(A, full_matrices=False), tol=1e-3)  # LAPACK's signs: the same kernel
    close(tl.eig(A, compute_left_eigenvectors=False)[0], jl.eig(A, compute_left_eigenvectors=False)[0])
    close(tl.tridiagonal(SPD), jl.tridiagonal(SPD))
    for x in (A, CA, BATCH):
        close(tl.hessenberg(x), jl.hessenberg(x))
        close(tl.schur(x), jl.schur(x))
        close(tl.schur(x, compute_schur_vectors=False), tuple(jl.schur(x, compute_schur_vectors=False)))
    close(tl.lu_pivots_to_permutation(np.array([2, 2, 3], np.int32), 5),
           jl.lu_pivots_to_permutation(np.array([2, 2, 3], np.int32), 5))


def test_triangular_solve_matches_jax():
    cases = [dict(left_side=ls, lower=lo, transpose_a=t, unit_diagonal=u)
             for ls in (True, False) for lo in (True, False) for t in (True, False) for u in (True, False)]
    rhs = lambda kw: B if kw["left_side"] else B.T  # noqa: E731
    ours = toolkit.jit(lambda: [tl.triangular_solve(SPD, rhs(kw), **kw) for kw in cases])()
    theirs = jax.jit(lambda: [jl.triangular_solve(SPD, rhs(kw), **kw) for kw in cases])()
    all_close([str(kw) for kw in cases], ours, theirs)


def test_factor_products_match_jax():
    raw, taus = (np.asarray(x) for x in jnp.linalg.qr(A, mode="raw"))
    reflectors = raw.T
    R = np.linalg.cholesky(SPD).T.astype(np.float32)
    w = B[:, 0].copy()
    flags = [(lft, t) for lft in (True, False) for t in (True, False)]
    names = [f"ormqr-left={lft}-transpose={t}" for lft, t in flags]
    ours_fns = [lambda lft=lft, t=t: tl.ormqr(reflectors, taus, SPD, left=lft, transpose=t) for lft, t in flags]
    theirs_fns = [lambda lft=lft, t=t: jl.ormqr(reflectors, taus, SPD, left=lft, transpose=t) for lft, t in flags]
    names += ["cholesky_update", "symmetric_product", "symmetric_product-symmetrized"]
    ours_fns += [lambda: tl.cholesky_update(R, w), lambda: tl.symmetric_product(A, SPD, alpha=2.0, beta=0.5),
                 lambda: tl.symmetric_product(BATCH, BATCH, beta=1.0, symmetrize_output=True)]
    theirs_fns += [lambda: jl.cholesky_update(R, w), lambda: jl.symmetric_product(A, SPD, alpha=2.0, beta=0.5),
                   lambda: jl.symmetric_product(BATCH, BATCH, beta=1.0, symmetrize_output=True)]
    all_close(names, toolkit.jit(lambda: [f() for f in ours_fns])(), jax.jit(lambda: [f() for f in theirs_fns])())
    # cholesky_update does not batch in JAX; toolkit's vmap maps it over the batch.
    batched = toolkit.vmap(tl.cholesky_update)(np.stack([R, R]), np.stack([w, 2 * w]))
    close(batched[1], jl.cholesky_update(R, 2 * w))
    ir = _custom_calls(toolkit.jit(lambda c: tl.ormqr(reflectors, taus, c)).lower(SPD).as_text())
    assert ir == _custom_calls(jax.jit(lambda c: jl.ormqr(reflectors, taus, c)).lower(SPD).as_text())


def test_triangular_solve_complex_conjugate_and_vector():
    kw = dict(left_side=True, lower=True, conjugate_a=True)
    close(tl.triangular_solve(CA, CA, **kw), jl.triangular_solve(CA, CA, **kw))
    close(tl.triangular_solve(SPD, B[:, 0], left_side=True, lower=True),
           jl.triangular_solve(SPD, B[:, 0], left_side=True, lower=True))


def test_tridiagonal_solve_matches_jax():
    dl = np.array([0, 1, 2, 3], np.float32)
    d = np.array([5, 6, 7, 8], np.float32)
    du = np.array([1, 2, 3, 0], np.float32)
    close(tl.tridiagonal_solve(dl, d, du, B), jl.tridiagonal_solve(dl, d, du, B))
    f = lambda L: lambda d_, b_: (L.tridiagonal_solve(dl, d_, du, b_) ** 2).sum()  # noqa: E731
    close(toolkit.grad(f(tl), argnums=(0, 1))(d, B), jax.grad(f(jl), argnums=(0, 1))(d, B), tol=1e-3)


# --- the lowered IR -----------------------------------------------------------------------

_CALL = re.compile(r"stablehlo\.custom_call @(\w+)\(([^)]*)\) \{(.*)\} : (.*)$")


def _custom_calls(text: str) -> list[tuple[str, str, str]]:
    """(target, attributes without Shardy's rule, types) of every custom call, in order."""
    calls = []
    for line in text.splitlines():
        m = _CALL.search(line)
        if m:
            attrs = re.sub(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>", "", m.group(3))
            calls.append((m.group(1), attrs, m.group(4)))
    return calls


IR_CASES = [
    ("cholesky", lambda L: L.cholesky, SPD), ("eigh", lambda L: L.eigh, SPD), ("svd", lambda L: L.svd, TALL),
    ("svd-batch", lambda L: L.svd, BATCH), ("svdvals", lambda L: L.svdvals, A), ("qr", lambda L: L.qr, TALL),
    ("qr-wide", lambda L: L.qr, WIDE), ("qr-complete", lambda L: lambda x: L.qr(x, mode="complete"), TALL),
    ("eig", lambda L: L.eig, A), ("eigvals", lambda L: L.eigvals, A), ("det", lambda L: L.det, BATCH[..., :4, :4]),
    ("slogdet", lambda L: L.slogdet, A), ("inv", lambda L: L.inv, A), ("solve", lambda L: lambda x: L.solve(x, B), A),
    ("pinv", lambda L: L.pinv, TALL), ("cholesky-c64", lambda L: L.cholesky, CA @ CA.conj().T + 3 * np.eye(3,
                                                                                                         dtype=np.complex64)),
    ("eigh-c64", lambda L: L.eigh, CA), ("svd-c64", lambda L: L.svd, CA), ("eig-c64", lambda L: L.eig, CA),
]


@pytest.mark.parametrize("name,make,x", IR_CASES, ids=[c[0] for c in IR_CASES])
def test_the_same_lapack_custom_calls_as_jax(name, make, x):
    ours = _custom_calls(toolkit.jit(make(tnp.linalg)).lower(x).as_text())
    theirs = _custom_calls(jax.jit(make(jnp.linalg)).lower(x).as_text())
    assert ours and ours == theirs


def test_lax_level_custom_calls_match_jax():
    cases = [(lambda L: lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True), (A, B)),
             (lambda L: lambda a: L.lu(a), (BATCH,)), (lambda L: lambda a: L.tridiagonal(a), (SPD,)),
             (lambda L: lambda a: L.schur(a), (BATCH,)), (lambda L: lambda a: L.hessenberg(a), (CA,)),
             (lambda L: lambda a, b: L.tridiagonal_solve(a[0], a[1], a[2], b), (A[:3], B))]
    for make, args in cases:
        ours = _custom_calls(toolkit.jit(make(tl)).lower(*args).as_text())
        theirs = _custom_calls(jax.jit(make(jl)).lower(*args).as_text())
        assert ours and ours == theirs


@pytest.mark.x64
def test_double_precision_targets_under_x64():
    x = SPD.astype(np.float64)
    ours = _custom_calls(toolkit.jit(tnp.linalg.eigh).lower(x).as_text())
    assert ours == _custom_calls(jax.jit(jnp.linalg.eigh).lower(x).as_text())
    assert ours[0][0] == "lapack_dsyevd_ffi"
    close(tnp.linalg.eigh(x)[0], jnp.linalg.eigh(x)[0], tol=1e-10)


# --- derivatives --------------------------------------------------------------------------

W16 = np.arange(16.0, dtype=np.float32).reshape(4, 4) / 10


LAX_GRADS = [
    ("cholesky", lambda L, x: (L.cholesky(x) * W16).sum(), SPD),
    ("eigh", lambda L, x: (L.eigh(x)[1] ** 2 * W16).sum() + (L.eigh(x)[0] * W16[0]).sum(), SPD),
    ("lu", lambda L, x: (L.lu(x)[0] * W16).sum(), A),
    ("qr", lambda L, x: (L.qr(x, full_matrices=False)[1] ** 2).sum(), TALL),
    ("svd", lambda L, x: L.svd(x, compute_uv=False).sum(), TALL),
    ("tri-a", lambda L, x: (L.triangular_solve(x, B, left_side=True, lower=True) ** 2).sum(), SPD),
    ("tri-a-right", lambda L, x: (L.triangular_solve(x, B.T, lower=False, transpose_a=True) ** 2).sum(), SPD),
    ("tri-b", lambda L, x: (L.triangular_solve(SPD, x, left_side=True, lower=True, unit_diagonal=True) ** 2).sum(),
     B),
]


def test_lax_gradients_match_jax():
    ours = toolkit.jit(lambda: [toolkit.grad(lambda y, fn=fn: fn(tl, y))(x) for _, fn, x in LAX_GRADS])()
    theirs = jax.jit(lambda: [jax.grad(lambda y, fn=fn: fn(jl, y))(x) for _, fn, x in LAX_GRADS])()
    all_close([g[0] for g in LAX_GRADS], ours, theirs, tol=2e-3)


def test_eig_eigenvector_derivatives_need_opting_in():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        toolkit.grad(lambda x: tl.eig(x)[1].real.sum())(A)
    f = lambda L: lambda x: (L.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)[1]  # noqa: E731
                             * W16).real.sum()
    close(toolkit.jit(toolkit.grad(f(tl)))(SPD), jax.grad(f(jl))(SPD), tol=5e-3)


def test_vmap_of_triangular_solve_with_unbatched_matrix():
    bs = np.stack([B, 2 * B, 3 * B])
    f = lambda L: lambda b: L.triangular_solve(SPD, b, left_side=True, lower=True)  # noqa: E731
    close(toolkit.vmap(f(tl))(bs), jax.vmap(f(jl))(bs))
    close(toolkit.vmap(tl.lu)(BATCH), jax.vmap(jl.lu)(BATCH))


def test_lax_errors():
    with pytest.raises(ValueError, match="square"):
        tl.cholesky(B, symmetrize_input=False)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        tl.triangular_solve(A, B, left_side=False)
    with pytest.raises(TypeError, match="equal dtypes"):
        tl.triangular_solve(A, B.astype(np.complex64), left_side=True)
    with pytest.raises(TypeError, match="rank at least 2"):
        tl.lu(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="permutation size"):
        tl.lu_pivots_to_permutation(np.zeros(4, np.int32), 2)
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        tl.eigh(SPD, subset_by_index=(0, 2))
    with pytest.raises(ValueError, match="Rank-1 update"):
        tl.cholesky_update(SPD, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="left=True"):
        tl.ormqr(TALL, np.ones(3, np.float32), SPD)
    with pytest.raises(ValueError, match="symmetric_update expects"):
        tl.symmetric_product(TALL, SPD)
    with pytest.raises(NotImplementedError, match="sort"):
        tl.schur(A, sort_eig_vals=True)
    with pytest.raises(ValueError, match="square"):
        tl.hessenberg(B)
    with pytest.raises(TypeError, match="same shape"):
        tl.tridiagonal_solve(np.ones(3, np.float32), np.ones(4, np.float32), np.ones(4, np.float32), B)


# --- column-pivoted QR (LAPACK's geqp3) ------------------------------------------------------

PIVOT_SHAPES = {"square": (4, 4), "tall": (5, 3), "wide": (3, 5), "batch-tall": (2, 5, 3), "batch-wide": (2, 3, 5)}


def _matrix(shape, dtype, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def _pivoted_cases(dtypes_):
    return [(f"{name}-{np.dtype(dt).name}-full={full}", _matrix(shape, dt), full)
            for name, shape in PIVOT_SHAPES.items() for dt in dtypes_ for full in (True, False)]


def _check_pivoted_qr(x, q, r, p, full, tol):
    """``x[..., :, p] = q @ r``, ``q`` unitary, ``r`` upper triangular with ``|diag(r)|`` non-increasing."""
    x, q, r, p = (np.asarray(v) for v in (x, q, r, p))
    *batch, m, n = x.shape
    k = m if full else min(m, n)
    assert (q.shape, r.shape, p.shape, p.dtype) == ((*batch, m, k), (*batch, k, n), (*batch, n), np.int32)
    np.testing.assert_array_equal(np.sort(p, axis=-1), np.broadcast_to(np.arange(n), p.shape))
    np.testing.assert_allclose(q @ r, np.take_along_axis(x, p[..., None, :], axis=-1), atol=tol)
    np.testing.assert_allclose(np.conj(np.swapaxes(q, -1, -2)) @ q, np.broadcast_to(np.eye(k), (*batch, k, k)),
                               atol=tol)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    d = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert (d[..., 1:] <= d[..., :-1] * (1 + tol)).all(), d


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_pivoted_qr_matches_jax(jit):
    cases = _pivoted_cases((np.float32, np.complex64))
    ours_fn = lambda: [tl.qr(x, pivoting=True, full_matrices=full) for _, x, full in cases]  # noqa: E731
    ours = toolkit.jit(ours_fn)() if jit else ours_fn()
    theirs = jax.jit(lambda: [jl.qr(x, pivoting=True, full_matrices=full) for _, x, full in cases])()
    all_close([c[0] for c in cases], ours, theirs)
    for (name, x, full), (q, r, p), (_, _, jp) in zip(cases, ours, theirs):
        np.testing.assert_array_equal(np.asarray(p), np.asarray(jp), err_msg=name)  # the same LAPACK pivots
        _check_pivoted_qr(x, q, r, p, full, tol=1e-4)


@pytest.mark.x64
def test_pivoted_qr_double_precision_under_x64():
    cases = _pivoted_cases((np.float64, np.complex128))
    ours = toolkit.jit(lambda: [tl.qr(x, pivoting=True, full_matrices=full) for _, x, full in cases])()
    theirs = jax.jit(lambda: [jl.qr(x, pivoting=True, full_matrices=full) for _, x, full in cases])()
    all_close([c[0] for c in cases], ours, theirs, tol=1e-10)
    for (_, x, full), (q, r, p) in zip(cases, ours):
        _check_pivoted_qr(x, q, r, p, full, tol=1e-10)
    for x, target in ((cases[0][1], "lapack_dgeqp3_ffi"), (_matrix((3, 3), np.complex128), "lapack_zgeqp3_ffi")):
        f = lambda L: lambda y: L.qr(y, pivoting=True)  # noqa: E731
        ir = _custom_calls(toolkit.jit(f(tl)).lower(x).as_text())
        assert ir == _custom_calls(jax.jit(f(jl)).lower(x).as_text()) and ir[0][0] == target


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3), (2, 1, 3, 5)], ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_pivoted_qr_custom_calls_match_jax(shape, full):
    # geqp3 on (a, zeros jpvt) with both aliased, then orgqr/ungqr: JAX's calls, attributes and layouts.
    for dtype in (np.float32, np.complex64):
        x = _matrix(shape, dtype)
        f = lambda L: lambda y: L.qr(y, pivoting=True, full_matrices=full)  # noqa: E731
        ours = _custom_calls(toolkit.jit(f(tl)).lower(x).as_text())
        assert ours == _custom_calls(jax.jit(f(jl)).lower(x).as_text())
        assert [c[0][len("lapack_") + 1:] for c in ours] == ["geqp3_ffi", "orgqr_ffi" if dtype == np.float32
                                                             else "ungqr_ffi"]


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 4), (2, 4, 0)], ids=str)
def test_pivoted_qr_of_empty_matrices_matches_jax(shape):
    x = np.zeros(shape, np.float32)
    for full in (True, False):
        ours = toolkit.jit(lambda y: tl.qr(y, pivoting=True, full_matrices=full))(x)
        close(ours, jl.qr(x, pivoting=True, full_matrices=full))
        close(tl.qr(x, pivoting=True, full_matrices=full), ours)


def test_pivoted_qr_under_vmap_matches_jax():
    xs = _matrix((3, 5, 4), np.float32)
    for axis in (0, 2):
        f = lambda L: lambda y: L.qr(y, pivoting=True, full_matrices=False)  # noqa: E731
        ours = toolkit.vmap(f(tl), in_axes=axis)(xs)
        close(ours, jax.vmap(f(jl), in_axes=axis)(xs))
        close(toolkit.jit(toolkit.vmap(f(tl), in_axes=axis))(xs), ours)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3)], ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_pivoted_qr_derivatives_match_jax(shape, full):
    x, dx = _matrix(shape, np.float32), _matrix(shape, np.float32, seed=4)
    f = lambda L: lambda y: L.qr(y, pivoting=True, full_matrices=full)  # noqa: E731
    (q, r, p), (dq, dr, dp) = toolkit.jvp(f(tl), (x,), (dx,))
    (jq, jr, jp), (jdq, jdr, _) = jax.jvp(f(jl), (x,), (dx,))
    close((q, r, p, dq, dr), (jq, jr, jp, jdq, jdr), tol=1e-3)
    # The permutation's tangent is a zero of its own dtype (toolkit's integer tangents; JAX's is float0).
    assert np.asarray(dp).dtype == np.int32 and not np.asarray(dp).any()
    g = lambda L, grad: grad(lambda y: (f(L)(y)[1] ** 2 * np.arange(1, 1 + f(L)(y)[1].shape[-1])).sum()  # noqa: E731
                             + f(L)(y)[0][..., :1].sum())(x)
    close(toolkit.jit(lambda: g(tl, toolkit.grad))(), g(jl, jax.grad), tol=2e-3)


@pytest.mark.x64
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 5), (2, 5, 3), (2, 4, 4)], ids=str)
def test_pivoted_qr_jvp_of_wide_and_batched_matrices(shape):
    # Against central differences: JAX 0.10.2's rule raises a TypeError for a batch (its dx[..., p] indexes every
    # member with every member's p) and, for a wide matrix, takes r's last columns from the unpermuted x (wrong
    # unless p leaves them in place); toolkit permutes each member's columns by its own p, x and dx alike.
    x, dx = _matrix(shape, np.float64), _matrix(shape, np.float64, seed=4)
    for full in (True, False):
        f = lambda y: tl.qr(y, pivoting=True, full_matrices=full)  # noqa: E731
        (_, _, p), (dq, dr, _) = toolkit.jvp(f, (x,), (dx,))
        eps = 1e-6
        (q1, r1, p1), (q0, r0, p0) = f(x + eps * dx), f(x - eps * dx)
        assert (np.asarray(p1) == np.asarray(p)).all() and (np.asarray(p0) == np.asarray(p)).all()
        np.testing.assert_allclose(np.asarray(dq), (np.asarray(q1) - np.asarray(q0)) / (2 * eps), atol=1e-6)
        np.testing.assert_allclose(np.asarray(dr), (np.asarray(r1) - np.asarray(r0)) / (2 * eps), atol=1e-6)


def test_pivoted_qr_errors_match_jax():
    from _oracle import raised, raises_like

    raises_like(lambda: tl.qr(np.ones(3, np.float32), pivoting=True),
                lambda: jl.qr(np.ones(3, np.float32), pivoting=True))
    # Both refuse integers with a TypeError (the messages name the accepted dtypes differently, as for every
    # toolkit decomposition).
    assert raised(lambda: tl.qr(np.ones((3, 3), np.int32), pivoting=True))[0] == \
        raised(lambda: jl.qr(np.ones((3, 3), np.int32), pivoting=True))[0] == "TypeError"


def test_pivoted_qr_export_needs_geqp3_allowed_as_jax():
    # JAX 0.10.2 does not guarantee lapack_*geqp3_ffi stable: an export refuses it unless allowed explicitly.
    from toolkit import export

    assert not any("geqp3" in t for t in export.exporting.STABLE_CUSTOM_CALL_TARGETS)
    f = lambda L: L.jit(lambda y: L.lax.linalg.qr(y, pivoting=True))  # noqa: E731
    with pytest.raises(ValueError, match="lapack_sgeqp3_ffi"):
        export.export(f(toolkit))(toolkit.ShapeDtypeStruct((4, 4), np.float32))
    with pytest.raises(ValueError, match="lapack_sgeqp3_ffi"):
        jax.export.export(f(jax))(jax.ShapeDtypeStruct((4, 4), np.float32))
    allow = export.DisabledSafetyCheck.custom_call("lapack_sgeqp3_ffi")
    exported = export.export(f(toolkit), disabled_checks=[allow])(toolkit.ShapeDtypeStruct((4, 4), np.float32))
    close(exported.call(A), jl.qr(A, pivoting=True))
    close(jax.export.deserialize(bytearray(exported.serialize())).call(A), jl.qr(A, pivoting=True))


# --- Shardy and export ---------------------------------------------------------------------

_RULE = re.compile(r"sdy\.sharding_rule = (#sdy\.op_sharding_rule<.*?, custom>)")


@pytest.mark.multidevice
def test_batch_sharded_decompositions_under_shardy(mesh, monkeypatch):
    from toolkit.shard import NamedSharding, PartitionSpec as P

    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    x = np.stack([SPD, 2 * SPD])
    batch = NamedSharding(mesh, P("x"))
    pivoted = lambda L: lambda y: L.qr(y, pivoting=True)  # noqa: E731  (geqp3's two operands, three results)
    for ours, theirs in ((tnp.linalg.inv, jnp.linalg.inv), (tnp.linalg.eigh, jnp.linalg.eigh),
                         (tnp.linalg.svd, jnp.linalg.svd), (pivoted(tl), pivoted(jl))):
        text = toolkit.jit(ours, in_shardings=batch).lower(x).as_text()
        # JAX's sharding rule per call: the batch dimension is one factor shared by operands and results.
        assert _RULE.findall(text) == _RULE.findall(jax.jit(theirs).lower(x).as_text()) != []
    f = toolkit.jit(tnp.linalg.inv, in_shardings=batch, out_shardings=batch)
    close(f(x), jnp.linalg.inv(x))


def test_exported_linalg_runs_in_jax_and_back():
    from toolkit import export

    exported = export.export(toolkit.jit(tnp.linalg.solve))(toolkit.ShapeDtypeStruct((4, 4), np.float32),
                                                            toolkit.ShapeDtypeStruct((4, 2), np.float32))
    blob = exported.serialize()
    close(jax.export.deserialize(bytearray(blob)).call(A, B), jnp.linalg.solve(A, B))
    theirs = jax.export.export(jax.jit(lambda x: tuple(jnp.linalg.eigh(x))))(jax.ShapeDtypeStruct((4, 4), np.float32))
    w, _ = export.deserialize(theirs.serialize()).call(SPD)
    close(w, jnp.linalg.eigh(SPD)[0])
