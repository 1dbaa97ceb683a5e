"""toolkit.export.convert / check_compat: calling conventions, StableHLO targets, static and plain modules.

JAX 0.10.2 is the oracle where it reads the result (skipped when jax is not importable).
"""

from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as _stablehlo

import toolkit
from toolkit import export, lax
from toolkit.core.primitive import Primitive
from toolkit.core.shape_poly import symbolic_shape
from toolkit.export import compat, convert as conversions
from toolkit.lowering.registry import register_lowering

F32 = np.float32
X = np.arange(12, dtype=F32).reshape(4, 3) / 7

platform_p = Primitive("convert_test_platform_dependent", shape_rule=lambda x: x)


@register_lowering(platform_p, platforms=["cpu"])
def _cpu(ctx, x):
    return _stablehlo.add(x, x)


@register_lowering(platform_p, platforms=["cuda"])
def _cuda(ctx, x):
    return _stablehlo.multiply(x, x)


def _f(x, y):
    return {"out": platform_p.bind(toolkit.numpy.tanh(x)) * 2 + y}


def _exports():
    b, = symbolic_shape("b")
    spec = toolkit.ShapeDtypeStruct((4, 3), F32)
    poly = toolkit.ShapeDtypeStruct((b, 3), F32)
    f = toolkit.jit(_f)
    return {
        "static": export.export(f)(spec, spec),
        "poly_multi": export.export(f, platforms=("cuda", "cpu"))(poly, poly),
        "topk": export.export(toolkit.jit(lambda x: lax.top_k(x, 2)[0]))(toolkit.ShapeDtypeStruct((4, 3), F32)),
    }


EXPORTS = _exports()


def _args(name):
    return (X,) if name == "topk" else (X, X + 1)


def _expected(name):
    exp = EXPORTS[name]
    return [np.asarray(o) for o in toolkit.tree_util.tree_leaves(exp.call(*_args(name)))]


def _assert_same(got, want):
    for g, w in zip(toolkit.tree_util.tree_leaves(got), want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_10_to_9_is_read_and_called_by_jax(name):
    jexport = pytest.importorskip("jax.export")
    v9 = conversions.convert(EXPORTS[name].serialize(), calling_convention=9)
    assert v9.calling_convention_version == 9
    blob = bytes(v9.serialize())
    theirs = jexport.deserialize(blob)
    assert theirs.calling_convention_version == 9
    _assert_same(theirs.call(*_args(name)), _expected(name))
    _assert_same(export.deserialize(blob).call(*_args(name)), _expected(name))


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_10_to_8_to_10_round_trip(name):
    exp = EXPORTS[name]
    v8 = conversions.convert(exp, calling_convention=8)
    assert v8.calling_convention_version == 8
    assert "jax.global_constant" not in v8.mlir_module()
    back = conversions.convert(export.deserialize(v8.serialize()), calling_convention=10)
    assert back.mlir_module() == exp.mlir_module()
    _assert_same(back.call(*_args(name)), _expected(name))
    jexport = pytest.importorskip("jax.export")
    _assert_same(jexport.deserialize(bytes(back.serialize())).call(*_args(name)), _expected(name))


def test_static_export_and_plain_module_run_directly():
    from toolkit.ir.serialization import write_module
    from toolkit.runtime import standalone

    exp = EXPORTS["poly_multi"]
    static = conversions.convert(exp, static_args="b=4")
    assert [a.shape for a in static.in_avals] == [(4, 3), (4, 3)] and static.platforms == ("cpu",)
    assert "stablehlo.case" not in static.mlir_module() and "_wrapped" not in static.mlir_module()
    _assert_same(static.call(X, X + 1), _expected("poly_multi"))
    same = conversions.convert(exp, static_args="f32[4,3],tensor<4x3xf32>")
    assert same.mlir_module() == static.mlir_module()
    cuda = conversions.convert(exp, static_args="b=4", platform="cuda")
    assert "stablehlo.multiply %1, %1" in cuda.mlir_module() or "multiply" in cuda.mlir_module()
    vhlo = conversions.convert(exp, static_args="b=4", plain=True)
    assert conversions.artifact_version(vhlo) == conversions.artifact_version(exp.mlir_module_serialized)
    module = conversions.plain_module(exp, "b=4")
    assert "jax.uses_shape_polymorphism" not in str(module)
    out = standalone.execute(standalone.compile_module(write_module(module, "bytecode")), [X, X + 1])
    _assert_same(out, _expected("poly_multi"))


def test_plain_module_runs_through_toolkit_run(tmp_path, capsys):
    from toolkit.tools.run import main

    path = tmp_path / "plain.vhlo"
    path.write_bytes(conversions.convert(EXPORTS["poly_multi"], static_args="b=2", plain=True))
    assert main([str(path), "--arg", "[[0, 0, 0], [1, 1, 1]]", "--arg", "1"]) == 0
    out = capsys.readouterr().out
    want = np.tanh(np.array([[0, 0, 0], [1, 1, 1]], F32)) * 4 + 1
    assert f"result[0]: float32[2, 3] = {np.array2string(want, separator=', ')}" in out


def test_impossible_conversions_name_the_feature():
    exp = EXPORTS["topk"]
    with pytest.raises(conversions.ConversionError, match="stablehlo.composite") as info:
        conversions.convert(exp, stablehlo_target="0.15.0")
    assert info.value.feature == "stablehlo.composite"
    with pytest.raises(conversions.ConversionError, match="older than the oldest"):
        conversions.convert(exp, stablehlo_target="0.8.0")
    with pytest.raises(conversions.ConversionError, match="calling conventions"):
        conversions.convert(exp, calling_convention=7)
    with pytest.raises(ValueError, match="no value for the dimension variable"):
        conversions.convert(EXPORTS["poly_multi"], static_args="n=3")
    with pytest.raises(ValueError, match=r"'b' = 0|Expected value >= 1"):
        conversions.convert(EXPORTS["poly_multi"], static_args="b=0")
    old = conversions.convert(exp, stablehlo_target="1.0.0")
    assert conversions.artifact_version(old.mlir_module_serialized) == "1.0.0"
    np.testing.assert_allclose(np.asarray(old.call(X)), _expected("topk")[0])


def test_effects_cannot_go_to_8():
    exp = EXPORTS["static"]
    effect = export.Effect("<class 'jax._src.debugging.OrderedDebugEffect'>")
    import dataclasses
    with_effects = dataclasses.replace(exp, ordered_effects=(effect,))
    with pytest.raises(conversions.ConversionError, match="ordered effects") as info:
        conversions.convert(with_effects, calling_convention=8)
    assert "effect tokens" in info.value.feature
    report = compat.check_compat(with_effects, "cc=8")
    assert not report.readable and not report.convertible and "effect" in report.blocking_feature


CONSUMERS = ["cc=10", "cc=9", "cc=8", "cc=7", "cc=9..10", "stablehlo=1.15.0", "stablehlo=1.0.0",
             "stablehlo=0.15.0", "cc=9,stablehlo=1.8.0", "cc=8,stablehlo=0.9.0", "cc=10,stablehlo=0.8.0"]


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_check_compat_agrees_with_convert(name):
    exp = EXPORTS[name]
    for text in CONSUMERS:
        consumer = compat.parse_consumer(text)
        report = compat.check_compat(exp, consumer)
        conversion = {}
        if consumer.cc_max is not None and not consumer.cc_min <= exp.calling_convention_version <= consumer.cc_max:
            conversion["calling_convention"] = min(max(exp.calling_convention_version, consumer.cc_min),
                                                   consumer.cc_max)
        if consumer.stablehlo is not None and conversions.parse_version(consumer.stablehlo) < \
                conversions.parse_version(conversions.artifact_version(exp.mlir_module_serialized)):
            conversion["stablehlo_target"] = consumer.stablehlo
        try:
            converted = conversions.convert(exp, **conversion)
            can = True
        except conversions.ConversionError:
            can = False
        assert report.convertible == can, (name, text, report)
        assert report.readable == (not conversion), (name, text, report)
        if can:
            assert compat.check_compat(converted, consumer).readable, (name, text)
    assert not compat.check_compat(EXPORTS["topk"], "stablehlo=0.15.0").convertible
    assert compat.check_compat(EXPORTS["topk"], "stablehlo=0.15.0").blocking_feature == "stablehlo.composite"


def test_consumer_parsing_errors():
    for bad in ("", "cc", "cc=x", "stablehlo=1.8", "jax=0.4", "cc=10..9"):
        with pytest.raises(ValueError):
            compat.parse_consumer(bad)
