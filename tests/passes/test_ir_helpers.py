"""toolkit.ir helpers: walking, replacing, attributes, symbols, builders, serialization."""

from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

from toolkit.ir import attributes, builders, serialization, symbols, walk
from toolkit.ir.context import make_context

TEXT = """
func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<2xf32>
  %0 = stablehlo.add %x, %c : tensor<2xf32>
  %1 = stablehlo.transpose %0, dims = [0] : (tensor<2xf32>) -> tensor<2xf32>
  %2 = call @helper(%1) : (tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}
func.func private @helper(%y: tensor<2xf32>) -> tensor<2xf32> {
  return %y : tensor<2xf32>
}
"""


@pytest.fixture
def module() -> ir.Module:
    with make_context():
        return ir.Module.parse(TEXT)


def test_walk_and_ops_named(module) -> None:
    names = [op.name for op in walk.walk_ops(module)]
    assert names[0] == "builtin.module" and names.count("func.func") == 2
    assert [op.name for op in walk.ops_named(module, "stablehlo.add")] == ["stablehlo.add"]
    assert len(walk.ops_named(module, {"func.return", "func.call"})) == 3
    post = [op.name for op in walk.walk_ops(module, post_order=True)]
    assert post[-1] == "builtin.module"


def test_replace_op_results_and_users(module) -> None:
    add = walk.ops_named(module, "stablehlo.add")[0]
    x = add.operands[0]
    assert [u.name for u in walk.users(add.result)] == ["stablehlo.transpose"]
    walk.replace_op_results(add, [x])
    assert "stablehlo.add" not in str(module)
    assert module.operation.verify()
    transpose = walk.ops_named(module, "stablehlo.transpose")[0]
    with pytest.raises(ValueError, match="has 1 results, got 2"):
        walk.replace_op_results(transpose, [x, x])


def test_attributes_round_trip(module) -> None:
    transpose = walk.ops_named(module, "stablehlo.transpose")[0]
    assert attributes.get_attr(transpose, "permutation") == [0]
    assert attributes.get_attr(transpose, "missing", "default") == "default"
    for value in (True, 7, 2.5, "text", [1, 2], {"a": 1}, ["x", 2.0]):
        attributes.set_attr(transpose, "toolkit.test", value)
        assert attributes.get_attr(transpose, "toolkit.test") == value
    constant = walk.ops_named(module, "stablehlo.constant")[0]
    np.testing.assert_array_equal(attributes.get_attr(constant, "value"), np.ones(2, np.float32))
    with pytest.raises(TypeError, match="cannot make an MLIR attribute from object"):
        with module.context:
            attributes.to_attribute(object())


def test_symbols(module) -> None:
    main = symbols.lookup_function(module, "main")
    assert symbols.symbol_name(main) == "main"
    assert symbols.lookup_symbol(module, "nope") is None
    assert [symbols.symbol_name(f) for f in symbols.functions(module)] == ["main", "helper"]
    with pytest.raises(KeyError, match=r"no function @nope in module \(functions: main, helper\)"):
        symbols.lookup_function(module, "nope")
    copy = symbols.clone_function(main)
    again = symbols.clone_function(main)
    assert (symbols.symbol_name(copy), symbols.symbol_name(again)) == ("main_clone", "main_clone_1")
    assert attributes.get_attr(copy, "sym_visibility") == "private"
    assert module.operation.verify()
    assert symbols.unique_symbol_name(module, "fresh") == "fresh"


def test_builders(module) -> None:
    add = walk.ops_named(module, "stablehlo.add")[0]
    with builders.insert_before(add):
        c = builders.constant(np.arange(2, dtype=np.float32))
        z = builders.splat_constant(0.0, add.result.type)
        total = builders.build("stablehlo.add", [c, z], [add.result.type])
    assert builders.is_splat_constant(z, 0.0)
    assert not builders.is_splat_constant(c, 0.0)
    assert not builders.is_splat_constant(add.operands[0], 0.0)
    assert total.operation.name == "stablehlo.add"
    with module.context:
        assert str(builders.tensor_type([2, 3], ir.F32Type.get())) == "tensor<2x3xf32>"
        with pytest.raises(TypeError, match="supports integer and float"):
            builders.splat_constant(1, builders.tensor_type([2], ir.ComplexType.get(ir.F32Type.get())))
    assert module.operation.verify()


def test_serialization_formats(module) -> None:
    context = make_context()
    for kind in ("text", "bytecode", "vhlo"):
        data = serialization.write_module(module, kind)
        assert serialization.detect_format(data) == kind
        again = serialization.read_module(data, context)
        assert str(again) == str(module)
    old = serialization.write_module(module, "vhlo", target_version="1.0.0")
    assert str(serialization.read_module(old, context)) == str(module)
    with pytest.raises(ValueError, match="cannot serialize for StableHLO 99.0.0"):
        serialization.write_module(module, "vhlo", target_version="99.0.0")
    with pytest.raises(ValueError, match="cannot read the MLIR bytecode"):
        serialization.read_module(b"ML\xefR\x00garbage", context)
    with pytest.raises(ValueError, match="neither MLIR text"):
        serialization.read_module(b"\xff\xfe\x00", context)
    with pytest.raises(ValueError, match="unknown output format"):
        serialization.write_module(module, "json")  # type: ignore[arg-type]


def test_quant_types_parse() -> None:
    module = serialization.read_module(
        "func.func @q(%x: tensor<2x!quant.uniform<i8:f32, 1.0>>) -> tensor<2x!quant.uniform<i8:f32, 1.0>> {\n"
        "  return %x : tensor<2x!quant.uniform<i8:f32, 1.0>>\n}", make_context())
    assert "quant.uniform" in str(module)
