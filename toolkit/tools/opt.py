"""``toolkit-opt``: an ``mlir-opt`` for toolkit — parse, run passes, print.

    toolkit-opt f.mlir -pass-pipeline='builtin.module(toolkit-simplify, cse)'
    toolkit-opt f.mlir -toolkit-simplify -cse             # passes as flags, in order
    toolkit-opt cases.mlir -split-input-file -verify-diagnostics
    toolkit-opt artifact.bc --emit=text                   # text, bytecode or VHLO in (auto-detected)
    toolkit-opt f.mlir --emit=vhlo --target-version=1.15.0 -o f.vhlo

Long flags take one dash or two; the input is standard input when it is
``-`` or missing. Exit status 0 on success, 1 when reading, parsing, a pass,
diagnostic verification or writing fails, 2 on bad command-line usage
(unknown flag or pass, bad pass option, conflicting flags). See
``docs/tools.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.ir.context import make_context
from toolkit.ir.diagnostics import attach_diagnostic_handler, parse_expected_diagnostics
from toolkit.ir.serialization import detect_format, read_module, write_module
from toolkit.passes import PassOptionError, PipelineError, list_passes, load_pass_plugin, parse_pipeline
from toolkit.passes.dump import Timeline
from toolkit.runtime.executable import mlir_to_hlo_text
from toolkit.tools.diagnostics import DiagnosticCollector, format_diagnostic
from toolkit.tools.driver import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    ToolArgumentParser,
    UsageError,
    input_name,
    module_text,
    parse_arguments,
    print_stacktraces_on_diagnostic,
    read_input,
    run_tool,
    write_output,
)

TOOL = "toolkit-opt"
SPLIT_MARKER = re.compile(r"^// -----.*$", re.MULTILINE)


def _split(text: str) -> list[tuple[str, int]]:
    """Chunks of ``text`` between ``// -----`` lines with their first line number."""
    chunks, start, line = [], 0, 1
    for marker in SPLIT_MARKER.finditer(text):
        chunks.append((text[start:marker.start()], line))
        line += text[start:marker.end()].count("\n")
        start = marker.end()
    chunks.append((text[start:], line))
    return chunks


def _timeline(args: argparse.Namespace, name: str, chunk: int | None) -> Any:
    """The timeline ``--dump-ir-to`` / ``--report`` record (None without them); ``chunk`` numbers split inputs."""
    if not args.dump_ir_to and not args.report:
        return None
    folder = args.dump_ir_to
    report = args.report
    if chunk is not None:
        folder = folder and os.path.join(folder, f"chunk-{chunk}")
        if report:
            stem, dot, ext = report.rpartition(".")
            report = f"{stem}-chunk-{chunk}.{ext}" if dot and stem else f"{report}-chunk-{chunk}"
    return Timeline(name if chunk is None else f"{name} (chunk {chunk})", folder=folder, report_path=report)


def _process_chunk(text: str | bytes, first_line: int, args: argparse.Namespace, pipeline: Any,
                   name: str, err: Any, chunk: int | None = None) -> tuple[bool, bytes | None]:
    """Parse, run and serialize one chunk; returns (ok, output bytes or None).

    Every problem is written to ``err`` as a diagnostic of ``name``
    (``name:line:col: error: ...``, or ``name: error: ...`` without a line).
    """
    context = make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    collector = DiagnosticCollector()
    verify = args.verify_diagnostics
    handler = attach_diagnostic_handler(context, collector)
    module = None
    failed_message = None
    timeline = None
    try:
        try:
            module = read_module(text, context, untrusted=True)  # binary: read in a child first
        except ir.MLIRError as error:
            collector.add_error(error)
            failed_message = "parse"
        except ValueError as error:
            err.write(f"{name}: error: {error}\n")
            return False, None
        if module is not None:
            timeline = _timeline(args, name, chunk)
            if timeline is not None:
                timeline.add_module("input", "input", module, label="input module")
                timeline.pipeline_text = str(pipeline) if pipeline is not None else None
        if module is not None and pipeline is not None and pipeline.elements:
            try:
                pipeline.run(module, print_ir_before=args.before, print_ir_after=args.after,
                             print_after_change=args.mlir_print_ir_after_change, timing=args.mlir_timing,
                             verify=args.verify_each, observe=timeline and timeline.observe,
                             statistics=args.mlir_pass_statistics, debug_info=args.debug_info,
                             stream=err, capture_diagnostics=False)
            except PipelineError as error:
                # The diagnostics themselves are printed (file:line:col) below.
                failed_message = str(error).split("\n")[0].rstrip(":") if collector.diagnostics else str(error)
            except Exception as error:  # a pass raising outside the pass manager
                failed_message = f"{type(error).__name__}: {error}"
    finally:
        handler.detach()
        if timeline is not None:
            ok = failed_message is None
            timeline.finish(module if ok else None,
                            failure=None if ok else f"the pipeline failed: {failed_message}")

    def located(diagnostic: Any) -> str:
        return format_diagnostic(name, diagnostic, first_line)

    if verify:
        assert isinstance(text, str)  # main refuses -verify-diagnostics on binary input
        expected = parse_expected_diagnostics(text)
        ok = True
        for diagnostic in collector.diagnostics:
            match = next((e for e in expected if not e.seen and e.severity == diagnostic.severity
                          and e.line == diagnostic.line and e.message in diagnostic.message), None)
            if match is not None:
                match.seen = True
            elif diagnostic.severity != "note" or any(e.severity == "note" for e in expected):
                ok = False
                err.write(located(dataclasses.replace(
                    diagnostic, severity="error", message=f"unexpected {diagnostic.severity}: {diagnostic.message}"))
                    + "\n")
        for item in expected:
            if not item.seen:
                ok = False
                err.write(f"{name}:{item.source_line + first_line - 1}:1: error: expected {item.severity} "
                          f"\"{item.message}\" was not produced\n")
        if module is None or failed_message is not None or not ok or args.emit != "text":
            return ok, None
        return ok, module_text(module, generic=args.print_generic, debug_info=args.debug_info)

    for diagnostic in collector.diagnostics:
        err.write(located(diagnostic) + "\n")
    if module is None:
        return False, None
    if failed_message is not None:
        err.write(f"{name}: error: {failed_message}\n")
        return False, None
    try:
        if args.emit == "hlo":
            return True, mlir_to_hlo_text(write_module(module, "bytecode")).encode()
        if args.emit == "text":
            return True, module_text(module, generic=args.print_generic, debug_info=args.debug_info)
        return True, write_module(module, args.emit, target_version=args.target_version)
    except ValueError as error:
        err.write(f"{name}: error: {error}\n")
        return False, None


def _list_passes(out: Any) -> None:
    out.write("Available passes (Python and C++), use in -pass-pipeline='builtin.module(...)':\n")
    for info in list_passes():
        out.write(f"  {info.name:<36} [{info.kind}] {info.description}\n")
        for option, type_text, default, help_text in info.options:
            typed = f"{option}={type_text}" if type_text else option
            out.write(f"      {typed}  (default: {default}){'  ' + help_text if help_text else ''}\n")


def _parser() -> ToolArgumentParser:
    parser = ToolArgumentParser(prog=TOOL, description=__doc__.split("\n\n")[0],
                                epilog="Any registered pass also works as a flag: -toolkit-simplify, "
                                       "-canonicalize, --stablehlo-refine-shapes='opt=value'. "
                                       "Long flags take one dash or two.")
    parser.add_argument("input", nargs="?", default="-", help="input file (text, bytecode or VHLO); - or none: stdin")
    parser.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
    parser.add_argument("--pass-pipeline", default="", help="e.g. 'builtin.module(func.func(cse), toolkit-simplify)'")
    parser.add_argument("--split-input-file", action="store_true", help="process each '// -----' chunk on its own")
    parser.add_argument("--verify-diagnostics", action="store_true",
                        help="check expected-error/warning/remark annotations")
    parser.add_argument("--emit", choices=["text", "bytecode", "vhlo", "hlo"], default="text",
                        help="output format (default: text)")
    parser.add_argument("--target-version", default=None,
                        help="StableHLO version for --emit=vhlo (default: the current one)")
    parser.add_argument("--mlir-print-debuginfo", "--debug-info", dest="debug_info", action="store_true",
                        help="print locations")
    parser.add_argument("--mlir-print-op-generic", dest="print_generic", action="store_true",
                        help="print operations in the generic form")
    parser.add_argument("--allow-unregistered-dialect", action="store_true",
                        help="parse operations of dialects that are not registered")
    parser.add_argument("--list-passes", action="store_true", help="list every pass with options and exit")
    parser.add_argument("--load-pass-plugin", action="append", default=[], metavar="PLUGIN",
                        help=".py file or module registering passes")
    parser.add_argument("--mlir-print-ir-before-all", action="store_true", help="print the IR before every pass")
    parser.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass")
    parser.add_argument("--mlir-print-ir-before", action="append", default=[], metavar="PASS",
                        help="print the IR before PASS (repeatable)")
    parser.add_argument("--mlir-print-ir-after", action="append", default=[], metavar="PASS",
                        help="print the IR after PASS (repeatable)")
    parser.add_argument("--mlir-print-ir-after-change", action="store_true",
                        help="print IR after a pass only when it changed it")
    parser.add_argument("--dump-ir-to", default=None, metavar="DIR",
                        help="write the input and the IR after every pass as numbered files in DIR")
    parser.add_argument("--report", default=None, metavar="FILE.html",
                        help="write an HTML pipeline report (IR, diffs, timings, op counts, patterns, sharding)")
    parser.add_argument("--mlir-timing", action="store_true", help="print a pass timing report")
    parser.add_argument("--mlir-pass-statistics", action="store_true", help="print which rewrites fired")
    parser.add_argument("--mlir-print-stacktrace-on-diagnostic", action="store_true",
                        help="print the Python traceback of an exception raised in a pass")
    parser.add_argument("--verify-each", default="true", choices=["true", "false"],
                        help="verify the IR after every pass (default true)")
    return parser


def _version_tuple(text: str) -> tuple[int, ...]:
    if not re.fullmatch(r"\d+\.\d+\.\d+", text):
        raise UsageError(f"--target-version={text} is not a version like 1.15.0")
    return tuple(int(part) for part in text.split("."))


def _check_target_version(text: str | None) -> None:
    """A usage error unless ``text`` is a StableHLO version this jaxlib can write."""
    if text is None:
        return
    oldest, newest = stablehlo.get_minimum_version(), stablehlo.get_current_version()
    if not _version_tuple(oldest) <= _version_tuple(text) <= _version_tuple(newest):
        raise UsageError(f"--target-version={text}: this jaxlib writes StableHLO {oldest} .. {newest}")


def _pass_flags(extra: Sequence[str]) -> list[str]:
    """Pipeline elements for mlir-opt style pass flags: ``--name`` or ``--name='opt=value other=value'``."""
    elements = []
    for item in extra:
        if not item.startswith("--") or len(item) < 3:
            raise UsageError(f"unrecognized argument {item!r} (see {TOOL} --help)")
        name, has_options, options = item[2:].partition("=")
        elements.append(f"{name}{{{options}}}" if has_options else name)
    return elements


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args, extra = parse_arguments(parser, argv, allow_extra=True)
    err = sys.stderr
    if args.mlir_print_stacktrace_on_diagnostic:
        print_stacktraces_on_diagnostic()
    for plugin in args.load_pass_plugin:
        try:
            load_pass_plugin(plugin)
        except Exception as error:  # whatever the plugin's own code raises
            raise UsageError(f"cannot load pass plugin: {error}") from None
    if args.list_passes:
        _list_passes(sys.stdout)
        return EXIT_SUCCESS
    flag_passes = _pass_flags(extra)
    args.verify_each = args.verify_each == "true"
    args.before = True if args.mlir_print_ir_before_all else (args.mlir_print_ir_before or None)
    args.after = True if args.mlir_print_ir_after_all else (args.mlir_print_ir_after or None)
    if flag_passes and args.pass_pipeline:
        raise UsageError("use either -pass-pipeline or pass flags, not both")
    if args.split_input_file and args.emit in ("bytecode", "vhlo"):
        raise UsageError(f"--emit={args.emit} writes one binary module; it cannot be used with -split-input-file")
    _check_target_version(args.target_version)
    pipeline_text = args.pass_pipeline or ", ".join(flag_passes)
    try:
        pipeline = parse_pipeline(pipeline_text) if pipeline_text.strip() else None
    except (PipelineError, PassOptionError, ValueError) as error:
        raise UsageError(str(error)) from None

    name = input_name(args.input)
    data = read_input(args.input)
    chunks: list[tuple[str | bytes, int]]
    if detect_format(data) != "text":
        if args.split_input_file or args.verify_diagnostics:
            raise UsageError("-split-input-file and -verify-diagnostics need a text input")
        chunks = [(data, 1)]
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            err.write(f"{name}: error: neither UTF-8 MLIR text, MLIR bytecode nor a portable artifact\n")
            return EXIT_FAILURE
        chunks = list(_split(text)) if args.split_input_file else [(text, 1)]

    outputs: list[bytes] = []
    all_ok = True
    for index, (chunk, first_line) in enumerate(chunks, 1):
        ok, output = _process_chunk(chunk, first_line, args, pipeline, name, err,
                                    chunk=index if len(chunks) > 1 else None)
        all_ok &= ok
        if output is not None:
            outputs.append(output)
    if args.emit in ("text", "hlo"):
        blob = b"// -----\n".join(o if o.endswith(b"\n") else o + b"\n" for o in outputs)
    else:
        blob = b"".join(outputs)
    if outputs:
        write_output(args.output, blob)
    return EXIT_SUCCESS if all_ok else EXIT_FAILURE


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 success, 1 failure, 2 usage)."""
    return run_tool(TOOL, lambda: _run(argv))


if __name__ == "__main__":
    sys.exit(main())
