"""MLIR diagnostics as the tools print them (toolkit/tools/diagnostics.py)."""

from __future__ import annotations

import pytest

from toolkit.ir.context import make_context
from toolkit.tools.diagnostics import Diagnostic, format_diagnostic, make_diagnostic, parse_module
from toolkit.tools.driver import InputError


def test_location_gives_line_and_column() -> None:
    assert make_diagnostic("error", 'loc("f.mlir":3:5)', "bad") == Diagnostic("error", 3, 5, "bad")
    assert make_diagnostic("note", "loc(unknown)", "see") == Diagnostic("note", None, None, "see")


def test_format_names_the_file_and_shifts_split_chunks() -> None:
    assert format_diagnostic("f.mlir", Diagnostic("error", 3, 5, "bad")) == "f.mlir:3:5: error: bad"
    assert format_diagnostic("f.mlir", Diagnostic("error", 3, 5, "bad"), first_line=10) == "f.mlir:12:5: error: bad"
    assert format_diagnostic("f.mlir", Diagnostic("warning", None, None, "w")) == "f.mlir: warning: w"


def test_parse_module_reads_text() -> None:
    module = parse_module("func.func @main() {\n  return\n}\n", "f.mlir", make_context())
    assert "func.func @main" in str(module)


def test_parse_errors_are_input_errors_with_locations() -> None:
    with pytest.raises(InputError) as info:
        parse_module("func.func @main() {\n  return %nope : tensor<f32>\n}\n", "f.mlir", make_context())
    assert str(info.value).startswith("f.mlir:2:")
    assert "use of undeclared SSA value name" in str(info.value)


def test_unreadable_binary_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"^f\.bc: error: "):
        parse_module(b"ML\xefR" + b"\x00" * 16, "f.bc", make_context())
