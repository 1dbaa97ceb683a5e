"""MLIR diagnostics as the tools print them: ``file:line:col: severity: message``.

:class:`DiagnosticCollector` is a context diagnostic handler that keeps every
diagnostic (with its notes) instead of letting MLIR print it;
:func:`format_diagnostic` writes one as a line naming the input file;
:func:`parse_module` reads an input module and turns a parse failure into
:class:`~toolkit.tools.driver.InputError` lines of that form. (Attaching
handlers and ``expected-error`` annotations live in
:mod:`toolkit.ir.diagnostics`.)
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from jaxlib.mlir import ir

from toolkit.ir.diagnostics import attach_diagnostic_handler
from toolkit.ir.serialization import read_module
from toolkit.tools.driver import InputError

_LOCATION_LINE = re.compile(r":(\d+):(\d+)")


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One MLIR diagnostic: severity, line and column in the input (None when unknown), message."""

    severity: str
    line: int | None
    column: int | None
    message: str


def _severity_name(severity: Any) -> str:
    return {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
            ir.DiagnosticSeverity.REMARK: "remark", ir.DiagnosticSeverity.NOTE: "note"}.get(severity, "error")


def make_diagnostic(severity: str, location: Any, message: str) -> Diagnostic:
    """A :class:`Diagnostic` whose line and column come from an MLIR location (``loc("f":3:5)``)."""
    match = _LOCATION_LINE.search(str(location))
    if match:
        return Diagnostic(severity, int(match.group(1)), int(match.group(2)), message)
    return Diagnostic(severity, None, None, message)


def format_diagnostic(name: str, diagnostic: Diagnostic, first_line: int = 1) -> str:
    """``name:line:col: severity: message`` (``first_line``: where the parsed chunk starts in the file)."""
    if diagnostic.line is None:
        return f"{name}: {diagnostic.severity}: {diagnostic.message}"
    return f"{name}:{diagnostic.line + first_line - 1}:{diagnostic.column}: {diagnostic.severity}: {diagnostic.message}"


class DiagnosticCollector:
    """A context diagnostic handler that keeps every diagnostic (and its notes), once each."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def __call__(self, diagnostic: Any) -> bool:
        self.add(_severity_name(diagnostic.severity), diagnostic.location, diagnostic.message)
        for note in diagnostic.notes:
            self.add("note", note.location, note.message)
        return True

    def add(self, severity: str, location: Any, message: str) -> None:
        """Record one diagnostic unless the same one was recorded already."""
        item = make_diagnostic(severity, location, message)
        if item not in self.diagnostics:
            self.diagnostics.append(item)

    def add_error(self, error: Any) -> None:
        """Record the diagnostics an ``ir.MLIRError`` carries."""
        for diagnostic in error.error_diagnostics:
            self.add("error", diagnostic.location, diagnostic.message)
            for note in diagnostic.notes:
                self.add("note", note.location, note.message)


def parse_module(data: bytes | str, name: str, context: ir.Context) -> ir.Module:
    """Parse ``data`` (text, bytecode or VHLO) in ``context``, or raise :class:`InputError` naming ``name``.

    Parser diagnostics become ``name:line:col: error: ...`` lines instead of
    being printed by MLIR's default handler. Binary input is untrusted: it is
    read in a forked child first (``read_module(..., untrusted=True)``), so a
    file that crashes or hangs jaxlib's reader is an :class:`InputError` too.
    """
    collector = DiagnosticCollector()
    handler = attach_diagnostic_handler(context, collector)
    try:
        return read_module(data, context, untrusted=True)  # binary input: read in a child first
    except ir.MLIRError as error:
        collector.add_error(error)
        lines = [format_diagnostic(name, d) for d in collector.diagnostics]
        raise InputError("\n".join(lines) or f"{name}: error: {error}") from None
    except ValueError as error:
        raise InputError(f"{name}: error: {error}") from None
    finally:
        handler.detach()
