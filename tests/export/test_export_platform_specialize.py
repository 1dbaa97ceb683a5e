"""``toolkit-platform-specialize`` through its Python API and the pipeline runner."""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.passes.pipeline import parse_pipeline
from toolkit.passes.platform_specialize import platform_index_position, specialize_platform

MODULE = """
module {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<4xf32>)
      -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.case"(%arg0) ({
      %1 = stablehlo.add %arg1, %arg1 : tensor<4xf32>
      stablehlo.return %1 : tensor<4xf32>
    }, {
      %1 = stablehlo.multiply %arg1, %arg1 : tensor<4xf32>
      stablehlo.return %1 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def _parse(text=MODULE):
    context = make_context()
    with context, ir.Location.unknown():
        return ir.Module.parse(text)


@pytest.mark.parametrize("index,kept_op", [(0, "stablehlo.add"), (1, "stablehlo.multiply"),
                                           (7, "stablehlo.multiply")])  # out of range -> last branch
def test_specialize_keeps_one_branch(index, kept_op):
    module = _parse()
    assert platform_index_position(module.operation) == 0
    kept = specialize_platform(module.operation, index)
    assert [(k.branch, k.num_branches) for k in kept] == [(min(index, 1), 2)]
    assert module.operation.verify()
    text = str(module)
    assert "stablehlo.case" not in text and "_platform_index" not in text and kept_op in text
    assert "@main(%arg0: tensor<4xf32>)" in text
    assert platform_index_position(module.operation) is None


def test_specialize_without_platform_index_is_an_error():
    module = _parse("func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> { return %arg0 : tensor<4xf32> }")
    with pytest.raises(ValueError, match="no platform index argument"):
        specialize_platform(module.operation, 0)


def test_pass_reports_and_records_statistics(capsys):
    module = _parse()
    pipeline = parse_pipeline("builtin.module(toolkit-platform-specialize{platform=cuda platforms=cpu,cuda})")
    result = pipeline.run(module)
    assert "stablehlo.multiply" in str(module) and "stablehlo.case" not in str(module)
    assert "platform 'cuda' (index 1): kept branch 1 of 2" in capsys.readouterr().err
    statistics = getattr(result, "statistics", None)
    if statistics is not None:
        flat = str(statistics)
        assert "cases-folded" in flat


def test_pass_needs_the_platform_list():
    module = _parse()
    pipeline = parse_pipeline("builtin.module(toolkit-platform-specialize{platform=cpu})")
    with pytest.raises(Exception, match="platforms=cpu,cuda"):
        pipeline.run(module)
