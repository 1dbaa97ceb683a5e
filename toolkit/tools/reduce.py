"""``toolkit-reduce``: shrink a module a pipeline fails on, and write a lit test for it.

    toolkit-reduce big.mlir -o small.mlir --test=crash --pass-pipeline='builtin.module(my-pass)'
    toolkit-reduce big.mlir -o small.mlir --test='error:cannot lower' -pass-pipeline=... --emit-lit=test.mlir
    toolkit-reduce big.mlir --test=filecheck:checks.txt --pass-pipeline=... --load-pass-plugin=my_pass.py
    toolkit-reduce big.mlir --test="cmd:toolkit-opt {} -my-pass 2>&1 | grep -q 'bad op'"

Test kinds: ``crash``, ``error[:REGEX]``, ``numerics``, ``filecheck:FILE``,
``cmd:COMMAND`` (see :mod:`toolkit.lab.interestingness`). Progress goes to
standard error (``-q`` silences it), then a summary line. Exit status 0 when
the reduced module was written, 1 when the input cannot be read or is not
interesting (or an output cannot be written), 2 on bad usage (unknown flag,
test kind, pass or pipeline syntax, a missing FileCheck file). See
``docs/tools.md``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.lab.interestingness import DEFAULT_TIMEOUT, NotInterestingError, parse_test
from toolkit.lab.reduction import ReductionProgress, reduce_module
from toolkit.lab.reduction_lit import STYLES, lit_test
from toolkit.passes import PassOptionError, PipelineError, load_pass_plugin
from toolkit.tools.diagnostics import parse_module
from toolkit.tools.driver import (
    EXIT_SUCCESS,
    InputError,
    ToolArgumentParser,
    UsageError,
    input_name,
    parse_arguments,
    print_stacktraces_on_diagnostic,
    read_input,
    run_tool,
    write_output,
)

TOOL = "toolkit-reduce"


def _parser() -> ToolArgumentParser:
    parser = ToolArgumentParser(prog=TOOL, description=__doc__.split("\n\n")[0],
                                epilog="Long flags take one dash or two. --test kinds: crash, error[:REGEX], "
                                       "numerics, filecheck:FILE, cmd:'COMMAND with {}'.")
    parser.add_argument("input", nargs="?", default="-", help="the module (MLIR text, bytecode, VHLO); - or none: stdin")
    parser.add_argument("-o", dest="output", default="-", metavar="FILE",
                        help="write the reduced module to FILE (default: stdout)")
    parser.add_argument("--test", required=True, metavar="KIND",
                        help="what keeps a candidate interesting: crash, error[:REGEX], numerics, filecheck:FILE, "
                             "cmd:COMMAND")
    parser.add_argument("--pass-pipeline", default="", help="the pipeline the test runs, e.g. 'builtin.module(my-pass)'")
    parser.add_argument("--emit-lit", default=None, metavar="FILE", help="also write a lit regression test to FILE")
    parser.add_argument("--lit-style", default="regression", choices=STYLES,
                        help="regression (default: fails until the pass is fixed) or diagnostics "
                             "(--test=error: pin the error with expected-error)")
    parser.add_argument("--load-pass-plugin", action="append", default=[], metavar="PLUGIN",
                        help=".py file or module registering passes (repeatable; also in the lit test's RUN line)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                        help="stop after SECONDS and write the smallest module found so far")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit of one crash/cmd child (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines (the summary stays)")
    parser.add_argument("--mlir-print-stacktrace-on-diagnostic", action="store_true",
                        help="print the Python traceback of an exception raised in a pass")
    return parser


class _ProgressPrinter:
    """Progress on standard error: one line rewritten in place on a terminal, else a line per second."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last = 0.0

    def __call__(self, progress: ReductionProgress) -> None:
        if self.tty:
            self.stream.write("\r" + progress.line() + "\x1b[K")
        else:
            now = time.monotonic()
            if now - self.last < 1.0:
                return
            self.last = now
            self.stream.write(progress.line() + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")


def _plugins(flags: Sequence[str]) -> list[str]:
    """Every plugin the RUN line must load: TOOLKIT_PASS_PLUGINS's, then the flags'."""
    from_env = [p for p in os.environ.get("TOOLKIT_PASS_PLUGINS", "").split(os.pathsep) if p]
    return list(dict.fromkeys(from_env + list(flags)))


def _run(argv: Sequence[str] | None) -> int:
    args, _ = parse_arguments(_parser(), argv)
    err = sys.stderr
    if args.mlir_print_stacktrace_on_diagnostic:
        print_stacktraces_on_diagnostic()
    for plugin in args.load_pass_plugin:
        try:
            load_pass_plugin(plugin)
        except Exception as error:  # whatever the plugin's own code raises
            raise UsageError(f"cannot load pass plugin: {error}") from None
    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError(f"--time-limit must be positive, got {args.time_limit:g}")
    try:
        test = parse_test(args.test, args.pass_pipeline, timeout=args.timeout)
    except (PipelineError, PassOptionError, ValueError) as error:
        raise UsageError(str(error)) from None

    if args.lit_style == "diagnostics" and test.kind != "error":
        raise UsageError(f"--lit-style=diagnostics needs --test=error, not --test={test.spec}")
    name = input_name(args.input)
    context = make_context()
    module = parse_module(read_input(args.input), name, context)
    try:
        module.operation.verify()
    except ir.MLIRError as error:
        details = "; ".join(d.message for d in error.error_diagnostics) or str(error)
        raise InputError(f"{name}: error: the input does not verify: {details}") from None
    printer = None if args.quiet else _ProgressPrinter(err)
    try:
        result = reduce_module(module.operation.get_asm(), test, progress=printer, time_limit=args.time_limit)
    except NotInterestingError as error:
        raise InputError(f"{name}: error: {error}") from None
    finally:
        if printer is not None:
            printer.finish()
    write_output(args.output, result.text.encode())
    written = [] if args.output == "-" else [args.output]
    if args.emit_lit:
        try:
            text = lit_test(result, plugins=_plugins(args.load_pass_plugin), style=args.lit_style,
                            source=None if args.input == "-" else args.input)
        except ValueError as error:
            raise UsageError(str(error)) from None
        write_output(args.emit_lit, text.encode())
        written.append(args.emit_lit)
    err.write(f"{TOOL}: {result.summary()}" + (f"; wrote {', '.join(written)}" if written else "") + "\n")
    return EXIT_SUCCESS


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 reduced, 1 failure, 2 usage)."""
    return run_tool(TOOL, lambda: _run(argv))


if __name__ == "__main__":
    sys.exit(main())

