"""Pipelines in MLIR's textual syntax, mixing Python and C++ passes.

``builtin.module(func.func(canonicalize), toolkit-simplify, symbol-dce)`` parses
into a :class:`Pipeline`; ``str(pipeline)`` prints the same text back (Python
passes print their non-default options). Running a pipeline builds ONE jaxlib
``PassManager``: C++ passes are added as text, Python passes as callables, in
order. Cheap Python probes between the top-level elements time each element,
print IR around it and name the element that failed or broke the IR.

Example::

    from toolkit.passes import run_pipeline
    report = run_pipeline(module, "toolkit-simplify, cse", timing=True)
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO, Union

from jaxlib.mlir import ir, passmanager

from toolkit.ir import diagnostics as ir_diagnostics
from toolkit.ir.context import _register_passes_once, shared_context
from toolkit.ir.rewriting import dangling_operands, describe_op, keep_alive_forever
from toolkit.passes import preconditions, registry
from toolkit.passes.dump import write_numbered
from toolkit.passes.pass_base import (
    FailureSite,
    Pass,
    PassFailure,
    PassOptionError,
    PatternPass,
    PipelineError,
    _active_failure_sites,
    _active_statistics,
    parse_options,
)


# --------------------------------------------------------------------------
# Tracebacks in diagnostics
# --------------------------------------------------------------------------
_print_stacktrace: bool | None = None


def set_print_stacktrace_on_diagnostic(enabled: bool) -> None:
    """Append the whole Python traceback to the error diagnostic of a pass that raised.

    What ``toolkit-opt --mlir-print-stacktrace-on-diagnostic`` turns on; the
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


# --------------------------------------------------------------------------
# Pipeline data
# --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PassElement:
    """One pass in a pipeline: a Python pass instance, or C++ pass text."""

    name: str
    options: str = ""  # option text inside {...}, as written (C++ passes)
    python_pass: Pass | None = None

    def __str__(self) -> str:
        if self.python_pass is not None:
            return self.python_pass.pipeline_text()
        return f"{self.name}{{{self.options}}}" if self.options else self.name

    @property
    def is_python(self) -> bool:
        return self.python_pass is not None

    def contains_python(self) -> bool:
        return self.is_python


@dataclasses.dataclass(frozen=True)
class NestedPipeline:
    """``anchor(element, ...)``: run the elements on every ``anchor`` op."""

    anchor: str
    elements: tuple["Element", ...]

    def __str__(self) -> str:
        return f"{self.anchor}({', '.join(str(e) for e in self.elements)})"

    def contains_python(self) -> bool:
        return any(e.contains_python() for e in self.elements)


Element = Union[PassElement, NestedPipeline]


@dataclasses.dataclass(frozen=True)
class PassRecord:
    """What happened in one top-level element of a run."""

    label: str
    seconds: float = 0.0
    changed: bool | None = None  # None: not tracked (no printing asked)
    statistics: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ReportedDiagnostic:
    """A warning or remark a pass emitted during a run (``location`` as ``file:line:col`` when known)."""

    severity: str  # "warning", "remark" or "note"
    location: str
    message: str


@dataclasses.dataclass
class PipelineReport:
    """Per-element timings and rewrite statistics of one :meth:`Pipeline.run`.

    ``diagnostics`` holds the warnings and remarks passes emitted (when the
    run captured diagnostics, the default).
    """

    records: list[PassRecord] = dataclasses.field(default_factory=list)
    total_seconds: float = 0.0
    diagnostics: list[ReportedDiagnostic] = dataclasses.field(default_factory=list)

    def timing_report(self) -> str:
        """An mlir-opt style ``--mlir-timing`` table."""
        total = self.total_seconds or 1e-12
        bar = "===" + "-" * 73 + "==="
        lines = [bar, "Pass execution timing report".center(79), bar,
                 f"  Total Execution Time: {self.total_seconds:.4f} seconds", "",
                 "  ----Wall Time----  ----Name----"]
        for record in self.records:
            lines.append(f"  {record.seconds:8.4f} ({100 * record.seconds / total:5.1f}%)  {record.label}")
        lines.append(f"  {self.total_seconds:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"

    def statistics_report(self) -> str:
        """Which rewrite fired how often, per pass (``--mlir-pass-statistics``)."""
        lines = ["===" + "-" * 73 + "===", "Pass statistics report".center(79), "===" + "-" * 73 + "==="]
        for record in self.records:
            if record.statistics:
                lines.append(record.label)
                for key, count in sorted(record.statistics.items()):
                    lines.append(f"  ({count}) {key}")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, message: str) -> PipelineError:
        caret = " " * self.pos + "^"
        return PipelineError(f"bad pipeline: {message}\n  {self.text}\n  {caret}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def name(self) -> str:
        self.skip()
        match = _NAME.match(self.text, self.pos)
        if not match:
            raise self.error("expected a pass or op name")
        self.pos = match.end()
        return match.group()

    def braced(self) -> str:
        # Returns the text between balanced braces, honouring quotes.
        assert self.text[self.pos] == "{"
        depth, start, i, quote = 0, self.pos + 1, self.pos, False
        while i < len(self.text):
            c = self.text[i]
            if c == '"':
                quote = not quote
            elif not quote and c == "{":
                depth += 1
            elif not quote and c == "}":
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return self.text[start:i].strip()
            i += 1
        raise self.error("unbalanced '{'")

    def elements(self, closing: str) -> list[tuple]:
        items: list[tuple] = []
        if self.peek() == closing:
            return items
        while True:
            name = self.name()
            nxt = self.peek()
            if nxt == "(":
                self.pos += 1
                inner = self.elements(")")
                if self.peek() != ")":
                    raise self.error("expected ')'")
                self.pos += 1
                items.append(("nest", name, inner))
            elif nxt == "{":
                items.append(("pass", name, self.braced()))
            else:
                items.append(("pass", name, ""))
            nxt = self.peek()
            if nxt == ",":
                self.pos += 1
                continue
            if nxt == closing:
                return items
            raise self.error(f"expected ',' or {closing!r}" if closing else "expected ','")


def _build_element(item: tuple) -> Element:
    if item[0] == "nest":
        _, anchor, inner = item
        return NestedPipeline(anchor, tuple(_build_element(i) for i in inner))
    _, name, options = item
    cls = registry.lookup_python_pass(name)
    if cls is not None:
        try:
            instance = cls.from_options(parse_options(options, name))
        except (PassOptionError, PipelineError):
            raise
        except TypeError as error:
            raise PassOptionError(f"pass '{name}': {error}") from None
        return PassElement(name, options, instance)
    element = PassElement(name, " ".join(options.split()))
    if not registry.is_cxx_pass(name):
        raise registry.unknown_pass_error(name)
    if element.options and not registry._cxx_parses(str(element)):
        raise PassOptionError(_cxx_option_error(str(element)))
    return element


def _cxx_option_error(element_text: str) -> str:
    with shared_context():
        try:
            passmanager.PassManager.parse(f"builtin.module({element_text})")
        except ValueError as error:
            return f"bad options for '{element_text}': {str(error).strip()}"
    return f"bad options for '{element_text}'"


def parse_pipeline(text: str) -> "Pipeline":
    """Parse MLIR pipeline text; ``builtin.module(...)`` around it is optional.

    Raises :class:`PipelineError` on syntax errors, ``UnknownPassError`` (a
    ``ValueError``) naming close registered passes on unknown names, and
    ``PassOptionError`` on bad options.

    Example::

        >>> str(parse_pipeline("func.func(cse),toolkit-simplify"))
        'builtin.module(func.func(cse), toolkit-simplify)'
    """
    _register_passes_once()
    text = text.strip()
    parser = _Parser(text)
    items = parser.elements("")
    if parser.pos != len(text):
        raise parser.error("unexpected text")
    if len(items) == 1 and items[0][0] == "nest" and items[0][1] == "builtin.module":
        items = items[0][2]
    return Pipeline(tuple(_build_element(i) for i in items))


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------
def _anchor_ops(root: ir.Operation, path: Sequence[str]) -> list[ir.Operation]:
    ops = [root]
    for anchor in path:
        found = []
        for op in ops:
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        if child.operation.name == anchor:
                            found.append(child.operation)
        ops = found
    return ops


def _wrap_nested(path: Sequence[str], text: str) -> str:
    for anchor in reversed(path):
        text = f"{anchor}({text})"
    return text


def _module_text(op: ir.Operation, debug_info: bool) -> str:
    return op.get_asm(enable_debug_info=debug_info)


class _Run:
    """State shared by the probes and Python passes of one pipeline run."""

    def __init__(self, pipeline: "Pipeline", root: Any, *, print_before: Callable[[str], bool],
                 print_after: Callable[[str], bool], print_after_change: bool,
                 stream: TextIO, dump_dir: str | None, debug_info: bool):
        self.pipeline = pipeline
        self.root = root  # the module the run changes (kept alive forever if a pass corrupts it)
        self.print_before = print_before
        self.print_after = print_after
        self.print_after_change = print_after_change
        self.stream = stream
        self.dump_dir = dump_dir
        self.debug_info = debug_info
        self.report = PipelineReport()
        self.current: str | None = None
        self.started = 0.0
        self.text_before: str | None = None
        self.statistics: Counter = Counter()
        # (pass name, exception, one-line description) of the Python pass that failed.
        self.python_error: tuple[str, BaseException, str] | None = None
        self.dump_count = 0
        self.errors: list[str] = []
        self.verify = True
        self.verification_failed = False
        # (pass name, reason) of a C++ pass refused before it ran (toolkit.passes.preconditions).
        self.precondition_failure: tuple[str, str] | None = None
        # Pipeline.run(observe=...): called with (record, op, IR text) after every element.
        self.observe: Callable[[PassRecord, ir.Operation, str], None] | None = None
        self.last_text: str | None = None  # the IR after the previous element (observing only)

    def capture(self, diagnostic: Any) -> bool:
        if diagnostic.severity != ir.DiagnosticSeverity.ERROR:
            # Recorded, then left to the next handler (an unhandled warning is printed).
            self.report.diagnostics.append(ReportedDiagnostic(
                ir_diagnostics.severity_name(diagnostic.severity),
                ir_diagnostics.format_location(diagnostic.location) or str(diagnostic.location),
                diagnostic.message))
            return False
        text = f"  {diagnostic.location}: {diagnostic.message}"
        for note in diagnostic.notes:
            text += f"\n    note: {note.location}: {note.message}"
        self.errors.append(text)
        return True

    def emit(self, header: str, label: str, text: str) -> None:
        if self.dump_dir is not None:
            self.dump_count += 1
            write_numbered(self.dump_dir, self.dump_count, f"{header.lower()}_{label}"[:80], text)
        else:
            self.stream.write(f"// -----// IR Dump {header} {label} //----- //\n{text}\n")
            self.stream.flush()

    def before(self, label: str, op: ir.Operation, pass_handle: Any = None,
               pass_names: Sequence[str] = ()) -> None:
        self.current = label
        if pass_names:
            # A C++ pass that would abort or segfault on this module is refused before it runs.
            refused = preconditions.check(pass_names, op)
            if refused is not None:
                self.precondition_failure = refused
                pass_handle.signal_pass_failure()
                return
        self.statistics = Counter()
        wants_after = self.print_after(label)
        if self.print_before(label) or wants_after or self.observe is not None:
            self.text_before = self.last_text if self.last_text is not None else _module_text(op, self.debug_info)
            if self.print_before(label):
                self.emit("Before", label, self.text_before)
        else:
            self.text_before = None
        self.started = time.perf_counter()

    def after(self, label: str, op: ir.Operation, pass_handle: Any, verify: str) -> None:
        seconds = time.perf_counter() - self.started
        changed = None
        if self.text_before is not None:
            text_after = _module_text(op, self.debug_info)
            changed = text_after != self.text_before
        # Verify like MLIR's pass manager does, but only when the element may
        # have changed the IR: "always" (C++ passes: unknown), "if-rewritten"
        # (pattern passes: a pattern fired), "never" (read-only passes).
        must_verify = changed if changed is not None else (
            verify == "always" or (verify == "if-rewritten" and bool(self.statistics)))
        if self.verify and must_verify:
            try:
                valid = op.verify()
            except ir.MLIRError as error:
                valid = False
                self.errors += [f"  {d.location}: {d.message}" for d in error.error_diagnostics]
            if not valid:
                self.verification_failed = True
                pass_handle.signal_pass_failure()
                return
        if changed is not None and self.print_after(label) and (changed or not self.print_after_change):
            self.emit("After", label, text_after)
        record = PassRecord(label, seconds, changed, dict(self.statistics))
        self.report.records.append(record)
        self.current = None
        if self.observe is not None:
            self.last_text = text_after
            self.observe(record, op, text_after)

    def python_pass(self, instance: Pass, path: Sequence[str]) -> Callable[[Any, Any], None]:
        # Pattern passes erase only through the checked rewriter; other passes
        # may call op.erase() on a used op, found by the check after them.
        check_erasures = getattr(instance, "modifies_ir", True) and not isinstance(instance, PatternPass)

        def run(op: Any, pass_handle: Any) -> None:
            root = op.operation
            statistics_token = _active_statistics.set(self.statistics)
            sites: list[FailureSite] = []
            sites_token = _active_failure_sites.set(sites)
            anchor = root
            try:
                for anchor in _anchor_ops(root, path) if path else [root]:
                    instance.apply(anchor)
            except BaseException as error:  # noqa: BLE001 - reported after run()
                # Before anything reads the IR: the pass may have left it corrupted.
                if getattr(instance, "modifies_ir", True) and self.check_dangling_operands(instance, root):
                    pass_handle.signal_pass_failure()
                    return
                self.report_exception(instance, error, sites[-1] if sites else None, anchor)
                pass_handle.signal_pass_failure()
                return
            finally:
                _active_failure_sites.reset(sites_token)
                _active_statistics.reset(statistics_token)
            # Before MLIR or our probes verify or print: those would crash on
            # an operand whose value was erased.
            if check_erasures and self.verify and self.check_dangling_operands(instance, root):
                pass_handle.signal_pass_failure()

        return run

    def report_exception(self, instance: Pass, error: BaseException, site: FailureSite | None,
                         anchor: ir.Operation) -> None:
        """Emit ``error`` as an error diagnostic at the op being processed, naming the pass code's line."""
        if isinstance(error, PassFailure):
            target = error.op if error.op is not None else (site.op if site is not None else anchor)
            summary = message = str(error)
        else:
            target = site.op if site is not None else anchor
            text = str(error.args[0] if isinstance(error, KeyError) and error.args else error)
            summary = f"{type(error).__name__}: {text}" if text else type(error).__name__
            if site is not None:
                summary += f" in {site.description}"
            frame = ir_diagnostics.exception_site(
                error, _source_files(instance) + (site.source_files if site is not None else ()))
            if frame is not None:
                summary += f" (at {frame.filename}:{frame.lineno} in {frame.name})"
            message = f"pass '{instance.name}' raised {summary}"
        if print_stacktrace_on_diagnostic():
            message += "\n" + "".join(traceback.format_exception(error)).rstrip()
        self.python_error = (instance.name, error, summary)
        # A diagnostic lets --verify-diagnostics match the failure.
        target.operation.location.emit_error(message)

    def check_dangling_operands(self, instance: Pass, root: ir.Operation) -> bool:
        """After a Python pass: fail (True) if it erased an op whose results were still used.

        Such IR crashes whatever reads it next (MLIR's verifier first), and
        freeing it writes to freed memory, so it is reported from the users'
        side and kept alive forever.
        """
        dangling = dangling_operands(root)
        if not dangling:
            return False
        self.verification_failed = True
        keep_alive_forever(self.root)
        for user, numbers in dangling[:5]:
            user.location.emit_error(
                f"pass '{instance.name}' erased the op defining {_operands_text(numbers)} of this "
                f"'{user.name}' while it was still used")
        users = ", ".join(f"{describe_op(user)} ({_operands_text(numbers)})" for user, numbers in dangling[:5])
        more = f" and {len(dangling) - 5} more" if len(dangling) > 5 else ""
        summary = (f"it erased an op whose results were still used by {users}{more}; erase with "
                   "toolkit.ir.rewriting.erase_op, which refuses while results are used. The module is left "
                   "invalid (and is never freed): discard it")
        self.python_error = (instance.name, PassFailure(summary), summary)
        return True


def _operands_text(numbers: Sequence[int]) -> str:
    return ("operand " if len(numbers) == 1 else "operands ") + ", ".join(map(str, numbers))


def _source_files(instance: Pass) -> tuple[str, ...]:
    """The file defining the pass class (for the line of the pass code that raised)."""
    try:
        return (inspect.getsourcefile(type(instance)) or "",)
    except (TypeError, OSError):
        return ()


def _pass_names(element: Element) -> list[str]:
    """The names of every pass in ``element`` (nested pipelines included)."""
    if isinstance(element, PassElement):
        return [element.name]
    return [name for child in element.elements for name in _pass_names(child)]


def _leaf_elements(element: Element, anchors: tuple[str, ...]) -> Iterable[Element]:
    """Every pass of ``element`` on its own, wrapped in its anchors: ``a(b(x, y))`` -> ``a(b(x))``, ``a(b(y))``."""
    if isinstance(element, PassElement):
        for anchor in reversed(anchors):
            element = NestedPipeline(anchor, (element,))
        yield element
        return
    for child in element.elements:
        yield from _leaf_elements(child, anchors + (element.anchor,))


def _verify_policy(element: Element) -> str:
    if isinstance(element, PassElement) and element.python_pass is not None:
        instance = element.python_pass
        if not getattr(instance, "modifies_ir", True):
            return "never"
        if isinstance(instance, PatternPass):
            return "if-rewritten"
    return "always"


def _selector(spec: bool | str | Iterable[str] | None) -> Callable[[str], bool]:
    if spec is None or spec is False:
        return lambda label: False
    if spec is True:
        return lambda label: True
    names = {spec} if isinstance(spec, str) else set(spec)

    def selected(label: str) -> bool:
        return label in names or any(re.search(rf"(^|[(,\s]){re.escape(n)}([{{(),\s]|$)", label) for n in names)

    return selected


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """A parsed pipeline: module-level elements, printable and runnable.

    Example::

        pipeline = parse_pipeline("toolkit-simplify, func.func(cse)")
        report = pipeline.run(module, timing=True)
    """

    elements: tuple[Element, ...] = ()

    def __str__(self) -> str:
        return f"builtin.module({', '.join(str(e) for e in self.elements)})"

    def __add__(self, other: "Pipeline") -> "Pipeline":
        return Pipeline(self.elements + other.elements)

    def _add_element(self, pm: Any, run: _Run, element: Element, path: tuple[str, ...]) -> None:
        if isinstance(element, PassElement):
            if element.python_pass is not None:
                pm.add(run.python_pass(element.python_pass, path),
                       name=element.python_pass.name, argument=element.python_pass.name)
            else:
                pm.add(_wrap_nested(path, str(element)))
            return
        nested_path = path + (element.anchor,)
        if not element.contains_python():
            pm.add(_wrap_nested(path, str(element)))
            return
        # jaxlib cannot nest a Python pass under an anchor: run consecutive C++
        # passes as one nested pipeline and Python passes over the anchor ops.
        cxx_run: list[str] = []
        for child in element.elements:
            if child.contains_python():
                if cxx_run:
                    pm.add(_wrap_nested(nested_path, ", ".join(cxx_run)))
                    cxx_run = []
                self._add_element(pm, run, child, nested_path)
            else:
                cxx_run.append(str(child))
        if cxx_run:
            pm.add(_wrap_nested(nested_path, ", ".join(cxx_run)))

    def run(self, module: ir.Module | ir.Operation, *,
            print_ir_before: bool | str | Iterable[str] | None = None,
            print_ir_after: bool | str | Iterable[str] | None = None,
            print_after_change: bool = True, timing: bool = False, verify: bool = True,
            dump_dir: str | None = None, statistics: bool = False,
            debug_info: bool = False, stream: TextIO | None = None,
            capture_diagnostics: bool = True,
            observe: Callable[[PassRecord, ir.Operation, str], None] | None = None) -> PipelineReport:
        """Run on ``module`` in place; see :func:`run_pipeline` for the options."""
        op = module.operation
        run = _Run(self, module, print_before=_selector(print_ir_before), print_after=_selector(print_ir_after),
                   print_after_change=print_after_change, stream=stream or sys.stderr,
                   dump_dir=dump_dir, debug_info=debug_info)
        run.observe = observe
        # Observed, a nested pipeline runs one pass at a time: anchor(a, b) as anchor(a), anchor(b).
        elements = self.elements if observe is None else tuple(
            leaf for element in self.elements for leaf in _leaf_elements(element, ()))
        with op.context:
            pm = passmanager.PassManager("builtin.module")
            # Our probes verify instead: MLIR would verify after every Python
            # pass (they cannot declare "nothing changed"), probes included.
            pm.enable_verifier(False)
            run.verify = verify
            for element in elements:
                label = str(element)
                policy = _verify_policy(element)
                checked = tuple(n for n in _pass_names(element) if n in preconditions.PRECONDITIONS)
                pm.add(lambda o, p, label=label, checked=checked: run.before(label, o.operation, p, checked),
                       name="toolkit-probe", argument="toolkit-probe")
                self._add_element(pm, run, element, ())
                pm.add(lambda o, p, label=label, policy=policy: run.after(label, o.operation, p, policy),
                       name="toolkit-probe", argument="toolkit-probe")
            handler = (ir_diagnostics.attach_diagnostic_handler(op.context, run.capture)
                       if capture_diagnostics else None)
            start = time.perf_counter()
            try:
                pm.run(op)
            except ir.MLIRError as error:
                failure = self._failure(run, op, error)
                raise failure from failure.__cause__
            finally:
                run.report.total_seconds = time.perf_counter() - start
                if handler is not None:
                    handler.detach()
        out = run.stream
        if timing:
            out.write(run.report.timing_report())
        if statistics:
            out.write(run.report.statistics_report())
        return run.report

    def _failure(self, run: _Run, op: ir.Operation, error: ir.MLIRError) -> PipelineError:
        label = run.current or "<pipeline>"
        if run.precondition_failure is not None:
            name, reason = run.precondition_failure
            return PipelineError(f"pass '{name}' cannot run on this module: {reason}")
        if run.python_error is not None:
            _, cause, summary = run.python_error
            failure = PipelineError(f"pass '{label}' failed: {summary}")
            failure.__cause__ = cause
            return failure
        details = "\n".join(run.errors + [f"  {d.location}: {d.message}"
                                          for d in getattr(error, "error_diagnostics", [])])
        valid = not run.verification_failed
        if valid:
            try:
                valid = op.verify()
            except ir.MLIRError as verify_error:
                valid = False
                details = details or "\n".join(
                    f"  {d.location}: {d.message}" for d in verify_error.error_diagnostics)
        details = details or "  (no diagnostics)"
        if not valid:
            return PipelineError(f"IR verification failed after pass '{label}':\n{details}")
        return PipelineError(f"pass '{label}' failed:\n{details}")


def run_pipeline(module: ir.Module | ir.Operation, pipeline: str | Pipeline, *,
                 print_ir_before: bool | str | Iterable[str] | None = None,
                 print_ir_after: bool | str | Iterable[str] | None = None,
                 print_after_change: bool = True, timing: bool = False, verify: bool = True,
                 dump_dir: str | None = None, statistics: bool = False,
                 debug_info: bool = False, stream: TextIO | None = None,
                 capture_diagnostics: bool = True,
                 observe: Callable[[PassRecord, ir.Operation, str], None] | None = None) -> PipelineReport:
    """Run a pipeline (text or :class:`Pipeline`) on ``module`` in place.

    * ``print_ir_before`` / ``print_ir_after``: True for every top-level
      element, or a pass name / names (matches elements containing them).
      With ``print_after_change`` (default) "after" dumps only when the IR changed.
    * ``dump_dir``: write numbered files there instead of printing to ``stream``
      (stderr by default).
    * ``timing``: write a timing table; ``statistics``: which rewrite fired.
    * ``verify``: verify after each pass; a failure names the pass.
    * ``capture_diagnostics``: error diagnostics go into the raised error
      instead of stderr, warnings and remarks into ``report.diagnostics``
      (``toolkit-opt`` turns it off and attaches its own handler with
      ``toolkit.ir.diagnostics.attach_diagnostic_handler``).
    * ``observe(record, op, text)``: called after every pass with its
      :class:`PassRecord`, the module and its IR text (what
      ``TOOLKIT_DUMP_IR_TO`` and the pipeline report use). Observed, a nested
      pipeline runs one pass at a time (``func.func(cse, canonicalize)`` as
      ``func.func(cse), func.func(canonicalize)``), so every pass is seen.

    A Python pass that raises fails the run with an error diagnostic at the
    op it was processing (the op a pattern was matching, else the anchor op)
    naming the pass, the exception and the line of the pass code; see
    :func:`set_print_stacktrace_on_diagnostic` for the whole traceback. A
    Python pass that erased an op whose results were still used fails the
    run before anything reads the corrupted IR.

    Returns a :class:`PipelineReport`; raises :class:`PipelineError`.

    Example::

        run_pipeline(module, "builtin.module(func.func(canonicalize), toolkit-simplify)",
                     print_ir_after=["toolkit-simplify"])
    """
    if isinstance(pipeline, str):
        pipeline = parse_pipeline(pipeline)
    return pipeline.run(module, print_ir_before=print_ir_before, print_ir_after=print_ir_after,
                        print_after_change=print_after_change, timing=timing, verify=verify,
                        dump_dir=dump_dir, statistics=statistics, debug_info=debug_info, stream=stream,
                        capture_diagnostics=capture_diagnostics, observe=observe)
