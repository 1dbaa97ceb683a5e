"""``toolkit.scipy.sparse.linalg``'s ``cg``, ``bicgstab`` and ``gmres`` against ``jax.scipy.sparse.linalg`` in the
same run: ``A`` as a matrix and as a function, preconditioner ``M``, ``x0``, pytree right-hand sides,
``tol``/``atol``/``maxiter``, gmres's ``restart`` and both ``solve_method``s, under ``jit`` and eagerly (solutions,
dtypes, weak types, ``info``), gradients through ``cg`` and ``gmres`` (implicit differentiation), JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit import numpy as tnp
from toolkit.scipy.sparse import linalg as sparse_linalg

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jsparse = pytest.importorskip("jax.scipy.sparse.linalg")

F = np.float32
RNG = np.random.default_rng(1)
_B = RNG.normal(size=(5, 5)).astype(F)
SPD = (_B @ _B.T + 3 * np.eye(5, dtype=F)).astype(F)
GENERAL = (_B + 4 * np.eye(5, dtype=F)).astype(F)
RHS = RNG.normal(size=5).astype(F)
RHS2 = RNG.normal(size=(2, 3)).astype(F)
X_START = RNG.normal(size=5).astype(F)
_C = RNG.normal(size=(6, 6)).astype(F)
SPD6 = (_C @ _C.T + 3 * np.eye(6, dtype=F)).astype(F)
GENERAL6 = (_C + 5 * np.eye(6, dtype=F)).astype(F)


def _close(got, want, rtol=2e-6, atol=1e-6):
    got_leaves, want_leaves = toolkit.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert toolkit.tree_util.tree_structure(got).num_leaves == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.aval.weak_type == w.weak_type
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def _cases(matrix):
    """(A-builder, b, keyword arguments) cases over one matrix: np_ is jnp or tnp."""
    inverse_diagonal = np.diag(1 / np.diag(matrix)).astype(F)
    return [
        (lambda np_: matrix, RHS, {}),
        (lambda np_: (lambda v: np_.asarray(matrix) @ v), RHS, {}),
        (lambda np_: matrix, RHS, {"M": inverse_diagonal, "x0": X_START}),
        (lambda np_: matrix, RHS, {"M": lambda v: v / np.diag(matrix), "tol": 1e-2}),
        (lambda np_: matrix, RHS, {"tol": 0.0, "atol": 1e-1, "maxiter": 2}),
    ]


def _tree_operator(np_, matrix5, matrix6):
    # a block-diagonal operator on {"a": [5], "b": [2, 3]}
    return lambda t: {"a": np_.asarray(matrix5) @ t["a"],
                      "b": (np_.asarray(matrix6) @ t["b"].reshape(6)).reshape(2, 3)}


def _run(name, matrix, tree_matrix, extra, rtol=2e-6, atol=1e-6):
    jfun, tfun = getattr(jsparse, name), getattr(sparse_linalg, name)
    for make_a, b, kwargs in _cases(matrix):
        kwargs = dict(kwargs, **extra)
        want, want_info = jax.jit(lambda b, kw=kwargs, a=make_a: jfun(a(jnp), b, **kw))(b)
        got, got_info = toolkit.jit(lambda b, kw=kwargs, a=make_a: tfun(a(tnp), b, **kw))(b)
        _close(got, want, rtol, atol)
        if want_info is None:
            assert got_info is None
        else:
            assert int(got_info) == int(want_info) and got_info.dtype == want_info.dtype
    b = {"a": RHS, "b": RHS2}
    want, _ = jax.jit(lambda b: jfun(_tree_operator(jnp, matrix, tree_matrix), b, **extra))(b)
    got, _ = toolkit.jit(lambda b: tfun(_tree_operator(tnp, matrix, tree_matrix), b, **extra))(b)
    _close(got, want, rtol, atol)
    # eagerly, with a NumPy right-hand side
    want, _ = jfun(jnp.asarray(matrix), RHS, **extra)
    got, _ = tfun(tnp.asarray(matrix), RHS, **extra)
    _close(got, want, rtol, atol)


def test_cg():
    _run("cg", SPD, SPD6, {})


def test_bicgstab():
    _run("bicgstab", GENERAL, GENERAL6, {})


@pytest.mark.parametrize("solve_method", ["incremental", "batched"])
def test_gmres(solve_method):
    # gmres's small least-squares solves differ in rounding from JAX's LAPACK calls
    _run("gmres", GENERAL, GENERAL6, {"solve_method": solve_method}, rtol=1e-5, atol=1e-6)
    for restart, maxiter in ((2, 3),):
        kwargs = dict(solve_method=solve_method, restart=restart, maxiter=maxiter)
        want, _ = jax.jit(lambda b: jsparse.gmres(lambda v: jnp.asarray(GENERAL) @ v, b, **kwargs))(RHS)
        got, _ = toolkit.jit(lambda b: sparse_linalg.gmres(lambda v: tnp.asarray(GENERAL) @ v, b, **kwargs))(RHS)
        _close(got, want, rtol=1e-5, atol=1e-6)


def test_gradients_through_the_solvers():
    def loss(np_, solver):
        def f(a, b):
            x, _ = solver(lambda v: (a + a.T) @ v, b)
            return np_.sum(x * np_.arange(5.0))
        return f

    sym = (SPD / 2).astype(F)
    for name in ("cg", "gmres", "bicgstab"):
        want = jax.jit(jax.grad(loss(jnp, getattr(jsparse, name)), argnums=(0, 1)))(sym, RHS)
        got = toolkit.jit(toolkit.grad(loss(tnp, getattr(sparse_linalg, name)), argnums=(0, 1)))(sym, RHS)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def test_errors():
    for module, np_ in ((jsparse, jnp), (sparse_linalg, tnp)):
        for name in ("cg", "bicgstab", "gmres"):
            solver = getattr(module, name)
            with pytest.raises(ValueError, match="linear operator must be a square matrix"):
                solver(np_.ones((5, 4)), RHS)
            with pytest.raises(TypeError, match="linear operator must be either a function or ndarray"):
                solver(3, RHS)
            with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
                solver(SPD, {"a": RHS}, x0={"b": RHS})
        for name in ("cg", "bicgstab"):
            with pytest.raises(ValueError, match="arrays in x0 and b must have matching shapes"):
                getattr(module, name)(SPD, RHS, x0=RHS[:4])
        with pytest.raises(ValueError, match="invalid solve_method bogus"):
            module.gmres(SPD, RHS, solve_method="bogus")
