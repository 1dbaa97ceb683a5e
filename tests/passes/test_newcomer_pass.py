"""A newcomer's pass, defined here, registers itself and runs from Python,
from toolkit-opt (this file as a plugin, or via TOOLKIT_PASS_PLUGINS) and in
the jit pipeline hook."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from typing import ClassVar

from toolkit.passes import PatternPass, pattern, register_pass


@pattern("stablehlo.negate")
def negate_of_negate(op, rewriter):
    # -(-x) -> x
    inner = op.operands[0].owner
    if getattr(inner, "name", None) != "stablehlo.negate":
        return False
    rewriter.replace_op(op, [inner.operands[0]])
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class NewcomerPass(PatternPass):
    """Removes double negation. Before: any StableHLO; after: no neg(neg(x))."""

    name: ClassVar[str] = "newcomer-double-negation"
    description: ClassVar[str] = "Remove -(-x)."

    def patterns(self):
        return [negate_of_negate]


PROGRAM = """
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.negate %x : tensor<3xf32>
  %1 = stablehlo.negate %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
"""


def test_runs_from_python() -> None:
    from jaxlib.mlir import ir

    from toolkit.ir.context import make_context
    from toolkit.passes import run_pipeline

    with make_context():
        module = ir.Module.parse(PROGRAM)
    run_pipeline(module, "newcomer-double-negation")
    assert "negate" not in str(module)


def _opt(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit.tools.opt", *args], input=PROGRAM, text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=120)


def test_runs_from_toolkit_opt_as_plugin() -> None:
    result = _opt([f"--load-pass-plugin={__file__}", "--pass-pipeline=builtin.module(newcomer-double-negation)"])
    assert result.returncode == 0, result.stderr
    assert "negate" not in result.stdout


def test_runs_from_toolkit_opt_via_environment() -> None:
    result = _opt(["--newcomer-double-negation"], env={"TOOLKIT_PASS_PLUGINS": __file__})
    assert result.returncode == 0, result.stderr
    assert "negate" not in result.stdout


def test_joins_the_jit_pipeline() -> None:
    from toolkit.passes import default_pipeline

    saved = default_pipeline.JIT_PIPELINE
    try:
        default_pipeline.set_jit_pipeline("cse")
        default_pipeline.extend_jit_pipeline("newcomer-double-negation")
        assert default_pipeline.JIT_PIPELINE == "cse, newcomer-double-negation"
        assert str(default_pipeline.jit_pipeline()) == "builtin.module(cse, newcomer-double-negation)"
    finally:
        default_pipeline.set_jit_pipeline(saved)
    assert str(default_pipeline.jit_pipeline()) == f"builtin.module({saved})" if saved else True


def test_runs_inside_jit(tmp_path, monkeypatch) -> None:
    import numpy as np

    import toolkit
    from toolkit.passes import default_pipeline, dump

    monkeypatch.setenv(dump.DUMP_ENV, str(tmp_path))
    saved = default_pipeline.JIT_PIPELINE
    try:
        default_pipeline.extend_jit_pipeline("newcomer-double-negation")

        @toolkit.jit
        def double_negation(x):
            return -(-x) * 2.0

        lowered = double_negation.lower(np.ones(3, np.float32))
        assert "newcomer-double-negation" in str(lowered.pipeline)
        assert "stablehlo.negate" in lowered.as_text()
        result = lowered.compile()(np.arange(3, dtype=np.float32))
        np.testing.assert_allclose(np.asarray(result), [0.0, 2.0, 4.0])
    finally:
        default_pipeline.set_jit_pipeline(saved)
    # TOOLKIT_DUMP_IR_TO: the compilation's timeline holds the IR after the pass.
    after = [p for p in (tmp_path / "jit_double_negation").iterdir()
             if p.name.endswith("-after-newcomer-double-negation.mlir")]
    assert after, sorted(p.name for p in (tmp_path / "jit_double_negation").iterdir())
    assert "stablehlo.negate" not in after[-1].read_text()
