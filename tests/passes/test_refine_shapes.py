"""toolkit-refine-shapes from Python: behaviour, options and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.passes import PassOptionError, PipelineError, list_passes, parse_pipeline, run_pipeline
from toolkit.passes.refine import folding, rules
from toolkit.passes.refine_shapes import RefineShapesPass


def _module(text: str) -> ir.Module:
    with make_context():
        return ir.Module.parse(text)


def _refine(text: str, options: str = "") -> str:
    module = _module(text)
    run_pipeline(module, f"builtin.module(toolkit-refine-shapes{{{options}}})" if options
                 else "builtin.module(toolkit-refine-shapes)")
    return str(module)


POLY = """
func.func @main(%x: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<3x4xf32>) -> tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %n = stablehlo.multiply %d, %two : tensor<i32>
  %nr = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<2> : tensor<1xi32>
  %shape = stablehlo.concatenate %nr, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %r = stablehlo.dynamic_reshape %x, %shape : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  %back = stablehlo.reshape %r : (tensor<?x2xf32>) -> tensor<3x4xf32>
  %cast = stablehlo.convert %back : (tensor<3x4xf32>) -> tensor<?x4xf32>
  return %cast : tensor<?x4xf32>
}
"""


def test_static_result_and_folded_arithmetic():
    text = _refine(POLY)
    assert "func.func @main(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32>" in text
    assert "stablehlo.reshape %arg0 : (tensor<3x4xf32>) -> tensor<6x2xf32>" in text
    assert "get_dimension_size" not in text and "dynamic_reshape" not in text and "multiply" not in text


def test_stablehlo_mode_keeps_dynamic_ops():
    text = _refine(POLY, "mode=stablehlo")
    assert "stablehlo.dynamic_reshape" in text and "-> tensor<6x2xf32>" in text


def test_options_round_trip_and_listing():
    pipeline = parse_pipeline("builtin.module(toolkit-refine-shapes{enable-assertions=false "
                              "validate-static-shapes=false mode=stablehlo})")
    assert str(pipeline) == ("builtin.module(toolkit-refine-shapes{enable-assertions=false "
                             "validate-static-shapes=false mode=stablehlo})")
    assert RefineShapesPass().pipeline_text() == "toolkit-refine-shapes"
    names = {p.name: p for p in list_passes()}
    assert {"toolkit-refine-shapes", "toolkit-bind-shapes"} <= set(names)
    assert any(row[0] == "enable-assertions" for row in names["toolkit-refine-shapes"].options)


def test_bad_option_value():
    with pytest.raises(PassOptionError, match="mode"):
        parse_pipeline("builtin.module(toolkit-refine-shapes{mode=fast})")


def test_false_assertion_message_is_filled():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<2xf32>) -> tensor<i32>
      %c = stablehlo.constant dense<4> : tensor<i32>
      %ok = stablehlo.compare GE, %d, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.custom_call @shape_assertion(%ok, %d, %c) {error_message = "b = {0} < {1}", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
      return %x : tensor<2xf32>
    }"""
    with pytest.raises(PipelineError, match=r"b = 2 < 4"):
        _refine(text)
    assert "shape_assertion" not in _refine(text, "enable-assertions=false")


def test_dynamic_shape_left_fails_unless_allowed():
    text = """
    func.func @main(%n: tensor<1xi32>) -> tensor<?xf32> {
      %i = stablehlo.dynamic_iota %n, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
      return %i : tensor<?xf32>
    }"""
    with pytest.raises(PipelineError, match="dynamic shapes after refinement.*dynamic_iota"):
        _refine(text)
    assert "tensor<?xf32>" in _refine(text, "validate-static-shapes=false")


def test_ill_formed_operands_fail_with_verifier_message():
    text = """
    func.func @main(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
      %0 = stablehlo.abs %a : (tensor<3xf32>) -> tensor<?xf32>
      %1 = stablehlo.abs %b : (tensor<4xf32>) -> tensor<?xf32>
      %2 = stablehlo.add %0, %1 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      return %2 : tensor<?xf32>
    }"""
    with pytest.raises(PipelineError, match="requires the same shape"):
        _refine(text)


def test_callee_cloned_per_key_in_jax_mode_and_error_in_stablehlo_mode():
    text = """
    module {
      func.func @main(%x: tensor<2xf32>, %y: tensor<3xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
        %a = stablehlo.convert %x : (tensor<2xf32>) -> tensor<?xf32>
        %b = stablehlo.convert %y : (tensor<3xf32>) -> tensor<?xf32>
        %0 = call @id(%a) : (tensor<?xf32>) -> tensor<?xf32>
        %1 = call @id(%b) : (tensor<?xf32>) -> tensor<?xf32>
        return %0, %1 : tensor<?xf32>, tensor<?xf32>
      }
      func.func private @id(%x: tensor<?xf32>) -> tensor<?xf32> {
        %0 = stablehlo.negate %x : tensor<?xf32>
        return %0 : tensor<?xf32>
      }
    }"""
    refined = _refine(text)
    assert "-> (tensor<2xf32>, tensor<3xf32>)" in refined
    assert refined.count("func.func private @id") == 2
    with pytest.raises(PipelineError, match="incorrect number of operands|incompatible refinement keys"):
        _refine(text, "mode=stablehlo")


def test_wrong_reshape_size_names_the_counts():
    text = """
    func.func @main(%x: tensor<5x4xf32>) -> tensor<?x8xf32> {
      %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<5x4xf32>) -> tensor<i32>
      %two = stablehlo.constant dense<2> : tensor<i32>
      %h = stablehlo.divide %d, %two : tensor<i32>
      %hr = stablehlo.reshape %h : (tensor<i32>) -> tensor<1xi32>
      %eight = stablehlo.constant dense<8> : tensor<1xi32>
      %s = stablehlo.concatenate %hr, %eight, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %r = stablehlo.dynamic_reshape %x, %s : (tensor<5x4xf32>, tensor<2xi32>) -> tensor<?x8xf32>
      return %r : tensor<?x8xf32>
    }"""
    with pytest.raises(PipelineError, match=r"number of output elements \(16\).*\(20\)"):
        _refine(text)


def test_fold_helpers():
    with make_context(), ir.Location.unknown():
        i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        attr = folding.array_to_attribute(np.array(-7, np.int32), i32)
        assert int(folding.attribute_to_array(attr, i32)) == -7
        assert folding.numpy_dtype(ir.F32Type.get()) is None
    assert rules.shape_of(ir.F32Type.get(make_context())) is None


def test_runs_only_on_modules():
    module = _module("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> { return %x : tensor<2xf32> }")
    with pytest.raises(PipelineError):
        run_pipeline(module, "builtin.module(func.func(toolkit-refine-shapes))")
