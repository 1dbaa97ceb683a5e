"""``toolkit-update-checks``: the command line, on the real toolkit-opt and lit.

What issue 22 asks it to show: every committed test with generated CHECK lines
is up to date (a run rewrites nothing); a test with its CHECK lines deleted gets
lines that pass lit; an intended change of a pass's output (a throwaway plugin
pass) is absorbed so the test passes again; ``--check-prefix``; and the error
paths, each naming the file (and the RUN line and its command).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolkit.lab.check_lines import GENERATED_BEGIN, GENERATED_END
from toolkit.tools.update_checks import main

ROOT = Path(__file__).resolve().parents[2]
LIT_ROOT = ROOT / "test" / "lit"
BIN = os.path.dirname(sys.executable)
LIT = shutil.which("lit", path=BIN) or shutil.which("lit")
needs_lit = pytest.mark.skipif(LIT is None, reason="lit is not installed")


def generated_tests() -> list[Path]:
    """The lit tests under test/lit that carry generated CHECK lines."""
    # A marker on a line of its own (a test may mention the marker inside its own CHECK lines).
    marker = re.compile(rf"^\s*(//|#) {re.escape(GENERATED_BEGIN)}$", re.MULTILINE)
    found = []
    for path in sorted(LIT_ROOT.rglob("*")):
        if path.suffix in (".mlir", ".py") and "Inputs" not in path.parts and "Output" not in path.parts \
                and path.name != "lit.cfg.py" and marker.search(path.read_text(errors="replace")):
            found.append(path)
    return found


def without_generated_blocks(text: str) -> str:
    """``text`` with its generated blocks (markers included) cut out."""
    return re.sub(rf"^// {re.escape(GENERATED_BEGIN)}\n(?:.*\n)*?// {re.escape(GENERATED_END)}\n", "", text,
                  flags=re.MULTILINE)


@pytest.fixture
def suite(tmp_path):
    """A lit suite in tmp_path configured by test/lit/lit.cfg.py (its substitutions and environment)."""
    (tmp_path / "lit.cfg.py").write_text(textwrap.dedent(f"""\
        import os
        _here = os.path.dirname(os.path.abspath(__file__))
        __file__ = {str(LIT_ROOT / 'lit.cfg.py')!r}
        exec(compile(open(__file__).read(), __file__, "exec"))
        config.test_source_root = _here
        config.test_exec_root = os.path.join(_here, "Output")
        """))
    (tmp_path / "Inputs").mkdir()
    return tmp_path


def lit_passes(*paths: Path) -> bool:
    done = subprocess.run([LIT, "-q", *map(str, paths)], capture_output=True, timeout=300)
    return done.returncode == 0


def test_committed_generated_tests_are_up_to_date(capsys):
    tests = generated_tests()
    assert len(tests) >= 4, tests
    assert main(["--dry-run", *map(str, tests)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [f"{path}: unchanged" for path in tests]


@needs_lit
def test_deleted_check_lines_come_back_and_pass(suite, capsys):
    committed = (LIT_ROOT / "passes" / "simplify.mlir").read_text()
    stripped = without_generated_blocks(committed)
    assert "CHECK" not in stripped and "STRICT-" not in stripped
    test = suite / "simplify.mlir"
    test.write_text(stripped)
    assert main([str(test)]) == 0
    assert capsys.readouterr().out == f"{test}: updated\n"
    # The same lines as committed: where they go and what they say depend only on the file and the output.
    assert test.read_text() == committed
    assert lit_passes(test)


PLUGIN = '''\
"""A throwaway pass for the test: rewrites x - y into {op} (the test edits this file to change its output)."""

import dataclasses
from typing import ClassVar

from jaxlib.mlir import ir

from toolkit.ir.builders import build
from toolkit.passes import PatternPass, pattern, register_pass


@pattern("stablehlo.subtract")
def rewrite_subtract(op, rewriter):
    with op.context, op.location, ir.InsertionPoint(op):
        new = build("{op}", list(op.operands), [op.results[0].type])
    rewriter.replace_op(op, list(new.results))
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class RewriteSubtract(PatternPass):
    name: ClassVar[str] = "test-update-checks-rewrite"
    description: ClassVar[str] = "x - y -> {op} (test plugin)"

    def patterns(self):
        return [rewrite_subtract]
'''

PLUGIN_TEST = """\
// RUN: toolkit-opt %s --load-pass-plugin=%S/Inputs/rewrite.py --test-update-checks-rewrite | filecheck %s

// The plugin's rewrite of a subtract.
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.subtract %x, %y : tensor<4xf32>
  %1 = stablehlo.abs %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


@needs_lit
def test_an_intended_change_of_pass_output_is_absorbed(suite, capsys):
    plugin = suite / "Inputs" / "rewrite.py"
    plugin.write_text(PLUGIN.format(op="stablehlo.add"))
    test = suite / "plugin.mlir"
    test.write_text(PLUGIN_TEST)
    assert main([str(test)]) == 0
    assert "stablehlo.add %[[ARG0]], %[[ARG1]]" in test.read_text()
    assert lit_passes(test)
    # The pass now does something else (on purpose): the test fails until its lines are regenerated.
    plugin.write_text(PLUGIN.format(op="stablehlo.multiply"))
    assert not lit_passes(test)
    capsys.readouterr()
    assert main([str(test)]) == 0
    assert capsys.readouterr().out == f"{test}: updated\n"
    text = test.read_text()
    assert "stablehlo.multiply %[[ARG0]], %[[ARG1]]" in text and "stablehlo.add" not in text
    assert without_generated_blocks(text) == PLUGIN_TEST  # only the block changed
    assert lit_passes(test)


def test_check_prefix_regenerates_one_run_line(tmp_path, capsys):
    committed = (LIT_ROOT / "passes" / "bind_shapes.mlir").read_text()
    test = tmp_path / "bind_shapes.mlir"
    # The REFINED lines deleted (and the CHECK lines made stale): --check-prefix=REFINED restores REFINED only.
    test.write_text("\n".join(line for line in committed.split("\n") if not line.startswith("// REFINED"))
                    .replace("stablehlo.abs %[[VAL_1]]", "stablehlo.abs %[[STALE]]"))
    assert main(["--check-prefix", "REFINED", str(test)]) == 0
    assert capsys.readouterr().out == f"{test}: updated\n"
    assert test.read_text() == committed.replace("stablehlo.abs %[[VAL_1]]", "stablehlo.abs %[[STALE]]")
    assert main(["-check-prefix=NOWRAP", str(test)]) == 0  # mlir-opt's single-dash spelling
    assert capsys.readouterr().out == f"{test}: unchanged\n"


def test_dry_run_reports_without_writing(tmp_path, capsys):
    test = tmp_path / "t.mlir"
    test.write_text("// RUN: cat %S/out.txt | filecheck %s\n")
    (tmp_path / "out.txt").write_text("hello\n")
    assert main(["--dry-run", str(test)]) == 1
    assert capsys.readouterr().out == f"{test}: would update\n"
    assert test.read_text() == "// RUN: cat %S/out.txt | filecheck %s\n"


def test_errors_name_the_file_and_the_others_still_run(tmp_path, capsys):
    no_run = tmp_path / "no_run.mlir"
    no_run.write_text("func.func @f() {\n  return\n}\n")
    no_filecheck = tmp_path / "no_filecheck.mlir"
    no_filecheck.write_text("// RUN: toolkit-opt %s --verify-diagnostics\n")
    good = tmp_path / "good.mlir"
    good.write_text("// RUN: cat %S/good.txt | filecheck %s\n")
    (tmp_path / "good.txt").write_text("hello\n")
    status = main([str(no_run), str(tmp_path / "missing.mlir"), str(no_filecheck), str(good)])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out == f"{good}: updated\n"
    assert captured.err.splitlines() == [
        f"toolkit-update-checks: error: {no_run}: no RUN line; a lit test needs one such as "
        "'// RUN: toolkit-opt %s --pass-pipeline=... | filecheck %s'",
        f"toolkit-update-checks: error: cannot read '{tmp_path / 'missing.mlir'}': No such file or directory",
        f"toolkit-update-checks: error: {no_filecheck}: no RUN line pipes a command's output into 'FileCheck %s' "
        "(line 1: does not pipe its output into FileCheck)",
    ]
    assert "// CHECK:       hello" in good.read_text()


def test_warnings_are_printed(tmp_path, capsys):
    test = tmp_path / "t.mlir"
    # The flag only marks the RUN line as splitting its input; the command prints one chunk for the file's two.
    test.write_text("// RUN: echo --split-input-file >/dev/null; cat %S/out.txt | filecheck %s\n// a\n// -----\n// b\n")
    (tmp_path / "out.txt").write_text("one chunk\n")
    assert main([str(test)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{test}: updated\n"
    assert captured.err == (f"toolkit-update-checks: warning: {test}:1: the RUN command printed 1 '// -----' chunks "
                            "for the file's 2; its CHECK lines all go in the first chunk's block\n")


def test_a_failing_command_is_reported_with_its_output(tmp_path, capsys):
    test = tmp_path / "broken.mlir"
    test.write_text("// RUN: toolkit-opt %s --toolkit-simplify | filecheck %s\n\nfunc.func @f( {\n")
    assert main([str(test)]) == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith(f"toolkit-update-checks: error: {test}:1: the RUN command failed (exit status 1): ")
    assert f"{test} --toolkit-simplify" in first and ("toolkit-opt" in first or "toolkit.tools.opt" in first)
    assert f"{test}:3:" in err  # toolkit-opt's own parse error, with its location, follows
    assert test.read_text().endswith("func.func @f( {\n") and GENERATED_BEGIN not in test.read_text()


@pytest.mark.parametrize("argv, message", [
    ([], "the following arguments are required: FILE"),
    (["--timeout=0", "x.mlir"], "--timeout must be positive, not 0"),
    (["--check-prefix"], "expected one argument"),
])
def test_usage_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolkit-update-checks: error: ") and message in err


def test_bad_prefix_is_reported(tmp_path, capsys):
    test = tmp_path / "t.mlir"
    test.write_text("// RUN: cat %s | filecheck %s\n")
    assert main(["--check-prefix=NO GOOD", str(test)]) == 1
    assert "invalid FileCheck prefix 'NO GOOD'" in capsys.readouterr().err


def test_console_script(tmp_path):
    script = shutil.which("toolkit-update-checks", path=BIN)
    if script is None:
        pytest.skip("the package's console scripts are not installed in this environment")
    test = tmp_path / "t.mlir"
    test.write_text("// RUN: cat %S/out.txt | filecheck %s\n")
    (tmp_path / "out.txt").write_text("module {\n  func.func @f() {\n    return\n  }\n}\n")
    done = subprocess.run([script, str(test)], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == f"{test}: updated\n"
    assert "// CHECK-LABEL:   func.func @f() {" in test.read_text()
