"""toolkit-opt's mlir-opt habits in-process: dumps, timing, reproducers, split markers, diagnostics modes."""

from __future__ import annotations

import pathlib

import pytest

from toolkit.passes import reproducer
from toolkit.passes.dump import ir_dump_header, pass_class_name, pretty_pipeline, statistics_report, timing_report
from toolkit.tools.opt import _optional_values, main

PLUGIN = pathlib.Path(__file__).parents[2] / "test" / "lit" / "Inputs" / "pass_safety_plugin.py"
PROGRAM = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.add %a, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
"""


@pytest.fixture
def program(tmp_path) -> pathlib.Path:
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    return path


def run(args: list, capsys) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_headers_and_names_are_mlirs() -> None:
    assert ir_dump_header("After", "CSEPass", "cse") == "// -----// IR Dump After CSEPass: cse //----- //"
    assert ir_dump_header("After", "CSEPass", "cse", failed=True, scope=("func.func", "f")) == \
        "// -----// IR Dump After CSEPass Failed: cse ('func.func' operation: @f) //----- //"
    assert ir_dump_header("Before", "X", "x", scope=("builtin.module", None)).endswith("('builtin.module' operation) //----- //")
    assert pass_class_name("canonicalize") == "CanonicalizerPass"
    assert pass_class_name("my-new-pass") == "MyNewPassPass"


def test_reports_and_pretty_pipeline() -> None:
    rows = [(("func.func",), "CSEPass", 0.25), (("func.func",), "CanonicalizerPass", 0.5), ((), "SymbolDCEPass", 0.25)]
    tree = timing_report(rows, 1.0)
    assert "'func.func' Pipeline" in tree and tree.index("CSEPass") < tree.index("CanonicalizerPass")
    assert "0.7500 ( 75.0%)  'func.func' Pipeline" in tree
    listed = timing_report(rows, 1.0, "list")
    assert "Pipeline" not in listed and listed.index("CanonicalizerPass") < listed.index("CSEPass")
    with pytest.raises(ValueError, match="'list' or 'tree'"):
        timing_report(rows, 1.0, "pie")
    stats = statistics_report([((), "SimplifyPass", {"multiply_one": 2})])
    assert "SimplifyPass\n  (S) 2 multiply_one" in stats
    assert pretty_pipeline('builtin.module(a{x="(,)"}, b(c))') == \
        'builtin.module(\n  a{x="(,)"},\n  b(\n    c\n  )\n)'


def test_optional_values_need_an_equals_sign() -> None:
    assert _optional_values(["-split-input-file=// X", "f.mlir", "-p=cse"]) == \
        ["--split-input-file", "--x-split-input-file-value=// X", "f.mlir", "-p", "cse"]
    assert _optional_values(["--split-input-file", "f.mlir"]) == ["--split-input-file", "f.mlir"]


def test_nested_dumps_one_per_pass_and_op(program, capsys) -> None:
    status, _, err = run([program, "-p", "builtin.module(func.func(cse, canonicalize))",
                          "--mlir-print-ir-after=cse,canonicalize", "-o", "/dev/null"], capsys)
    assert status == 0
    assert err.count("// -----// IR Dump After CSEPass: cse //----- //") == 2
    assert err.count("// -----// IR Dump After CanonicalizerPass: canonicalize //----- //") == 2


def test_unknown_print_pass_is_a_usage_error(program, capsys) -> None:
    status, _, err = run([program, "--cse", "--mlir-print-ir-before=cse,nonsense-pass"], capsys)
    assert status == 2 and "unknown pass 'nonsense-pass'" in err


def test_crash_reproducer_round_trip(program, tmp_path, capsys) -> None:
    repro = tmp_path / "repro.mlir"
    args = [program, f"--load-pass-plugin={PLUGIN}", "-p", "builtin.module(func.func(cse), lit-divide-pattern)",
            f"--mlir-pass-pipeline-crash-reproducer={repro}", "--mlir-pass-pipeline-local-reproducer"]
    status, _, err = run(args, capsys)
    assert status == 1 and err.count("ZeroDivisionError") == 1 and f"reproducer generated at `{repro}`" in err
    found = reproducer.read_reproducer(repro)
    assert found.pipeline == "builtin.module(lit-divide-pattern)" and found.module_text.count("stablehlo.add") == 1
    status, _, replay = run([repro, "--run-reproducer", f"--load-pass-plugin={PLUGIN}"], capsys)
    assert status == 1 and f"{program}:4:8: error: pass 'lit-divide-pattern' raised ZeroDivisionError" in replay
    status, _, err = run([repro, "--run-reproducer", "--cse"], capsys)
    assert status == 2 and "drop -pass-pipeline" in err


def test_crash_reproducer_unwritable_is_one_error_line(program, tmp_path, capsys) -> None:
    status, _, err = run([program, "--cse", f"--mlir-pass-pipeline-crash-reproducer={tmp_path}/no/such/dir/r.mlir"],
                         capsys)
    assert status == 1 and err.startswith("toolkit-opt: error: cannot write the crash reproducer") and err.count("\n") == 1


def test_split_marker_and_debuginfo_names(program, tmp_path, capsys) -> None:
    source = tmp_path / "two.mlir"
    source.write_text("func.func @a() {\n  return\n}\n// NEXT\nfunc.func @b() {\n  return\n}\n")
    status, out, _ = run([source, "--split-input-file=// NEXT", "--mlir-print-debuginfo"], capsys)
    assert status == 0 and "// NEXT\n" in out
    assert f'loc("{source}":1:1)' in out and f'loc("{source}":2:3)' in out  # lines count per piece


def test_verify_diagnostics_only_expected(tmp_path, capsys) -> None:
    source = tmp_path / "diag.mlir"
    source.write_text("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                      "  // expected-warning @+1 {{}}\n"
                      "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
                      "  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>\n"
                      "  return %1 : tensor<4xf32>\n}\n")
    base = [source, f"--load-pass-plugin={PLUGIN}", "--lit-chatty"]
    assert run(base + ["--verify-diagnostics=only-expected"], capsys)[0] == 0
    status, _, err = run(base + ["--verify-diagnostics"], capsys)
    assert status == 1 and "unexpected remark" in err


def test_dump_pass_pipeline_timing_list_and_statistics(program, capsys) -> None:
    status, _, err = run([program, "-p", "builtin.module(func.func(cse), symbol-dce)", "--dump-pass-pipeline",
                          "--mlir-timing", "--mlir-timing-display=list", "--mlir-pass-statistics",
                          "--mlir-disable-threading", "-o", "/dev/null"], capsys)
    assert status == 0
    assert err.startswith("Pass Manager with 2 passes:\nbuiltin.module(\n  func.func(\n    cse\n  ),\n  symbol-dce\n)\n")
    assert "CSEPass" in err and "(S) 1 erased stablehlo.add" in err


def test_inline_is_refused_and_not_listed(program, capsys) -> None:
    status, _, err = run([program, "--inline"], capsys)
    assert status == 2 and "inlines no func.call" in err
    status, out, _ = run(["--list-passes"], capsys)
    assert status == 0 and "\n  inline " not in out and "builtin.module" in out
