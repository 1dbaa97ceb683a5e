"""TOOLKIT_DUMP_IR_TO / toolkit-opt --dump-ir-to: one numbered timeline per compilation, down to XLA's optimized HLO."""

from __future__ import annotations

import io
import os
import re

import numpy as np
import pytest

import toolkit
from toolkit import passes
from toolkit.examples.reference_programs import PROGRAMS
from toolkit.passes import dump, reproducer
from toolkit.tools import opt

#: A jit pipeline with a Python pattern pass, a nested pipeline of C++ passes and a module-level C++ pass.
PIPELINE = "toolkit-simplify, func.func(cse, canonicalize), symbol-dce"


@pytest.fixture
def jit_pipeline():
    before = passes.default_pipeline.JIT_PIPELINE
    passes.set_jit_pipeline(PIPELINE)
    yield
    passes.set_jit_pipeline(before)


def _numbered(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if re.match(r"\d{3}-", n))


def test_transformer_dump_runs_from_traced_program_to_optimized_hlo(tmp_path, monkeypatch, jit_pipeline) -> None:
    monkeypatch.setenv(dump.DUMP_ENV, str(tmp_path))
    monkeypatch.delenv(dump.REPORT_ENV, raising=False)
    program = PROGRAMS["transformer"]
    fn = program.build(toolkit)
    args = program.make_inputs(np.random.default_rng(0))
    compiled = toolkit.jit(fn).lower(*args).compile()
    np.testing.assert_allclose(np.asarray(compiled(*args)), program.reference(*args), rtol=1e-4, atol=1e-4)

    assert sorted(os.listdir(tmp_path)) == ["jit_block"]  # one folder per compilation, nothing else
    folder = tmp_path / "jit_block"
    names = _numbered(folder)
    # One unbroken sequence 000, 001, ...
    assert [int(n[:3]) for n in names] == list(range(len(names)))
    stages = [n[4:] for n in names]
    assert stages[:6] == ["traced.txt", "lowered.mlir", "after-toolkit-simplify.mlir", "after-func.func_cse.mlir",
                          "after-func.func_canonicalize.mlir", "after-symbol-dce.mlir"]
    assert stages[6] == "xla-before-optimizations.txt"
    xla_passes = stages[7:-1]
    assert len(xla_passes) >= 5 and all(s.startswith("xla-") for s in xla_passes)
    assert any("after-algsimp" in s for s in xla_passes) and any("after-fusion" in s for s in xla_passes)
    assert stages[-1] == "xla-optimized.txt"
    # The stages hold what they say.
    traced = (folder / names[0]).read_text()
    assert traced.startswith("{ lambda") and "dot_general" in traced
    assert "func.func public @main" in (folder / names[1]).read_text()
    assert (folder / names[6]).read_text().startswith("HloModule jit_block")
    assert (folder / names[-1]).read_text() == compiled.as_text()
    # XLA's other dump files are kept apart, never in the sequence.
    assert (folder / "xla-extra").is_dir()
    assert not [n for n in os.listdir(folder) if n.startswith(".xla-dump-")]


def test_lowering_alone_writes_the_first_stages_and_a_new_compile_a_new_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(dump.DUMP_ENV, str(tmp_path))
    monkeypatch.delenv(dump.REPORT_ENV, raising=False)
    lowered = toolkit.jit(lambda x: x * 2 + 1).lower(np.ones(3, np.float32))
    assert _numbered(tmp_path / "jit__lambda") == ["000-traced.txt", "001-lowered.mlir"]
    lowered.compile()
    lowered.compile()  # a second compilation of the same lowering: its own timeline
    first, second = _numbered(tmp_path / "jit__lambda"), _numbered(tmp_path / "jit__lambda.2")
    assert first[-1].endswith("-xla-optimized.txt") and second[:2] == ["000-traced.txt", "001-lowered.mlir"]
    assert second[-1].endswith("-xla-optimized.txt")


def test_polymorphic_compilation_dumps_shape_binding_and_refinement(tmp_path, monkeypatch) -> None:
    from toolkit import export

    monkeypatch.setenv(dump.DUMP_ENV, str(tmp_path))
    monkeypatch.delenv(dump.REPORT_ENV, raising=False)
    spec = toolkit.ShapeDtypeStruct(export.symbolic_shape("n, 3"), np.float32)
    compiled = toolkit.jit(lambda x: (x * 2).sum(0)).trace(spec).lower().compile()
    np.testing.assert_allclose(np.asarray(compiled(np.ones((4, 3), np.float32))), [8.0, 8.0, 8.0])
    stages = [n[4:] for n in _numbered(tmp_path / "jit__lambda")]
    assert stages[:3] == ["traced.txt", "lowered.mlir", "after-toolkit-bind-shapes_types_tensor_4x3xf32.mlir"]
    assert stages[3] == "after-toolkit-refine-shapes.mlir" and stages[-1] == "xla-optimized.txt"


def test_nothing_is_recorded_when_unset(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(dump.DUMP_ENV, raising=False)
    monkeypatch.delenv(dump.REPORT_ENV, raising=False)
    lowered = toolkit.jit(lambda x: x + 1).lower(np.ones(2, np.float32))
    assert lowered._timeline is None and dump.timeline_for(lowered) is None
    assert dump.start_timeline("jit_f", traced=lambda: pytest.fail("traced text computed")) is None


def test_observed_pipeline_sees_every_pass(tmp_path) -> None:
    from toolkit.ir.context import make_context
    from jaxlib.mlir import ir

    with make_context():
        module = ir.Module.parse("""
func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %1 = stablehlo.add %x, %x : tensor<4xf32>
  %2 = stablehlo.multiply %1, %one : tensor<4xf32>
  %3 = stablehlo.add %0, %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
}""")
    timeline = dump.Timeline("m", folder=str(tmp_path))
    timeline.add_module("input", "input", module)
    report = passes.run_pipeline(module, "func.func(cse, canonicalize), toolkit-simplify", observe=timeline.observe)
    assert [r.label for r in report.records] == ["func.func(cse)", "func.func(canonicalize)", "toolkit-simplify"]
    assert [s.label for s in timeline.stages] == ["input", "func.func(cse)", "func.func(canonicalize)",
                                                  "toolkit-simplify"]
    cse = timeline.stages[1]
    assert cse.changed and cse.op_counts["stablehlo.add"] == 2 and cse.seconds is not None
    assert timeline.stages[3].statistics == {"multiply_one": 1}
    assert _numbered(tmp_path) == ["000-input.mlir", "001-after-func.func_cse.mlir",
                                   "002-after-func.func_canonicalize.mlir", "003-after-toolkit-simplify.mlir"]


def test_toolkit_opt_dump_ir_to_split_input(tmp_path) -> None:
    source = tmp_path / "in.mlir"
    source.write_text("func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> {\n  return %x : tensor<2xf32>\n}\n"
                      "// -----\n"
                      "func.func @b(%x: tensor<2xf32>) -> tensor<2xf32> {\n  return %x : tensor<2xf32>\n}\n")
    out = tmp_path / "dumps"
    status = opt.main([str(source), "--split-input-file", "--cse", "--toolkit-simplify", f"--dump-ir-to={out}",
                       "-o", str(tmp_path / "out.mlir")])
    assert status == 0
    assert sorted(os.listdir(out)) == ["chunk-1", "chunk-2"]
    assert _numbered(out / "chunk-2") == ["000-input.mlir", "001-after-cse.mlir", "002-after-toolkit-simplify.mlir"]
    assert "@b" in (out / "chunk-2" / "000-input.mlir").read_text()


def test_legacy_dump_dir_printouts_still_work(tmp_path) -> None:
    from toolkit.ir.context import make_context
    from jaxlib.mlir import ir

    with make_context():
        module = ir.Module.parse("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n return %x : tensor<2xf32>\n}")
    passes.run_pipeline(module, "cse", print_ir_before=True, dump_dir=str(tmp_path), stream=io.StringIO())
    assert os.listdir(tmp_path) == ["001_before_cse.mlir"]


@pytest.mark.parametrize("failing", ["xla", "pass"])
def test_a_failed_compilation_finishes_its_timeline(failing, tmp_path, monkeypatch) -> None:
    """A compile error leaves the dump and the report of what ran (no XLA scratch folder) and propagates unchanged."""
    monkeypatch.setenv(dump.DUMP_ENV, str(tmp_path / "dump"))
    monkeypatch.setenv(dump.REPORT_ENV, str(tmp_path / "reports"))
    # The failing pass writes a reproducer: here, not in the machine's temporary folder.
    monkeypatch.setenv(reproducer.REPRODUCER_DIR_ENV, str(tmp_path / "reproducers"))
    lowered = toolkit.jit(lambda x: x * 2 + 1).lower(np.ones(3, np.float32))
    if failing == "xla":
        with pytest.raises(Exception, match="xla_no_such_option"):
            lowered.compile(compiler_options={"xla_no_such_option": True})
    else:
        # A pass failing at run time: binding a type the argument cannot have.
        lowered.pipeline = passes.parse_pipeline("builtin.module(toolkit-bind-shapes{types=tensor<2x2xi8>})")
        with pytest.raises(Exception, match="bind-shapes"):
            lowered.compile()
    folder = tmp_path / "dump" / "jit__lambda"
    assert _numbered(folder)[:2] == ["000-traced.txt", "001-lowered.mlir"]
    assert not [n for n in os.listdir(folder) if n.startswith(".xla-dump-")]
    (report,) = os.listdir(tmp_path / "reports")
    assert "compilation failed" in (tmp_path / "reports" / report).read_text()
    if failing == "pass":
        (written,) = os.listdir(tmp_path / "reproducers")
        assert written.startswith("jit__lambda_-toolkit-bind-shapes-") and written.endswith(".reproducer.mlir")
