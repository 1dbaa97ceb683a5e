"""toolkit.lab.reduction (reduce_module) and toolkit-reduce: delta debugging a module a pass fails on.

The pass under test is a throwaway plugin, ``test-reduce-cosine``, meant to
rewrite ``cos(x)`` as ``sin(x + pi/2)``. Its buggy versions fail on the one
``stablehlo.cosine`` hidden in a 1,000-op chain: they raise (``error``),
segfault (``crash``), leave it alone (``filecheck``) or rewrite it as
``sin(x)`` (``numerics``). The reducer must find that op (<= 10 ops left, in
< 60 s), and the lit test it writes must fail with the buggy pass and pass
with the fixed one.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
from jaxlib.mlir import ir

from toolkit.lab import interestingness, reduction_steps
from toolkit.lab.check_lines import update_test_file
from toolkit.lab.interestingness import NotInterestingError, parse_test
from toolkit.lab.reduction import ReductionProgress, ReductionResult, reduce_module
from toolkit.lab.reduction_lit import lit_test, prune_check_lines
from toolkit.passes import load_pass_plugin
from toolkit.tools import opt as opt_cli
from toolkit.tools import reduce as reduce_cli

PIPELINE = "builtin.module(test-reduce-cosine)"

PLUGIN = '''
"""test-reduce-cosine: cos(x) -> sin(x + pi/2); BUG selects how the buggy version fails."""
import dataclasses
import math
import os
import signal
from typing import ClassVar

import numpy as np
from jaxlib.mlir import ir

from toolkit.ir.builders import build, insert_before, splat_constant
from toolkit.ir.walk import ops_named, replace_op_results
from toolkit.passes import ModulePass, PassFailure, register_pass

BUG = {bug!r}


@register_pass(override=True)
@dataclasses.dataclass(frozen=True)
class ReduceCosine(ModulePass):
    name: ClassVar[str] = "test-reduce-cosine"
    description: ClassVar[str] = "cos(x) -> sin(x + pi/2) (a test pass for toolkit-reduce)."

    def apply(self, op):
        for cosine in ops_named(op, "stablehlo.cosine"):
            if BUG == "error":
                raise PassFailure("cannot rewrite this cosine", op=cosine)
            if BUG == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            if BUG == "filecheck":
                continue
            x = cosine.operands[0]
            with insert_before(cosine):
                if BUG == "numerics":
                    shifted = x
                else:
                    half_pi = splat_constant(math.pi / 2, x.type)
                    shifted = build("stablehlo.add", [x, half_pi], [x.type]).result
                sine = build("stablehlo.sine", [shifted], [x.type]).result
            replace_op_results(cosine, [sine])
'''

CHECKS = """\
// CHECK-LABEL: func.func @main
// CHECK-NOT: stablehlo.cosine
// CHECK: return
"""


def write_plugin(path, bug):
    path.write_text(PLUGIN.format(bug=bug))
    return str(path)


@pytest.fixture
def plugin(tmp_path):
    """A function: write the plugin with ``bug`` (None: fixed) and load it here; returns its path."""
    path = tmp_path / "reduce_cosine_plugin.py"

    def load(bug):
        write_plugin(path, bug)
        load_pass_plugin(str(path))
        return str(path)

    yield load
    write_plugin(path, None)
    load_pass_plugin(str(path))  # leave the fixed pass registered for later tests


def chain(n: int, bad: int | None = None, *, shape="8x16") -> str:
    """``@main``: an n-op chain of elementwise ops (a cosine at ``bad``), a helper call, attributes, a constant."""
    t = f"tensor<{shape}xf32>"
    lines = ["module attributes {mhlo.num_partitions = 1 : i32} {",
             f"  func.func private @helper(%a: {t}) -> {t} {{",
             f"    %0 = stablehlo.negate %a : {t}", f"    return %0 : {t}", "  }",
             f"  func.func @main(%arg0: {t} {{mhlo.sharding = \"{{replicated}}\"}}, %arg1: {t}) -> "
             f"({t} {{jax.result_info = \"result\"}}) {{",
             f"    %c = stablehlo.constant dense<2.0> : {t}",
             f"    %h = func.call @helper(%arg0) : ({t}) -> {t}"]
    previous = "%h"
    # Every four ops add and take away the same values: bounded, and the result still depends on the
    # cosine (so a numerics bug in it shows at the output).
    kinds = ["stablehlo.add", "stablehlo.subtract", "stablehlo.subtract", "stablehlo.add"]
    for i in range(n):
        if i == bad:
            lines.append(f"    %v{i} = stablehlo.cosine {previous} : {t}")
        else:
            other = "%arg1" if i % 2 else "%c"
            lines.append(f"    %v{i} = {kinds[i % 4]} {previous}, {other} : {t}")
        previous = f"%v{i}"
    lines += [f"    return {previous} : {t}", "  }", "}"]
    return "\n".join(lines) + "\n"


def ops_of(text: str) -> int:
    from toolkit.ir.context import make_context

    return reduction_steps.count_ops(ir.Module.parse(text, make_context()))


# --- the four kinds on 1,000 ops ---------------------------------------------------------------------

LARGE = 1000


@pytest.mark.parametrize("kind, size", [("error:cannot rewrite", LARGE), ("error", 200), ("crash", LARGE)])
def test_reduces_1000_ops_to_the_failing_op(plugin, kind, size):
    plugin(kind.partition(":")[0])
    text = chain(size, bad=size * 3 // 5)
    assert ops_of(text) >= size
    start = time.perf_counter()
    result = reduce_module(text, kind, pipeline=PIPELINE)
    seconds = time.perf_counter() - start
    print(f"\n{kind}: {result.summary()}")
    assert seconds < 60
    assert result.ops_before >= size and result.ops_after <= 10
    assert "stablehlo.cosine" in result.text
    assert result.steps > 0 and result.tests > 0 and result.seconds > 0


def test_filecheck_kind_reduces_1000_ops(plugin, tmp_path):
    plugin("filecheck")
    checks = tmp_path / "checks.txt"
    checks.write_text(CHECKS)
    result = reduce_module(chain(LARGE, bad=400), f"filecheck:{checks}", pipeline=PIPELINE)
    print(f"\nfilecheck: {result.summary()}")
    assert result.seconds < 60 and result.ops_after <= 10
    assert "stablehlo.cosine" in result.text


def test_numerics_kind_reduces_a_chain(plugin):
    plugin("numerics")
    result = reduce_module(chain(16, bad=9), "numerics", pipeline=PIPELINE)
    print(f"\nnumerics: {result.summary()}")
    assert result.ops_after <= 10 and "stablehlo.cosine" in result.text


@pytest.mark.slow
def test_numerics_kind_reduces_1000_ops(plugin):
    plugin("numerics")
    result = reduce_module(chain(LARGE, bad=613), "numerics", pipeline=PIPELINE)
    print(f"\nnumerics: {result.summary()}")
    assert result.seconds < 60 and result.ops_after <= 10


def test_cmd_kind_and_python_predicate():
    text = chain(40, bad=17)
    by_cmd = reduce_module(text, "cmd:grep -q stablehlo.cosine {}")
    by_predicate = reduce_module(text, lambda candidate: "stablehlo.cosine" in candidate)
    assert by_cmd.text == by_predicate.text
    assert by_cmd.ops_after <= 4 and by_cmd.test == "cmd:grep -q stablehlo.cosine {}"
    assert by_predicate.test == "python"
    assert "%arg1" not in by_cmd.text and "tensor<1x1xf32>" in by_cmd.text  # unused argument gone, dims shrunk


def test_deterministic_and_reports_progress(plugin):
    plugin("error")
    seen: list[ReductionProgress] = []
    first = reduce_module(chain(120, bad=50), "error", pipeline=PIPELINE, progress=seen.append)
    second = reduce_module(chain(120, bad=50), "error", pipeline=PIPELINE)
    assert first.text == second.text and first.steps == second.steps
    assert seen and seen[-1].ops == first.ops_after and seen[0].ops_before == first.ops_before
    assert "ops (from" in seen[-1].line()
    assert isinstance(first, ReductionResult) and "ops ->" in first.summary()


def test_time_limit_returns_the_best_so_far():
    def slow(candidate: str) -> bool:
        time.sleep(0.05)
        return "stablehlo.cosine" in candidate

    result = reduce_module(chain(200, bad=100), slow, time_limit=0.3)
    assert result.stopped == "time limit"
    assert "stablehlo.cosine" in result.text and result.ops_after <= result.ops_before


def test_accepts_an_ir_module_and_leaves_it_alone():
    from toolkit.ir.context import make_context

    module = ir.Module.parse(chain(10, bad=3), make_context())
    before = str(module)
    result = reduce_module(module, lambda text: "stablehlo.cosine" in text)
    assert str(module) == before and result.ops_after < result.ops_before
    bytecode = io.BytesIO()
    module.operation.write_bytecode(bytecode)
    from_bytes = reduce_module(bytecode.getvalue(), lambda text: "stablehlo.cosine" in text)
    assert from_bytes.text == result.text


@pytest.mark.parametrize("name, needles", [
    ("lstm_scan_toolkit", ("stablehlo.while", "stablehlo.tanh")),
    ("mlp_mixer_toolkit", ("stablehlo.dot_general",)),
])
def test_real_programs_reduce_without_breaking(name, needles):
    """Zoo programs (loops, reductions, calls): every edit keeps the process alive and the result verifies."""
    zoo = pytest.importorskip("toolkit.lab.zoo")
    try:
        text = zoo.get(name).module_text()
    except KeyError:
        pytest.skip(f"the zoo has no {name}")
    result = reduce_module(text, lambda candidate: all(n in candidate for n in needles))
    assert result.ops_after < result.ops_before // 3
    assert ops_of(result.text) == result.ops_after


# --- single edits ------------------------------------------------------------------------------------


def reduce_keeping(text: str, needle: str) -> str:
    return reduce_module(text, lambda candidate: needle in candidate).text


def test_drops_functions_and_calls():
    reduced = reduce_keeping(chain(3), "stablehlo.subtract")
    assert "@helper" not in reduced and "func.call" not in reduced
    # Keeping the helper's op, the call stays (its result replaced, the function is still needed).
    assert "@helper" in reduce_keeping(chain(3), "stablehlo.negate")


def test_case_becomes_one_branch_and_while_one_body():
    text = """
func.func @main(%i: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%i) ({
    %a = stablehlo.abs %x : tensor<4xf32>
    stablehlo.return %a : tensor<4xf32>
  }, {
    %b = stablehlo.cosine %x : tensor<4xf32>
    stablehlo.return %b : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  %1:2 = stablehlo.while(%it = %i, %v = %0) : tensor<i32>, tensor<4xf32>
   cond {
    %c = stablehlo.compare LT, %it, %it : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %s = stablehlo.sine %v : tensor<4xf32>
    stablehlo.return %it, %s : tensor<i32>, tensor<4xf32>
  }
  return %1#1 : tensor<4xf32>
}
"""
    reduced = reduce_keeping(text, "stablehlo.cosine")
    assert "stablehlo.case" not in reduced and "stablehlo.while" not in reduced
    assert ops_of(reduced) <= 3
    # Keeping the loop body's op, the while goes (body inlined once) but the sine stays.
    reduced = reduce_module(text, lambda c: "stablehlo.sine" in c and "stablehlo.cosine" in c).text
    assert "stablehlo.while" not in reduced and "stablehlo.sine" in reduced


def test_constants_attributes_and_dimensions_shrink():
    text = """
module attributes {mhlo.num_partitions = 1 : i32} {
  func.func @main(%x: tensor<16x8xf32> {mhlo.sharding = "{replicated}"}) -> tensor<16x8xi32> {
    %c = stablehlo.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>
    %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<8xi32>) -> tensor<16x8xi32>
    %f = stablehlo.convert %x : (tensor<16x8xf32>) -> tensor<16x8xi32>
    %r = stablehlo.add %f, %b {mhlo.frontend_attributes = {a = "b"}} : tensor<16x8xi32>
    return %r : tensor<16x8xi32>
  }
}
"""
    reduced = reduce_keeping(text, "stablehlo.broadcast_in_dim")
    assert "mhlo." not in reduced
    assert "dense<[1, 2" not in reduced
    assert "16x" not in reduced and "x8x" not in reduced and "tensor<8x" not in reduced


def test_steps_refuse_what_breaks_the_ir():
    from toolkit.ir.context import make_context

    module = ir.Module.parse("""
func.func @main(%t: !stablehlo.token) -> !stablehlo.token {
  %0 = stablehlo.after_all %t, %t : !stablehlo.token
  return %0 : !stablehlo.token
}""", make_context())
    op = reduction_steps.reducible_ops(module)[0]
    # A token has no zero constant; its operand stands in.
    assert reduction_steps.replacement_value(op, 0, "zero") is None
    assert reduction_steps.remove_op(op, ("zero",)) is False
    assert reduction_steps.remove_op(op) is True
    assert reduction_steps.count_ops(module) == 2
    assert reduction_steps.shrink_dimension("tensor<8x8xf32> tensor<8xi1>", 8, 4) == \
        "tensor<4x4xf32> tensor<4xi1>"
    assert reduction_steps.dimension_sizes("tensor<?x8x1xf32> tensor<3xf32>") == [8, 3]
    assert reduction_steps.tensor_volume("tensor<2x3xf32> tensor<f32> tensor<?x4xf32>") == 6 + 0 + 4


# --- errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, pipeline, message", [
    ("explode", PIPELINE, "unknown test kind 'explode'"),
    ("error:(", PIPELINE, "bad regular expression"),
    ("filecheck", PIPELINE, "needs a FileCheck file"),
    ("filecheck:/no/such/checks.txt", PIPELINE, "no such file"),
    ("crash:SIGSEGV", PIPELINE, "takes no argument"),
    ("cmd:", None, "needs a shell command"),
    ("crash", None, "needs a pass pipeline"),
    ("error", "", "needs a pass pipeline"),
])
def test_bad_test_specs(spec, pipeline, message):
    with pytest.raises(ValueError, match=message):
        parse_test(spec, pipeline)


def test_input_not_interesting_or_invalid(plugin):
    plugin(None)  # the fixed pass: nothing fails
    with pytest.raises(NotInterestingError, match="not interesting for --test=error.*without an error"):
        reduce_module(chain(5, bad=2), "error", pipeline=PIPELINE)
    with pytest.raises(NotInterestingError, match="did not die of a signal"):
        reduce_module(chain(5, bad=2), "crash", pipeline=PIPELINE)
    plugin("crash")
    with pytest.raises(NotInterestingError, match=r"crashes on the input \(SIGSEGV\).*use --test=crash"):
        reduce_module(chain(5, bad=2), "error", pipeline=PIPELINE)
    with pytest.raises(ir.MLIRError):
        reduce_module("func.func @main( {", "cmd:true")
    with pytest.raises((ValueError, ir.MLIRError)):
        reduce_module(b"\x00\x01 not a module", "cmd:true")
    with pytest.raises(TypeError, match="not int"):
        reduce_module(3, "cmd:true")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="spec string"):
        reduce_module(chain(2), 42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="time_limit must be positive"):
        reduce_module(chain(2), "cmd:true", time_limit=0)


def test_crash_child_timeout_is_not_interesting():
    assert interestingness.run_command("sleep 5; test -s {}", "x", timeout=0.2) is None
    assert interestingness.run_command("test -s", "module {}", timeout=10) == 0


# --- lit tests that fail before the fix and pass after --------------------------------------------------

LIT_CONFIG = f"""
import os
import lit.formats
config.name = "reduced"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join([{os.path.dirname(sys.executable)!r}, os.environ.get("PATH", "")])
config.environment["PYTHONPATH"] = {os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))!r}
"""


def lit_results(suite) -> dict[str, str]:
    """Run lit on every test in ``suite`` at once: test file name -> PASS or FAIL."""
    with open(os.path.join(suite, "lit.cfg.py"), "w") as stream:
        stream.write(LIT_CONFIG)
    lit = shutil.which("lit", path=os.path.dirname(sys.executable)) or "lit"
    done = subprocess.run([lit, "-v", str(suite)], capture_output=True, text=True, timeout=300)
    found = re.findall(r"^(PASS|FAIL): .* :: (\S+)", done.stdout, re.MULTILINE)
    return {name: verdict for verdict, name in found}


@pytest.mark.parametrize("kinds", [
    ["error:cannot rewrite"],
    # Every kind: lit starts toolkit-opt/toolkit-run twice per test (seconds each on 2 busy cores).
    pytest.param(["error:cannot rewrite", "crash", "filecheck", "numerics"], marks=pytest.mark.slow),
], ids=["error", "all-kinds"])
def test_emitted_lit_tests_fail_with_the_bug_and_pass_after_the_fix(tmp_path, capsys, kinds):
    """One lit test per kind, each with its own buggy plugin; lit runs them all, then again with fixed plugins."""
    (tmp_path / "checks.txt").write_text(CHECKS)
    suite = tmp_path / "suite"
    suite.mkdir()
    plugins = {}
    for kind in kinds:
        bug = kind.partition(":")[0]
        plugins[bug] = write_plugin(tmp_path / f"reduce_cosine_{bug}.py", bug)
        load_pass_plugin(plugins[bug])
        spec = f"filecheck:{tmp_path / 'checks.txt'}" if bug == "filecheck" else kind
        source = tmp_path / f"big_{bug}.mlir"
        source.write_text(chain(60 if bug == "numerics" else 200, bad=41))
        small = tmp_path / f"small_{bug}.mlir"
        status = reduce_cli.main([str(source), "-o", str(small), f"--test={spec}", f"--pass-pipeline={PIPELINE}",
                                  f"--load-pass-plugin={plugins[bug]}", f"--emit-lit={suite / (bug + '.mlir')}",
                                  "-q"])
        err = capsys.readouterr().err
        assert status == 0, err
        assert err.startswith("toolkit-reduce: ") and " ops -> " in err
        assert ops_of(small.read_text()) <= 10
        text = (suite / f"{bug}.mlir").read_text()
        assert "// RUN: " in text and "stablehlo.cosine" in text and plugins[bug] in text
    write_plugin(tmp_path / "fixed.py", None)
    load_pass_plugin(str(tmp_path / "fixed.py"))
    expected = {f"{kind.partition(':')[0]}.mlir" for kind in kinds}
    before = lit_results(suite)
    assert set(before) == expected and set(before.values()) == {"FAIL"}, before
    for bug, path in plugins.items():
        write_plugin(tmp_path / os.path.basename(path), None)
    # The loop of docs/filecheck.md: after the fix, toolkit-update-checks fills in the pass's output.
    assert update_test_file(suite / "error.mlir")
    assert "stablehlo.sine" in (suite / "error.mlir").read_text()
    assert not update_test_file(suite / "error.mlir")  # idempotent
    after = lit_results(suite)
    assert set(after) == expected and set(after.values()) == {"PASS"}, after


def test_diagnostics_style_pins_the_error(plugin, tmp_path):
    plugin("error")
    result = reduce_module(chain(30, bad=11), "error:cannot rewrite", pipeline=PIPELINE)
    text = lit_test(result, plugins=[str(tmp_path / "reduce_cosine_plugin.py")], style="diagnostics")
    assert "-verify-diagnostics" in text
    assert "// expected-error @+1 {{cannot rewrite this cosine}}" in text
    lines = text.splitlines()
    annotated = next(i for i, line in enumerate(lines) if "expected-error" in line)
    assert "stablehlo.cosine" in lines[annotated + 1]
    pinned = tmp_path / "pinned.mlir"
    pinned.write_text(text)
    run = [str(pinned), f"--load-pass-plugin={tmp_path / 'reduce_cosine_plugin.py'}", f"--pass-pipeline={PIPELINE}",
           "-verify-diagnostics"]
    assert opt_cli.main(run) == 0  # the RUN line, in-process: the annotation matches the error
    pinned.write_text(text.replace("cannot rewrite this cosine", "some other message"))
    assert opt_cli.main(run) == 1
    with pytest.raises(ValueError, match="needs --test=error"):
        lit_test(reduce_module(chain(3, bad=1), "cmd:grep -q cosine {}"), style="diagnostics")
    with pytest.raises(ValueError, match="unknown lit style"):
        lit_test(result, style="pretty")


def test_prune_check_lines_keeps_the_failing_directive():
    output = ("func.func @main\n  %0 = stablehlo.cosine %arg0\n  return %0\n"
              "func.func @other\n  return %arg0\n")
    checks = CHECKS + "// CHECK-LABEL: func.func @other\n// CHECK-NEXT: return\n"
    kept = prune_check_lines(output, checks)
    assert "// CHECK-NOT: stablehlo.cosine" in kept
    assert "// CHECK-LABEL: func.func @other" not in kept and "// CHECK-NEXT: return" not in kept
    assert len(kept) < len(checks.splitlines())


# --- the command line --------------------------------------------------------------------------------


def test_cli_usage_and_input_errors(plugin, tmp_path, capsys):
    plugin(None)
    source = tmp_path / "f.mlir"
    source.write_text(chain(4, bad=1))
    assert reduce_cli.main([str(source), "--test=nope", f"-pass-pipeline={PIPELINE}"]) == 2
    assert "toolkit-reduce: error: unknown test kind 'nope'" in capsys.readouterr().err
    assert reduce_cli.main([str(source)]) == 2
    assert "--test" in capsys.readouterr().err
    assert reduce_cli.main([str(source), "--test=crash", "--pass-pipeline=builtin.module(no-such-pass)"]) == 2
    assert "no-such-pass" in capsys.readouterr().err
    assert reduce_cli.main([str(source), "--test=error", f"--pass-pipeline={PIPELINE}"]) == 1
    assert f"{source}: error: the input is not interesting" in capsys.readouterr().err
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main() {\n  %0 = stablehlo.bogus\n}\n")
    assert reduce_cli.main([str(bad), "--test=cmd:true"]) == 1
    assert f"{bad}:2:" in capsys.readouterr().err
    assert reduce_cli.main([str(tmp_path / "missing.mlir"), "--test=cmd:true"]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert reduce_cli.main([str(source), "--test=cmd:true", "--time-limit=0"]) == 2
    assert reduce_cli.main([str(source), "--test=cmd:true", "--load-pass-plugin=/no/plugin.py"]) == 2
    assert "cannot load pass plugin" in capsys.readouterr().err
    assert reduce_cli.main(["--version"]) == 0
    assert "toolkit-reduce (toolkit" in capsys.readouterr().out


def test_cli_single_dash_flags_and_stdout(tmp_path, capsys):
    source = tmp_path / "f.mlir"
    source.write_text(chain(20, bad=7))
    assert reduce_cli.main([str(source), "-test=cmd:grep -q stablehlo.cosine {}", "-q"]) == 0
    captured = capsys.readouterr()
    assert "stablehlo.cosine" in captured.out and "func.func @main" in captured.out
    assert captured.err.startswith("toolkit-reduce: ") and " ops -> " in captured.err
    assert "[ops]" not in captured.err  # -q: no progress lines


def test_cli_progress_time_limit_and_diagnostics_style(plugin, tmp_path, capsys):
    path = plugin("error")
    source = tmp_path / "f.mlir"
    source.write_text(chain(40, bad=13))
    lit_file = tmp_path / "pinned.mlir"
    assert reduce_cli.main([str(source), "-o", str(tmp_path / "small.mlir"), "--test=error:cannot rewrite",
                            f"--pass-pipeline={PIPELINE}", f"--load-pass-plugin={path}", f"--emit-lit={lit_file}",
                            "--lit-style=diagnostics", "--time-limit=600"]) == 0
    err = capsys.readouterr().err
    assert "ops (from 4" in err and "step 1" in err  # a progress line (not a terminal: at most one a second)
    assert err.rstrip().endswith(f"wrote {tmp_path / 'small.mlir'}, {lit_file}")
    text = lit_file.read_text()
    assert "-verify-diagnostics" in text and "// expected-error @+1 {{cannot rewrite this cosine}}" in text
    assert reduce_cli.main([str(source), "--test=crash", f"--pass-pipeline={PIPELINE}",
                            "--lit-style=diagnostics", f"--emit-lit={lit_file}", "-q"]) == 2
    assert "--lit-style=diagnostics needs --test=error, not --test=crash" in capsys.readouterr().err
    assert reduce_cli.main([str(source), "--test=crash", f"--pass-pipeline={PIPELINE}", "-q"]) == 1
    assert "the input is not interesting for --test=crash" in capsys.readouterr().err
