"""grad / vjp / jvp through ``Exported.call``, with the exported VJP as the call's derivative (as JAX does).

JAX exports (``vjp_order`` 1 or 2) are read by both sides; ``toolkit.grad``
of a function calling toolkit's view must equal ``jax.grad`` of the same
function calling JAX's view.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import export as jexport  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit import export  # noqa: E402
from toolkit.ad import DifferentiationError  # noqa: E402

F32 = np.float32
X = np.linspace(0.1, 1, 6, dtype=F32).reshape(2, 3)
W = np.full((3, 4), 0.3, F32)
N = np.arange(3, dtype=np.int32)


def _model(x, w):
    return {"a": jnp.tanh(x @ w), "b": jnp.sum(jnp.sin(x))}


def _views(fun, *args, vjp_order=1):
    blob = bytes(jexport.export(jax.jit(fun))(*args).serialize(vjp_order=vjp_order))
    return export.deserialize(blob), jexport.deserialize(blob)


def _close(a, b, rtol=1e-6):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=1e-6)


def test_grad_matches_jax():
    ours, theirs = _views(_model, X, W)

    def loss(call):
        return lambda x, w: (call(x, w)["a"] ** 2).sum() + call(x, w)["b"]

    want = jax.grad(loss(theirs.call), argnums=(0, 1))(X, W)
    _close(toolkit.grad(loss(ours.call), argnums=(0, 1))(X, W), want)
    _close(toolkit.jit(toolkit.grad(loss(ours.call), argnums=(0, 1)))(X, W), want)


def test_vjp_and_value_and_grad_match_jax():
    ours, theirs = _views(_model, X, W)
    cts = {"a": np.linspace(-1, 1, 8, dtype=F32).reshape(2, 4), "b": F32(0.5)}
    _, pull = toolkit.vjp(ours.call, X, W)
    _, jpull = jax.vjp(theirs.call, X, W)
    _close(pull(cts), jpull(cts))
    value, g = toolkit.value_and_grad(lambda x: ours.call(x, W)["b"])(X)
    jvalue, jg = jax.value_and_grad(lambda x: theirs.call(x, W)["b"])(X)
    _close((value, g), (jvalue, jg))


def test_integer_arguments_and_outputs_use_float0_cotangents():
    def f(x, n):
        return x * n.astype(jnp.float32) * x, n * 2

    ours, theirs = _views(f, X[0], N)
    _close(toolkit.grad(lambda x: ours.call(x, N)[0].sum())(X[0]), jax.grad(lambda x: theirs.call(x, N)[0].sum())(X[0]))
    gx, gn = toolkit.grad(lambda x, n: ours.call(x, n)[0].sum(), argnums=(0, 1), allow_int=True)(X[0], N)
    np.testing.assert_array_equal(np.asarray(gn), np.zeros(3, np.int32))  # toolkit's zeros for integer primals


def test_second_order_needs_vjp_order_2():
    def f(x):
        return jnp.sin(x) * x

    ours, theirs = _views(f, X[0], vjp_order=2)
    grad2 = toolkit.grad(lambda x: toolkit.grad(lambda y: ours.call(y).sum())(x).sum())(X[0])
    want = jax.grad(lambda x: jax.grad(lambda y: theirs.call(y).sum())(x).sum())(X[0])
    _close(grad2, want, rtol=1e-5)
    once, _ = _views(f, X[0], vjp_order=1)
    with pytest.raises(DifferentiationError, match="has no VJP. Serialize it with vjp_order >= 1"):
        toolkit.grad(lambda x: toolkit.grad(lambda y: once.call(y).sum())(x).sum())(X[0])


def test_jvp_uses_the_vjp_of_the_vjp():
    ours, _ = _views(_model, X, W, vjp_order=2)
    tangents = (np.ones_like(X), np.full_like(W, 0.5))
    primal, tangent = toolkit.jvp(ours.call, (X, W), tangents)
    want_primal, want_tangent = jax.jvp(_model, (X, W), tangents)  # JAX cannot jvp Exported.call itself
    _close(primal, want_primal)
    _close(tangent, want_tangent, rtol=1e-5)
    once, _ = _views(_model, X, W, vjp_order=1)
    with pytest.raises(DifferentiationError, match="needs the VJP of its VJP.*vjp_order >= 2"):
        toolkit.jvp(once.call, (X, W), tangents)


def test_polymorphic_export():
    blob = bytes(jexport.export(jax.jit(lambda x: jnp.sin(x) * 2))(
        jax.ShapeDtypeStruct(jexport.symbolic_shape("2*k"), F32)).serialize(vjp_order=1))
    x = np.arange(6, dtype=F32)
    got = toolkit.grad(lambda x: export.deserialize(blob).call(x).sum())(x)
    _close(got, jax.grad(lambda x: jexport.deserialize(blob).call(x).sum())(x))


def test_fresh_toolkit_export():
    exp = export.export(toolkit.jit(lambda x: tnp.sin(x) * x))(X[0])
    _close(toolkit.grad(lambda x: exp.call(x).sum())(X[0]), np.sin(X[0]) + X[0] * np.cos(X[0]))


def test_no_vjp_is_a_clear_error():
    ours, _ = _views(_model, X, W, vjp_order=0)
    with pytest.raises(DifferentiationError, match="'_model': it has no VJP"):
        toolkit.grad(lambda x: ours.call(x, W)["b"])(X)


def test_unused_output_of_a_polymorphic_export_gets_call_site_zeros():
    # The zero cotangent of an output the loss ignores has the call site's shape, not the export's
    # symbolic one (a dimension variable the caller never binds): reverse and forward mode, fresh and
    # deserialized (vjp_order=2) exports.
    def f(x):
        return x * 2.0, tnp.sum(x, axis=1)

    b, = export.symbolic_shape("b")
    exp = export.export(toolkit.jit(f))(toolkit.ShapeDtypeStruct((b, 3), np.float32))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for e in (exp, export.deserialize(exp.serialize(vjp_order=2))):
        grad = toolkit.grad(lambda x: e.call(x)[1].sum())(x)
        np.testing.assert_array_equal(np.asarray(grad), np.ones((4, 3), np.float32))
        _, tangent = toolkit.jvp(lambda x: e.call(x)[1], (x,), (np.ones_like(x),))
        np.testing.assert_array_equal(np.asarray(tangent), np.full(4, 3, np.float32))
