"""jacfwd / jacrev / hessian against jax 0.10.2: per-family functions, a reference program, pytrees, argnums,
has_aux and the dtype errors."""

import numpy as np
import pytest

import toolkit
from toolkit.examples.reference_programs import PROGRAMS

from _ad_cases import cases

jax = pytest.importorskip("jax")
jnp = jax.numpy

rng = np.random.default_rng(0)
X = (rng.standard_normal((2, 3)) * 0.7).astype(np.float32)


def close(a, b, tol=1e-4):
    assert jax.tree_util.tree_structure(jax.tree_util.tree_map(np.asarray, a)) == \
        jax.tree_util.tree_structure(jax.tree_util.tree_map(np.asarray, b))
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def vector_valued(lib):
    jnp_ = lib.numpy
    return lambda x: jnp_.stack([jnp_.sum(jnp_.sin(x) * x), jnp_.max(x), jnp_.prod(x[0])]) * x[0, 0]


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_vector_function_matches_jax(transform):
    want = getattr(jax, transform)(vector_valued(jax))(X)
    close(getattr(toolkit, transform)(vector_valued(toolkit))(X), want)
    close(toolkit.jit(getattr(toolkit, transform)(vector_valued(toolkit)))(X), want)


@pytest.mark.parametrize("name", ["unary", "dot", "structural", "gather_scatter", "scan", "cond"])
def test_per_family_hessian_and_jacobian(name):
    x = (rng.standard_normal((5, 6)) * 0.3).astype(np.float32)[:, :6]
    f, jf = cases(toolkit)[name], cases(jax)[name]
    close(toolkit.jit(toolkit.jacrev(f))(x), jax.jacrev(jf)(x), 1e-3)
    if name in ("unary", "cond"):
        close(toolkit.jit(toolkit.hessian(f))(x), jax.hessian(jf)(x), 2e-3)


def test_pytrees_argnums_has_aux():
    def make(lib):
        def f(p, x):
            y = lib.numpy.tanh(x @ p["w"] + p["b"])
            return {"y": y, "s": lib.numpy.sum(y ** 2)}, lib.numpy.mean(y)
        return f
    p = {"w": (rng.standard_normal((3, 2)) * 0.5).astype(np.float32), "b": np.zeros(2, np.float32)}
    for transform in ("jacfwd", "jacrev"):
        got = getattr(toolkit, transform)(make(toolkit), argnums=(0, 1), has_aux=True)(p, X)
        want = getattr(jax, transform)(make(jax), argnums=(0, 1), has_aux=True)(p, X)
        close(got, want)
        close(getattr(toolkit, transform)(lambda p, x: make(toolkit)(p, x)[0])(p, X),
              getattr(jax, transform)(lambda p, x: make(jax)(p, x)[0])(p, X))
    close(toolkit.hessian(lambda p, x: make(toolkit)(p, x)[0]["s"])(p, X),
          jax.hessian(lambda p, x: make(jax)(p, x)[0]["s"])(p, X))
    close(toolkit.hessian(lambda x, w: toolkit.numpy.sum(toolkit.numpy.sin(x @ w)), argnums=1)(X, p["w"]),
          jax.hessian(lambda x, w: jnp.sum(jnp.sin(x @ w)), argnums=1)(X, p["w"]))


def test_reference_rnn_jacobian():
    program = PROGRAMS["rnn"]
    args = program.make_inputs(np.random.default_rng(0))
    f = lambda lib: (lambda *a: lib.numpy.sum(program.build(lib)(*a) ** 2, axis=-1).reshape(-1)[:4])
    close(toolkit.jit(toolkit.jacrev(f(toolkit)))(*args), jax.jacrev(f(jax))(*args), 1e-3)


def test_dtype_errors_as_jax():
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        toolkit.jacfwd(lambda x: x)(np.arange(3))
    with pytest.raises(TypeError, match="jacrev requires real- or complex-valued inputs"):
        toolkit.jacrev(lambda x: x)(np.arange(3))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        toolkit.jacrev(lambda x: x.astype(np.complex64))(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        toolkit.jacfwd(lambda x: x, holomorphic=True)(np.ones(2, np.float32))
