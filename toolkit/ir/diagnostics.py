"""MLIR diagnostics from Python: emitting, handling and expecting them.

* :func:`emit_warning` / :func:`emit_remark` / :func:`emit_error` at an op —
  jaxlib's bindings emit only errors into MLIR's engine, so warnings and
  remarks reach the handlers attached with :func:`attach_diagnostic_handler`
  (which also attaches them to MLIR's engine: one handler sees both).
* :func:`parse_expected_diagnostics` — mlir-opt's ``--verify-diagnostics``
  annotations (``// expected-error @+1 {{message}}``), shared by
  ``toolkit-opt`` and the harnesses that judge upstream lit files.
* :func:`format_location`, :func:`exception_site` — ``file:line:col`` of an
  op and of the pass code that raised.

Example::

    >>> [e.line for e in parse_expected_diagnostics("x\\n// expected-error @-1 {{bad}}")]
    [1]
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from jaxlib.mlir import ir

EXPECTED_DIAGNOSTIC = re.compile(
    r"expected-(error|warning|remark|note)\s*(?:@(above|below|[+-]\d+))?\s*\{\{(.*?)\}\}")


@dataclasses.dataclass
class ExpectedDiagnostic:
    """One annotation: a diagnostic of ``severity`` containing ``message`` is expected on ``line``."""

    severity: str
    line: int
    message: str
    source_line: int  # where the annotation itself stands
    seen: bool = False


def parse_expected_diagnostics(text: str) -> list[ExpectedDiagnostic]:
    """Every ``expected-<severity> [@above|@below|@+N|@-N] {{message}}`` in ``text`` (lines count from 1)."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        for match in EXPECTED_DIAGNOSTIC.finditer(line):
            severity, where, message = match.groups()
            target = number
            if where == "above":
                target = number - 1
            elif where == "below":
                target = number + 1
            elif where:
                target = number + int(where)
            found.append(ExpectedDiagnostic(severity, target, message, number))
    return found


# --------------------------------------------------------------------------
# Diagnostics emitted from Python
# --------------------------------------------------------------------------
# jaxlib's bindings can emit only errors into MLIR's diagnostic engine
# (``Location.emit_error``). Warnings and remarks from Python passes go to
# Python handlers attached per context with :func:`attach_diagnostic_handler`,
# which also attaches the handler to MLIR's engine, so one handler sees both.

_SEVERITY_NAMES = {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
                   ir.DiagnosticSeverity.REMARK: "remark", ir.DiagnosticSeverity.NOTE: "note"}
_FILE_LINE_COL = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def severity_name(severity: ir.DiagnosticSeverity) -> str:
    """``"error"``, ``"warning"``, ``"remark"`` or ``"note"``."""
    return _SEVERITY_NAMES.get(severity, "error")


def format_location(location: ir.Location) -> str:
    """``file:line:col`` of the first file location in ``location``; ``""`` when it has none.

    Example: ``loc("add"("f.py":3:4))`` -> ``f.py:3:4``.
    """
    match = _FILE_LINE_COL.search(str(location))
    return f"{match.group(1)}:{match.group(2)}:{match.group(3)}" if match else ""


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """A diagnostic emitted from Python; has the attributes of jaxlib's ``ir.Diagnostic``."""

    severity: ir.DiagnosticSeverity
    location: ir.Location
    message: str
    notes: tuple["Diagnostic", ...] = ()


Handler = Callable[[Any], bool]
_python_handlers: "weakref.WeakKeyDictionary[ir.Context, list[DiagnosticHandler]]" = weakref.WeakKeyDictionary()
_handlers_lock = threading.Lock()


class DiagnosticHandler:
    """What :func:`attach_diagnostic_handler` returns: ``detach()`` it when done (or use ``with``)."""

    def __init__(self, context: ir.Context, handler: Handler):
        self.context = context
        self.handler = handler
        self._mlir_handle = context.attach_diagnostic_handler(handler)
        self._had_error = False
        with _handlers_lock:
            _python_handlers.setdefault(context, []).append(self)

    @property
    def attached(self) -> bool:
        """Whether the handler still receives diagnostics (False after ``detach()``)."""
        return self._mlir_handle.attached

    @property
    def had_error(self) -> bool:
        """True if the handler raised on some diagnostic (it is then treated as not handled)."""
        return self._had_error or self._mlir_handle.had_error

    def detach(self) -> None:
        """Stop receiving diagnostics (idempotent)."""
        if self._mlir_handle.attached:
            self._mlir_handle.detach()
        with _handlers_lock:
            handlers = _python_handlers.get(self.context, [])
            if self in handlers:
                handlers.remove(self)

    def _receive(self, diagnostic: Diagnostic) -> bool:
        try:
            return bool(self.handler(diagnostic))
        except Exception:  # noqa: BLE001 - like MLIR's engine, a failing handler does not stop others
            self._had_error = True
            return False

    def __enter__(self) -> "DiagnosticHandler":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.detach()


def attach_diagnostic_handler(context: ir.Context, handler: Handler) -> DiagnosticHandler:
    """Call ``handler(diagnostic)`` for every diagnostic in ``context``: MLIR's and Python-emitted ones.

    A drop-in for ``context.attach_diagnostic_handler(handler)`` that also
    sees the warnings and remarks passes emit with :func:`emit_warning` /
    :func:`emit_remark`. ``handler`` returns True when it handled the
    diagnostic; the most recently attached handler runs first.

    Example::

        seen = []
        with attach_diagnostic_handler(context, lambda d: seen.append(d) or True):
            run_pipeline(module, "my-pass")
    """
    return DiagnosticHandler(context, handler)


def _as_location(where: ir.Location | ir.Operation | ir.OpView | ir.Module) -> ir.Location:
    return where if isinstance(where, ir.Location) else where.operation.location


def emit_diagnostic(where: ir.Location | ir.Operation | ir.OpView | ir.Module, severity: ir.DiagnosticSeverity,
                    message: str) -> None:
    """Emit a diagnostic at ``where`` (an op or a location).

    Errors go through MLIR's engine. Warnings, remarks and notes go to the
    handlers attached with :func:`attach_diagnostic_handler` (toolkit-opt's
    ``--verify-diagnostics`` and the pass runner attach one); when none
    handles it, a warning is printed to stderr as ``file:line:col: warning:
    message`` and a remark or note is dropped, as MLIR does.
    """
    location = _as_location(where)
    if severity == ir.DiagnosticSeverity.ERROR:
        location.emit_error(message)
        return
    diagnostic = Diagnostic(severity, location, message)
    with _handlers_lock:
        handlers = list(_python_handlers.get(location.context, ()))
    for handle in reversed(handlers):
        if handle._receive(diagnostic):
            return
    if severity == ir.DiagnosticSeverity.WARNING:
        where_text = format_location(location) or str(location)
        sys.stderr.write(f"{where_text}: warning: {message}\n")


def emit_error(where: ir.Location | ir.Operation | ir.OpView, message: str) -> None:
    """An error diagnostic at ``where`` (to fail a pass, raise ``PassFailure`` instead)."""
    emit_diagnostic(where, ir.DiagnosticSeverity.ERROR, message)


def emit_warning(where: ir.Location | ir.Operation | ir.OpView, message: str) -> None:
    """A warning at ``where``; ``// expected-warning {{...}}`` matches it under ``--verify-diagnostics``.

    Example: ``emit_warning(op, "dot with f16 accumulation loses precision")``.
    """
    emit_diagnostic(where, ir.DiagnosticSeverity.WARNING, message)


def emit_remark(where: ir.Location | ir.Operation | ir.OpView, message: str) -> None:
    """A remark (information, e.g. what a pass did) at ``where``; ``expected-remark`` matches it."""
    emit_diagnostic(where, ir.DiagnosticSeverity.REMARK, message)


# --------------------------------------------------------------------------
# Where in Python code an exception came from
# --------------------------------------------------------------------------
def exception_site(error: BaseException, files: Iterable[str] = ()) -> traceback.FrameSummary | None:
    """The innermost traceback frame of ``error`` in one of ``files``.

    Without a frame in ``files``: the innermost frame outside toolkit's pass
    machinery (``toolkit/passes/pipeline.py``, ``pass_base.py``,
    ``toolkit/ir/``) and jaxlib; None when every frame is there.
    """
    frames = traceback.extract_tb(error.__traceback__)
    wanted = {os.path.realpath(f) for f in files if f}
    for frame in reversed(frames):
        if os.path.realpath(frame.filename) in wanted:
            return frame
    for frame in reversed(frames):
        path = os.path.realpath(frame.filename)
        if not any(path.startswith(prefix) for prefix in _MACHINERY_PREFIXES) and path not in _MACHINERY_FILES:
            return frame
    return None


_TOOLKIT_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_MACHINERY_FILES = {os.path.join(_TOOLKIT_DIR, "passes", name) for name in ("pipeline.py", "pass_base.py")}
_MACHINERY_PREFIXES = (os.path.join(_TOOLKIT_DIR, "ir") + os.sep,
                       os.path.dirname(os.path.dirname(os.path.realpath(ir.__file__))) + os.sep)


# --------------------------------------------------------------------------
# Tracebacks in diagnostics
# --------------------------------------------------------------------------
_print_stacktrace: bool | None = None


def set_print_stacktrace_on_diagnostic(enabled: bool) -> None:
    """Append the whole Python traceback to the error diagnostic of a pass that raised.

    What ``toolkit-opt --mlir-print-stacktrace-on-diagnostic`` turns on (for Python passes); the
    environment variable ``TOOLKIT_PASS_TRACEBACK=1`` does the same unless
    this was called.
    """
    global _print_stacktrace
    _print_stacktrace = bool(enabled)


def print_stacktrace_on_diagnostic() -> bool:
    """Whether a pass exception's diagnostic carries the whole traceback (see the setter)."""
    if _print_stacktrace is not None:
        return _print_stacktrace
    return os.environ.get("TOOLKIT_PASS_TRACEBACK", "") not in ("", "0", "false")
