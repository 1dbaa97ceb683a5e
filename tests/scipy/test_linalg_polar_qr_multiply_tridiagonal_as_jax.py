"""``toolkit.lax.qdwh.qdwh`` (``jax.lax.linalg.qdwh``) and ``toolkit.scipy.linalg``'s ``polar``, ``qr_multiply`` and
``eigh_tridiagonal`` against JAX in the same run: values (the same algorithms: QDWH's steps, the bisection, the
inverse iteration from the same random vectors), dtypes and weak types, eagerly and under ``jit``, float32 and
complex64 (float64/complex128 under x64), ``dynamic_shape`` padding, batches, forward-mode derivatives, the SVD
polar's gradient, ``vmap``, and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from _oracle import assert_same_typed, raises_like
from toolkit.lax.qdwh import qdwh
from toolkit.scipy.linalg import factorizations as tsl

jax = pytest.importorskip("jax")
jsl = pytest.importorskip("jax.scipy.linalg")
from jax.lax.linalg import qdwh as jax_qdwh  # noqa: E402

RNG = np.random.default_rng(0)
F = np.float32
TALL = RNG.normal(size=(5, 3)).astype(F)
TANGENT = RNG.normal(size=(5, 3)).astype(F)
SQUARE_C = (RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))).astype(np.complex64)
ILL = (np.linalg.qr(RNG.normal(size=(6, 4)))[0] * np.array([1.0, 1e-2, 1e-4, 1e-6])).astype(F)  # cond 1e6
BATCH = np.stack([TALL, 2 * TALL[::-1]])
D = RNG.normal(size=7).astype(F)
E = RNG.normal(size=6).astype(F)
# Two eigenvalues near 1 and near 2 twice over: clusters whose eigenvectors are orthogonalized together.
D_CLUSTER = np.array([1, 1, 1, 2, 2, 3], F)
E_CLUSTER = np.array([1e-9, 0, 0, 1e-9, 0], F)

TOL = dict(rtol=2e-6, atol=2e-6)


def _same(ours, theirs, what, **tolerance):
    """Trees of results agree leaf by leaf (shape, dtype, weak type, values); integers and booleans exactly."""
    ours_leaves, theirs_leaves = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves), what
    for i, (o, t) in enumerate(zip(ours_leaves, theirs_leaves)):
        exact = not np.issubdtype(np.asarray(t).dtype, np.inexact)
        assert_same_typed(o, t, what=f"{what}[{i}]", **({} if exact else (tolerance or TOL)))


# --- qdwh -----------------------------------------------------------------------------------------------


def test_qdwh_values_dtypes_and_padding():
    def cases(qdwh_fn, x, x_complex, x_ill, m, n):
        return (qdwh_fn(x, is_hermitian=True), qdwh_fn(x, max_iterations=2), qdwh_fn(x_complex),
                qdwh_fn(x_ill, dynamic_shape=(m, n)))

    padded = np.pad(TALL[:4, :2], ((0, 1), (0, 1)), constant_values=7.0)  # the padding must be ignored
    args = (TALL, SQUARE_C, ILL, 5, 3)
    ours = toolkit.jit(lambda *a: cases(qdwh, *a))(*args)
    theirs = jax.jit(lambda *a: cases(jax_qdwh, *a))(*args)
    _same(ours, theirs, "jit", rtol=2e-5, atol=2e-5)
    # Eagerly (one compiled program, as JAX's jit), with the padded matrix.
    _same(qdwh(padded, dynamic_shape=(4, 2)), jax_qdwh(padded, dynamic_shape=(4, 2)), "eager padded")
    u, h, num_iters, is_converged = qdwh(TALL)
    np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), TALL, rtol=1e-5, atol=1e-5)
    assert bool(is_converged) and 0 < int(num_iters) <= 10
    assert not bool(qdwh(TALL, max_iterations=2)[3])  # two steps do not reach the tolerance


def test_qdwh_errors():
    raises_like(lambda: qdwh(TALL.T), lambda: jax_qdwh(TALL.T))  # M < N
    raises_like(lambda: qdwh(np.ones((3, 3), np.int32)), lambda: jax_qdwh(np.ones((3, 3), np.int32)))
    with pytest.raises(ValueError, match=r"M x N, got shape \(3,\)"):  # JAX: a tuple-unpacking ValueError
        qdwh(TALL[0])


# --- polar ----------------------------------------------------------------------------------------------


def test_polar_values():
    def cases(polar, tall, wide, complex_, batch):
        return (polar(wide, side="left"), polar(tall, method="svd"),
                polar(complex_), polar(complex_, method="svd", side="left"), polar(batch, max_iterations=1))

    args = (TALL, TALL.T, SQUARE_C, BATCH)
    ours = toolkit.jit(lambda *a: cases(tsl.polar, *a))(*args)
    theirs = jax.jit(lambda *a: cases(jsl.polar, *a))(*args)
    _same(ours, theirs, "jit", rtol=1e-5, atol=1e-5)
    _same(tsl.polar(TALL.T, side="left"), jsl.polar(TALL.T, side="left"), "eager")
    # JAX's polar makes eps a traced argument and then fails to pass it to qdwh (static there); toolkit's
    # keeps it static, so it reaches QDWH: the factors are JAX's qdwh's with that eps.
    _same(tsl.polar(TALL, eps=1e-3), jax_qdwh(TALL, eps=1e-3)[:2], "eps")


def test_polar_derivatives():
    # Forward mode through QDWH's loops (reverse mode cannot go through its while loop, in JAX either).
    ours = toolkit.jit(lambda x, t: toolkit.jvp(tsl.polar, (x,), (t,)))(TALL, TANGENT)
    theirs = jax.jit(lambda x, t: jax.jvp(jsl.polar, (x,), (t,)))(TALL, TANGENT)
    _same(ours, theirs, "jvp qdwh", rtol=1e-5, atol=1e-5)

    def loss(polar, x):
        unitary, posdef = polar(x, method="svd")
        return (unitary * x).sum() + (posdef ** 2).sum()
    _same(toolkit.jit(toolkit.grad(lambda x: loss(tsl.polar, x)))(TALL),
          jax.jit(jax.grad(lambda x: loss(jsl.polar, x)))(TALL), "grad svd", rtol=1e-5, atol=1e-5)


def test_polar_errors():
    raises_like(lambda: tsl.polar(TALL[0]), lambda: jsl.polar(TALL[0]))
    raises_like(lambda: tsl.polar(TALL, side="up"), lambda: jsl.polar(TALL, side="up"))
    raises_like(lambda: tsl.polar(TALL, method="newton"), lambda: jsl.polar(TALL, method="newton"))
    raises_like(lambda: tsl.polar(TALL, side="left"), lambda: jsl.polar(TALL, side="left"))  # qdwh: m >= n
    raises_like(lambda: tsl.polar(TALL.T), lambda: jsl.polar(TALL.T))  # qdwh, right: m < n


# --- qr_multiply ----------------------------------------------------------------------------------------


def test_qr_multiply_values():
    c_right = RNG.normal(size=(2, 5)).astype(F)
    c_left = RNG.normal(size=(3, 4)).astype(F)
    c_complex = (c_right + 1j).astype(np.complex64)

    def cases(qr_multiply, a, c_right, c_left, c_complex, batch):
        return (qr_multiply(a, c_right), qr_multiply(a, c_left, mode="left"),  # left: c padded to M rows
                qr_multiply(a, c_right[0]), qr_multiply(a, c_left[:, 0], mode="left"),  # 1-D: raveled
                qr_multiply(a, c_complex, conjugate=True), qr_multiply(a.T, c_left, mode="left"),  # a wide
                qr_multiply(a.T.astype(np.complex64), c_left.T.astype(np.complex64), conjugate=True),
                qr_multiply(a, c_left, mode="left", conjugate=True),
                qr_multiply(batch, c_right[0]), qr_multiply(a, c_right[None, None].repeat(2, 0)))  # batches

    args = (TALL, c_right, c_left, c_complex, BATCH)
    ours = toolkit.jit(lambda *a: cases(tsl.qr_multiply, *a))(*args)
    theirs = jax.jit(lambda *a: cases(jsl.qr_multiply, *a))(*args)
    _same(ours, theirs, "jit")
    # Eagerly, with integers (promoted to float32, as JAX's).
    ints = np.arange(15, dtype=np.int32).reshape(5, 3) % 7
    _same(tsl.qr_multiply(ints, np.arange(5)), jsl.qr_multiply(ints, np.arange(5)), "eager ints")


def test_qr_multiply_errors():
    c = np.ones((3,), F)
    raises_like(lambda: tsl.qr_multiply(TALL, c, mode="up"), lambda: jsl.qr_multiply(TALL, c, mode="up"))
    raises_like(lambda: tsl.qr_multiply(TALL, np.ones(4, F), mode="left"),
                lambda: jsl.qr_multiply(TALL, np.ones(4, F), mode="left"))
    raises_like(lambda: tsl.qr_multiply(TALL, np.ones((2, 4), F)), lambda: jsl.qr_multiply(TALL, np.ones((2, 4), F)))
    with pytest.raises(NotImplementedError, match="geqp3"):  # JAX: LAPACK's geqp3, which toolkit does not call
        tsl.qr_multiply(TALL, np.ones(5, F), pivoting=True)


# --- eigh_tridiagonal -----------------------------------------------------------------------------------


def test_eigh_tridiagonal_values():
    d_complex = D.astype(np.complex64)
    e_complex = (E * np.exp(1j * np.arange(6))).astype(np.complex64)

    def cases(linalg, d, e, d_complex, e_complex, d_cluster, e_cluster, tol, key):
        tri = linalg.eigh_tridiagonal
        return (tri(d, e, eigvals_only=True, select="i", select_range=(2, 4)),
                tri(d, e, eigvals_only=True, tol=tol), tri(d_cluster, e_cluster, key=key), tri(d[:1], e[:0]),
                tri(d_complex[:1], e_complex[:0]), tri(d[:0], e[:0], eigvals_only=True))

    # Complex off-diagonals: real eigenvalues, complex eigenvectors; here with clusters of close eigenvalues.
    d_cluster = (D_CLUSTER + 0j).astype(np.complex64)
    e_cluster = (E_CLUSTER * np.exp(1j * np.arange(5))).astype(np.complex64)
    args = (D, E, d_complex, e_complex, d_cluster, e_cluster, F(0.1))
    ours = toolkit.jit(lambda *a: cases(tsl, *a, toolkit.random.key(3)))(*args)
    theirs = jax.jit(lambda *a: cases(jsl, *a, jax.random.key(3)))(*args)
    _same(ours, theirs, "jit", rtol=1e-5, atol=1e-5)
    _same(tsl.eigh_tridiagonal(D, E), jsl.eigh_tridiagonal(D, E), "eager", rtol=1e-5, atol=1e-5)
    # The eigenvectors are those of the tridiagonal matrix.
    w, v = tsl.eigh_tridiagonal(D, E)
    t = np.diag(D) + np.diag(E, 1) + np.diag(E, -1)
    np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-4)


@pytest.mark.x64
def test_x64():
    """float64 and complex128 (and float32 beside them) with x64 on."""
    x64 = RNG.normal(size=(6, 4))
    d, e = RNG.normal(size=7), RNG.normal(size=6)

    def cases(qdwh_fn, linalg, x, x_complex, x32, d, e):
        return (qdwh_fn(x), qdwh_fn(x_complex), qdwh_fn(x32), linalg.eigh_tridiagonal(d, e),
                linalg.polar(x_complex, method="svd"))

    args = (x64, x64 + 1j * x64[::-1], TALL, d, e)
    ours = toolkit.jit(lambda *a: cases(qdwh, tsl, *a))(*args)
    theirs = jax.jit(lambda *a: cases(jax_qdwh, jsl, *a))(*args)
    _same(ours, theirs, "x64", rtol=1e-6, atol=1e-6)
    raises_like(lambda: tsl.eigh_tridiagonal(d, e.astype(F)), lambda: jsl.eigh_tridiagonal(d, e.astype(F)))


def test_eigh_tridiagonal_vmap():
    batch = np.stack([D, 2 * D])
    _same(toolkit.jit(toolkit.vmap(lambda d: tsl.eigh_tridiagonal(d, E)))(batch),
          jax.jit(jax.vmap(lambda d: jsl.eigh_tridiagonal(d, E)))(batch), "vmap", rtol=1e-5, atol=1e-5)


def test_eigh_tridiagonal_errors():
    for kwargs in (dict(select="v", select_range=(0.0, 1.0)), dict(select="x"), dict(select="i"),
                   dict(select="i", select_range=(3, 1))):
        raises_like(lambda: tsl.eigh_tridiagonal(D, E, eigvals_only=True, **kwargs),
                    lambda: jsl.eigh_tridiagonal(D, E, eigvals_only=True, **kwargs))
    with pytest.raises(TypeError) as theirs:
        jsl.eigh_tridiagonal(D.astype(np.int32), E.astype(np.int32))
    with pytest.raises(TypeError) as ours:
        tsl.eigh_tridiagonal(D.astype(np.int32), E.astype(np.int32))
    assert str(ours.value) == str(theirs.value).replace("jax.scipy", "toolkit.scipy")
    with pytest.raises(ValueError, match="Non-hashable static arguments"):  # select_range is static, as in JAX
        tsl.eigh_tridiagonal(D, E, select="i", select_range=[1, 2])
