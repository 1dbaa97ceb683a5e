"""toolkit.lab.check_lines: FileCheck lines from a command's output, and lit tests whose CHECK lines it rewrites.

Fast: the RUN lines here run a tiny Python script (or ``cat``), not toolkit-opt;
tests/tools/test_update_checks.py runs the real toolkit-opt, lit and a plugin pass.
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

from toolkit.lab import lit_commands
from toolkit.lab.check_lines import (GENERATED_BEGIN, GENERATED_END, CheckLinesError, CheckLinesWarning,
                                     generate_checks, update_test_file)

ROOT = Path(__file__).resolve().parents[2]
FILECHECK = shutil.which("filecheck", path=os.path.dirname(sys.executable)) or shutil.which("filecheck")
needs_filecheck = pytest.mark.skipif(FILECHECK is None, reason="the pip `filecheck` command is not installed")

MODULE = """\
module {
  func.func @f(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
"""


def filecheck(check_lines: list[str] | str, text: str, *, prefix: str = "CHECK", tmp_path: Path) -> bool:
    """Whether FileCheck with ``check_lines`` (or the check file at that path) passes on ``text``."""
    if isinstance(check_lines, list):
        check_file = tmp_path / "checks.txt"
        check_file.write_text("\n".join(check_lines) + "\n")
    else:
        check_file = Path(check_lines)
    done = subprocess.run([FILECHECK, str(check_file), f"--check-prefix={prefix}"], input=text.encode(),
                          capture_output=True, timeout=60)
    return done.returncode == 0


# --- generate_checks -----------------------------------------------------------------------


def test_generated_lines_follow_generate_test_checks():
    assert generate_checks(MODULE) == [
        "// CHECK-LABEL:   func.func @f(",
        # Arguments aligned under the label's end, as the script pads them (labels under 21 characters).
        "// CHECK-SAME:                 %[[ARG0:[^:]*]]: tensor<4xf32>,",
        "// CHECK-SAME:                 %[[ARG1:[^:]*]]: tensor<4xf32>,",
        "// CHECK-SAME:                 %[[ARG2:[^:]*]]: tensor<4xf32>) -> tensor<4xf32> {",
        "// CHECK-NEXT:      %[[VAL_0:.*]] = stablehlo.add %[[ARG0]], %[[ARG1]] : tensor<4xf32>",
        "// CHECK-NEXT:      %[[VAL_1:.*]] = stablehlo.multiply %[[VAL_0]], %[[ARG2]] : tensor<4xf32>",
        "// CHECK-NEXT:      return %[[VAL_1]] : tensor<4xf32>",
        "// CHECK-NEXT:    }",
    ]


@needs_filecheck
def test_generated_lines_pass_and_catch_a_change(tmp_path):
    lines = generate_checks(MODULE)
    assert filecheck(lines, MODULE, tmp_path=tmp_path)
    # Operands swapped: the captured names no longer line up.
    assert not filecheck(lines, MODULE.replace("add %arg0, %arg1", "add %arg1, %arg0"), tmp_path=tmp_path)
    # An extra line between two checked ones breaks CHECK-NEXT.
    extra = MODULE.replace("    return", "    %2 = stablehlo.abs %1 : tensor<4xf32>\n    return")
    assert not filecheck(lines, extra, tmp_path=tmp_path)


def test_generating_twice_gives_the_same_lines():
    assert generate_checks(MODULE) == generate_checks(MODULE)


def test_names_restart_per_function_and_values_die_with_their_region():
    text = textwrap.dedent("""\
        module {
          func.func @a(%arg0: tensor<i32>) -> tensor<i32> {
            %0:2 = "test.two"(%arg0) ({
              %1 = stablehlo.abs %arg0 : tensor<i32>
              stablehlo.return %1 : tensor<i32>
            }) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)
            return %0#1 : tensor<i32>
          }
          func.func @b() -> tensor<i32> {
            %c = stablehlo.constant dense<1> : tensor<i32>
            return %c : tensor<i32>
          }
        }
        """)
    lines = generate_checks(text)
    assert "// CHECK-NEXT:      %[[VAL_0:.*]]:2 = \"test.two\"(%[[ARG0]]) ({" in lines
    assert "// CHECK-NEXT:        %[[VAL_1:.*]] = stablehlo.abs %[[ARG0]] : tensor<i32>" in lines
    # %0 was a result of the op with the region: still known after the region closes.
    assert "// CHECK-NEXT:      return %[[VAL_0]]#1 : tensor<i32>" in lines
    # @b starts counting again; its first value is VAL_0.
    assert "// CHECK-LABEL:   func.func @b() -> tensor<i32> {" in lines
    assert "// CHECK-NEXT:      %[[VAL_0:.*]] = stablehlo.constant dense<1> : tensor<i32>" in lines


@needs_filecheck
def test_attribute_aliases_are_captured_and_reused(tmp_path):
    text = textwrap.dedent("""\
        #map = affine_map<(d0) -> (d0)>
        #map1 = affine_map<(d0) -> (0)>
        module {
          func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
            %0 = "test.op"(%arg0) {maps = [#map, #map1]} : (tensor<4xf32>) -> tensor<4xf32>
            return %0 : tensor<4xf32>
          }
        }
        """)
    lines = generate_checks(text)
    assert lines[:2] == ["// CHECK:       #[[$ATTR_0:.+]] = affine_map<(d0) -> (d0)>",
                         "// CHECK-NEXT:  #[[$ATTR_1:.+]] = affine_map<(d0) -> (0)>"]
    assert any("{maps = [#[[$ATTR_0]], #[[$ATTR_1]]]}" in line for line in lines)
    assert filecheck(lines, text, tmp_path=tmp_path)
    assert not filecheck(lines, text.replace("[#map, #map1]", "[#map1, #map]"), tmp_path=tmp_path)


@needs_filecheck
def test_split_chunks_are_each_checked_in_order(tmp_path):
    second = MODULE.replace("@f", "@g")
    text = MODULE + "// -----\n" + second
    lines = generate_checks(text)
    labels = [line for line in lines if "-LABEL:" in line]
    assert labels == ["// CHECK-LABEL:   func.func @f(", "// CHECK-LABEL:   func.func @g("]
    assert not any("-----" in line for line in lines)
    assert filecheck(lines, text, tmp_path=tmp_path)
    assert not filecheck(lines, second + "// -----\n" + MODULE, tmp_path=tmp_path)


@needs_filecheck
def test_filecheck_syntax_in_the_output_is_escaped(tmp_path):
    text = textwrap.dedent("""\
        module {
          func.func @f(%arg0: tensor<2x2xi64>) -> tensor<2x2xi64> {
            %0 = "test.op"(%arg0) {a = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>, b = "{{x}}", c = [%arg0]} : (tensor<2x2xi64>) -> tensor<2x2xi64>
            return %0 : tensor<2x2xi64>
          }
        }
        """)
    lines = generate_checks(text)
    body = next(line for line in lines if "test.op" in line)
    assert "dense<{{\\[\\[}}1, 2]" in body and '"{{\\{\\{}}x}}"' in body and "{{\\[}}%[[ARG0]]]" in body
    assert filecheck(lines, text, tmp_path=tmp_path)


def test_a_percent_sign_that_names_no_value_stays_literal():
    text = 'module {\n  func.func @f() attributes {note = "50% off"} {\n    return\n  }\n}\n'
    lines = generate_checks(text)
    assert lines[0] == '// CHECK-LABEL:   func.func @f() attributes {note = "50% off"} {'


def test_an_empty_module_is_checked_as_such():
    assert generate_checks("module {\n}\n") == ["// CHECK:       module {", "// CHECK-NEXT:  }"]
    assert generate_checks("") == []


def test_argument_names_become_variable_names():
    text = "module {\n  func.func @f(%my.x: tensor<i32>, %0: tensor<i32>) {\n    return\n  }\n}\n"
    lines = generate_checks(text)
    assert "%[[MY_X:[^:]*]]: tensor<i32>," in lines[1]
    assert "%[[VAL_0:[^:]*]]: tensor<i32>) {" in lines[2]


@needs_filecheck
def test_other_prefix(tmp_path):
    lines = generate_checks(MODULE, prefix="STRICT")
    assert lines[0].startswith("// STRICT-LABEL:") and all(line.startswith("// STRICT") for line in lines)
    assert filecheck(lines, MODULE, prefix="STRICT", tmp_path=tmp_path)


@pytest.mark.parametrize("prefix", ["", "1CHECK", "CHE CK", "CHECK:"])
def test_bad_prefix_is_an_error(prefix):
    with pytest.raises(CheckLinesError, match="invalid FileCheck prefix"):
        generate_checks(MODULE, prefix=prefix)


def test_output_must_be_text():
    with pytest.raises(TypeError, match="str, not bytes"):
        generate_checks(MODULE.encode())  # type: ignore[arg-type]


@needs_filecheck
def test_checks_of_a_module_jax_lowered(tmp_path):
    jax = pytest.importorskip("jax")
    import numpy as np

    def f(x, y):
        return jax.numpy.sin(x) @ y + 1.0, jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)

    text = jax.jit(f).lower(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32)).as_text()
    lines = generate_checks(text)
    assert any(line.startswith("// CHECK-LABEL:   func.func public @main(") for line in lines)
    assert filecheck(lines, text, tmp_path=tmp_path)


# --- update_test_file: a test's RUN lines run, blocks written --------------------------------------

PRODUCER = """\
import sys
# Prints the file named by the first argument (the RUN line's `output`), or fails on request.
name = sys.argv[1]
if name == "fail":
    sys.stderr.write("produce.py: error: asked to fail\\n")
    sys.exit(3)
sys.stdout.write(open(name).read())
"""


@pytest.fixture
def suite(tmp_path):
    """A folder with produce.py (prints a file) and helpers to write a test and its output."""
    (tmp_path / "produce.py").write_text(PRODUCER)

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


TEST_MLIR = """\
// RUN: %python %S/produce.py %S/out.mlir | filecheck %s

// Adds then multiplies.
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %y : tensor<4xf32>
  %1 = stablehlo.multiply %0, %z : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


@needs_filecheck
def test_first_run_writes_a_block_before_the_input_and_passes(suite, tmp_path):
    suite("out.mlir", MODULE)
    test = suite("t.mlir", TEST_MLIR)
    assert update_test_file(test) is True
    lines = test.read_text().splitlines()
    begin = lines.index(f"// {GENERATED_BEGIN}")
    end = lines.index(f"// {GENERATED_END}")
    assert lines[begin - 1] == "// Adds then multiplies." and lines[end + 1].startswith("func.func @f(")
    assert lines[begin + 1:end] == generate_checks(MODULE)
    # Everything else is the file as it was.
    assert "\n".join(lines[:begin] + lines[end + 1:]) + "\n" == TEST_MLIR
    assert filecheck(str(test), MODULE, tmp_path=tmp_path)
    # Idempotent: nothing changes the second time.
    before = test.read_text()
    assert update_test_file(test) is False
    assert test.read_text() == before


@needs_filecheck
def test_a_changed_output_rewrites_only_the_block(suite, tmp_path):
    suite("out.mlir", MODULE)
    test = suite("t.mlir", TEST_MLIR)
    update_test_file(test)
    # A hand-written line and a comment added around the block stay.
    text = test.read_text().replace("// Adds then multiplies.", "// Adds then multiplies.\n// CHECK-NOT: divide")
    text = text.replace("func.func @f(%x", "// the input\nfunc.func @f(%x")
    test.write_text(text)
    changed = MODULE.replace("stablehlo.multiply", "stablehlo.subtract")
    suite("out.mlir", changed)
    assert not filecheck(str(test), changed, tmp_path=tmp_path)
    assert update_test_file(test) is True
    new = test.read_text()
    assert "// CHECK-NOT: divide" in new and "// the input\nfunc.func @f(%x" in new
    assert new.count(GENERATED_BEGIN) == 1 and "stablehlo.subtract %[[VAL_0]]" in new
    assert filecheck(str(test), changed, tmp_path=tmp_path)


def test_dry_run_writes_nothing(suite):
    suite("out.mlir", MODULE)
    test = suite("t.mlir", TEST_MLIR)
    assert update_test_file(test, dry_run=True) is True
    assert test.read_text() == TEST_MLIR


@needs_filecheck
def test_check_prefix_updates_only_its_run_line(suite, tmp_path):
    suite("out.mlir", MODULE)
    suite("strict.mlir", MODULE.replace("add", "subtract"))
    test = suite("t.mlir", """\
        // RUN: %python %S/produce.py %S/out.mlir | filecheck %s
        // RUN: %python %S/produce.py %S/strict.mlir | filecheck %s --check-prefix=STRICT

        func.func @f() {
          return
        }
        """)
    assert update_test_file(test) is True
    text = test.read_text()
    assert text.index("// CHECK-LABEL:") < text.index("// STRICT-LABEL:")  # RUN-line order
    suite("out.mlir", MODULE.replace("multiply", "divide"))
    suite("strict.mlir", MODULE.replace("add", "maximum"))
    assert update_test_file(test, check_prefix="STRICT") is True
    new = test.read_text()
    assert "stablehlo.maximum" in new and "stablehlo.divide" not in new and "stablehlo.multiply" in new
    assert filecheck(str(test), MODULE.replace("add", "maximum"), prefix="STRICT", tmp_path=tmp_path)
    assert filecheck(str(test), MODULE, prefix="CHECK", tmp_path=tmp_path)
    with pytest.raises(CheckLinesError, match=r"t\.mlir: no RUN line checks prefix 'NOPE' \(prefixes: CHECK, STRICT\)"):
        update_test_file(test, check_prefix="NOPE")


@needs_filecheck
def test_split_files_get_one_block_per_chunk(suite, tmp_path):
    first, second = MODULE, MODULE.replace("@f", "@g").replace("multiply", "divide")
    suite("out.mlir", first + "// -----\n" + second)
    test = suite("t.mlir", """\
        // RUN: %python %S/produce.py %S/out.mlir --split-input-file | filecheck %s

        // first
        func.func @f() {
          return
        }

        // -----

        // second
        func.func @g() {
          return
        }
        """)
    assert update_test_file(test) is True
    text = test.read_text()
    chunks = text.split("// -----\n")
    assert [c.count(GENERATED_BEGIN) for c in chunks] == [1, 1]
    assert "@f(" in chunks[0] and "@g(" not in chunks[0] and "@g(" in chunks[1]
    assert chunks[1].index("// second") < chunks[1].index(GENERATED_BEGIN) < chunks[1].index("func.func @g()")
    assert filecheck(str(test), first + "// -----\n" + second, tmp_path=tmp_path)
    assert update_test_file(test) is False


def test_a_run_line_without_split_puts_every_check_in_the_first_chunk(suite):
    suite("out.mlir", MODULE)
    test = suite("t.mlir", "// RUN: %python %S/produce.py %S/out.mlir | filecheck %s\n\n// a\n\n// -----\n\n"
                           "func.func @g() {\n  return\n}\n")
    update_test_file(test)
    chunks = test.read_text().split("// -----\n")
    assert GENERATED_BEGIN in chunks[0] and GENERATED_BEGIN not in chunks[1]


@needs_filecheck
def test_python_lit_script_sections_go_above_their_functions(suite, tmp_path):
    module_a = MODULE.replace("@f", "@main")
    suite("a.mlir", module_a)
    test = suite("t.py", f"""\
        # RUN: %PYTHON %s | filecheck %s
        # A Python lit script: one TEST section per case.

        import sys

        print("header line")


        def run(fn):
            print(f"TEST: {{fn.__name__}}")
            fn()
            return fn


        @run
        def first():
            sys.stdout.write(open({str(tmp_path / 'a.mlir')!r}).read())


        # Hand-written, kept.
        @run
        def second():
            print("done: 3 changes")
        """)
    assert update_test_file(test) is True
    text = test.read_text()
    lines = text.splitlines()
    assert lines[1] == f"# {GENERATED_BEGIN}" and lines[2] == "# CHECK:       header line"
    at_first = lines.index("def first():")
    assert lines[at_first - 2] == f"# {GENERATED_END}"
    assert "# CHECK-LABEL: TEST: first" in lines and "# CHECK-LABEL:   func.func @main(" in lines
    second_block = lines[lines.index("# CHECK-LABEL: TEST: second"):lines.index("def second():")]
    assert second_block == ["# CHECK-LABEL: TEST: second", "# CHECK-NEXT:  done: 3 changes",
                            f"# {GENERATED_END}", "@run"]
    assert lines[lines.index("# Hand-written, kept.") + 1] == f"# {GENERATED_BEGIN}"
    ast_ok = subprocess.run([sys.executable, str(test)], capture_output=True, timeout=60)
    assert ast_ok.returncode == 0
    assert filecheck(str(test), ast_ok.stdout.decode(), tmp_path=tmp_path)
    assert update_test_file(test) is False


def test_python_section_without_its_function_is_an_error(suite):
    test = suite("t.py", """\
        # RUN: %PYTHON %s | filecheck %s
        print("TEST: nowhere")
        print("x")
        """)
    with pytest.raises(CheckLinesError, match=r"t\.py: the output has 'TEST: nowhere' but the file defines no "
                                              r"top-level function 'nowhere'"):
        update_test_file(test)


# --- errors ----------------------------------------------------------------------------------------


def test_no_run_line(suite):
    test = suite("t.mlir", "func.func @f() {\n  return\n}\n")
    with pytest.raises(CheckLinesError, match=r"t\.mlir: no RUN line"):
        update_test_file(test)


def test_run_line_without_filecheck(suite):
    test = suite("t.mlir", "// RUN: toolkit-opt %s --verify-diagnostics\n")
    with pytest.raises(CheckLinesError, match=r"t\.mlir: no RUN line pipes a command's output into 'FileCheck %s' "
                                              r"\(line 1: does not pipe its output into FileCheck\)"):
        update_test_file(test)


@pytest.mark.parametrize("run, reason", [
    ("not toolkit-opt %s 2>&1 | filecheck %s", "expects its command to fail"),
    ("env TOOLKIT_PASS_TRACEBACK=1 not toolkit-opt %s 2>&1 | filecheck %s", "expects its command to fail"),
    ("toolkit-opt %s | filecheck %S/other.mlir", "checks against %S/other.mlir, not this file"),
    ("toolkit-opt %s | filecheck %s | cat", "pipes FileCheck's output on to another command"),
])
def test_run_lines_left_to_hand_written_checks(suite, run, reason):
    test = suite("t.mlir", f"// RUN: {run}\n")
    with pytest.raises(CheckLinesError, match=re.escape(reason)):
        update_test_file(test)


def test_check_prefix_of_a_failing_run_line_is_an_error(suite):
    suite("out.mlir", MODULE)
    test = suite("t.mlir", "// RUN: %python %S/produce.py %S/out.mlir | filecheck %s\n"
                           "// RUN: not %python %S/produce.py fail 2>&1 | filecheck %s --check-prefix=BAD\n")
    with pytest.raises(CheckLinesError, match=r"t\.mlir:2: the RUN line checking 'BAD' expects its command to fail"):
        update_test_file(test, check_prefix="BAD")
    assert update_test_file(test) is True  # without the prefix, the failing line is left alone
    assert "BAD" not in test.read_text().split(GENERATED_BEGIN)[1]


def test_a_failing_command_names_the_file_line_and_command(suite, tmp_path):
    test = suite("t.mlir", "// comment\n// RUN: %python %S/produce.py fail | filecheck %s\n")
    with pytest.raises(CheckLinesError) as error:
        update_test_file(test)
    message = str(error.value)
    assert message.startswith(f"{test}:2: the RUN command failed (exit status 3): ")
    assert f"{sys.executable} {tmp_path}/produce.py fail" in message
    assert "produce.py: error: asked to fail" in message
    assert test.read_text() == "// comment\n// RUN: %python %S/produce.py fail | filecheck %s\n"


def test_a_hanging_command_times_out(suite):
    test = suite("t.mlir", "// RUN: %python -c 'import time; time.sleep(30)' | filecheck %s\n")
    with pytest.raises(CheckLinesError, match=r"t\.mlir:1: the RUN command did not finish in 0\.5 s"):
        update_test_file(test, timeout=0.5)


@needs_filecheck
def test_scratch_files_of_earlier_run_lines_and_input_files(suite, tmp_path):
    """RUN lines share %t as in lit; FileCheck may read its input from a file; lit's `not` works in commands."""
    suite("out.txt", "made by an earlier RUN line\n")
    test = suite("t.mlir", """\
        // RUN: rm -rf %t && mkdir %t && cp %S/out.txt %t/copy.txt
        // RUN: cat %t/copy.txt && not false | filecheck %s
        // RUN: filecheck %s --check-prefix=REDIRECT < %t/copy.txt
        // RUN: filecheck %s --input-file=%t/copy.txt --check-prefix=INPUT
        """)
    assert update_test_file(test) is True
    text = test.read_text()
    for prefix in ("CHECK", "REDIRECT", "INPUT"):
        assert f"// {prefix}:".ljust(len(f"// {prefix}-LABEL: ")) + "made by an earlier RUN line" in text
        assert filecheck(str(test), "made by an earlier RUN line\n", prefix=prefix, tmp_path=tmp_path)
    assert update_test_file(test) is False


def test_unpaired_split_chunks_go_in_the_first_block_with_a_warning(suite):
    suite("out.mlir", MODULE)  # one chunk printed for the file's two (as --verify-diagnostics does)
    test = suite("t.mlir", """\
        // RUN: %python %S/produce.py %S/out.mlir --split-input-file | filecheck %s

        func.func @f() {
          return
        }

        // -----

        func.func @g() {
          return
        }
        """)
    with pytest.warns(CheckLinesWarning, match=r"t\.mlir:1: the RUN command printed 1 '// -----' chunks for the "
                                                r"file's 2; its CHECK lines all go in the first chunk's block"):
        assert update_test_file(test) is True
    chunks = test.read_text().split("// -----\n")
    assert GENERATED_BEGIN in chunks[0] and GENERATED_BEGIN not in chunks[1]


def test_same_prefix_with_different_outputs_is_an_error(suite):
    suite("a.mlir", MODULE)
    suite("b.mlir", MODULE.replace("add", "subtract"))
    test = suite("t.mlir", "// RUN: %python %S/produce.py %S/a.mlir | filecheck %s\n"
                           "// RUN: %python %S/produce.py %S/b.mlir | filecheck %s\n")
    with pytest.raises(CheckLinesError, match=r"RUN lines 1 and 2 both check prefix 'CHECK' but print different"):
        update_test_file(test)


def test_an_unterminated_block_is_an_error(suite):
    suite("out.mlir", MODULE)
    test = suite("t.mlir", f"// RUN: %python %S/produce.py %S/out.mlir | filecheck %s\n// {GENERATED_BEGIN}\n"
                           "// CHECK: x\n")
    with pytest.raises(CheckLinesError, match=r"t\.mlir:2: the generated block has no '// End of generated"):
        update_test_file(test)


def test_empty_output_is_an_error(suite):
    suite("out.mlir", "")
    test = suite("t.mlir", "// RUN: %python %S/produce.py %S/out.mlir | filecheck %s\n")
    with pytest.raises(CheckLinesError, match=r"t\.mlir: the RUN line checking 'CHECK' printed nothing to check"):
        update_test_file(test)


def test_missing_file_and_bad_prefix():
    with pytest.raises(CheckLinesError, match=r"cannot read '/nonexistent/t\.mlir'"):
        update_test_file("/nonexistent/t.mlir")
    with pytest.raises(CheckLinesError, match="invalid FileCheck prefix"):
        update_test_file("/nonexistent/t.mlir", check_prefix="no good")


# --- RUN lines as lit reads them --------------------------------------------------------------------


def test_run_lines_continuations_and_prefixes():
    runs = lit_commands.run_lines([
        "// RUN: toolkit-opt %s \\",
        "// RUN:   --pass-pipeline='builtin.module(a, b)' | filecheck %s --check-prefixes=ONE,TWO",
        "// RUN: toolkit-opt %s | tee %t || true | FileCheck %s -check-prefix X",
        "// RUN: toolkit-opt %s --split-input-file | filecheck %s",
    ])
    assert [r.line for r in runs] == [1, 3, 4]
    assert runs[0].producer == "toolkit-opt %s --pass-pipeline='builtin.module(a, b)'"
    assert runs[0].prefix == "ONE" and runs[0].skip_reason is None and not runs[0].splits
    assert runs[1].producer == "toolkit-opt %s | tee %t || true" and runs[1].prefix == "X"
    assert runs[2].splits


def test_substitutions_cover_lit_cfg():
    """Every substitution test/lit/lit.cfg.py defines is one update_test_file applies (drift guard)."""
    config = (ROOT / "test" / "lit" / "lit.cfg.py").read_text()
    keys = re.findall(r'config\.substitutions\.append\(\(r?"([^"]+)"', config)
    assert keys, "lit.cfg.py's substitutions were not found"
    ours = lit_commands.substitutions(str(ROOT / "test" / "lit" / "passes" / "simplify.mlir"), "/tmp/scratch")
    samples = {"%PYTHON": "%PYTHON", "%python": "%python", "%corpora": "%corpora", "%inputs": "%inputs",
               r"\btoolkit-opt\b": "toolkit-opt", r"\btoolkit-run\b": "toolkit-run", r"\bfilecheck\b": None}
    for key in keys:
        assert key in samples, f"lit.cfg.py substitutes {key!r}; teach toolkit.lab.lit_commands.substitutions it"
        sample = samples[key]
        if sample is not None:  # filecheck only appears after the pipe, which is never run
            assert any(re.fullmatch(pattern, sample) for pattern, _value in ours), key
    expanded = dict(ours)
    assert expanded["%inputs"] == str(ROOT / "test" / "lit" / "Inputs")
    assert expanded["%s"] == str(ROOT / "test" / "lit" / "passes" / "simplify.mlir")
