"""How every toolkit command line runs: mlir-opt's flag conventions, reading and writing files, one exit-code table.

``toolkit-opt``, ``toolkit-run`` and ``toolkit export ...`` all

* accept long flags with one dash or two (``-split-input-file`` is
  ``--split-input-file``, as MLIR's own tests write them); ``-o`` stays a
  short option (``-o out.mlir`` or ``-o=out.mlir``);
* read standard input when the input is ``-`` or missing;
* answer ``--version`` (toolkit, jaxlib, StableHLO versions);
* print errors as ``file:line:col: error: ...`` when the input has a
  location for them (:mod:`toolkit.tools.diagnostics`), ``file: error: ...``
  when only the input file is known, and ``<tool>: error: ...`` for
  everything else (flags, unreadable or unwritable paths) — one line, never
  a Python traceback;
* exit with :data:`EXIT_SUCCESS`, :data:`EXIT_FAILURE` or :data:`EXIT_USAGE`;
* turn on :mod:`faulthandler`, so a crash inside jaxlib still prints where.

A tool's ``main`` is ``run_tool(name, body)``: ``body`` parses with a
:class:`ToolArgumentParser` and raises :class:`UsageError`,
:class:`InputError` or :class:`ToolError`; ``run_tool`` prints and maps
them to exit codes (see ``docs/tools.md``).
"""

from __future__ import annotations

import argparse
import faulthandler
import io
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from jaxlib.mlir.dialects import stablehlo

import toolkit
from toolkit import passes

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
    from importlib import metadata  # lazy: importing importlib.metadata costs every tool run 15-40 ms; only --version needs it

    try:
        jaxlib_version = metadata.version("jaxlib")
    except metadata.PackageNotFoundError:  # an unpackaged jaxlib build
        import jaxlib.version  # lazy: only an unpackaged jaxlib build needs it

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
    _print_tracebacks = True
    passes.set_print_stacktrace_on_diagnostic(True)


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
