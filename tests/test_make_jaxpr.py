"""toolkit.make_jaxpr and toolkit.eval_shape: what tracing and each transformation produce (vs jax 0.10.2)."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.linspace(0.1, 1.0, 3).astype(np.float32)


def test_make_jaxpr_prints_like_jax():
    closed = toolkit.make_jaxpr(lambda x: tnp.sin(x) * x)(X)
    text = str(closed)
    tokens = lambda t: [w for w in (w.rstrip(";") for w in t.split()) if w]  # JAX joins short ones with "; "
    assert tokens(text) == tokens(str(jax.make_jaxpr(lambda x: jnp.sin(x) * x)(X)))
    assert text.startswith("{ lambda ; a:f32[3]. let")
    assert "b:f32[3] = sin a" in text and "c:f32[3] = mul b a" in text and text.rstrip().endswith("in (c,) }")
    assert [str(a.shape) for a in closed.in_avals] == ["(3,)"] and closed.out_avals[0].shape == (3,)
    assert [e.primitive.name for e in closed.eqns] == ["sin", "mul"]


def test_each_transformation_is_visible():
    f = lambda x: tnp.sum(tnp.sin(x))
    grad_text = str(toolkit.make_jaxpr(toolkit.grad(f))(X))
    assert "cos" in grad_text
    assert "checkpoint[" in str(toolkit.make_jaxpr(toolkit.checkpoint(f))(X))
    assert "differentiated=True" in str(toolkit.make_jaxpr(toolkit.grad(toolkit.checkpoint(f)))(X))
    jvp_text = str(toolkit.make_jaxpr(lambda x, t: toolkit.jvp(f, (x,), (t,)))(X, X))
    assert "cos" in jvp_text and "mul" in jvp_text
    assert "scan[" in str(toolkit.make_jaxpr(lambda x: toolkit.lax.fori_loop(0, 3, lambda i, v: v * 2.0, x))(X))


def test_static_argnums_return_shape_and_specs():
    f = lambda x, n: tnp.reshape(x, (n, -1))
    closed, shape = toolkit.make_jaxpr(f, static_argnums=1, return_shape=True)(np.ones(6, np.float32), 2)
    assert "reshape" in str(closed) and shape.shape == (2, 3) and shape.dtype == np.float32
    jclosed, jshape = jax.make_jaxpr(lambda x, n: jnp.reshape(x, (n, -1)), static_argnums=1,
                                     return_shape=True)(np.ones(6, np.float32), 2)
    assert (jshape.shape, jshape.dtype) == (shape.shape, shape.dtype)
    spec = toolkit.ShapeDtypeStruct((4, 3), "float32")
    assert "f32[4,3]" in str(toolkit.make_jaxpr(tnp.tanh)(spec))


def test_eval_shape_matches_jax():
    def f(lib):
        return lambda x, w: {"y": x @ w, "n": lib.numpy.sum(x, axis=0).astype(np.int32), "s": x[0, 0] * 2}
    x = toolkit.ShapeDtypeStruct((8, 3), "float32")
    w = np.ones((3, 4), np.float32)
    got = toolkit.eval_shape(f(toolkit), x, w)
    want = jax.eval_shape(f(jax), jax.ShapeDtypeStruct((8, 3), np.float32), w)
    for k in want:
        assert (got[k].shape, got[k].dtype) == (want[k].shape, want[k].dtype), k
    assert toolkit.eval_shape(lambda x: x * 2, 1.0).weak_type == jax.eval_shape(lambda x: x * 2, 1.0).weak_type
    g = toolkit.eval_shape(toolkit.grad(lambda x: tnp.sum(x ** 2)), x)
    assert (g.shape, g.dtype) == ((8, 3), np.float32)
