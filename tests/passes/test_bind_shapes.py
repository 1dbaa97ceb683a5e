"""toolkit-bind-shapes: argument types for @main, same syntax and errors as stablehlo-refine-arguments."""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir, passmanager

from toolkit.ir.context import make_context
from toolkit.passes import PipelineError, run_pipeline
from toolkit.passes.bind_shapes import BindShapesPass, split_types

MAIN = """
func.func @main(%p: tensor<i32>, %t: !stablehlo.token, %x: tensor<?x4xf32>) -> (!stablehlo.token, tensor<?x4xf32>) {
  %0 = stablehlo.abs %x : tensor<?x4xf32>
  return %t, %0 : !stablehlo.token, tensor<?x4xf32>
}"""
TYPES = "tensor<i32>,!stablehlo.token,tensor<5x4xf32>"


def _bound(pipeline: str, text: str = MAIN) -> str:
    with make_context():
        module = ir.Module.parse(text)
    if pipeline.startswith("stablehlo"):
        with module.context:
            passmanager.PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
    else:
        run_pipeline(module, f"builtin.module({pipeline})")
    return str(module)


def test_same_output_as_refine_arguments():
    assert _bound(f"toolkit-bind-shapes{{types={TYPES}}}") == _bound(f"stablehlo-refine-arguments{{types={TYPES}}}")


def test_without_wrappers():
    text = _bound(f"toolkit-bind-shapes{{types={TYPES} wrap=false}}")
    assert "custom_call" not in text and "%arg2: tensor<5x4xf32>" in text


def test_bind_then_refine_is_static():
    text = _bound(f"toolkit-bind-shapes{{types={TYPES}}}, toolkit-refine-shapes")
    assert "?" not in text and "-> (!stablehlo.token, tensor<5x4xf32>)" in text


@pytest.mark.parametrize("types, message", [
    ("tensor<i32>", "number of refinements must match number of op operands 1 vs 3"),
    ("tensor<i32>,tensor<i32>,tensor<5x4xf32>", "argument 1, refinement must be a token"),
    ("tensor<i32>,!stablehlo.token,tensor<5x4xi32>", "refinement element types must match"),
    ("tensor<i32>,!stablehlo.token,tensor<5xf32>", "refinement rank must match operand rank"),
    ("tensor<i32>,!stablehlo.token,tensor<5x3xf32>", "dimension sizes must match for static dimensions"),
    ("tensor<i32>,!stablehlo.token,tensor<*xf32>", "refinement must be ranked"),
    ("!not.a_type", "Invalid type string: !not.a_type"),
])
def test_errors(types, message):
    with pytest.raises(PipelineError, match=message):
        _bound(f"toolkit-bind-shapes{{types={types}}}")


def test_split_types_respects_brackets():
    assert split_types("tensor<2x?xf32>, !quant.uniform<i8:f32, 1.0>,tensor<i1>") == [
        "tensor<2x?xf32>", "!quant.uniform<i8:f32, 1.0>", "tensor<i1>"]
    assert BindShapesPass(types="tensor<i32>").pipeline_text() == "toolkit-bind-shapes{types=tensor<i32>}"
