"""Exports made by toolkit run in JAX with toolkit's results, and JAX's exports run in toolkit.

Blobs are generated at test time (none are committed). The same functions
are exported by both sides and compared field by field and signature by
signature (``@main``'s arguments, results and module attributes).
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import export as jexport  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit.core.avals import ShapeDtypeStruct  # noqa: E402
from toolkit.export import calling_convention, deserialize, export  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(F32)


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _assert_close(a, b):
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def _signature(text_module_blob: bytes):
    exp_like = type("E", (), {"mlir_module_serialized": text_module_blob})()
    sig = calling_convention.main_signature_of_exported(exp_like)
    attrs = dict(sig.module_attributes)
    return ([(a.kind, a.type, a.name) for a in sig.arguments],
            [(r.kind, r.type, r.name) for r in sig.results],
            {k: attrs.get(k) for k in ("jax.uses_shape_polymorphism", "mhlo.num_partitions", "mhlo.num_replicas")},
            sig.wrapped)


CASES = {
    "elementwise": (lambda x, y: jnp.sin(x) * 2 + y, lambda x, y: tnp.sin(x) * 2 + y,
                    lambda: ((_rand(4), _rand(4)), {})),
    "matmul_tuple": (lambda a, b: (jnp.tanh(a @ b), a.sum()), lambda a, b: (tnp.tanh(a @ b), a.sum()),
                     lambda: ((_rand(2, 3), _rand(3, 5)), {})),
    "pytree_kwargs": (lambda p, *, s: {"y": p["w"] * s, "z": [p["b"] + 1.0]},
                      lambda p, *, s: {"y": p["w"] * s, "z": [p["b"] + 1.0]},
                      lambda: (({"w": _rand(3), "b": _rand(2)},), {"s": np.float32(1.5)})),
    "unused_argument": (lambda x, unused: x * 3.0, lambda x, unused: x * 3.0,
                        lambda: ((_rand(2), _rand(5)), {})),
}


def _jax_export(fun, args, kwargs, **options):
    return jexport.export(jax.jit(fun), **options)(*args, **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_fields_and_signature_as_jax(name):
    jfun, tfun, make = CASES[name]
    args, kwargs = make()
    jexp = _jax_export(jfun, args, kwargs)
    texp = export(toolkit.jit(tfun))(*args, **kwargs)
    jview = jexport.deserialize(bytes(texp.serialize()))  # JAX's reading of toolkit's blob
    assert jview.fun_name == jexp.fun_name or name  # names differ only by the lambda's spelling
    assert str(jview.in_tree) == str(jexp.in_tree)
    assert str(jview.out_tree) == str(jexp.out_tree)
    assert jview.in_avals == jexp.in_avals and jview.out_avals == jexp.out_avals
    assert jview.module_kept_var_idx == jexp.module_kept_var_idx
    assert jview.platforms == jexp.platforms and jview.nr_devices == jexp.nr_devices
    assert jview.uses_global_constants == jexp.uses_global_constants
    assert jview.calling_convention_version == jexp.calling_convention_version
    assert jview._in_named_shardings == jexp._in_named_shardings
    assert jview._out_named_shardings == jexp._out_named_shardings
    assert _signature(texp.mlir_module_serialized) == _signature(jexp.mlir_module_serialized)


@pytest.mark.parametrize("name", sorted(CASES))
def test_toolkit_blobs_run_in_jax(name):
    _, tfun, make = CASES[name]
    args, kwargs = make()
    texp = export(toolkit.jit(tfun))(*args, **kwargs)
    expected = toolkit.jit(tfun)(*args, **kwargs)
    got = jexport.deserialize(bytes(texp.serialize())).call(*args, **kwargs)
    _assert_close(got, expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_blobs_run_in_toolkit(name):
    jfun, _, make = CASES[name]
    args, kwargs = make()
    jexp = _jax_export(jfun, args, kwargs)
    expected = jexp.call(*args, **kwargs)
    texp = deserialize(bytes(jexp.serialize()))
    _assert_close(texp.call(*args, **kwargs), expected)
    inside = toolkit.jit(lambda *a, **k: texp.call(*a, **k))(*args, **kwargs)
    _assert_close(inside, expected)


def test_jax_writes_the_same_module_under_both_conventions():
    x = _rand(3)
    modules = {}
    previous = jax.config.jax_export_calling_convention_version
    try:
        for version in (9, 10):
            jax.config.update("jax_export_calling_convention_version", version)
            modules[version] = _jax_export(lambda x: jnp.cos(x) + 1, (x,), {}).mlir_module_serialized
    finally:
        jax.config.update("jax_export_calling_convention_version", previous)
    assert modules[9] == modules[10]


@pytest.mark.parametrize("version", [9, 10])
def test_calling_conventions_both_ways(version):
    x = _rand(3)
    previous = jax.config.jax_export_calling_convention_version
    jax.config.update("jax_export_calling_convention_version", version)
    try:
        jexp = _jax_export(lambda x: jnp.cos(x) + 1, (x,), {})
    finally:
        jax.config.update("jax_export_calling_convention_version", previous)
    texp = export(toolkit.jit(lambda x: tnp.cos(x) + 1), calling_convention_version=version)(x)
    assert jexp.calling_convention_version == texp.calling_convention_version == version
    assert _signature(texp.mlir_module_serialized) == _signature(jexp.mlir_module_serialized)
    _assert_close(deserialize(bytes(jexp.serialize())).call(x), jexp.call(x))
    _assert_close(jexport.deserialize(bytes(texp.serialize())).call(x), texp.call(x))


def test_multi_platform_both_ways():
    x = _rand(4)
    jexp = _jax_export(lambda x: jax.lax.platform_dependent(x, cpu=lambda x: x + 1, cuda=lambda x: x * 2),
                       (x,), {}, platforms=("cuda", "cpu"))
    texp = deserialize(bytes(jexp.serialize()))
    assert texp.platforms == ("cuda", "cpu") and texp.uses_global_constants
    _assert_close(texp.call(x), x + 1)
    _assert_close(toolkit.jit(lambda x: texp.call(x) * 2)(x), (x + 1) * 2)

    ours = export(toolkit.jit(lambda x: tnp.sin(x) * 2), platforms=("cpu", "cuda"))(x)
    theirs = _jax_export(lambda x: jnp.sin(x) * 2, (x,), {}, platforms=("cpu", "cuda"))
    assert _signature(ours.mlir_module_serialized) == _signature(theirs.mlir_module_serialized)
    jview = jexport.deserialize(bytes(ours.serialize()))
    assert jview.uses_global_constants and jview.platforms == ("cpu", "cuda")
    _assert_close(jview.call(x), np.sin(x) * 2)


def test_symbolic_jax_blobs_run_in_toolkit():
    (a,) = jexport.symbolic_shape("a")
    jexp = _jax_export(lambda x: jnp.sin(x) * 2, (jax.ShapeDtypeStruct((a, 3), F32),), {})
    texp = deserialize(bytes(jexp.serialize()))
    assert texp.uses_global_constants
    for rows in (1, 5):
        x = _rand(rows, 3)
        _assert_close(texp.call(x), jexp.call(x))
        _assert_close(toolkit.jit(lambda x: texp.call(x))(x), jexp.call(x))


def test_symbolic_constraints_are_checked():
    a, b = jexport.symbolic_shape("a, b", constraints=("a >= b",))
    jexp = _jax_export(lambda x, y: jnp.concatenate([x, y]),
                       (jax.ShapeDtypeStruct((a,), F32), jax.ShapeDtypeStruct((b,), F32)), {})
    texp = deserialize(bytes(jexp.serialize()))
    _assert_close(texp.call(np.ones(4, F32), np.zeros(2, F32)), np.array([1, 1, 1, 1, 0, 0], F32))
    with pytest.raises(ValueError, match="a >= b.*found -1"):
        texp.call(np.ones(1, F32), np.zeros(2, F32))


def test_toolkit_polymorphic_export_runs_in_jax():
    from toolkit.core.shape_poly import symbolic_shape
    from toolkit.export import calling_convention

    (b,) = symbolic_shape("b", constraints=("b >= 2",))
    w = np.arange(12, dtype=F32).reshape(4, 3) / 10

    def mlp(x):
        return tnp.tanh(x @ w).sum(-1)

    texp = export(toolkit.jit(mlp))(ShapeDtypeStruct((b, 4), F32))
    assert texp.uses_global_constants and str(texp.in_avals[0].shape) == "(b, 4)"
    ja, = jexport.symbolic_shape("b", constraints=("b >= 2",))
    jexp = _jax_export(lambda x: jnp.tanh(x @ w).sum(-1), (jax.ShapeDtypeStruct((ja, 4), F32),), {})
    ours = calling_convention.main_signature_of_exported(texp)
    theirs = calling_convention.main_signature_of_exported(deserialize(bytes(jexp.serialize())))
    assert [a.kind for a in ours.arguments] == [a.kind for a in theirs.arguments] == ["array"]
    loaded = jexport.deserialize(bytearray(texp.serialize()))
    for batch in (2, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(F32)
        _assert_close(loaded.call(x), np.tanh(x @ w).sum(-1))
        _assert_close(texp.call(x), np.tanh(x @ w).sum(-1))
    with pytest.raises(Exception, match="b >= 2|refining shapes"):  # jax puts the assertion text in the cause
        loaded.call(np.ones((1, 4), F32))
    with pytest.raises(ValueError, match="Constraint 'b >= 2' is not satisfied"):
        texp.call(np.ones((1, 4), F32))


def test_shape_assertions_can_be_disabled():
    import dataclasses

    from toolkit.export import DisabledSafetyCheck

    a, b = jexport.symbolic_shape("a, b", constraints=("a >= b",))
    jexp = _jax_export(lambda x, y: jnp.concatenate([x, y]),
                       (jax.ShapeDtypeStruct((a,), F32), jax.ShapeDtypeStruct((b,), F32)), {})
    texp = dataclasses.replace(deserialize(bytes(jexp.serialize())),
                               disabled_safety_checks=(DisabledSafetyCheck.shape_assertions(),))
    _assert_close(texp.call(np.ones(1, F32), np.zeros(2, F32)), np.array([1, 0, 0], F32))
