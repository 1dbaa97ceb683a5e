"""``toolkit.scipy.linalg`` against ``jax.scipy.linalg``: values, dtypes, gradients, batches and errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.scipy.linalg as tsl

jax = pytest.importorskip("jax")
jsl = jax.scipy.linalg

from tests.linalg._comparison import close  # noqa: E402  (after jax is known present)

RNG = np.random.default_rng(2)
A = RNG.normal(size=(4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = RNG.normal(size=(4, 2)).astype(np.float32)
V = RNG.normal(size=(4,)).astype(np.float32)
TALL = RNG.normal(size=(5, 3)).astype(np.float32)
CA = (RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))).astype(np.complex64)


CASES = [
    ("cholesky", lambda L: L.cholesky(SPD)), ("cholesky-lower", lambda L: L.cholesky(SPD, lower=True)),
    ("cho_solve", lambda L: L.cho_solve(L.cho_factor(SPD), B)),
    ("cho_solve-lower-vector", lambda L: L.cho_solve(L.cho_factor(SPD, lower=True), V)),
    ("solve_triangular", lambda L: L.solve_triangular(SPD, B, lower=True)),
    ("solve_triangular-T", lambda L: L.solve_triangular(SPD, V, trans="T", unit_diagonal=True)),
    ("solve_triangular-C", lambda L: L.solve_triangular(CA, CA, trans=2)),
    ("lu", lambda L: L.lu(A)), ("lu-tall", lambda L: L.lu(TALL)), ("lu-permute_l", lambda L: L.lu(A, permute_l=True)),
    ("lu_factor", lambda L: L.lu_factor(A)), ("lu_solve", lambda L: L.lu_solve(L.lu_factor(A), B)),
    ("lu_solve-T", lambda L: L.lu_solve(L.lu_factor(A), V, trans=1)),
    ("lu_solve-H", lambda L: L.lu_solve(L.lu_factor(CA), CA, trans=2)),
    ("qr-r", lambda L: L.qr(TALL, mode="r")),
    ("svd-s", lambda L: L.svd(TALL, compute_uv=False)), ("eigh-w", lambda L: L.eigh(SPD, eigvals_only=True)),
    ("inv", lambda L: L.inv(A)), ("det", lambda L: L.det(A)), ("solve", lambda L: L.solve(A, B)),
    ("solve-pos", lambda L: L.solve(SPD, B, assume_a="pos")),
    ("solve-pos-lower", lambda L: L.solve(SPD, V, assume_a="pos", lower=True)),
    ("expm-small", lambda L: L.expm(A * 0.1)), ("expm", lambda L: L.expm(A)), ("expm-large", lambda L: L.expm(A * 4)),
    ("expm-batch", lambda L: L.expm(np.stack([A, A * 0.3]))), ("expm-c64", lambda L: L.expm(CA)),
    ("expm-upper", lambda L: L.expm(np.triu(A), upper_triangular=True)),
    ("block_diag", lambda L: L.block_diag(A, B, np.ones(3, np.float32), np.float32(2))),
    ("schur", lambda L: L.schur(A)), ("schur-complex", lambda L: L.schur(A, output="complex")),
    ("hessenberg", lambda L: L.hessenberg(A)), ("hessenberg-q", lambda L: L.hessenberg(CA, calc_q=True)),
]


def test_matches_jax():
    # One compiled program per side: XLA's per-module cost dominates these small programs.
    ours = toolkit.jit(lambda: [fn(tsl) for _, fn in CASES])()
    theirs = jax.jit(lambda: [fn(jsl) for _, fn in CASES])()
    failures = []
    for (name, _), o, t in zip(CASES, ours, theirs):
        try:
            close(o, t, tol=1e-3 if "expm" in name else 2e-4)
        except AssertionError as err:
            failures.append(f"{name}: {err}")
    assert not failures, "\n".join(failures)


def test_qr_reconstructs_with_jax_shapes():
    for mode in ("full", "economic"):
        q, r = tsl.qr(TALL, mode=mode)
        jq, jr = jsl.qr(TALL, mode=mode)
        assert np.asarray(q).shape == jq.shape and np.asarray(r).shape == jr.shape
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), TALL, atol=1e-4)


PIVOT_INPUTS = {"square": A, "tall": TALL, "wide": TALL.T.copy(), "batch": np.stack([TALL, 2 * TALL[::-1]]),
                "complex": CA, "batch-wide-complex": np.stack([CA[:2], CA[1:]])}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_qr_pivoting_matches_jax(jit):
    cases = [(f"{name}-{mode}", x, mode) for name, x in PIVOT_INPUTS.items() for mode in ("full", "economic", "r")]
    ours_fn = lambda: [tsl.qr(x, mode=mode, pivoting=True) for _, x, mode in cases]  # noqa: E731
    ours = toolkit.jit(ours_fn)() if jit else ours_fn()
    theirs = jax.jit(lambda: [jsl.qr(x, mode=mode, pivoting=True) for _, x, mode in cases])()
    for (name, x, mode), o, t in zip(cases, ours, theirs):
        assert type(o) is tuple and len(o) == len(t) == (2 if mode == "r" else 3), name
        close(o, t)
        p = np.asarray(o[-1])
        np.testing.assert_array_equal(p, np.asarray(t[-1]), err_msg=name)
        assert p.dtype == np.int32 and p.shape == x.shape[:-2] + x.shape[-1:]
        if mode != "r":
            q, r = np.asarray(o[0]), np.asarray(o[1])
            np.testing.assert_allclose(q @ r, np.take_along_axis(x, p[..., None, :], axis=-1), atol=1e-4,
                                       err_msg=name)


def test_qr_pivoting_promotes_integers():
    x = np.arange(12).reshape(4, 3) % 5
    q, r, p = tsl.qr(x, pivoting=True)
    close((q, r, p), jsl.qr(x, pivoting=True))
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), x[:, np.asarray(p)], atol=1e-4)


@pytest.mark.x64
def test_qr_pivoting_float64_under_x64():
    for x in (TALL.astype(np.float64), CA.astype(np.complex128)):
        for mode in ("full", "economic", "r"):
            close(tsl.qr(x, mode=mode, pivoting=True), jsl.qr(x, mode=mode, pivoting=True), tol=1e-10)


def test_qr_pivoting_errors_match_jax():
    from _oracle import raises_like

    raises_like(lambda: tsl.qr(A, mode="raw", pivoting=True), lambda: jsl.qr(A, mode="raw", pivoting=True))
    raises_like(lambda: tsl.qr(V, pivoting=True), lambda: jsl.qr(V, pivoting=True))


@pytest.mark.x64
def test_expm_float64_under_x64():
    x = A.astype(np.float64)
    close(tsl.expm(x), jsl.expm(x), tol=1e-9)


def test_gradients_match_jax():
    f = lambda L: lambda a: (L.cho_solve(L.cho_factor(a), B) ** 2).sum()  # noqa: E731
    close(toolkit.jit(toolkit.grad(f(tsl)))(SPD), jax.grad(f(jsl))(SPD), tol=2e-3)
    h = lambda L: lambda a: (L.solve_triangular(a, B, lower=True) ** 2).sum()  # noqa: E731
    close(toolkit.jit(toolkit.grad(h(tsl)))(SPD), jax.grad(h(jsl))(SPD), tol=2e-3)


@pytest.mark.slow
def test_expm_gradient_matches_jax():
    g = lambda L: lambda a: (L.expm(a * 0.5) * A).sum()  # noqa: E731
    close(toolkit.jit(toolkit.grad(g(tsl)))(A), jax.grad(g(jsl))(A), tol=2e-3)


def test_errors():
    with pytest.raises(ValueError, match="'output'"):
        tsl.schur(A, output="quaternion")
    with pytest.raises(ValueError, match="trans"):
        tsl.solve_triangular(A, B, trans=3)
    with pytest.raises(ValueError, match="Unsupported QR"):
        tsl.qr(A, mode="raw")
    with pytest.raises(ValueError, match="assume_a"):
        tsl.solve(A, B, assume_a="banded")
    with pytest.raises(NotImplementedError, match="b=None"):
        tsl.eigh(SPD, SPD)
    with pytest.raises(ValueError, match="square"):
        tsl.expm(B)
    with pytest.raises(ValueError, match="incompatible shapes"):
        tsl.cho_solve((SPD, False), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        tsl.block_diag(np.ones((1, 1, 1)))
    with pytest.raises(TypeError, match="array arguments"):
        tsl.schur([[1.0]])
    with pytest.raises(ValueError, match=r"\[\.\.\., n, n\]"):
        tsl.cholesky(B)


LIST_SPD = SPD.tolist()
LIST_CASES = [
    ("cholesky", lambda L: L.cholesky(LIST_SPD)), ("cho_factor", lambda L: L.cho_factor(LIST_SPD)[0]),
    ("cho_solve", lambda L: L.cho_solve((L.cholesky(SPD), False), V.tolist())),
    ("solve_triangular", lambda L: L.solve_triangular(LIST_SPD, V.tolist(), lower=True)),
    ("lu", lambda L: L.lu(LIST_SPD)), ("lu_factor", lambda L: L.lu_factor(LIST_SPD)),
    ("lu_solve", lambda L: L.lu_solve(L.lu_factor(SPD), V.tolist())), ("qr", lambda L: L.qr(LIST_SPD)),
    ("qr_multiply", lambda L: L.qr_multiply(LIST_SPD, V.tolist())), ("svd", lambda L: L.svd(LIST_SPD)),
    ("eigh", lambda L: L.eigh(LIST_SPD)[0]),
]


@pytest.mark.parametrize("name", [name for name, _ in LIST_CASES])
def test_nested_lists_are_arrays_as_in_jax(name):
    # JAX's factorizations and solvers read nested lists with jnp.asarray (its jnp.linalg ones do not).
    fn = dict(LIST_CASES)[name]
    close(fn(tsl), fn(jsl), tol=2e-4)


@pytest.mark.parametrize("name", ["schur", "hessenberg"])
@pytest.mark.parametrize("dtype", [np.int32, np.bool_])
def test_schur_and_hessenberg_refuse_integers_as_jax(name, dtype):
    from _oracle import raises_like

    a = np.eye(3, dtype=dtype)
    raises_like(lambda: getattr(tsl, name)(a), lambda: getattr(jsl, name)(a))
