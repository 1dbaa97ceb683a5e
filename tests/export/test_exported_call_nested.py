"""Exports JAX writes around other exports and loops: read and called by toolkit.

* An exported function that itself calls an ``Exported``: JAX merges the
  inner module as a private function (with its own wrapper that computes its
  dimension variables) into the outer one.
* A ``fori_loop`` whose trip count is a dimension variable, in a module for
  ``platforms=['cpu', 'cuda']`` (a platform-index argument, the trip count a
  ``jax.global_constant`` argument of the wrapped main).

JAX's own call of the same blob is the oracle.
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

F32 = np.float32


def _spec(text: str):
    return jax.ShapeDtypeStruct(jexport.symbolic_shape(text), F32)


def _same(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)


def _nested_blob() -> bytes:
    inner = jexport.export(jax.jit(lambda x: jnp.sin(x) * 2))(_spec("b, 3"))
    outer = jexport.export(jax.jit(lambda x: inner.call(x) + x.sum()))(_spec("c, 3"))
    assert "call_exported" in outer.mlir_module()  # the inner module, merged as a private function
    return bytes(outer.serialize())


@pytest.mark.parametrize("rows", [1, 4])
def test_export_calling_a_polymorphic_export(rows):
    blob = _nested_blob()
    x = np.arange(rows * 3, dtype=F32).reshape(rows, 3)
    exp = export.deserialize(blob)
    _same(exp.call(x), jexport.deserialize(blob).call(x))
    _same(toolkit.jit(lambda x: exp.call(x) * 2)(x), 2 * np.asarray(jexport.deserialize(blob).call(x)))


def test_export_calling_a_static_export():
    x = np.arange(12, dtype=F32).reshape(4, 3)
    inner = jexport.export(jax.jit(jnp.cos))(x)
    blob = bytes(jexport.export(jax.jit(lambda x: inner.call(x) * 3))(x).serialize())
    _same(export.deserialize(blob).call(x), jexport.deserialize(blob).call(x))


def test_inner_shape_errors_surface():
    blob = _nested_blob()
    with pytest.raises(TypeError, match=r"exported for shape \(c, 3\)"):
        export.deserialize(blob).call(np.ones((2, 4), F32))


def _fori(x):
    return jax.lax.fori_loop(0, x.shape[0], lambda i, acc: acc + x[i] * i, jnp.zeros(x.shape[1:], x.dtype))


def _fori_blob() -> bytes:
    exp = jexport.export(jax.jit(_fori), platforms=["cpu", "cuda"])(_spec("n, 3"))
    text = exp.mlir_module()
    assert 'jax.global_constant = "_platform_index"' in text and "stablehlo.while" in text
    return bytes(exp.serialize())


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_fori_loop_over_a_dimension_variable_in_a_multi_platform_module(rows):
    blob = _fori_blob()
    exp = export.deserialize(blob)
    assert exp.platforms == ("cpu", "cuda")
    x = np.arange(rows * 3, dtype=F32).reshape(rows, 3)
    want = jexport.deserialize(blob).call(x)
    _same(exp.call(x), want)
    _same(toolkit.jit(exp.call)(x), want)


def test_multi_platform_toolkit_export_calling_the_loop():
    # A toolkit export for two platforms calling JAX's two-platform module: the caller's platform
    # index is passed through; the result is read back by JAX.
    inner = export.deserialize(_fori_blob())
    outer = export.export(toolkit.jit(lambda x: inner.call(x) + tnp.sum(x)), platforms=("cpu", "cuda"))(
        np.ones((4, 3), F32))
    x = np.arange(12, dtype=F32).reshape(4, 3)
    want = np.asarray(jexport.deserialize(_fori_blob()).call(x)) + x.sum()
    _same(outer.call(x), want)
    _same(jexport.deserialize(bytes(outer.serialize())).call(x), want)


def test_polymorphic_multi_platform_toolkit_export_calling_the_loop():
    # The caller is itself polymorphic: the callee stays dynamic and the whole module is refined at call time.
    from toolkit.core.shape_poly import symbolic_shape

    inner = export.deserialize(_fori_blob())
    (m,) = symbolic_shape("m")
    outer = export.export(toolkit.jit(lambda x: inner.call(x) + tnp.sum(x)), platforms=("cpu", "cuda"))(
        toolkit.ShapeDtypeStruct((m, 3), F32))
    for rows in (2, 5):
        x = np.arange(rows * 3, dtype=F32).reshape(rows, 3)
        want = np.asarray(jexport.deserialize(_fori_blob()).call(x)) + x.sum()
        _same(outer.call(x), want)
        _same(jexport.deserialize(bytes(outer.serialize())).call(x), want)
