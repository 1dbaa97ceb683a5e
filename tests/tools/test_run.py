"""toolkit-run: arguments, checks, errors."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.tools.run import main, parse_argument, run_program

PROGRAM = """
func.func @main(%x: tensor<3xi32>, %s: tensor<f32>) -> (tensor<3xi32>, tensor<f32>) {
  %0 = stablehlo.add %x, %x : tensor<3xi32>
  %expected = stablehlo.constant dense<[2, 4, 6]> : tensor<3xi32>
  stablehlo.custom_call @check.expect_eq(%0, %expected) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()
  return %0, %s : tensor<3xi32>, tensor<f32>
}
"""

SELF_CHECKING = """
func.func public @main() -> tensor<2xf32> {
  %0 = call @inputs() : () -> tensor<2xf32>
  %1 = call @expected() : () -> tensor<2xf32>
  %2 = stablehlo.negate %0 : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %2 : tensor<2xf32>
}
func.func private @inputs() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func private @expected() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[-1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
"""


def test_run_with_literal_and_npy_arguments(tmp_path) -> None:
    np.save(tmp_path / "x.npy", np.array([1, 2, 3], np.int32))
    outcome = run_program(PROGRAM, arguments=[str(tmp_path / "x.npy"), "2.5"])
    assert outcome.ok
    np.testing.assert_array_equal(outcome.results[0], [2, 4, 6])
    assert outcome.results[1] == np.float32(2.5)
    miss = run_program(PROGRAM, arguments=["[1, 2, 4]", "0"])
    assert not miss.ok and "1/3 elements differ" in miss.checks[0][1].message


def test_self_checking_program_feeds_inputs_as_parameters() -> None:
    outcome = run_program(SELF_CHECKING)
    assert outcome.ok and outcome.checks[0][0] == "expect_close"
    assert run_program(SELF_CHECKING, inputs_as_arguments=False).ok
    assert run_program(SELF_CHECKING, pipeline="builtin.module(toolkit-simplify, cse)").ok


def test_argument_errors() -> None:
    with pytest.raises(ValueError, match="@main takes 2 arguments, got 1 --arg"):
        run_program(PROGRAM, arguments=["1"])
    with pytest.raises(ValueError, match="pass them with --arg"):
        run_program(PROGRAM)
    with pytest.raises(ValueError, match="neither a .npy file nor a JSON"):
        run_program(PROGRAM, arguments=["one two", "1"])
    with pytest.raises(ValueError, match=r"has shape \(2,\)"):
        run_program(PROGRAM, arguments=["[1, 2]", "1"])


def test_main_exit_codes(tmp_path, capsys) -> None:
    path = tmp_path / "p.mlir"
    path.write_text(PROGRAM)
    assert main([str(path), "--arg", "[1,2,3]", "--arg", "1"]) == 0
    out = capsys.readouterr().out
    assert "check[0] PASS: expect_eq int32[3]: ok" in out and "1/1 checks passed" in out
    assert main([str(path), "--arg", "[0,0,0]", "--arg", "1", "--no-print-results"]) == 1
    assert "check[0] FAIL" in capsys.readouterr().out
    assert main([str(path)]) == 2  # usage: @main's arguments missing
    assert "toolkit-run: error:" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.mlir")]) == 1  # the input cannot be read


def test_parse_argument_types() -> None:
    from jaxlib.mlir import ir

    from toolkit.ir.context import make_context

    with make_context(), ir.Location.unknown():
        for text, element, expected in [("[true, false]", "i1", np.bool_), ("1", "bf16", "bfloat16"),
                                        ("[1, 2]", "ui8", np.uint8), ("nan", "f64", np.float64),
                                        ("[1, 2]", "complex<f32>", np.complex64)]:
            tensor = ir.RankedTensorType.parse(f"tensor<2x{element}>")
            value = parse_argument(text, tensor)
            assert value.shape == (2,) and value.dtype == np.dtype(expected)
