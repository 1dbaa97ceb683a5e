"""``toolkit lab``: the command line over toolkit.lab.measurement (table, JSON, HTML page, progress, exit codes)."""

from __future__ import annotations

import io
import json
import os

import pytest

from toolkit.lab import measurement, zoo
from toolkit.passes.reproducer import read_reproducer
from toolkit.tools import export_cli, opt
from toolkit.tools.lab_cli import JSON_SCHEMA, ProgressBar

PROGRAM = """\
func.func public @main(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<4x4xf32>
  %0 = stablehlo.multiply %x, %one : tensor<4x4xf32>
  %1 = stablehlo.subtract %0, %y : tensor<4x4xf32>
  %2 = stablehlo.subtract %0, %y : tensor<4x4xf32>
  %3 = stablehlo.add %1, %2 : tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}
"""

TANH = """\
func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

# The walkthrough's wrong pass (docs/pass-lab.md): subtract rewritten to add.
PLUGIN = '''\
import dataclasses
from typing import ClassVar

from jaxlib.mlir import ir

from toolkit.ir.builders import build
from toolkit.passes import PassFailure, ModulePass, PatternPass, pattern, register_pass


@pattern("stablehlo.subtract")
def subtract_to_add(op, rewriter):
    # x - y -> x + y (wrong on purpose)
    with op.context, op.location, ir.InsertionPoint(op):
        added = build("stablehlo.add", list(op.operands), [op.results[0].type])
    rewriter.replace_op(op, [added.result])
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class WrongSubtract(PatternPass):
    name: ClassVar[str] = "cli-test-wrong-subtract"
    description: ClassVar[str] = "x - y -> x + y (wrong on purpose)"

    def patterns(self):
        return [subtract_to_add]


@register_pass
@dataclasses.dataclass(frozen=True)
class FailsOnTanh(ModulePass):
    name: ClassVar[str] = "cli-test-fails-on-tanh"
    description: ClassVar[str] = "fails on a module with a tanh"

    def apply(self, op):
        found = []
        op.walk(lambda o: (found.append(o) if o.name == "stablehlo.tanh" else None) or ir.WalkResult.ADVANCE)
        if found:
            raise PassFailure("tanh is not supported", op=found[0])
'''


@pytest.fixture
def files(tmp_path):
    program, tanh, plugin = tmp_path / "program.mlir", tmp_path / "tanh.mlir", tmp_path / "lab_plugin.py"
    program.write_text(PROGRAM)
    tanh.write_text(TANH)
    plugin.write_text(PLUGIN)
    return program, tanh, plugin


def _lab(capsys, *argv):
    status = export_cli.main(["lab", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_table_output(files, capsys) -> None:
    program, _, _ = files
    status, out, err = _lab(capsys, "toolkit-simplify, cse", program, "--runs", 2)
    assert status == 0, err
    assert "pipeline: builtin.module(toolkit-simplify, cse)" in out
    header = next(line for line in out.splitlines() if line.startswith("program"))
    for column in ("status", "ops", "flops", "bytes accessed", "compile", "run (median [min–max])", "numerics"):
        assert column in header
    line = next(line for line in out.splitlines() if line.startswith("program.mlir"))
    assert " ok " in line and "7 → 4" in line
    assert "1 of 1 programs ok" in out
    assert "program.mlir: stablehlo.constant 1 → 0, stablehlo.multiply 1 → 0, stablehlo.subtract 2 → 1" in out
    # stderr is no terminal here: one plain progress line per program, no bar.
    assert "lab: 1/1 program.mlir measured in" in err and "\r" not in err


def test_json_rows_with_numerics(files, capsys) -> None:
    program, tanh, _ = files
    status, out, err = _lab(capsys, "toolkit-simplify, cse, canonicalize", program, tanh, "--verify-numerics",
                            "--json", "--runs", 1, "--quiet")
    assert status == 0, err
    assert err == ""
    document = json.loads(out)
    assert document["schema"] == JSON_SCHEMA and document["verify_numerics"] is True and document["runs"] == 1
    assert [row["program"] for row in document["rows"]] == ["program.mlir", "tanh.mlir"]
    for row in document["rows"]:
        assert tuple(row) == measurement.ROW_KEYS
        assert row["status"] == "ok" and row["numerics"]["equal"] is True
        assert row["cost_before"]["flops"] >= row["cost_after"]["flops"]
        assert row["run_after"]["runs"] == 1 and row["compile_seconds_after"] > 0


def test_a_wrong_pass_is_named_and_fails_the_command(files, capsys) -> None:
    program, tanh, plugin = files
    status, out, err = _lab(capsys, "toolkit-simplify, cli-test-wrong-subtract, cse", program, tanh,
                            "--load-pass-plugin", plugin, "--verify-numerics", "--runs", 1, "--quiet")
    assert status == 1, err
    line = next(line for line in out.splitlines() if line.startswith("program.mlir"))
    assert "numerics differ" in line and "differ at cli-test-wrong-subtract" in line
    assert next(line for line in out.splitlines() if line.startswith("tanh.mlir")).split()[1] == "ok"
    assert "1 of 2 programs ok" in out
    assert "program.mlir: numerics differ:" in out and "'cli-test-wrong-subtract'" in out
    assert f"Reproduce: toolkit-opt {program} --pass-pipeline=" in out  # the file itself, checked by toolkit-opt


def test_a_failing_pass_leaves_a_reproducer_and_the_other_programs_run(files, tmp_path, capsys) -> None:
    program, tanh, plugin = files
    folder = tmp_path / "reproducers"
    report = tmp_path / "lab.html"
    status, out, err = _lab(capsys, "cse, cli-test-fails-on-tanh", tanh, program, "--load-pass-plugin", plugin,
                            "--reproducers", folder, "--json", "--runs", 1, "--quiet", "--report", report)
    assert status == 1, err
    failed, fine = json.loads(out)["rows"]
    assert failed["status"] == "failed: pipeline" and fine["status"] == "ok"
    assert "tanh is not supported" in failed["failure"]["message"]
    assert "cli-test-fails-on-tanh" in failed["failure"]["message"]
    assert failed["ops_before"]["total"] > 0 and failed["run_before"] is not None and failed["ops_after"] is None
    assert failed["failure"]["pass_name"] == "cli-test-fails-on-tanh"
    reproducer = failed["failure"]["reproducer"]
    assert os.path.dirname(reproducer) == str(folder)
    replay = read_reproducer(reproducer)
    assert "cli-test-fails-on-tanh" in str(replay.pipeline) and "stablehlo.tanh" in replay.module_text
    # toolkit-opt replays it: the same pass fails the same way.
    assert opt.main(["--run-reproducer", reproducer, "--load-pass-plugin", str(plugin), "-o", os.devnull]) == 1
    assert "tanh is not supported" in capsys.readouterr().err
    page = report.read_text()
    assert "tanh is not supported" in page and "failed: pipeline" in page


def test_output_file(files, tmp_path, capsys) -> None:
    program, _, _ = files
    target = tmp_path / "out.txt"
    status, out, _ = _lab(capsys, "cse", program, "--runs", 1, "--quiet", "-o", target)
    assert status == 0 and out == ""
    assert "1 of 1 programs ok" in target.read_text()


@pytest.mark.parametrize("argv, message", [
    (["cse", "--runs", "0", "x.mlir"], "--runs must be at least 1"),
    (["cse", "--rtol", "-1", "x.mlir"], "--rtol must be a non-negative number"),
    (["cse"], "no programs: give files or zoo program names, or --on zoo"),
    (["cse", "--on", "zoo", "x.mlir"], "give --on zoo or programs, not both"),
    (["no-such-pass", "x.mlir"], "bad pipeline"),
    (["cse", "x.mlir", "--load-pass-plugin", "/no/such/plugin.py"], "cannot load pass plugin"),
    (["cse", "x.mlir", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_usage_errors(argv, message, capsys) -> None:
    status, out, err = _lab(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith("toolkit lab: error:") and message in err


def test_unknown_program_is_named(capsys, tmp_path) -> None:
    status, _, err = _lab(capsys, "cse", tmp_path / "missing.mlir")
    assert status == 1
    assert "toolkit lab: error:" in err and "missing.mlir' is neither a file nor a zoo program" in err


def test_unreadable_program_is_a_row_not_a_crash(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("this is not MLIR {")
    good = tmp_path / "good.mlir"
    good.write_text(TANH)
    status, out, _ = _lab(capsys, "cse", bad, good, "--json", "--runs", 1, "--quiet")
    assert status == 1
    bad_row, good_row = json.loads(out)["rows"]
    assert bad_row["status"] == "failed: load" and bad_row["failure"]["message"]
    assert good_row["status"] == "ok"


def test_progress_bar_on_a_terminal_redraws_in_place() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, interactive=True)
    for index, name in enumerate(("a", "b")):
        for stage in ("load", "compile before", "done"):
            bar(index, 2, name, stage)
    text = stream.getvalue()
    assert text.count("\r") == 6 and text.endswith("\n") and text.count("\n") == 1
    assert "[" + "#" * 12 + "." * 12 + "] 1/2 a: done" in text
    assert "[" + "#" * 24 + "] 2/2 b: done" in text
    plain = io.StringIO()
    bar = ProgressBar(plain, interactive=False)
    bar(0, 1, "a", "load")
    bar(0, 1, "a", "done")
    assert plain.getvalue().startswith("lab: 1/1 a measured in") and plain.getvalue().count("\n") == 1


def test_help_lists_the_flags(capsys) -> None:
    status, out, _ = _lab(capsys, "--help")
    assert status == 0
    for flag in ("--on", "--verify-numerics", "--json", "--report", "--runs", "--seed", "--reproducers",
                 "--load-pass-plugin", "--quiet"):
        assert flag in out


# Two small zoo programs: a toolkit-written one and the shape-polymorphic Flax CNN (bound to its inputs' batch).
ZOO_SUBSET = ("lstm_scan_toolkit", "cnn_poly_batch")


def test_zoo_programs_by_name(capsys) -> None:
    status, out, err = _lab(capsys, "toolkit-simplify, cse, canonicalize", *ZOO_SUBSET, "--verify-numerics",
                            "--json", "--runs", 2, "--quiet")
    assert status == 0, out + err
    rows = json.loads(out)["rows"]
    assert [row["program"] for row in rows] == list(ZOO_SUBSET)
    for row in rows:
        program = zoo.get(row["program"])
        assert row["origin"] == f"zoo ({program.frontend})"
        assert row["status"] == "ok" and row["numerics"]["equal"] is True
        assert row["ops_after"]["total"] <= row["ops_before"]["total"]
        assert row["optimized_cost_before"]["flops"] > 0 and row["run_before"]["runs"] == 2
        # What XLA made of the program, before and after: kernels it compiled, every count a number.
        assert row["xla_before"]["kernels"] > 0 and row["xla_after"]["kernels"] > 0
        assert set(row["xla_after"]) == set(row["xla_before"]) and "copies" in row["xla_before"]
    polymorphic = rows[1]
    assert zoo.get("cnn_poly_batch").polymorphic and polymorphic["compile_seconds_after"] > 0


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TOOLKIT_ZOO_FULL", "") in ("", "0"),
                    reason="the whole zoo takes ~75 CPU-seconds: set TOOLKIT_ZOO_FULL=1 (as for tests/lab/test_zoo.py)")
def test_the_whole_zoo(capsys) -> None:
    """The issue's command: every zoo program ok, with op counts, cost, times and equal numerics."""
    status, out, err = _lab(capsys, "toolkit-simplify, cse, canonicalize", "--on", "zoo", "--verify-numerics",
                            "--json", "--quiet")
    document = json.loads(out)
    rows = {row["program"]: row for row in document["rows"]}
    assert sorted(rows) == sorted(p.name for p in zoo.programs())
    for name, row in rows.items():
        assert row["status"] == "ok", (name, row["failure"], row["numerics"])
        assert row["numerics"]["equal"] is True
        for key in ("ops_before", "ops_after", "optimized_cost_before", "optimized_cost_after", "run_before",
                    "run_after", "compile_seconds_before", "compile_seconds_after"):
            assert row[key] is not None, (name, key)
    assert status == 0, err
