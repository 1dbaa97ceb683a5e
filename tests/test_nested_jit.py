"""Nested jit: a `jit` call of a private function (func.call), as JAX lowers it; inline=True inlines."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import export as texport


def g(x, y):
    return tnp.sin(x) * y


def jg(x, y):
    return jnp.sin(x) * y


jg.__name__ = "g"  # JAX names private functions after __name__: the same names on both sides


def f(x, y):
    return toolkit.jit(g)(x, y).sum() + toolkit.jit(g)(x * 2, y).sum()


def jf(x, y):
    return jax.jit(jg)(x, y).sum() + jax.jit(jg)(x * 2, y).sum()


X = np.linspace(0, 1, 4, dtype=np.float32)
Y = np.arange(4, dtype=np.float32)


def test_ir_has_one_private_function_called_twice_like_jax():
    text = toolkit.jit(f).lower(X, Y).as_text()
    jtext = jax.jit(jf).lower(X, Y).as_text()
    for t in (text, jtext):
        assert t.count("func.func private @g(") == 1
        assert t.count("call @g(") == 2


def test_inline_true_has_no_private_function():
    inner = toolkit.jit(g, inline=True)
    text = toolkit.jit(lambda x, y: inner(x, y) + 1).lower(X, Y).as_text()
    assert "func.func private" not in text and "call @" not in text
    assert "stablehlo.sine" in text


def test_names_follow_jax():
    def h(x):
        return toolkit.jit(g)(x, x) + toolkit.jit(g)(x.sum(), x.sum()) + toolkit.jit(lambda z: z * 3)(x)

    def jh(x):
        return jax.jit(jg)(x, x) + jax.jit(jg)(x.sum(), x.sum()) + jax.jit(lambda z: z * 3)(x)

    text, jtext = toolkit.jit(h).lower(X).as_text(), jax.jit(jh).lower(X).as_text()
    for name in ('@g(', '@g_0(', '@"<lambda>"('):
        assert ("func.func private " + name in text) and ("func.func private " + name in jtext), name


def test_results_grad_vmap_jvp_equal_jax():
    np.testing.assert_allclose(toolkit.jit(f)(X, Y), jax.jit(jf)(X, Y), rtol=1e-6)
    for a, b in zip(toolkit.grad(f, argnums=(0, 1))(X, Y), jax.grad(jf, argnums=(0, 1))(X, Y)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(toolkit.jit(toolkit.grad(f))(X, Y), jax.jit(jax.grad(jf))(X, Y), rtol=1e-6)
    xs, ys = np.stack([X, X + 1]), np.stack([Y, Y])
    np.testing.assert_allclose(toolkit.vmap(f)(xs, ys), jax.vmap(jf)(xs, ys), rtol=1e-6)
    np.testing.assert_allclose(toolkit.jit(toolkit.vmap(toolkit.grad(f)))(xs, ys),
                               jax.vmap(jax.grad(jf))(xs, ys), rtol=1e-6)
    (p, t), (jp, jt) = toolkit.jvp(f, (X, Y), (Y, X)), jax.jvp(jf, (X, Y), (Y, X))
    np.testing.assert_allclose(p, jp, rtol=1e-6)
    np.testing.assert_allclose(t, jt, rtol=1e-6)


def test_grad_keeps_function_boundaries():
    text = toolkit.jit(toolkit.grad(f)).lower(X, Y).as_text()
    # JAX 0.10 names the derived functions after the original (g, g_0); the name stack says jvp/transpose.
    assert 'func.func private @g(' in text and 'func.func private @g_0(' in text
    text = toolkit.jit(lambda x, y: toolkit.jvp(f, (x, y), (y, x))[1]).lower(X, Y).as_text(debug_info=True)
    assert 'func.func private @g(' in text and '"jit(<lambda>)/jvp(jit(g))"' in text


def test_make_jaxpr_shows_jit_equations_like_jax():
    text = str(toolkit.make_jaxpr(lambda x, y: toolkit.jit(g)(x, y))(X, Y))
    jtext = str(jax.make_jaxpr(lambda x, y: jax.jit(jg)(x, y))(X, Y))
    assert " = jit[name=" in text and " = jit[" in jtext
    assert "sin" in text


def test_static_arguments_and_closures():
    def scaled(x, n):
        return x * n

    inner = toolkit.jit(scaled, static_argnums=1)
    outer = toolkit.jit(lambda x: inner(x, 2) + inner(x, 3) + inner(x, 2))
    text = outer.lower(X).as_text()
    assert text.count("func.func private @scaled") == 2  # one per static value
    np.testing.assert_allclose(outer(X), X * 7)
    c = np.arange(4, dtype=np.float32) + 5  # a captured constant array

    def closes(x):
        return toolkit.jit(lambda y: y * c + x)(x)

    np.testing.assert_allclose(toolkit.jit(closes)(X), X * c + X, rtol=1e-6)
    np.testing.assert_allclose(toolkit.grad(lambda x: closes(x).sum())(X), c + 1)


def test_export_with_nested_jit_is_callable_by_jax():
    exp = texport.export(toolkit.jit(f))(toolkit.ShapeDtypeStruct((4,), np.float32),
                                        toolkit.ShapeDtypeStruct((4,), np.float32))
    assert "func.func private @g(" in exp.mlir_module()
    np.testing.assert_allclose(jax.export.deserialize(exp.serialize()).call(X, Y), jf(X, Y), rtol=1e-6)
    multi = texport.export(toolkit.jit(f), platforms=("cpu", "cuda"))(
        toolkit.ShapeDtypeStruct((4,), np.float32), toolkit.ShapeDtypeStruct((4,), np.float32))
    assert 'jax.global_constant = "_platform_index"' in multi.mlir_module().split("func.func private @g(")[1]
    np.testing.assert_allclose(jax.export.deserialize(multi.serialize()).call(X, Y), jf(X, Y), rtol=1e-6)


def test_polymorphic_nested_jit_passes_dimension_variables():
    def h(x):
        return tnp.sin(x) * x.shape[0]

    outer = toolkit.jit(lambda x: toolkit.jit(h)(x) + 1)
    spec = toolkit.ShapeDtypeStruct(texport.symbolic_shape("n"), np.float32)
    lowered = outer.lower(spec)
    private = lowered.as_text().split("func.func private @h(")[1]
    assert private.startswith('%arg0: tensor<i32> {jax.global_constant = "n"}')
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(lowered.compile()(x), np.sin(x) * 5 + 1, rtol=1e-6)
    exp = texport.export(outer)(spec)
    np.testing.assert_allclose(jax.export.deserialize(exp.serialize()).call(x), np.sin(x) * 5 + 1, rtol=1e-6)
    np.testing.assert_allclose(exp.call(x[:3]), np.sin(x[:3]) * 3 + 1, rtol=1e-6)


def _mesh():
    devices = toolkit.devices()
    if len(devices) < 8:
        pytest.skip("needs TOOLKIT_NUM_CPU_DEVICES=8")
    from toolkit.shard import Mesh
    return Mesh(np.array(devices[:8]), ("x",))


def test_shard_map_body_and_inner_shardings():
    from toolkit.shard import NamedSharding, PartitionSpec as P
    mesh = _mesh()

    def body(x):
        return toolkit.jit(lambda y: tnp.sin(y) * 2)(x) + 1

    sm = toolkit.jit(toolkit.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    x = np.arange(16, dtype=np.float32)
    assert "func.call @" in sm.lower(x).as_text()
    np.testing.assert_allclose(sm(x), np.sin(x) * 2 + 1, rtol=1e-5, atol=1e-6)
    inner = toolkit.jit(lambda y: y * 2, in_shardings=NamedSharding(mesh, P("x")),
                        out_shardings=NamedSharding(mesh, P()))
    outer = toolkit.jit(lambda y: inner(y) + 1)
    text = outer.lower(x).as_text()
    assert text.count("sharding_constraint") == 2 and 'func.func private @"<lambda>"' in text
    np.testing.assert_allclose(outer(x), x * 2 + 1)


def test_numpy_functions_jitted_inside_jit():
    from toolkit.shard import NamedSharding, PartitionSpec as P  # noqa: F401
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = toolkit.jit(lambda a: toolkit.jit(tnp.matmul)(a, a.T) + toolkit.jit(tnp.tanh)(a).sum())(a)
    np.testing.assert_allclose(out, a @ a.T + np.tanh(a).sum(), rtol=1e-5)


def test_pipeline_report_and_refinement_keep_private_functions(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_DUMP_IR_TO", str(tmp_path))
    toolkit.jit(f).lower(X, Y).compile()
    dumped = "".join(p.read_text() for p in tmp_path.rglob("*.mlir"))
    assert "func.func private @g(" in dumped
