"""What every toolkit command line shares: mlir-opt's conventions, one message style, one exit-code table.

``toolkit-opt``, ``toolkit-run`` and ``toolkit export ...`` all

* accept long flags with one dash or two (``-split-input-file`` is
  ``--split-input-file``, as MLIR's own tests write them); ``-o`` stays a
  short option (``-o out.mlir`` or ``-o=out.mlir``);
* read standard input when the input is ``-`` or missing;
* answer ``--version`` (toolkit, jaxlib, StableHLO versions);
* print errors as ``file:line:col: error: ...`` when the input has a
  location for them, ``file: error: ...`` when only the input file is known,
  and ``<tool>: error: ...`` for everything else (flags, unreadable or
  unwritable paths) — one line, never a Python traceback;
* exit with :data:`EXIT_SUCCESS`, :data:`EXIT_FAILURE` or :data:`EXIT_USAGE`;
* turn on :mod:`faulthandler`, so a crash inside jaxlib still prints where.

A tool's ``main`` is ``run_tool(name, body, argv)``: ``body`` parses with a
:class:`ToolArgumentParser` and raises :class:`UsageError`,
:class:`InputError` or :class:`ToolError`; ``run_tool`` prints and maps
them to exit codes (see ``docs/tools.md``).
"""

from __future__ import annotations

import argparse
import dataclasses
import faulthandler
import io
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

#: Exit status: everything asked for was done (and every check passed).
EXIT_SUCCESS = 0
#: Exit status: the input, a pass, compiling, running, a check or writing the output failed.
EXIT_FAILURE = 1
#: Exit status: the command line is wrong (unknown flag or pass, bad option value, conflicting flags).
EXIT_USAGE = 2


class UsageError(ValueError):
    """The command line is wrong; exit :data:`EXIT_USAGE` after ``<tool>: error: <message>``.

    ``tool`` overrides the tool name printed (argparse sub-commands name themselves).
    """

    def __init__(self, message: str, *, tool: str | None = None):
        super().__init__(message)
        self.tool = tool


class ToolError(Exception):
    """A failure not tied to the input's contents (a path that cannot be read or written, ...).

    Exit :data:`EXIT_FAILURE` after ``<tool>: error: <message>``; ``tool``
    overrides the tool name printed (``toolkit export inspect``).
    """

    def __init__(self, message: str, *, tool: str | None = None):
        super().__init__(message)
        self.tool = tool


class InputError(ValueError):
    """The input is wrong; ``str(error)`` is already formatted as diagnostics lines.

    Each line is ``file:line:col: error: ...`` or ``file: error: ...``; exit
    :data:`EXIT_FAILURE`.
    """


# --- start-up ------------------------------------------------------------------


def enable_crash_reports() -> None:
    """Turn on :mod:`faulthandler`: a segfault or abort in jaxlib prints the Python stack that led there.

    When ``sys.stderr`` has no file descriptor (captured in tests), the
    process's original standard error is used.
    """
    if faulthandler.is_enabled():
        return
    try:
        faulthandler.enable()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        if sys.__stderr__ is not None:
            faulthandler.enable(file=sys.__stderr__)


def version_text(tool: str) -> str:
    """What ``<tool> --version`` prints: toolkit's, jaxlib's and StableHLO's versions."""
    from importlib import metadata

    from jaxlib.mlir.dialects import stablehlo

    import toolkit

    try:
        jaxlib_version = metadata.version("jaxlib")
    except metadata.PackageNotFoundError:  # an unpackaged jaxlib build
        import jaxlib.version

        jaxlib_version = jaxlib.version.__version__
    return (f"{tool} (toolkit {toolkit.__version__})\n"
            f"  jaxlib {jaxlib_version}\n"
            f"  StableHLO {stablehlo.get_current_version()} (reads and writes portable artifacts "
            f"{stablehlo.get_minimum_version()} .. {stablehlo.get_current_version()})\n")


_print_tracebacks = False


def _traceback_requested() -> bool:
    return _print_tracebacks or os.environ.get("TOOLKIT_PASS_TRACEBACK", "") not in ("", "0", "false")


def print_stacktraces_on_diagnostic() -> None:
    """``--mlir-print-stacktrace-on-diagnostic``: a Python exception in a pass (or in the tool) prints its traceback."""
    global _print_tracebacks
    from toolkit import passes

    _print_tracebacks = True

    setter = getattr(passes, "set_print_stacktrace_on_diagnostic", None)
    if setter is not None:
        setter(True)
    else:  # the switch the pass runner reads
        os.environ["TOOLKIT_PASS_TRACEBACK"] = "1"


# --- argument parsing ------------------------------------------------------------


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, help="print toolkit's, jaxlib's and StableHLO's versions")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> NoReturn:
        sys.stdout.write(version_text(parser.prog))
        sys.stdout.flush()
        parser.exit(EXIT_SUCCESS)


class ToolArgumentParser(argparse.ArgumentParser):
    """``argparse`` with toolkit's conventions: ``--version``, no abbreviated flags, one-line usage errors.

    An error raises :class:`UsageError` (``run_tool`` prints it and exits
    :data:`EXIT_USAGE`) instead of printing the whole usage text.
    """

    def __init__(self, *args: Any, version: bool = True, **kwargs: Any):
        kwargs.setdefault("allow_abbrev", False)  # mlir-opt has no abbreviations; --debug must not mean --debug-info
        super().__init__(*args, **kwargs)
        if version:
            self.add_argument("--version", action=_VersionAction)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)", tool=self.prog)


def _value_options(parser: argparse.ArgumentParser) -> set[str]:
    """Option strings of ``parser`` and its sub-parsers that take a separate value (``-o FILE``, ``--arg X``)."""
    options: set[str] = set()
    for action in parser._actions:  # argparse keeps no public list of actions
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                options |= _value_options(sub)
        elif action.option_strings and action.nargs != 0:
            options.update(action.option_strings)
    return options


_NEGATIVE_NUMBER = re.compile(r"^-\d|^-\.\d")


def normalize_flags(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """``argv`` with mlir-opt's single-dash long flags spelled with two dashes.

    ``-split-input-file`` → ``--split-input-file``, ``-canonicalize`` →
    ``--canonicalize``, ``-pass-pipeline=...`` → ``--pass-pipeline=...``;
    ``-o`` and ``-h`` stay short (``-o=out`` becomes ``-o out``). Values of
    options (``--arg -1``), negative numbers, ``-`` (stdin) and everything
    after ``--`` are left alone.
    """
    takes_value = _value_options(parser)
    result: list[str] = []
    expecting_value = False
    for index, item in enumerate(argv):
        if expecting_value:
            result.append(item)
            expecting_value = False
            continue
        if item == "--":
            result.extend(argv[index:])
            break
        if item.startswith("-o="):
            result += ["-o", item[3:]]
            continue
        if item.startswith("-") and not item.startswith("--") and len(item) > 2 \
                and not _NEGATIVE_NUMBER.match(item):
            item = "-" + item
        result.append(item)
        expecting_value = item in takes_value
    return result


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None, *,
                    allow_extra: bool = False) -> tuple[argparse.Namespace, list[str]]:
    """Parse ``argv`` (default ``sys.argv[1:]``) after :func:`normalize_flags`.

    With ``allow_extra`` the unknown flags are returned (``toolkit-opt``'s
    pass flags); otherwise they are a :class:`UsageError`.
    """
    arguments = normalize_flags(sys.argv[1:] if argv is None else [str(a) for a in argv], parser)
    if allow_extra:
        return parser.parse_known_args(arguments)
    return parser.parse_args(arguments), []


# --- input and output --------------------------------------------------------------


def input_name(path: str) -> str:
    """How messages name the input ``path``: ``<stdin>`` for ``-``."""
    return "<stdin>" if path == "-" else path


def read_input(path: str) -> bytes:
    """The bytes of ``path`` (``-``: standard input); :class:`ToolError` when it cannot be read."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as stream:
            return stream.read()
    except OSError as error:
        raise ToolError(f"cannot read '{path}': {error.strerror or error}") from None


def write_output(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (``-``: standard output); :class:`ToolError` when it cannot be written."""
    if path == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        with open(path, "wb") as stream:
            stream.write(data)
    except OSError as error:
        raise ToolError(f"cannot write '{path}': {error.strerror or error}") from None


def module_text(module: Any, *, generic: bool = False, debug_info: bool = False) -> bytes:
    """``module`` as MLIR text: ``--mlir-print-op-generic`` and ``--mlir-print-debuginfo`` applied."""
    return module.operation.get_asm(enable_debug_info=debug_info, print_generic_op_form=generic).encode()


# --- diagnostics ---------------------------------------------------------------------

_LOCATION_LINE = re.compile(r":(\d+):(\d+)")


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One MLIR diagnostic: severity, line and column in the input (None when unknown), message."""

    severity: str
    line: int | None
    column: int | None
    message: str


def _severity_name(severity: Any) -> str:
    from jaxlib.mlir import ir

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


def parse_module(data: bytes | str, name: str, context: Any) -> Any:
    """Parse ``data`` (text, bytecode or VHLO) in ``context``, or raise :class:`InputError` naming ``name``.

    Parser diagnostics become ``name:line:col: error: ...`` lines instead of
    being printed by MLIR's default handler. Binary input is untrusted: it is
    read in a forked child first (``read_module(..., untrusted=True)``), so a
    file that crashes or hangs jaxlib's reader is an :class:`InputError` too.
    """
    from jaxlib.mlir import ir

    from toolkit.ir.serialization import read_module
    from toolkit.ir.diagnostics import attach_diagnostic_handler

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


# --- running a tool ------------------------------------------------------------------


def _silence_stdout() -> None:
    # After a closed pipe (`toolkit-opt f.mlir | head`), Python's final flush would fail again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


def run_tool(tool: str, body: Callable[[], int]) -> int:
    """Run a tool's ``body`` with the shared conventions; returns the exit status.

    :class:`UsageError` → :data:`EXIT_USAGE`; :class:`ToolError`,
    :class:`InputError` → :data:`EXIT_FAILURE`; any other exception is a bug
    in toolkit or jaxlib, reported on one line (``internal error: ...``) with
    :data:`EXIT_FAILURE`, and with its traceback under
    ``TOOLKIT_PASS_TRACEBACK=1`` (which ``--mlir-print-stacktrace-on-diagnostic`` sets).
    """
    enable_crash_reports()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    err = sys.stderr
    try:
        return body()
    except UsageError as error:
        err.write(f"{error.tool or tool}: error: {error}\n")
        return EXIT_USAGE
    except InputError as error:
        err.write(f"{error}\n")
        return EXIT_FAILURE
    except ToolError as error:
        err.write(f"{error.tool or tool}: error: {error}\n")
        return EXIT_FAILURE
    except SystemExit as stop:  # --help and --version: ``main`` returns the status instead of exiting
        return stop.code if isinstance(stop.code, int) else (EXIT_SUCCESS if stop.code is None else EXIT_FAILURE)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_SUCCESS
    except Exception as error:  # a bug: still one line, the traceback on request
        if _traceback_requested():
            traceback.print_exc(file=err)
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        err.write(f"{tool}: error: internal error: {type(error).__name__}: {message} "
                  "(TOOLKIT_PASS_TRACEBACK=1 prints the traceback)\n")
        return EXIT_FAILURE


# --- argument values ------------------------------------------------------------------


def load_argument_value(text: str) -> tuple[Any, bool]:
    """The value an ``--arg`` names: ``(array, is_literal)``.

    ``text`` is a ``.npy`` path (read with ``allow_pickle=False``) or a JSON
    literal (``2``, ``[1, 2.5]``, ``true``, ``nan``, ``inf``). Raises
    ``ValueError`` saying which it could not read.
    """
    import json

    import numpy as np

    if text.endswith(".npy"):
        try:
            return np.load(text, allow_pickle=False), False
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read the .npy file: {getattr(error, 'strerror', None) or error}") from None
    try:
        value = json.loads(re.sub(r"\b(-?)inf\b", r"\1Infinity", re.sub(r"\bnan\b", "NaN", text))) \
            if text.strip() else None
    except json.JSONDecodeError:
        raise ValueError("is neither a .npy file nor a JSON number/list") from None
    if value is None or isinstance(value, (str, dict)):
        raise ValueError("is neither a .npy file nor a JSON number/list")
    try:
        array = np.asarray(value)
    except ValueError:  # ragged lists
        raise ValueError("is not a rectangular list of numbers") from None
    if array.dtype == object:
        if array.ndim == 0 and isinstance(value, int):
            raise ValueError(f"{value} does not fit in 64 bits")
        raise ValueError("is not a rectangular list of numbers (or has integers beyond 64 bits)")
    if array.dtype.kind not in "biuf":
        raise ValueError("is neither a .npy file nor a JSON number/list")
    return array, True


def _dtype_name(dtype: Any) -> str:
    import numpy as np

    return np.dtype(dtype).name


def checked_array(value: Any, dtype: Any, shape: Sequence[int | None] | None = None, *,
                  literal: bool = True) -> Any:
    """``value`` as an array of ``dtype`` (and ``shape``), or ``ValueError`` — never a lossy conversion.

    What ``toolkit-run -arg`` and ``toolkit export run --arg`` use. Literals
    (``literal=True``: JSON numbers) convert when the value survives: an
    integer parameter takes integral numbers in its range (``1.5`` and
    ``4000000000`` for ``i32`` are errors, not ``1`` and ``-294967296``), a
    boolean one ``true``/``false`` (or 0/1), a floating one any number that
    stays finite (integers only when exactly representable). Arrays from
    ``.npy`` files (``literal=False``) must have the parameter's dtype or one
    numpy casts to it safely (``int8`` to ``int32``, ``float32`` to
    ``float64``). ``shape`` entries of ``None`` accept any size (symbolic
    dimensions); a scalar literal broadcasts to a fully static ``shape``.
    """
    import numpy as np

    target = np.dtype(dtype)
    array = np.asarray(value)
    source = array.dtype
    if source == target:
        converted = array
    elif not literal:
        try:
            safe = np.can_cast(source, target, "safe")
        except TypeError:
            safe = False
        if not safe:
            raise ValueError(f"has dtype {_dtype_name(source)}, the parameter is {_dtype_name(target)} "
                             f"(not converted: that could lose values; save it as {_dtype_name(target)})")
        converted = array.astype(target)
    else:
        converted = _checked_literal(array, target)
    if shape is not None:
        shape = tuple(shape)
        fits = converted.ndim == len(shape) and all(want is None or have == want
                                                     for have, want in zip(converted.shape, shape))
        if not fits:
            text = "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
            if converted.ndim == 0 and literal and all(d is not None for d in shape):
                converted = np.broadcast_to(converted, shape).copy()
            else:
                raise ValueError(f"has shape {tuple(converted.shape)}, the parameter is "
                                 f"{_dtype_name(target)}{text}")
    return np.asarray(converted, order="C")


def _checked_literal(array: Any, target: Any) -> Any:
    import numpy as np

    kind = target.kind
    where = "" if array.ndim == 0 else " (an element)"

    def first(mask: Any) -> Any:
        return array[mask].flat[0] if array.ndim else array.item()

    if kind == "b":
        if array.dtype.kind == "b":
            return array.astype(target)
        bad = ~np.isin(array, (0, 1))
        if bad.any():
            raise ValueError(f"{first(bad)!r}{where} is not a boolean (the parameter is bool)")
        return array.astype(target)
    if kind in "iu":
        if array.dtype.kind == "f":
            bad = ~np.isfinite(array) | (array != np.trunc(array))
            if bad.any():
                raise ValueError(f"{first(bad)!r}{where} is not an integer (the parameter is {target.name})")
            as_int = array.astype(np.float64)
        else:
            as_int = array
        info = np.iinfo(target)
        ints = as_int.astype(object) if as_int.size else as_int
        if as_int.size:
            low, high = min(int(v) for v in np.ravel(ints)), max(int(v) for v in np.ravel(ints))
            if low < info.min or high > info.max:
                value = low if low < info.min else high
                raise ValueError(f"{value} is out of the range of {target.name} [{info.min}, {info.max}]")
        return as_int.astype(target)
    if kind in "fcV" or target.name in ("bfloat16",) or kind == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            converted = array.astype(target)
        finite_in = np.isfinite(array.astype(np.float64)) if array.dtype.kind != "b" else np.ones(array.shape, bool)
        overflow = finite_in & ~np.isfinite(converted.astype(np.complex128 if kind == "c" else np.float64))
        if overflow.any():
            raise ValueError(f"{first(overflow)!r}{where} overflows {target.name}")
        if array.dtype.kind in "iu":
            back = converted.astype(np.float64) if kind != "c" else converted.real.astype(np.float64)
            inexact = back.astype(object) != array.astype(object) if array.size else np.zeros(array.shape, bool)
            inexact = np.asarray(inexact, dtype=bool)
            if inexact.any():
                raise ValueError(f"{first(inexact)!r}{where} is not exactly representable in {target.name}")
        return converted
    raise ValueError(f"cannot convert a literal to {target.name}")
