"""Exported.vjp() for toolkit exports: jax.export's calling convention, serialization with vjp_order,
and interoperation with JAX in both directions."""

import numpy as np
import pytest

import toolkit
from toolkit import export

F32 = np.float32
X = np.linspace(0.1, 1, 6, dtype=F32).reshape(2, 3)
W = np.full((3, 4), 0.3, F32)
CTS = (np.linspace(-1, 1, 8, dtype=F32).reshape(2, 4), F32(0.5))


def _f(lib):
    jnp = lib.numpy
    return lambda x, w: {"a": jnp.tanh(x @ w), "b": jnp.sum(jnp.sin(x))}


def _exp():
    return export.export(toolkit.jit(_f(toolkit)))(X, W)


def _reference():
    x, w = X.astype(np.float64), W.astype(np.float64)
    a = np.tanh(x @ w)
    da = CTS[0] * (1 - a ** 2)
    return da @ w.T + CTS[1] * np.cos(x), x.T @ da


def test_vjp_signature_and_values():
    exp = _exp()
    assert exp.has_vjp()
    vjp = exp.vjp()
    assert vjp.in_avals == exp.in_avals + exp.out_avals
    assert vjp.out_avals == exp.in_avals
    assert repr(vjp.in_tree) == "PyTreeDef(((*, *, *, *), {}))" and repr(vjp.out_tree) == "PyTreeDef((*, *))"
    for got, want in zip(vjp.call(X, W, *CTS), _reference()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert vjp.vjp().in_avals == vjp.in_avals + vjp.out_avals  # second order


def test_serialize_with_vjp_order_round_trips():
    exp = _exp()
    back = export.deserialize(exp.serialize(vjp_order=2))
    assert back.vjp().has_vjp() and not back.vjp().vjp().has_vjp()
    for got, want in zip(back.vjp().call(X, W, *CTS), _reference()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not export.deserialize(exp.serialize()).has_vjp()


def test_vjp_of_integer_values_has_float0_cotangents():
    # As in JAX: float0 in the signature, boolean zeros in the module (see tests/export/test_exported_call_float0.py).
    exp = export.export(toolkit.jit(lambda x, n: (x * n.astype(F32), n * 2)))(X, np.ones((2, 3), np.int32))
    vjp = exp.vjp()
    assert [a.str_short() for a in vjp.in_avals] == ["f32[2,3]", "i32[2,3]", "f32[2,3]", "float0[2,3]"]
    assert [a.str_short() for a in vjp.out_avals] == ["f32[2,3]", "float0[2,3]"]
    n = np.arange(6, dtype=np.int32).reshape(2, 3)
    dx, dn = vjp.call(X, n, np.ones((2, 3), F32), np.zeros((2, 3), bool))
    np.testing.assert_allclose(np.asarray(dx), n.astype(F32))
    assert dn.dtype == toolkit.core.dtypes.float0 and dn.shape == (2, 3)


def test_jax_loads_toolkit_vjp_and_differentiates():
    jax = pytest.importorskip("jax")
    from jax import export as jexport
    blob = _exp().serialize(vjp_order=1)
    loaded = jexport.deserialize(blob)
    want = jax.vjp(_f(jax), X, W)[1]({"a": CTS[0], "b": CTS[1]})
    for got, w in zip(loaded.vjp().call(X, W, *CTS), want):
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-6)
    g = jax.grad(lambda x, w: jax.numpy.sum(loaded.call(x, w)["a"]))(X, W)
    g_ref = jax.grad(lambda x, w: jax.numpy.sum(_f(jax)(x, w)["a"]))(X, W)
    np.testing.assert_allclose(g, g_ref, rtol=1e-6)
    jax_vjp = jexport.export(jax.jit(_f(jax)))(X, W).vjp()
    assert repr(loaded.vjp().in_tree) == repr(jax_vjp.in_tree)
    assert repr(loaded.vjp().out_tree) == repr(jax_vjp.out_tree)
    assert loaded.vjp().in_avals == jax_vjp.in_avals and loaded.vjp().out_avals == jax_vjp.out_avals


def test_toolkit_loads_jax_vjp():
    jax = pytest.importorskip("jax")
    from jax import export as jexport
    blob = jexport.export(jax.jit(_f(jax)))(X, W).serialize(vjp_order=1)
    loaded = export.deserialize(blob)
    assert loaded.has_vjp()
    for got, want in zip(loaded.vjp().call(X, W, *CTS), _reference()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
