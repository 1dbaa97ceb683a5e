"""``toolkit-opt``: an ``mlir-opt`` for toolkit — parse, run passes, print.

    toolkit-opt f.mlir -pass-pipeline='builtin.module(toolkit-simplify, cse)'
    toolkit-opt f.mlir -p 'builtin.module(func.func(cse, canonicalize))'
    toolkit-opt f.mlir -toolkit-simplify -cse             # passes as flags, in order
    toolkit-opt cases.mlir -split-input-file -verify-diagnostics
    toolkit-opt f.mlir -cse --mlir-print-ir-after=cse,canonicalize --mlir-timing
    toolkit-opt f.mlir -p '...' --mlir-pass-pipeline-crash-reproducer=repro.mlir
    toolkit-opt repro.mlir --run-reproducer               # replay it
    toolkit-opt artifact.bc --emit=text                   # text, bytecode or VHLO in (auto-detected)
    toolkit-opt f.mlir --emit=vhlo --target-version=1.15.0 -o f.vhlo

Long flags take one dash or two; the input is standard input when it is
``-`` or missing. Exit status 0 on success, 1 when reading, parsing, a pass,
diagnostic verification or writing fails, 2 on bad command-line usage
(unknown flag or pass, bad pass option, conflicting flags). ``docs/tools.md``
lists every mlir-opt flag and what toolkit-opt does with it.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

from toolkit.ir.context import make_context, shared_context
from toolkit.ir.diagnostics import attach_diagnostic_handler, parse_expected_diagnostics
from toolkit.ir.serialization import detect_format, read_module, write_module
from toolkit.passes import (
    PassOptionError,
    PipelineError,
    list_passes,
    load_pass_plugin,
    parse_pipeline,
    reproducer,
)
from toolkit.passes.dump import Timeline, pass_class_name
from toolkit.passes.registry import is_cxx_pass, lookup_python_pass, unknown_pass_error
from toolkit.tools.diagnostics import DiagnosticCollector, format_diagnostic
from toolkit.tools.driver import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    ToolArgumentParser,
    ToolError,
    UsageError,
    input_name,
    parse_arguments,
    print_stacktraces_on_diagnostic,
    read_input,
    run_tool,
    write_output,
)

TOOL = "toolkit-opt"
DEFAULT_SPLIT_MARKER = "// -----"
# mlir-opt flags whose value is optional (`--split-input-file` or `--split-input-file=MARKER`): the
# value must follow '=' (a separate word is the next argument, as in mlir-opt).
_OPTIONAL_VALUE_FLAGS = ("split-input-file", "verify-diagnostics", "verify-numerics")


def _split(text: str, marker: str = DEFAULT_SPLIT_MARKER) -> list[tuple[str, int]]:
    """Chunks of ``text`` between lines starting with ``marker``, with their first line number."""
    chunks, start, line = [], 0, 1
    for found in re.finditer(rf"^{re.escape(marker)}.*$", text, re.MULTILINE):
        chunks.append((text[start:found.start()], line))
        line += text[start:found.end()].count("\n")
        start = found.end()
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


class _FileCollector(DiagnosticCollector):
    """A collector that also remembers each diagnostic's file (a replayed reproducer points at the original)."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[Any, str] = {}

    def add(self, severity: str, location: Any, message: str) -> None:
        before = len(self.diagnostics)
        super().add(severity, location, message)
        found = _LOCATION_FILE.search(str(location))
        if len(self.diagnostics) > before and found:
            self.files[self.diagnostics[-1]] = found.group(1)


_LOCATION_FILE = re.compile(r'"((?:[^"\\]|\\.)*)":\d+:\d+')
_UNNAMED_LOCATION = re.compile(r'^loc\("-":(\d+):(\d+)\)$')


def _name_locations(module: ir.Module, name: str) -> None:
    """Give the parser's locations the input's name: ``loc("f.mlir":3:5)`` as mlir-opt prints them.

    jaxlib's parser calls every buffer ``-``; lines stay relative to the
    parsed chunk (as mlir-opt's ``--split-input-file`` keeps them).
    """
    def rename(location: ir.Location) -> ir.Location | None:
        match = _UNNAMED_LOCATION.match(str(location))
        return ir.Location.file(name, int(match.group(1)), int(match.group(2))) if match else None

    def visit(op: ir.Operation) -> ir.WalkResult:
        renamed = rename(op.location)
        if renamed is not None:
            op.location = renamed
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    renamed = rename(argument.location)
                    if renamed is not None:
                        argument.set_location(renamed)
        return ir.WalkResult.ADVANCE

    with module.context:
        module.operation.walk(visit)


class _ReproducerFile:
    """``--mlir-pass-pipeline-crash-reproducer=FILE``: written before a run (a crash leaves it), kept on failure.

    The whole-pipeline reproducer is the input and the pipeline (mlir-opt's
    default); with ``--mlir-pass-pipeline-local-reproducer`` it is rewritten
    before each pass with the module and that pass alone.
    """

    def __init__(self, path: str | None, local: bool, verify_each: bool):
        self.path, self.local, self.verify_each = path, local, verify_each
        self.kept = False  # a failure's reproducer is in the file: later chunks leave it alone

    def start(self, module: ir.Module, pipeline_text: str) -> None:
        if self.path is not None and not self.kept:
            self._write(module, pipeline_text)

    def before_pass(self, pass_pipeline: str, op: ir.Operation) -> None:
        if self.path is not None and not self.kept:
            self._write(op, pass_pipeline)

    def _write(self, module: Any, pipeline_text: str) -> None:
        assert self.path is not None
        try:
            reproducer.write_reproducer(self.path, module, pipeline_text, disable_threading=True,
                                        verify_each=self.verify_each)
        except OSError as error:
            raise ToolError(f"cannot write the crash reproducer '{self.path}': {error.strerror or error}") from None

    def succeeded(self) -> None:
        if self.path is not None and not self.kept:
            try:
                os.remove(self.path)
            except OSError:
                pass

    def failed(self, error: PipelineError | None) -> str | None:
        """Keep the file (the failing pass's own reproducer when local); its path, or None."""
        if self.path is None or self.kept:
            return None
        if self.local and error is not None and error.module_before is not None:
            reproducer.write_failure_reproducer(self.path, error, verify_each=self.verify_each)
        self.kept = True
        return self.path


def _run_passes(module: ir.Module, args: argparse.Namespace, pipeline: Any, timeline: Any, err: Any,
                crash_file: _ReproducerFile) -> None:
    pipeline.run(module, print_ir_before=args.before, print_ir_after=args.after,
                 print_after_change=args.mlir_print_ir_after_change, timing=args.mlir_timing,
                 timing_display=args.mlir_timing_display, verify=args.verify_each,
                 observe=timeline and timeline.observe, statistics=args.mlir_pass_statistics,
                 debug_info=args.debug_info, stream=err, capture_diagnostics=False,
                 print_module_scope=args.mlir_print_ir_module_scope,
                 print_after_failure=args.mlir_print_ir_after_failure,
                 on_pass_start=crash_file.before_pass if crash_file.local and crash_file.path else None)
    crash_file.succeeded()


def _printed(module: ir.Module, args: argparse.Namespace) -> bytes:
    return module.operation.get_asm(
        enable_debug_info=args.debug_info, print_generic_op_form=args.print_generic,
        large_elements_limit=args.mlir_elide_elementsattrs_if_larger, use_local_scope=args.mlir_print_local_scope,
        pretty_debug_info=args.mlir_pretty_debuginfo).encode()


def _process_chunk(text: str | bytes, first_line: int, args: argparse.Namespace, pipeline: Any,
                   name: str, err: Any, crash_file: _ReproducerFile,
                   chunk: int | None = None) -> tuple[bool, bytes | None]:
    """Parse, run and serialize one chunk; returns (ok, output bytes or None).

    Every problem is written to ``err`` as a diagnostic of ``name``
    (``name:line:col: error: ...``, or ``name: error: ...`` without a line),
    each failure once.
    """
    context = make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    if args.mlir_disable_threading:
        context.enable_multithreading(False)
    collector = _FileCollector()
    verify = args.verify_diagnostics
    handler = attach_diagnostic_handler(context, collector)
    module = None
    failed_message = None
    failure: PipelineError | None = None
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
        if module is not None and isinstance(text, str):
            _name_locations(module, name)
        if module is not None:
            timeline = _timeline(args, name, chunk)
            if timeline is not None:
                timeline.add_module("input", "input", module, label="input module")
                timeline.pipeline_text = str(pipeline) if pipeline is not None else None
        if module is not None and pipeline is not None and pipeline.elements:
            crash_file.start(module, str(pipeline))  # before the run: a crash leaves it
            try:
                _run_passes(module, args, pipeline, timeline, err, crash_file)
            except PipelineError as error:
                failure = error
                failed_message = str(error)
            except Exception as error:  # a pass raising outside the pass manager
                failed_message = f"{type(error).__name__}: {error}"
    finally:
        handler.detach()
        if timeline is not None:
            ok = failed_message is None
            timeline.finish(module if ok else None,
                            failure=None if ok else f"the pipeline failed: {failed_message}")
    kept = crash_file.failed(failure) if failure is not None or (failed_message and module is not None) else None

    def located(diagnostic: Any) -> str:
        other = collector.files.get(diagnostic)
        if other not in (None, name, "-"):  # a location in another file (a reproducer's original input)
            return format_diagnostic(other, diagnostic)
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
            elif verify == "only-expected":
                continue  # mlir-opt's --verify-diagnostics=only-expected: unexpected ones are ignored
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
        return ok, _printed(module, args)

    for diagnostic in collector.diagnostics:
        err.write(located(diagnostic) + "\n")
    if module is None:
        return False, None
    if failed_message is not None:
        # One failure, once: what the located diagnostics above already said is not said again.
        errors = [d.message for d in collector.diagnostics if d.severity == "error"]
        first = failed_message.split("\n")[0].rstrip(":")
        core = first.split(" failed: ", 1)[1] if " failed: " in first else first
        if not errors:
            err.write(f"{name}: error: {failed_message}\n")
        elif not any(core in message for message in errors):
            err.write(f"{name}: error: {first}\n")
        if kept is not None:
            where = f"`{_class_name(failure.pass_name)}`" if failure is not None and failure.pass_name else "a pass"
            err.write(f"{name}: note: Pipeline failed while executing {where}: reproducer generated at `{kept}`\n")
        return False, None
    try:
        if args.emit == "hlo":
            # function-level: --emit=hlo alone needs XLA's converter; every other run starts without it
            from toolkit.runtime.executable import mlir_to_hlo_text

            return True, mlir_to_hlo_text(write_module(module, "bytecode")).encode()
        if args.emit == "text":
            return True, _printed(module, args)
        return True, write_module(module, args.emit, target_version=args.target_version)
    except ValueError as error:
        err.write(f"{name}: error: {error}\n")
        return False, None


def _parses_in_child(pipeline_text: str) -> bool:
    """Whether jaxlib accepts ``pipeline_text``, asked in a forked child: a pass nested under an op it
    cannot run on aborts the process (an LLVM fatal error), not just this question."""
    pid = os.fork()
    if pid == 0:  # the child: answer with the exit status, print nothing
        status = 1
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            with shared_context():
                passmanager.PassManager.parse(pipeline_text)
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


#: What _cxx_anchor finds for the C++ passes jaxlib 0.10.2 registers (asking costs a fork per pass).
_CXX_ANCHORS = {
    **dict.fromkeys(("canonicalize", "cse", "inline", "loop-invariant-code-motion", "print-op-stats", "sccp",
                     "stablehlo-legalize-to-linalg", "strip-debuginfo", "symbol-dce", "vhlo-to-version"), "any"),
    **dict.fromkeys(("sdy-close-shardings", "sdy-lift-inlined-meshes", "sdy-propagation-pipeline",
                     "stablehlo-compatibility-expander", "stablehlo-convert-to-signless", "stablehlo-legalize-to-vhlo",
                     "stablehlo-refine-arguments", "stablehlo-refine-shapes", "stablehlo-wrap-in-composite",
                     "vhlo-legalize-to-stablehlo"), "builtin.module"),
}


@functools.lru_cache(maxsize=None)
def _cxx_anchor(name: str) -> str:
    """The op a C++ pass runs on: ``any``, ``builtin.module`` or ``func.func`` (asked of jaxlib)."""
    if name in _CXX_ANCHORS:
        return _CXX_ANCHORS[name]
    if not hasattr(os, "fork"):
        return "?"
    on_module = _parses_in_child(f"builtin.module({name})")
    on_function = _parses_in_child(f"builtin.module(func.func({name}))")
    if on_module and on_function:
        return "any"
    return "func.func" if on_function else "builtin.module"


def _list_passes(out: Any) -> None:
    out.write("Available passes (Python and C++), use in -pass-pipeline='builtin.module(...)' or as --NAME flags.\n"
              "Anchor: the op a pass runs on ('any': builtin.module at the top, each func.func inside func.func(...)).\n")
    for info in list_passes():
        if info.name == "inline":
            continue  # jaxlib's inliner inlines no func.call (no inliner interface registered): not offered
        anchor = "any" if info.kind == "python" else _cxx_anchor(info.name)
        out.write(f"  {info.name:<36} {anchor:<15} [{info.kind}] {info.description}\n")
        if info.options:
            syntax = " ".join(f"{option}={type_text or 'value'}" for option, type_text, _, _ in info.options)
            out.write(f"      syntax: {info.name}{{{syntax}}}  or  --{info.name}='{syntax}'\n")
        for option, type_text, default, help_text in info.options:
            typed = f"{option}={type_text}" if type_text else option
            out.write(f"      {typed}  (default: {default}){'  ' + help_text if help_text else ''}\n")


def _parser() -> ToolArgumentParser:
    parser = ToolArgumentParser(prog=TOOL, description=__doc__.split("\n\n")[0],
                                epilog="Any registered pass also works as a flag: -toolkit-simplify, "
                                       "-canonicalize, --stablehlo-refine-shapes='opt=value'. "
                                       "Long flags take one dash or two. docs/tools.md lists every mlir-opt flag.")
    add = parser.add_argument
    add("input", nargs="?", default="-", help="input file (text, bytecode or VHLO); - or none: stdin")
    add("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
    add("-p", "--pass-pipeline", default="", help="e.g. 'builtin.module(func.func(cse), toolkit-simplify)'")
    add("--split-input-file", action="store_true",
        help="process each '// -----' chunk on its own (--split-input-file=MARKER: another marker)")
    add("--verify-diagnostics", action="store_true",
        help="check expected-error/warning/remark annotations (=all, the default, or =only-expected)")
    add("--verify-numerics", action="store_true",
        help="run each pass on XLA against the one before (=RTOL,ATOL to set tolerances); exit 1 naming "
             "the first pass that changed @main's results")
    add("--verify-numerics-seed", type=int, default=0, metavar="SEED", help="the seed of --verify-numerics's inputs")
    for flag in _OPTIONAL_VALUE_FLAGS:
        add(f"--x-{flag}-value", dest=f"{flag.replace('-', '_')}_value", default=None, help=argparse.SUPPRESS)
    add("--emit", choices=["text", "bytecode", "vhlo", "hlo"], default="text", help="output format (default: text)")
    add("--target-version", default=None, help="StableHLO version for --emit=vhlo (default: the current one)")
    add("--mlir-print-debuginfo", "--debug-info", dest="debug_info", action="store_true",
        help="print locations (the input file's name, line and column)")
    add("--mlir-pretty-debuginfo", action="store_true", help="print locations in their pretty form")
    add("--mlir-print-op-generic", dest="print_generic", action="store_true",
        help="print operations in the generic form")
    add("--mlir-print-local-scope", action="store_true", help="print types and attributes inline, without aliases")
    add("--mlir-elide-elementsattrs-if-larger", type=int, default=None, metavar="N",
        help="print elements attributes with more than N elements as dense_resource<__elided__>")
    add("--allow-unregistered-dialect", action="store_true", help="parse operations of dialects that are not registered")
    add("--list-passes", action="store_true", help="list every pass with its anchor op and options, and exit")
    add("--dump-pass-pipeline", action="store_true", help="print the pass pipeline (one pass a line) to stderr")
    add("--load-pass-plugin", action="append", default=[], metavar="PLUGIN",
        help=".py file or module registering passes")
    add("--mlir-print-ir-before-all", action="store_true", help="print the IR before every pass")
    add("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass")
    add("--mlir-print-ir-before", action="append", default=[], metavar="PASS[,PASS]",
        help="print the IR before these passes (comma list, repeatable)")
    add("--mlir-print-ir-after", action="append", default=[], metavar="PASS[,PASS]",
        help="print the IR after these passes (comma list, repeatable)")
    add("--mlir-print-ir-after-change", action="store_true", help="print IR after a pass only when it changed it")
    add("--mlir-print-ir-after-failure", action="store_true", help="print the IR after the pass that failed")
    add("--mlir-print-ir-module-scope", action="store_true",
        help="print the whole module, not just the op a nested pass ran on")
    add("--mlir-disable-threading", action="store_true", help="run passes on one thread")
    add("--dump-ir-to", default=None, metavar="DIR",
        help="write the input and the IR after every pass as numbered files in DIR")
    add("--report", default=None, metavar="FILE.html",
        help="write an HTML pipeline report (IR, diffs, timings, op counts, patterns, sharding)")
    add("--mlir-timing", action="store_true", help="print a pass timing report")
    add("--mlir-timing-display", choices=["list", "tree"], default="tree", help="timing report layout (default tree)")
    add("--mlir-pass-statistics", action="store_true",
        help="print each pass's statistics (Python: which rewrite fired; C++: ops erased and created)")
    add("--mlir-pass-statistics-display", choices=["list", "pipeline"], default="pipeline", help=argparse.SUPPRESS)
    add("--mlir-print-stacktrace-on-diagnostic", action="store_true",
        help="print the Python traceback of an exception raised in a pass")
    add("--verify-each", default="true", choices=["true", "false"], help="verify the IR after every pass (default true)")
    add("--mlir-pass-pipeline-crash-reproducer", default=None, metavar="FILE",
        help="when a pass fails (or the process dies), leave a reproducer in FILE (replay: --run-reproducer)")
    add("--mlir-pass-pipeline-local-reproducer", action="store_true",
        help="the reproducer holds the module before the failing pass and that pass alone")
    add("--run-reproducer", action="store_true", help="run the pipeline the input's mlir_reproducer resource names")
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


def _optional_values(argv: Sequence[str]) -> list[str]:
    """``--split-input-file=X`` -> ``--split-input-file --x-split-input-file-value=X`` (one dash or two; ``-p=X``)."""
    result: list[str] = []
    for item in argv:
        if item.startswith("-p="):
            result += ["-p", item[3:]]
            continue
        flag, has_value, value = item.lstrip("-").partition("=")
        if item.startswith("-") and has_value and flag in _OPTIONAL_VALUE_FLAGS:
            result += [f"--{flag}", f"--x-{flag}-value={value}"]
        else:
            result.append(item)
    return result


def _print_selection(values: Sequence[str], flag: str) -> list[str] | None:
    """The pass names of repeated, comma-separated ``--mlir-print-ir-before/after`` values; unknown ones are errors."""
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    for name in names:
        if lookup_python_pass(name) is None and not is_cxx_pass(name):
            raise UsageError(f"--{flag}: {unknown_pass_error(name)}")
    return names or None


def _numeric_tolerances(value: str | None) -> tuple[float | None, float | None]:
    if not value:
        return None, None
    parts = value.split(",")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (1, 2) or any(n < 0 for n in numbers):
        raise UsageError(f"--verify-numerics={value}: expected RTOL or RTOL,ATOL (non-negative numbers)")
    return numbers[0], numbers[1] if len(numbers) == 2 else None


def _verify_numerics(data: bytes, name: str, pipeline: Any, value: str | None, seed: int, err: Any) -> int:
    """``--verify-numerics``: run the passes one by one with XLA against the input; 1 on the first divergence."""
    # Lazy: --verify-numerics alone needs the runtime (XLA); every other run stays without it.
    from toolkit.passes import numerics

    rtol, atol = _numeric_tolerances(value)
    if pipeline is None or not pipeline.elements:
        raise UsageError("--verify-numerics needs a pipeline (-pass-pipeline=... or pass flags)")
    try:
        report = numerics.verify_numerics(data.decode("utf-8") if detect_format(data) == "text" else data,
                                          pipeline, rtol=rtol, atol=atol, seed=seed)
    except (ValueError, PipelineError) as error:
        err.write(f"{name}: error: --verify-numerics: {error}\n")
        return EXIT_FAILURE
    err.write(str(report).rstrip() + "\n")
    if report.ok:
        return EXIT_SUCCESS
    err.write(f"{name}: error: pass '{report.first_divergent_pass}' changed @main's results\n")
    return EXIT_FAILURE


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args, extra = parse_arguments(parser, _optional_values(sys.argv[1:] if argv is None else [str(a) for a in argv]),
                                  allow_extra=True)
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
    args.before = True if args.mlir_print_ir_before_all else _print_selection(args.mlir_print_ir_before,
                                                                              "mlir-print-ir-before")
    args.after = True if args.mlir_print_ir_after_all else _print_selection(args.mlir_print_ir_after,
                                                                            "mlir-print-ir-after")
    split_marker = (args.split_input_file_value or DEFAULT_SPLIT_MARKER) if args.split_input_file else None
    if args.verify_diagnostics:
        args.verify_diagnostics = args.verify_diagnostics_value or "all"
        if args.verify_diagnostics not in ("all", "only-expected"):
            raise UsageError(f"--verify-diagnostics={args.verify_diagnostics}: expected 'all' or 'only-expected'")
    if flag_passes and args.pass_pipeline:
        raise UsageError("use either -pass-pipeline or pass flags, not both")
    if split_marker and args.emit in ("bytecode", "vhlo"):
        raise UsageError(f"--emit={args.emit} writes one binary module; it cannot be used with -split-input-file")
    if args.mlir_pass_pipeline_local_reproducer and not args.mlir_pass_pipeline_crash_reproducer:
        raise UsageError("--mlir-pass-pipeline-local-reproducer needs --mlir-pass-pipeline-crash-reproducer=FILE")
    _check_target_version(args.target_version)
    pipeline_text = args.pass_pipeline or ", ".join(flag_passes)

    name = input_name(args.input)
    data = read_input(args.input)
    if args.run_reproducer:
        if pipeline_text:
            raise UsageError("--run-reproducer runs the reproducer's own pipeline; drop -pass-pipeline and pass flags")
        try:
            found = reproducer.read_reproducer(data.decode("utf-8", errors="replace") + "\n")
        except ValueError as error:
            raise UsageError(f"--run-reproducer: {str(error).replace('the reproducer text', name)}") from None
        data, pipeline_text = found.module_text.encode(), found.pipeline
        args.verify_each = found.verify_each
    try:
        pipeline = parse_pipeline(pipeline_text) if pipeline_text.strip() else None
    except (PipelineError, PassOptionError, ValueError) as error:
        raise UsageError(str(error)) from None
    if pipeline is not None and "inline" in pipeline.pass_names():
        raise UsageError("pass 'inline': jaxlib's C++ inliner inlines no func.call here (the func dialect's "
                         "inliner interface is not registered in jaxlib), so toolkit-opt does not offer it")
    if args.dump_pass_pipeline and pipeline is not None:
        err.write(f"Pass Manager with {len(pipeline.elements)} passes:\n{pipeline.pretty()}\n")
    if args.verify_numerics:
        return _verify_numerics(data, name, pipeline, args.verify_numerics_value, args.verify_numerics_seed, err)

    chunks: list[tuple[str | bytes, int]]
    if detect_format(data) != "text":
        if split_marker or args.verify_diagnostics:
            raise UsageError("-split-input-file and -verify-diagnostics need a text input")
        chunks = [(data, 1)]
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            err.write(f"{name}: error: neither UTF-8 MLIR text, MLIR bytecode nor a portable artifact\n")
            return EXIT_FAILURE
        chunks = list(_split(text, split_marker)) if split_marker else [(text, 1)]

    crash_file = _ReproducerFile(args.mlir_pass_pipeline_crash_reproducer, args.mlir_pass_pipeline_local_reproducer,
                                 args.verify_each)
    outputs: list[bytes] = []
    all_ok = True
    for index, (chunk, first_line) in enumerate(chunks, 1):
        ok, output = _process_chunk(chunk, first_line, args, pipeline, name, err, crash_file,
                                    chunk=index if len(chunks) > 1 else None)
        all_ok &= ok
        if output is not None:
            outputs.append(output)
    if args.emit in ("text", "hlo"):
        separator = f"{split_marker or DEFAULT_SPLIT_MARKER}\n".encode()
        blob = separator.join(o if o.endswith(b"\n") else o + b"\n" for o in outputs)
    else:
        blob = b"".join(outputs)
    if outputs:
        write_output(args.output, blob)
    return EXIT_SUCCESS if all_ok else EXIT_FAILURE


def _class_name(pass_name: str) -> str:
    """What MLIR's messages call a pass: its Python class's name, or the C++ pass's ``getName()``."""
    python_class = lookup_python_pass(pass_name)
    return python_class.__name__ if python_class is not None else pass_class_name(pass_name)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 success, 1 failure, 2 usage)."""
    return run_tool(TOOL, lambda: _run(argv))


if __name__ == "__main__":
    sys.exit(main())
