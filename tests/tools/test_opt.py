"""toolkit-opt in-process: formats, splitting, diagnostics, flags, exit codes."""

from __future__ import annotations

import pathlib

import pytest

from toolkit.tools.opt import main

PROGRAM = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<2xf32>
  %0 = stablehlo.multiply %x, %one : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


@pytest.fixture
def program(tmp_path) -> pathlib.Path:
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    return path


def run(args: list[str], capsys) -> tuple[int, str]:
    status = main([str(a) for a in args])
    return status, capsys.readouterr().err


def test_pipeline_runs_and_writes_output(program, tmp_path, capsys) -> None:
    out = tmp_path / "out.mlir"
    status, err = run([program, "--pass-pipeline=builtin.module(toolkit-simplify)", "-o", out], capsys)
    assert status == 0, err
    assert "multiply" not in out.read_text() and "return %arg0" in out.read_text()


def test_pass_flags_run_in_order(program, tmp_path, capsys) -> None:
    out = tmp_path / "out.mlir"
    status, err = run([program, "--cse", "--toolkit-simplify", "--mlir-timing", "-o", out], capsys)
    assert status == 0
    assert err.index("CSEPass") < err.index("SimplifyPass")  # the timing report's rows, as MLIR names passes


def test_flags_and_pipeline_together_are_rejected(program, capsys) -> None:
    status, err = run([program, "--cse", "--pass-pipeline=cse"], capsys)
    assert status == 2 and "use either -pass-pipeline or pass flags" in err


def test_formats_round_trip(program, tmp_path, capsys) -> None:
    for emit in ("bytecode", "vhlo"):
        binary = tmp_path / f"out.{emit}"
        assert run([program, f"--emit={emit}", "-o", binary], capsys)[0] == 0
        text = tmp_path / f"back.{emit}.mlir"
        assert run([binary, "-o", text], capsys)[0] == 0
        assert "stablehlo.multiply %arg0" in text.read_text()
    hlo = tmp_path / "out.hlo"
    assert run([program, "--emit=hlo", "-o", hlo], capsys)[0] == 0
    assert hlo.read_text().startswith("HloModule")


def test_split_with_binary_output_is_a_usage_error(program, capsys) -> None:
    status, err = run([program, "--split-input-file", "--emit=bytecode"], capsys)
    assert status == 2 and err.count("\n") == 1


def test_parse_error_exit_code_and_location(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f() {\n  return %nope : tensor<f32>\n}\n")
    status, err = run([bad], capsys)
    assert status == 1
    assert f"{bad}:2:" in err and "error:" in err


def test_verify_diagnostics(tmp_path, capsys) -> None:
    source = tmp_path / "diag.mlir"
    source.write_text(
        "// expected-error @+1 {{custom op 'stablehlo.bogus' is unknown}}\n"
        "%0 = stablehlo.bogus : tensor<f32>\n"
        "// -----\n"
        "func.func @fine() {\n  return\n}\n")
    status, err = run([source, "--split-input-file", "--verify-diagnostics", "-o", tmp_path / "o"], capsys)
    assert status == 0, err
    source.write_text("// expected-error @+1 {{never happens}}\nfunc.func @fine() {\n  return\n}\n")
    status, err = run([source, "--verify-diagnostics", "-o", tmp_path / "o"], capsys)
    assert status == 1
    assert 'expected error "never happens" was not produced' in err


def test_unknown_pass_is_a_usage_error(program, capsys) -> None:
    status, err = run([program, "--pass-pipeline=builtin.module(toolkit-simplfy)"], capsys)
    assert status == 2 and "did you mean: toolkit-simplify" in err


def test_failing_pass_reports_it(tmp_path, capsys) -> None:
    source = tmp_path / "nomain.mlir"
    source.write_text("func.func @helper() {\n  return\n}\n")
    status, err = run([source, "--toolkit-checks-to-results"], capsys)
    assert status == 1
    assert err.count("no function @main") == 1 and "nomain.mlir:" in err  # once, at its location


def test_list_passes(capsys) -> None:
    assert main(["--list-passes"]) == 0
    out = capsys.readouterr().out
    assert "toolkit-simplify" in out and "stablehlo-refine-shapes" in out and "[c++]" in out


def test_missing_input(tmp_path, capsys) -> None:
    status, err = run([tmp_path / "missing.mlir"], capsys)
    assert status == 1 and "cannot read" in err


def test_binary_garbage_is_a_clear_error(tmp_path, capsys) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\xff\xfe\xfd")
    status, err = run([junk], capsys)
    assert status == 1 and "neither UTF-8 MLIR text" in err
