"""toolkit.numpy's vectorize, apply_along_axis, apply_over_axes and fromfunction (on toolkit.vmap) against
jax.numpy 0.10.2."""

import numpy as np

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_vectorize_elementwise():
    check(lambda m, x: m.vectorize(lambda a, b: a * 2 + b)(x, np.float32(1)), X, jit=True)
    check(lambda m, x: m.vectorize(lambda a, b: a * 2 + b)(x[:, :1], x[0]), X)
    check(lambda m, x: m.vectorize(lambda a, p: a ** p, excluded={1})(x, 2), X)
    check(lambda m, x: m.vectorize(lambda a, p=1: a * p, excluded={"p"})(x, p=3.0), X)
    check(lambda m: m.vectorize(lambda a, b: a + (0 if b is None else b))(np.ones(3), None))


def test_vectorize_signatures():
    norm = "(n)->()"
    check(lambda m, x: m.vectorize(lambda v: m.sqrt(m.sum(v * v)), signature=norm)(x), X, tol=2e-6, jit=True)
    check(lambda m, x: m.vectorize(lambda a, b: a @ b, signature="(n,k),(k)->(n)")(x, x[0, 0]), X)
    check(lambda m, x: m.vectorize(lambda a: (a, a + 1), signature="()->(),()")(x[0]), X)
    check(lambda m, x: m.vectorize(lambda a: m.stack([a, a]), signature="()->(k)")(x[0, 0]), X)


def test_vectorize_errors():
    check(lambda m: m.vectorize(lambda v: v, signature="(n)->()")(X))               # output core dims
    check(lambda m: m.vectorize(lambda v: v, signature="(n->()")(X))                # bad signature
    check(lambda m: m.vectorize(lambda v, w: v, signature="(n),(n)->()")(X, X[..., :2]))   # inconsistent n
    check(lambda m: m.vectorize(lambda v: v, signature="(n,m)->()")(X[0, 0]))      # too few dims
    check(lambda m: m.vectorize(lambda v: v, signature="(n)->()")(X, X))            # argument count
    check(lambda m: m.vectorize(lambda v: (v, v), signature="()->()")(X))
    check(lambda m: m.vectorize(lambda v: v, signature="()->(),()")(X))
    check(lambda m: m.vectorize(lambda v: v, excluded={1.5}))
    check(lambda m: m.vectorize(lambda v: v, excluded={-1}))
    check(lambda m: m.vectorize(lambda v: v, signature="(n)->()")(None))


def test_apply_along_axis():
    check(lambda m, x: m.apply_along_axis(m.sort, 1, x[:, ::-1]), X, jit=True)
    check(lambda m, x: m.apply_along_axis(lambda v: m.stack([v.sum(), v.max()]), 0, x), X)
    check(lambda m, x: m.apply_along_axis(lambda v, s: v.sum() * s, 2, x, 2.0), X)
    check(lambda m, x: m.apply_along_axis(lambda v: m.outer(v, v), 1, x), X)
    check(lambda m, x: m.apply_along_axis(lambda v: v * 2, -1, x[0, 0]), X)
    check(lambda m: m.apply_along_axis(m.sum, 3, X))
    check(lambda m: m.apply_along_axis(m.sum, 0, [1, 2]))


def test_apply_over_axes():
    check(lambda m, x: m.apply_over_axes(m.sum, x, [0, 2]), X, jit=True)
    check(lambda m, x: m.apply_over_axes(lambda a, ax: m.sum(a, ax, keepdims=True), x, (1,)), X)
    check(lambda m: m.apply_over_axes(lambda a, ax: a.ravel(), X, [0]))


def test_fromfunction():
    check(lambda m: m.fromfunction(lambda i, j: i * 10 + j, (3, 4)))
    check(lambda m: m.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int))
    # keyword arguments reach the function unmapped (jax 0.10.2 vmaps them too, so a scalar one fails there)
    np.testing.assert_array_equal(np.asarray(tnp.fromfunction(lambda i, k=1: i * k, (5,), k=2.0)),
                                  np.arange(5.0) * 2)
    check(lambda m: m.fromfunction(lambda i, j: (i, i + j), (2, 2)))


def test_vectorize_traced_under_jit_once():
    calls = []

    def f(a):
        calls.append(a.shape)
        return a + 1
    toolkit.jit(tnp.vectorize(f))(X)
    assert calls == [()]   # traced once, on one element, through vmap
