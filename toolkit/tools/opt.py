"""``toolkit-opt``: an ``mlir-opt`` for toolkit — parse, run passes, print.

    toolkit-opt f.mlir --pass-pipeline='builtin.module(toolkit-simplify, cse)'
    toolkit-opt f.mlir --toolkit-simplify --cse          # passes as flags, in order
    toolkit-opt cases.mlir --split-input-file --verify-diagnostics
    toolkit-opt artifact.bc --emit=text                   # text, bytecode or VHLO in (auto-detected)
    toolkit-opt f.mlir --emit=vhlo --target-version=1.15.0 -o f.vhlo

Exit status 0 on success, 1 when parsing, a pass or diagnostic verification
fails, 2 on bad command-line usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, BinaryIO

from toolkit.ir.diagnostics import parse_expected_diagnostics

SPLIT_MARKER = re.compile(r"^// -----.*$", re.MULTILINE)
_LOCATION_LINE = re.compile(r":(\d+):(\d+)")


@dataclasses.dataclass(frozen=True)
class _Diagnostic:
    severity: str
    line: int | None
    column: int | None
    message: str


def _split(text: str) -> list[tuple[str, int]]:
    """Chunks of ``text`` between ``// -----`` lines with their first line number."""
    chunks, start, line = [], 0, 1
    for marker in SPLIT_MARKER.finditer(text):
        chunks.append((text[start:marker.start()], line))
        line += text[start:marker.end()].count("\n")
        start = marker.end()
    chunks.append((text[start:], line))
    return chunks


def _severity_name(severity: Any) -> str:
    from jaxlib.mlir import ir

    return {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
            ir.DiagnosticSeverity.REMARK: "remark", ir.DiagnosticSeverity.NOTE: "note"}.get(severity, "error")


def _diagnostic(severity: str, location: Any, message: str) -> _Diagnostic:
    match = _LOCATION_LINE.search(str(location))
    if match:
        return _Diagnostic(severity, int(match.group(1)), int(match.group(2)), message)
    return _Diagnostic(severity, None, None, message)


def _format(name: str, diagnostic: _Diagnostic, first_line: int, split: bool) -> str:
    if diagnostic.line is None:
        return f"{name}: {diagnostic.severity}: {diagnostic.message}"
    line = diagnostic.line + first_line - 1
    return f"{name}:{line}:{diagnostic.column}: {diagnostic.severity}: {diagnostic.message}"


class _Collector:
    def __init__(self) -> None:
        self.diagnostics: list[_Diagnostic] = []

    def __call__(self, diagnostic: Any) -> bool:
        self.add(_severity_name(diagnostic.severity), diagnostic.location, diagnostic.message)
        for note in diagnostic.notes:
            self.add("note", note.location, note.message)
        return True

    def add(self, severity: str, location: Any, message: str) -> None:
        item = _diagnostic(severity, location, message)
        if item not in self.diagnostics:
            self.diagnostics.append(item)


def _process_chunk(text: str, first_line: int, args: argparse.Namespace, pipeline: Any,
                   name: str, err: Any) -> tuple[bool, bytes | None]:
    """Parse, run and serialize one chunk; returns (ok, output bytes or None)."""
    from jaxlib.mlir import ir

    from toolkit.ir.context import make_context
    from toolkit.ir.serialization import read_module, write_module
    from toolkit.passes import PipelineError

    context = make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    collector = _Collector()
    verify = args.verify_diagnostics
    handler = context.attach_diagnostic_handler(collector)
    module = None
    failed_message = None
    try:
        try:
            module = read_module(text if isinstance(text, str) else text, context)
        except ir.MLIRError as error:
            for d in error.error_diagnostics:
                collector.add("error", d.location, d.message)
                for note in d.notes:
                    collector.add("note", note.location, note.message)
            failed_message = "parse"
        except ValueError as error:
            err.write(f"{name}: error: {error}\n")
            return False, None
        if module is not None and pipeline is not None and pipeline.elements:
            try:
                pipeline.run(module, print_ir_before=args.before, print_ir_after=args.after,
                             print_after_change=args.mlir_print_ir_after_change, timing=args.mlir_timing,
                             verify=args.verify_each, dump_dir=args.dump_ir_to,
                             statistics=args.mlir_pass_statistics, debug_info=args.debug_info,
                             stream=err, capture_diagnostics=False)
            except PipelineError as error:
                # The diagnostics themselves are printed (file:line:col) below.
                failed_message = str(error).split("\n")[0].rstrip(":") if collector.diagnostics else str(error)
            except Exception as error:  # a pass raising outside the pass manager
                failed_message = f"{type(error).__name__}: {error}"
    finally:
        handler.detach()

    if verify:
        expected = parse_expected_diagnostics(text)
        ok = True
        for diagnostic in collector.diagnostics:
            match = next((e for e in expected if not e.seen and e.severity == diagnostic.severity
                          and e.line == diagnostic.line and e.message in diagnostic.message), None)
            if match is not None:
                match.seen = True
            elif diagnostic.severity != "note" or any(e.severity == "note" for e in expected):
                ok = False
                err.write(_format(name, dataclasses.replace(
                    diagnostic, severity="error", message=f"unexpected {diagnostic.severity}: {diagnostic.message}"),
                    first_line, args.split_input_file) + "\n")
        for item in expected:
            if not item.seen:
                ok = False
                err.write(f"{name}:{item.source_line + first_line - 1}:1: error: expected {item.severity} "
                          f"\"{item.message}\" was not produced\n")
        if module is None or failed_message is not None:
            return ok, None
        return ok, None if args.emit != "text" or not ok else write_module(module, "text", debug_info=args.debug_info)

    for diagnostic in collector.diagnostics:
        err.write(_format(name, diagnostic, first_line, args.split_input_file) + "\n")
    if module is None:
        return False, None
    if failed_message is not None:
        err.write(f"{name}: error: {failed_message}\n")
        return False, None
    try:
        if args.emit == "hlo":
            from toolkit.runtime.executable import mlir_to_hlo_text

            return True, mlir_to_hlo_text(write_module(module, "bytecode")).encode()
        return True, write_module(module, args.emit, target_version=args.target_version,
                                  debug_info=args.debug_info)
    except ValueError as error:
        err.write(f"{name}: error: {error}\n")
        return False, None


def _list_passes(out: Any) -> None:
    from toolkit.passes import list_passes

    out.write("Available passes (Python and C++), use in --pass-pipeline='builtin.module(...)':\n")
    for info in list_passes():
        out.write(f"  {info.name:<36} [{info.kind}] {info.description}\n")
        for option, type_text, default, help_text in info.options:
            typed = f"{option}={type_text}" if type_text else option
            out.write(f"      {typed}  (default: {default}){'  ' + help_text if help_text else ''}\n")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolkit-opt", description=__doc__.split("\n\n")[0],
                                     epilog="Any registered pass also works as a flag: --toolkit-simplify, "
                                            "--canonicalize, --stablehlo-refine-shapes{...}.")
    parser.add_argument("input", nargs="?", default="-", help="input file (text, bytecode or VHLO); - for stdin")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    parser.add_argument("--pass-pipeline", default="", help="e.g. 'builtin.module(func.func(cse), toolkit-simplify)'")
    parser.add_argument("--split-input-file", action="store_true", help="process each '// -----' chunk on its own")
    parser.add_argument("--verify-diagnostics", action="store_true", help="check expected-error/warning/remark annotations")
    parser.add_argument("--emit", choices=["text", "bytecode", "vhlo", "hlo"], default="text")
    parser.add_argument("--target-version", default=None, help="StableHLO version for --emit=vhlo (default current)")
    parser.add_argument("--debug-info", "--mlir-print-debuginfo", dest="debug_info", action="store_true",
                        help="print locations")
    parser.add_argument("--list-passes", action="store_true", help="list every pass with options and exit")
    parser.add_argument("--load-pass-plugin", action="append", default=[], help=".py file or module registering passes")
    parser.add_argument("--mlir-print-ir-before-all", action="store_true")
    parser.add_argument("--mlir-print-ir-after-all", action="store_true")
    parser.add_argument("--mlir-print-ir-before", action="append", default=[], metavar="PASS")
    parser.add_argument("--mlir-print-ir-after", action="append", default=[], metavar="PASS")
    parser.add_argument("--mlir-print-ir-after-change", action="store_true",
                        help="print IR after a pass only when it changed it")
    parser.add_argument("--dump-ir-to", default=None, metavar="DIR", help="write the IR printouts to DIR")
    parser.add_argument("--mlir-timing", action="store_true", help="print a pass timing report")
    parser.add_argument("--mlir-pass-statistics", action="store_true", help="print which rewrites fired")
    parser.add_argument("--verify-each", default="true", choices=["true", "false"],
                        help="verify the IR after every pass (default true)")
    parser.add_argument("--allow-unregistered-dialect", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    err = sys.stderr
    from toolkit.passes import PassOptionError, PipelineError, load_pass_plugin, parse_pipeline

    try:
        for plugin in args.load_pass_plugin:
            load_pass_plugin(plugin)
    except Exception as error:
        err.write(f"toolkit-opt: error: cannot load pass plugin: {error}\n")
        return 2
    if args.list_passes:
        _list_passes(sys.stdout)
        return 0
    flag_passes = []
    for item in extra:
        if not item.startswith("--") or len(item) < 3:
            parser.error(f"unrecognized argument {item!r}")
        # mlir-opt style: --pass-name or --pass-name='opt=value other=value'.
        name, has_options, options = item[2:].partition("=")
        flag_passes.append(f"{name}{{{options}}}" if has_options else name)
    args.verify_each = args.verify_each == "true"
    args.before = True if args.mlir_print_ir_before_all else (args.mlir_print_ir_before or None)
    args.after = True if args.mlir_print_ir_after_all else (args.mlir_print_ir_after or None)
    if flag_passes and args.pass_pipeline:
        parser.error("use either --pass-pipeline or pass flags, not both")
    pipeline_text = args.pass_pipeline or ", ".join(flag_passes)
    try:
        pipeline = parse_pipeline(pipeline_text) if pipeline_text.strip() else None
    except (PipelineError, PassOptionError, ValueError) as error:
        err.write(f"toolkit-opt: error: {error}\n")
        return 1
    if args.split_input_file and args.emit in ("bytecode", "vhlo"):
        parser.error(f"--emit={args.emit} writes one binary module; it cannot be used with --split-input-file")

    name = "<stdin>" if args.input == "-" else args.input
    try:
        data = sys.stdin.buffer.read() if args.input == "-" else open(args.input, "rb").read()
    except OSError as error:
        err.write(f"toolkit-opt: error: cannot read {name}: {error.strerror}\n")
        return 1
    from toolkit.ir.serialization import detect_format

    if detect_format(data) != "text":
        chunks: list[tuple[Any, int]] = [(data, 1)]
        if args.split_input_file or args.verify_diagnostics:
            parser.error("--split-input-file and --verify-diagnostics need a text input")
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            err.write(f"toolkit-opt: error: {name} is neither UTF-8 MLIR text, MLIR bytecode nor a portable artifact\n")
            return 1
        chunks = _split(text) if args.split_input_file else [(text, 1)]

    outputs: list[bytes] = []
    all_ok = True
    for chunk, first_line in chunks:
        ok, output = _process_chunk(chunk, first_line, args, pipeline, name, err)
        all_ok &= ok
        if output is not None:
            outputs.append(output)
    separator = b"// -----\n"
    if args.emit == "text" or args.emit == "hlo":
        blob = separator.join(o if o.endswith(b"\n") else o + b"\n" for o in outputs)
    else:
        blob = b"".join(outputs)
    if outputs:
        sink: BinaryIO
        if args.output == "-":
            sys.stdout.flush()
            sys.stdout.buffer.write(blob)
            sys.stdout.flush()
        else:
            with open(args.output, "wb") as sink:
                sink.write(blob)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
