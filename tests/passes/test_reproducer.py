"""toolkit.passes.reproducer: MLIR's reproducer format, and PipelineError's module before the failing pass."""

from __future__ import annotations

import dataclasses
import os
from typing import ClassVar

import pytest
from jaxlib.mlir import ir

from toolkit import passes
from toolkit.ir.context import make_context
from toolkit.passes import reproducer

PROGRAM = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.add %a, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""


@passes.register_pass
@dataclasses.dataclass(frozen=True)
class FailOnMultiply(passes.ModulePass):
    name: ClassVar[str] = "test-repro-fail-on-multiply"
    description: ClassVar[str] = "Fail at the first stablehlo.multiply."

    def apply(self, op: ir.Operation) -> None:
        for block in op.regions[0].blocks:
            for func in block.operations:
                for inner in func.regions[0].blocks[0].operations:
                    if inner.operation.name == "stablehlo.multiply":
                        raise passes.PassFailure("multiply found", op=inner)


def parse(text: str = PROGRAM) -> ir.Module:
    with make_context():
        return ir.Module.parse(text)


def test_write_then_read_round_trips(tmp_path) -> None:
    path = tmp_path / "r.mlir"
    reproducer.write_reproducer(path, parse(), "func.func(cse)", verify_each=False)
    text = path.read_text()
    assert 'pipeline: "builtin.module(func.func(cse))",' in text and "verify_each: false" in text
    found = reproducer.read_reproducer(path)
    assert found.pipeline == "builtin.module(func.func(cse))"
    assert found.verify_each is False and found.disable_threading is False
    assert "mlir_reproducer" not in found.module_text
    assert text.startswith(found.module_text.rstrip("\n"))  # the module's lines are unchanged
    assert found.module_text.count("\n") >= text.count("\n") - 1  # the block became blank lines
    parse(found.module_text)  # the module text parses alone


def test_quotes_and_backslashes_in_pipelines_survive() -> None:
    pipeline = 'builtin.module(toolkit-bind-shapes{types="tensor<2xf32>" wrap=false})'
    text = reproducer.reproducer_text(PROGRAM, pipeline)
    assert '\\"tensor<2xf32>\\"' in text
    assert reproducer.read_reproducer(text).pipeline == pipeline


def test_mlir_written_reproducer_reads() -> None:
    # As MLIR's PassCrashRecovery writes them (other fields and order vary).
    text = PROGRAM + '\n{-#\n  external_resources: {\n    mlir_reproducer: {\n      verify_each: true,\n' \
        '      pipeline: "builtin.module(func.func(canonicalize,cse))",\n      disable_threading: true\n    }\n  }\n#-}\n'
    found = reproducer.read_reproducer(text)
    assert found.pipeline == "builtin.module(func.func(canonicalize,cse))" and found.disable_threading


def test_other_metadata_is_kept_beside_the_resource() -> None:
    text = PROGRAM + '\n{-#\n  dialect_resources: {\n    builtin: {\n      blob: "0x04000000"\n    }\n  }\n#-}\n'
    written = reproducer.reproducer_text(text, "cse")
    assert written.count("{-#") == 1 and "dialect_resources" in written and "mlir_reproducer" in written
    found = reproducer.read_reproducer(written)
    assert "dialect_resources" in found.module_text and "mlir_reproducer" not in found.module_text
    assert found.pipeline == "builtin.module(cse)"


def test_errors_name_what_is_wrong(tmp_path) -> None:
    with pytest.raises(ValueError, match="is not a reproducer"):
        reproducer.read_reproducer(PROGRAM)
    with pytest.raises(ValueError, match="no pipeline string"):
        reproducer.read_reproducer(PROGRAM + "{-#\n external_resources: { mlir_reproducer: { verify_each: true } }\n#-}")
    with pytest.raises(ValueError, match="non-empty pipeline"):
        reproducer.write_reproducer(tmp_path / "x.mlir", PROGRAM, " ")
    with pytest.raises(TypeError, match="ir.Module, ir.Operation or MLIR text"):
        reproducer.write_reproducer(tmp_path / "x.mlir", 42, "cse")
    with pytest.raises(ValueError, match="already carries"):
        reproducer.reproducer_text(reproducer.reproducer_text(PROGRAM, "cse"), "cse")
    with pytest.raises(OSError):
        reproducer.read_reproducer(tmp_path / "missing.mlir")


def test_pipeline_error_carries_the_module_before_the_failing_pass() -> None:
    module = parse()
    with pytest.raises(passes.PipelineError) as caught:
        passes.run_pipeline(module, "func.func(cse, canonicalize), test-repro-fail-on-multiply, symbol-dce")
    error = caught.value
    assert error.pass_name == "test-repro-fail-on-multiply"
    assert error.pass_pipeline == "builtin.module(test-repro-fail-on-multiply)"
    assert error.module_before is not None
    assert error.module_before.count("stablehlo.add") == 1  # after cse, before the failing pass
    assert "loc(" in error.module_before  # locations kept for the replay


def test_failing_first_pass_and_parse_errors() -> None:
    with pytest.raises(passes.PipelineError) as caught:
        passes.run_pipeline(parse(), "test-repro-fail-on-multiply")
    assert caught.value.module_before is not None and caught.value.module_before.count("stablehlo.add") == 2
    with pytest.raises(passes.PipelineError) as syntax:
        passes.parse_pipeline("func.func(cse")
    assert syntax.value.module_before is None and syntax.value.pass_name is None
    with pytest.raises(passes.PipelineError) as off:
        passes.run_pipeline(parse(), "test-repro-fail-on-multiply", keep_module_before=False)
    assert off.value.module_before is None and off.value.pass_name == "test-repro-fail-on-multiply"


def test_failure_reproducer_replays_the_same_failure(tmp_path) -> None:
    with pytest.raises(passes.PipelineError) as caught:
        passes.run_pipeline(parse(), "cse, test-repro-fail-on-multiply")
    path = tmp_path / "r.mlir"
    assert reproducer.write_failure_reproducer(path, caught.value)
    found = reproducer.read_reproducer(path)
    with pytest.raises(passes.PipelineError, match="multiply found"):
        passes.run_pipeline(parse(found.module_text), found.pipeline)
    assert not reproducer.write_failure_reproducer(path, passes.PipelineError("no module"))


def test_unique_files_in_the_reproducer_dir(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(reproducer.REPRODUCER_DIR_ENV, str(tmp_path / "dir"))
    assert reproducer.reproducer_dir() == str(tmp_path / "dir")
    with pytest.raises(passes.PipelineError) as caught:
        passes.run_pipeline(parse(), "test-repro-fail-on-multiply")
    first = reproducer.write_unique_failure_reproducer(caught.value, "jit_f/bad name")
    second = reproducer.write_unique_failure_reproducer(caught.value, "jit_f/bad name")
    assert first and second and first != second
    assert sorted(os.listdir(tmp_path / "dir")) == sorted([os.path.basename(first), os.path.basename(second)])
    assert reproducer.write_unique_failure_reproducer(passes.PipelineError("x"), "f") is None


def test_jit_names_a_reproducer_that_replays(tmp_path, monkeypatch) -> None:
    np = pytest.importorskip("numpy")
    import toolkit

    monkeypatch.setenv(reproducer.REPRODUCER_DIR_ENV, str(tmp_path))
    before = passes.jit_pipeline()
    passes.set_jit_pipeline("cse, test-repro-fail-on-multiply")
    try:
        with pytest.raises(passes.PipelineError, match="reproducer of the failing pass: .*--run-reproducer") as caught:
            toolkit.jit(lambda x: x * x)(np.ones(3, np.float32))
    finally:
        passes.set_jit_pipeline(str(before))
    (name,) = os.listdir(tmp_path)
    assert caught.value.pass_name == "test-repro-fail-on-multiply"
    found = reproducer.read_reproducer(tmp_path / name)
    assert found.pipeline == "builtin.module(test-repro-fail-on-multiply)"
    with pytest.raises(passes.PipelineError, match="multiply found"):
        passes.run_pipeline(parse(found.module_text), found.pipeline)
