"""``toolkit.numpy.linalg`` against ``jax.numpy.linalg`` in the same run: values, dtypes, gradients, vmap, errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

from tests.linalg._comparison import all_close, close  # noqa: E402  (after jax is known present)

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = RNG.normal(size=(4, 3)).astype(np.float32)
V = RNG.normal(size=(4,)).astype(np.float32)
BATCH = RNG.normal(size=(2, 4, 4)).astype(np.float32)
WIDE = RNG.normal(size=(3, 5)).astype(np.float32)
TALL = RNG.normal(size=(5, 3)).astype(np.float32)
CA = (RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))).astype(np.complex64)
HPD = (CA @ CA.conj().T + 3 * np.eye(3)).astype(np.complex64)


def _jitted(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` under one ``toolkit.jit`` (one compilation, not one per primitive): the
    numpy arrays among ``args`` are traced, everything else is closed over."""
    traced = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def call(*xs):
        full = list(args)
        for i, x in zip(traced, xs):
            full[i] = x
        return fn(*full, **kwargs)
    return toolkit.jit(call)(*[args[i] for i in traced])


# Functions whose every output is unique (no sign or phase freedom): compared directly with JAX.
UNIQUE = [
    ("inv", (A,), {}), ("inv", (BATCH,), {}), ("det", (A,), {}), ("det", (A[:2, :2],), {}), ("det", (A[:3, :3],), {}),
    ("det", (BATCH,), {}), ("slogdet", (A,), {}), ("slogdet", (A[:1, :1],), {}), ("slogdet", (A,), {"method": "qr"}),
    ("solve", (A, B), {}), ("solve", (A, V), {}), ("solve", (BATCH, B), {}), ("cholesky", (SPD,), {}),
    ("cholesky", (SPD,), {"upper": True}), ("eigvalsh", (SPD,), {}), ("eigvalsh", (SPD,), {"UPLO": "U"}),
    ("svdvals", (A,), {}), ("svdvals", (WIDE,), {}), ("pinv", (TALL,), {}), ("pinv", (WIDE,), {}),
    ("pinv", (SPD,), {"hermitian": True}), ("matrix_rank", (A,), {}), ("matrix_rank", (np.ones((3, 3), np.float32),), {}),
    ("matrix_power", (A, 0), {}), ("matrix_power", (A, 3), {}), ("matrix_power", (A, 5), {}),
    ("matrix_power", (A, -2), {}), ("cond", (A,), {}), ("cond", (A, 1), {}), ("cond", (A, "fro"), {}),
    ("cond", (A, -2), {}), ("lstsq", (TALL, TALL[:, :2]), {}), ("lstsq", (TALL, TALL[:, 0]), {}),
    ("tensorinv", (A.reshape(2, 2, 4),), {"ind": 2}), ("tensorsolve", (A.reshape(2, 2, 4), B[:, 0].reshape(2, 2)), {}),
    ("multi_dot", ([A, B, B.T, V],), {}), ("outer", (V, V[:3]), {}), ("cross", (B, B[::-1]), {}),
    ("vecdot", (A, A), {}), ("matmul", (A, B), {}), ("tensordot", (A, A), {"axes": 1}), ("trace", (BATCH,), {}),
    ("diagonal", (BATCH,), {"offset": 1}), ("matrix_transpose", (BATCH,), {}), ("eigvals", (SPD,), {}),
    ("inv", (CA,), {}), ("det", (CA,), {}), ("slogdet", (CA,), {}), ("cholesky", (HPD,), {}), ("eigvalsh", (HPD,), {}),
    ("solve", (CA, CA), {}), ("inv", (np.arange(9).reshape(3, 3) % 4 + np.eye(3, dtype=int),), {}),
]


def test_values_and_dtypes_match_jax():
    names = [f"{n}-{i}" for i, (n, _, _) in enumerate(UNIQUE)]
    ours = toolkit.jit(lambda: [getattr(tnp.linalg, n)(*a, **k) for n, a, k in UNIQUE])()
    theirs = jax.jit(lambda: [getattr(jnp.linalg, n)(*a, **k) for n, a, k in UNIQUE])()
    all_close(names, ours, theirs)


def test_eager_calls_match_jax():
    for name, args, kwargs in (UNIQUE[0], UNIQUE[4], UNIQUE[9]):
        close(getattr(tnp.linalg, name)(*args, **kwargs), getattr(jnp.linalg, name)(*args, **kwargs))


NORMS = [(None, None), (1, None), (np.inf, None), (-np.inf, None), (0, None), (3, None), ("fro", (0, 1)),
         ("nuc", (0, 1)), (2, (0, 1)), (-2, (0, 1)), (1, (0, 1)), (-1, (1, 0)), (np.inf, (0, 1)), (-np.inf, (0, 1))]


def test_norm():
    cases = [(o, a, k) for o, a in NORMS for k in (False, True)]
    pick = lambda a: A if a is not None else V  # noqa: E731
    ours = toolkit.jit(lambda: [tnp.linalg.norm(pick(a), ord=o, axis=a, keepdims=k) for o, a, k in cases])()
    theirs = jax.jit(lambda: [jnp.linalg.norm(pick(a), ord=o, axis=a, keepdims=k) for o, a, k in cases])()
    all_close([str(c) for c in cases], ours, theirs)


def test_norms_of_empty_arrays_as_jax():
    """JAX's max-based norms start from 0 (an empty array's norm is 0, so expm of a 0x0 matrix works); its
    min-based ones (-1, -2, -inf) have no identity and raise."""
    for shape in ((0, 0), (0, 3), (3, 0)):
        x = np.zeros(shape, np.float32)
        for order in (None, "fro", "nuc", 1, 2, np.inf, -1, -2, -np.inf):
            try:
                theirs = jnp.linalg.norm(x, order)
            except ValueError:  # a min over an empty axis
                with pytest.raises(ValueError, match="zero-size array"):
                    tnp.linalg.norm(x, order)
                continue
            close(tnp.linalg.norm(x, order), theirs)
    close(tnp.linalg.norm(np.zeros(0, np.float32), np.inf), jnp.linalg.norm(np.zeros(0, np.float32), np.inf))
    assert toolkit.scipy.linalg.expm(np.zeros((0, 0), np.float32)).shape == (0, 0)


def test_vector_and_matrix_norm():
    close(tnp.linalg.vector_norm(BATCH, axis=(1, 2), ord=1), jnp.linalg.vector_norm(BATCH, axis=(1, 2), ord=1))
    close(tnp.linalg.matrix_norm(BATCH, ord="nuc"), jnp.linalg.matrix_norm(BATCH, ord="nuc"))
    close(tnp.linalg.norm(CA), jnp.linalg.norm(CA))



def test_decompositions_reconstruct_and_match_jax_shapes():
    for x in (A, TALL, WIDE, BATCH):
        u, s, vh = toolkit.jit(lambda y: tnp.linalg.svd(y, full_matrices=False))(x)
        ju, js, jvh = jnp.linalg.svd(x, full_matrices=False)
        close(s, js)
        assert np.asarray(u).shape == ju.shape and np.asarray(vh).shape == jvh.shape
        np.testing.assert_allclose(np.asarray(u) * np.asarray(s)[..., None, :] @ np.asarray(vh), x, atol=1e-4)
        for mode in ("reduced", "complete"):
            q, r = toolkit.jit(lambda y, mode=mode: tnp.linalg.qr(y, mode=mode))(x)
            jq, jr = jnp.linalg.qr(x, mode=mode)
            assert np.asarray(q).shape == jq.shape and np.asarray(r).shape == jr.shape
            np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), x, atol=1e-4)
            close(np.abs(np.asarray(r)), np.abs(np.asarray(jr)))  # rows of R are fixed up to sign
        close(tnp.linalg.qr(x, mode="r").__abs__(), abs(jnp.linalg.qr(x, mode="r")))
    w, v = tnp.linalg.eigh(SPD)
    jw, _ = jnp.linalg.eigh(SPD)
    close(w, jw)
    np.testing.assert_allclose(SPD @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-3)
    w, v = tnp.linalg.eig(A)
    jw, jv = jnp.linalg.eig(A)
    assert np.asarray(v).dtype == jv.dtype == np.complex64
    np.testing.assert_allclose(A @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-4)
    raw, taus = tnp.linalg.qr(A, mode="raw")
    jraw, jtaus = jnp.linalg.qr(A, mode="raw")
    close(raw, jraw)
    close(taus, jtaus)


def test_hermitian_svd_matches_jax():
    u, s, vh = tnp.linalg.svd(SPD - 5 * np.eye(4, dtype=np.float32), hermitian=True)
    _, js, _ = jnp.linalg.svd(SPD - 5 * np.eye(4, dtype=np.float32), hermitian=True)
    close(s, js)
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s) @ np.asarray(vh), SPD - 5 * np.eye(4), atol=1e-4)


def test_integer_inputs_promote_to_float32():
    x = np.array([[2, 1], [1, 3]], np.int32)
    names = ("inv", "det", "cholesky", "eigvalsh", "svdvals", "pinv")
    ours = toolkit.jit(lambda: [getattr(tnp.linalg, n)(x) for n in names])()
    assert all(np.asarray(o).dtype == np.float32 for o in ours)
    all_close(names, ours, jax.jit(lambda: [getattr(jnp.linalg, n)(x) for n in names])())


# --- gradients -------------------------------------------------------------------------


def _sym(x):
    return (x + x.T) / 2


GRADS = [
    ("det", lambda L, x: L.det(x), A),
    ("det-5", lambda L, x: L.det(x), RNG.normal(size=(5, 5)).astype(np.float32)),
    ("slogdet", lambda L, x: L.slogdet(x)[1], A),
    ("inv", lambda L, x: L.inv(x).sum(), A),
    ("solve", lambda L, x: (L.solve(x, B) ** 2).sum(), A),
    ("cholesky", lambda L, x: (L.cholesky(x) * np.arange(16.0).reshape(4, 4)).sum(), SPD),
    ("eigvalsh", lambda L, x: (L.eigvalsh(x) * np.arange(4.0)).sum(), SPD),
    ("eigh-vectors", lambda L, x: (L.eigh(x)[1] ** 2 * np.arange(16.0).reshape(4, 4)).sum(), SPD),
    ("svdvals", lambda L, x: (L.svdvals(x) * np.arange(3.0)).sum(), TALL),
    ("svd-u", lambda L, x: (L.svd(x, full_matrices=False)[0] ** 2 * np.arange(15.0).reshape(5, 3)).sum(), TALL),
    ("qr-r", lambda L, x: (L.qr(x)[1] ** 2 * np.arange(9.0).reshape(3, 3)).sum(), TALL),
    ("qr-q-wide", lambda L, x: (L.qr(x)[0] * np.arange(9.0).reshape(3, 3)).sum() + L.qr(x)[1].sum(), WIDE),
    ("qr-complete", lambda L, x: (L.qr(x, mode="complete")[0] * np.arange(25.0).reshape(5, 5)).sum(), TALL),
    ("pinv", lambda L, x: (L.pinv(x) * np.arange(15.0).reshape(3, 5)).sum(), TALL),
    ("norm-2", lambda L, x: L.norm(x, ord=2), A),
    ("norm-fro", lambda L, x: L.norm(x), A),
    ("eigvals", lambda L, x: (L.eigvals(x) * np.arange(4.0)).real.sum(), SPD),
]


def test_gradients_match_jax():
    ours = toolkit.jit(lambda: [toolkit.grad(lambda y, fn=fn: fn(tnp.linalg, y))(x) for _, fn, x in GRADS])()
    theirs = jax.jit(lambda: [jax.grad(lambda y, fn=fn: fn(jnp.linalg, y))(x) for _, fn, x in GRADS])()
    all_close([g[0] for g in GRADS], ours, theirs, tol=2e-3)


def test_forward_mode_matches_jax():
    t = RNG.normal(size=A.shape).astype(np.float32)
    _, ours = toolkit.jvp(tnp.linalg.inv, (A,), (t,))
    _, theirs = jax.jvp(jnp.linalg.inv, (A,), (t,))
    close(ours, theirs, tol=1e-3)


# --- vmap, jit, x64 ----------------------------------------------------------------------


def test_vmap_is_the_batched_call():
    x = np.stack([SPD, SPD + np.eye(4, dtype=np.float32)])
    names = ["inv", "det", "cholesky", "eigvalsh", "svdvals", "slogdet"]
    vmapped = toolkit.jit(lambda: [toolkit.vmap(getattr(tnp.linalg, n))(x) for n in names])()
    batched = toolkit.jit(lambda: [getattr(tnp.linalg, n)(x) for n in names])()
    all_close(names, vmapped, batched)
    all_close(names, vmapped, jax.jit(lambda: [getattr(jnp.linalg, n)(x) for n in names])())


def test_vmap_of_solve_with_an_unbatched_operand():
    bs = np.stack([B, 2 * B])
    close(toolkit.vmap(tnp.linalg.solve, in_axes=(None, 0))(A, bs), jax.vmap(jnp.linalg.solve, (None, 0))(A, bs))


def test_jit_matches_eager():
    f = lambda x, b: (tnp.linalg.solve(x, b), tnp.linalg.det(x), tnp.linalg.eigh(x @ x.T)[0])  # noqa: E731
    close(toolkit.jit(f)(A, B), f(A, B))


@pytest.mark.x64
def test_float64_under_x64():
    names = ["inv", "det", "slogdet", "cholesky", "eigvalsh", "svdvals", "pinv", "cond"]
    arg = lambda n: (SPD if n in ("cholesky", "eigvalsh") else A).astype(np.float64)  # noqa: E731
    ours = toolkit.jit(lambda: [getattr(tnp.linalg, n)(arg(n)) for n in names])()
    assert all(np.asarray(o).dtype == np.float64 for o in jax.tree.leaves([tuple(x) if isinstance(x, tuple) else x
                                                                             for x in ours]))
    all_close(names, ours, jax.jit(lambda: [getattr(jnp.linalg, n)(arg(n)) for n in names])(), tol=1e-10)


@pytest.mark.x64
def test_complex128_gradient_under_x64():
    x = HPD.astype(np.complex128)
    f = lambda L: lambda y: L.slogdet(y)[1]  # noqa: E731
    close(toolkit.grad(f(tnp.linalg))(x), jax.grad(f(jnp.linalg))(x), tol=1e-8)


def test_float64_is_float32_without_x64():
    assert np.asarray(tnp.linalg.inv(A.astype(np.float64))).dtype == np.float32


def test_singular_matrix_gives_what_jax_gives():
    s = np.ones((3, 3), np.float32)
    close(tnp.linalg.det(s), jnp.linalg.det(s))
    close(tnp.linalg.slogdet(s), jnp.linalg.slogdet(s))
    close(tnp.linalg.cholesky(-SPD), jnp.linalg.cholesky(-SPD))  # NaNs where LAPACK failed


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("name,args,exc,match", [
    ("inv", (B,), ValueError, r"\[\.\.\., n, n\]"),
    ("inv", (V,), ValueError, "shape"),
    ("det", (B,), ValueError, r"\[\.\.\., n, n\]"),
    ("slogdet", (B,), ValueError, r"\[\.\.\., n, n\]"),
    ("cholesky", (B,), ValueError, "n, n"),
    ("eigh", (B,), ValueError, "n, n"),
    ("eig", (B,), ValueError, "n, n"),
    ("solve", (A, np.ones((3,), np.float32)), ValueError, "shapes"),
    ("solve", (V, V), ValueError, "at least two dimensional"),
    ("solve", (BATCH, np.ones((2, 4), np.float32)), ValueError, "Invalid shapes"),
    ("matrix_power", (B, 2), TypeError, "square"),
    ("matrix_power", (A, 1.5), TypeError, "integer"),
    ("qr", (A, "bogus"), ValueError, "Unsupported QR"),
    ("eigh", (SPD, "X"), ValueError, "UPLO"),
    ("norm", (A, "bogus", (0, 1)), ValueError, "Invalid order"),
    ("norm", (BATCH, None, (0, 1, 2)), ValueError, "Improper number of axes"),
    ("vector_norm", (V,), None, None),
    ("outer", (A, V), ValueError, "one-dimensional"),
    ("cross", (A, A), ValueError, "3-dimensional"),
    ("multi_dot", ([A],), ValueError, "at least two"),
    ("multi_dot", ([A, B, A],), ValueError, "last dimension"),
    ("tensorinv", (A, 0), ValueError, "positive"),
    ("tensorinv", (B, 1), ValueError, "tensorinv is only possible"),
    ("cond", (V,), ValueError, "at least 2D"),
    ("cond", (B, 1), ValueError, "square"),
    ("lstsq", (A, np.ones((3,), np.float32)), ValueError, "Leading dimensions"),
    ("pinv", (A, 0.1), None, None),
    ("slogdet", (A,), ValueError, "Unknown slogdet method"),
])
def test_bad_input_is_a_clear_error(name, args, exc, match):
    kwargs = {"method": "bogus"} if match == "Unknown slogdet method" else {}
    if exc is None:
        getattr(tnp.linalg, name)(*args)
        return
    with pytest.raises(exc, match=match):
        getattr(tnp.linalg, name)(*args, **kwargs)
    with pytest.raises((exc, TypeError)):  # JAX's symmetrization fails first on non-square input (a TypeError)
        getattr(jnp.linalg, name)(*args, **kwargs)


def test_integer_dtype_is_refused_by_lax():
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        toolkit.lax.linalg.cholesky(np.eye(3, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(TypeError, match="float16"):
        toolkit.lax.linalg.svd(np.eye(3, dtype=np.float16))


def test_lists_are_refused():
    # JAX's message and name for the check (tests/numpy/test_list_arguments.py covers every function)
    with pytest.raises(TypeError, match=r"^jnp\.linalg\.inv requires ndarray or scalar arguments, got <class 'list'> "
                                        r"at position 0\.$"):
        tnp.linalg.inv([[1.0, 0.0], [0.0, 1.0]])


def test_every_jax_numpy_linalg_name_exists():
    missing = [n for n in dir(jnp.linalg) if not n.startswith("_") and not hasattr(tnp.linalg, n)]
    assert not missing
