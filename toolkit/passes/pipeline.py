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

import contextlib
import dataclasses
import inspect
import io
import os
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO, Union

from jaxlib.mlir import ir, passmanager

from toolkit.ir import diagnostics as ir_diagnostics
from toolkit.ir.context import _register_passes_once, shared_context
from toolkit.ir.rewriting import dangling_operands, describe_op, keep_alive_forever
from toolkit.passes import preconditions, registry
from toolkit.passes import dump as ir_dump
from toolkit.passes.dump import PassRecord, PipelineReport, ReportedDiagnostic, write_numbered
from toolkit.passes.op_stats import count_ops
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
        """Whether this pass is a Python pass (registered with ``@register_pass``), not a C++ one."""
        return self.python_pass is not None

    def contains_python(self) -> bool:
        """Same as :attr:`is_python` (nested pipelines ask each element)."""
        return self.is_python


@dataclasses.dataclass(frozen=True)
class NestedPipeline:
    """``anchor(element, ...)``: run the elements on every ``anchor`` op."""

    anchor: str
    elements: tuple["Element", ...]

    def __str__(self) -> str:
        return f"{self.anchor}({', '.join(str(e) for e in self.elements)})"

    def contains_python(self) -> bool:
        """Whether any pass inside (at any depth) is a Python pass."""
        return any(e.contains_python() for e in self.elements)


Element = Union[PassElement, NestedPipeline]


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
    if element.options:
        with _stderr_captured() as printed:  # jaxlib prints an option error once per parse attempt
            ok = registry._cxx_parses(str(element))
        if not ok:
            raise PassOptionError(_one_option_error(str(element), printed()))
    return element


@contextlib.contextmanager
def _stderr_captured() -> Iterator[Callable[[], str]]:
    """What C++ code writes to file descriptor 2 inside the block (``printed()`` after it), kept off the terminal."""
    captured = {"text": ""}
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield lambda: captured["text"]
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lambda: captured["text"]
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured["text"] = sink.read().decode("utf-8", errors="replace")


def _one_option_error(element_text: str, printed: str) -> str:
    """``bad options for 'x{...}': <each distinct reason once>`` from jaxlib's exception and printout."""
    with shared_context(), _stderr_captured() as more:
        try:
            passmanager.PassManager.parse(f"builtin.module({element_text})")
        except ValueError as error:
            printed += "\n" + str(error)
    reasons: list[str] = []
    for line in (printed + "\n" + more()).splitlines():
        line = line.replace("<Pass-Options-Parser>:", "").strip().lstrip(":").strip().rstrip("!")
        if line and not line.startswith("failed to add") and line not in reasons:
            reasons.append(line)
    return f"bad options for '{element_text}'" + (f": {'; '.join(reasons)}" if reasons else "")


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


@dataclasses.dataclass(frozen=True)
class _Leaf:
    """One pass of a run with the anchors it is nested in: ``func.func(cse)`` is ``(("func.func",), cse)``."""

    path: tuple[str, ...]
    element: PassElement

    @property
    def label(self) -> str:
        return _wrap_nested(self.path, str(self.element))

    @property
    def class_name(self) -> str:
        return ir_dump.pass_class_name(self.element.name, self.element.python_pass)


def _scope(op: ir.Operation) -> tuple[str, str | None]:
    """(op name, symbol name or None) for an IR-dump header at module scope."""
    symbol = op.attributes["sym_name"] if "sym_name" in op.attributes else None
    return op.name, (ir.StringAttr(symbol).value if isinstance(symbol, ir.StringAttr) else None)


class _Run:
    """State shared by the probes and Python passes of one pipeline run."""

    def __init__(self, pipeline: "Pipeline", root: Any, *, print_before: Callable[[_Leaf], bool],
                 print_after: Callable[[_Leaf], bool], print_after_change: bool,
                 stream: TextIO, dump_dir: str | None, debug_info: bool):
        self.pipeline = pipeline
        self.root = root  # the module the run changes (kept alive forever if a pass corrupts it)
        self.print_before = print_before
        self.print_after = print_after
        self.print_after_change = print_after_change
        self.module_scope = False
        self.count_cxx_ops = False  # statistics of C++ passes: the ops they erased and created
        self.stream = stream
        self.dump_dir = dump_dir
        self.debug_info = debug_info
        self.report = PipelineReport()
        self.current: _Leaf | None = None
        self.started = 0.0
        self.text_before: str | None = None
        self.scoped_before: list[tuple[ir.Operation, str]] | None = None
        self.counts_before: Counter | None = None
        self.statistics: Counter = Counter()
        # (pass name, exception, one-line description) of the Python pass that failed.
        self.python_error: tuple[str, BaseException, str] | None = None
        self.dump_count = 0
        self.errors: list[str] = []
        self.verify = True
        self.verification_failed = False
        self.corrupted = False  # a Python pass erased a used op: nothing may read the IR
        # (pass name, reason) of a C++ pass refused before it ran (toolkit.passes.preconditions).
        self.precondition_failure: tuple[str, str] | None = None
        # Pipeline.run(observe=...): called with (record, op, IR text) after every pass.
        self.observe: Callable[[PassRecord, ir.Operation, str], None] | None = None
        # Pipeline.run(on_pass_start=...): called with (pass pipeline text, module) before every pass.
        self.on_pass_start: Callable[[str, ir.Operation], None] | None = None
        self.last_text: str | None = None  # the IR after the previous pass (observing only)

    def capture(self, diagnostic: Any, print_warnings: bool = False) -> bool:
        if diagnostic.severity != ir.DiagnosticSeverity.ERROR:  # handled: MLIR would print it again (issue 27)
            where = ir_diagnostics.format_location(diagnostic.location) or str(diagnostic.location)
            severity = ir_diagnostics.severity_name(diagnostic.severity)
            self.report.diagnostics.append(ReportedDiagnostic(severity, where, diagnostic.message))
            if print_warnings and severity == "warning":
                sys.stderr.write(f"{where}: warning: {diagnostic.message}\n")
            return True
        text = f"  {diagnostic.location}: {diagnostic.message}"
        for note in diagnostic.notes:
            text += f"\n    note: {note.location}: {note.message}"
        self.errors.append(text)
        return True

    def scoped_texts(self, root: ir.Operation, path: Sequence[str]) -> list[tuple[ir.Operation, str]]:
        """The ops a pass anchored at ``path`` runs on, with their text (the module for a module pass)."""
        if not path:
            return [(root, _module_text(root, self.debug_info))]
        return [(op, op.get_asm(enable_debug_info=self.debug_info)) for op in _anchor_ops(root, path)]

    def emit(self, when: str, leaf: _Leaf, op: ir.Operation, text: str, *, failed: bool = False) -> None:
        """One IR dump, headed as MLIR heads it; at module scope the whole module follows."""
        scope = _scope(op) if self.module_scope else None
        if scope is not None and op != self.root.operation:
            text = _module_text(self.root.operation, self.debug_info)
        header = ir_dump.ir_dump_header(when, leaf.class_name, str(leaf.element), failed=failed, scope=scope)
        if self.dump_dir is not None:
            self.dump_count += 1
            write_numbered(self.dump_dir, self.dump_count, f"{when.lower()}_{leaf.label}"[:80], text)
        else:
            self.stream.write(f"{header}\n{text.rstrip()}\n\n")
            self.stream.flush()

    def emit_failure(self, leaf: _Leaf, op: ir.Operation) -> None:
        """``IR Dump After X Failed`` (``--mlir-print-ir-after-failure``), unless the IR is unsafe to read."""
        if not self.corrupted:
            self.emit("After", leaf, op, _module_text(op, self.debug_info), failed=True)

    def before(self, leaf: _Leaf, op: ir.Operation, pass_handle: Any = None,
               checked: Sequence[str] = ()) -> None:
        self.current = leaf
        if checked:
            # A C++ pass that would abort or segfault on this module is refused before it runs.
            refused = preconditions.check(checked, op)
            if refused is not None:
                self.precondition_failure = refused
                pass_handle.signal_pass_failure()
                return
        if self.on_pass_start is not None:
            self.on_pass_start(_wrap_nested(("builtin.module",), leaf.label), op)
        self.statistics = Counter()
        printing = self.print_before(leaf) or self.print_after(leaf)
        self.scoped_before = self.scoped_texts(op, leaf.path) if printing else None
        if self.observe is not None:
            self.text_before = self.last_text if self.last_text is not None else _module_text(op, self.debug_info)
        else:
            self.text_before = None
        if self.print_before(leaf) and self.scoped_before is not None:
            for anchor, text in self.scoped_before:
                self.emit("Before", leaf, anchor, text)
        self.counts_before = count_ops(op) if self.count_cxx_ops and not leaf.element.is_python else None
        self.started = time.perf_counter()

    def after(self, leaf: _Leaf, op: ir.Operation, pass_handle: Any, verify: str) -> None:
        seconds = time.perf_counter() - self.started
        changed: bool | None = None
        scoped_after = None
        if self.scoped_before is not None:
            scoped_after = self.scoped_texts(op, leaf.path)
            before_texts = [text for _, text in self.scoped_before]
            changed = [text for _, text in scoped_after] != before_texts
        text_after = _module_text(op, self.debug_info) if self.observe is not None else None
        if changed is None and text_after is not None:
            changed = text_after != self.text_before
        # Verify like MLIR's pass manager does, but only when the pass may
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
        if scoped_after is not None and self.print_after(leaf):
            assert self.scoped_before is not None
            for index, (anchor, text) in enumerate(scoped_after):
                same = index < len(self.scoped_before) and self.scoped_before[index][1] == text
                if not (same and self.print_after_change):
                    self.emit("After", leaf, anchor, text)
        if self.counts_before is not None:
            delta = count_ops(op)
            delta.subtract(self.counts_before)
            for name, count in delta.items():
                if count:
                    self.statistics[f"{'created' if count > 0 else 'erased'} {name}"] += abs(count)
        record = PassRecord(leaf.label, seconds, changed, dict(self.statistics), leaf.element.name,
                            leaf.class_name, leaf.path)
        self.report.records.append(record)
        self.current = None
        if self.observe is not None and text_after is not None:
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
        if ir_diagnostics.print_stacktrace_on_diagnostic():
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
        self.verification_failed = self.corrupted = True
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


def _leaves(element: Element, anchors: tuple[str, ...] = ()) -> Iterable[_Leaf]:
    """Every pass of ``element`` on its own with its anchors: ``a(b(x, y))`` -> ``a(b(x))``, ``a(b(y))``."""
    if isinstance(element, PassElement):
        yield _Leaf(anchors, element)
        return
    for child in element.elements:
        yield from _leaves(child, anchors + (element.anchor,))


def _leaf_elements(element: Element, anchors: tuple[str, ...]) -> Iterable[Element]:
    """Every pass of ``element`` on its own, wrapped in its anchors (as :class:`NestedPipeline` elements)."""
    return (_nest(leaf.path, leaf.element) for leaf in _leaves(element, anchors))


def _verify_policy(element: PassElement) -> str:
    if element.python_pass is not None:
        instance = element.python_pass
        if not getattr(instance, "modifies_ir", True):
            return "never"
        if isinstance(instance, PatternPass):
            return "if-rewritten"
    return "always"


def _selector(spec: bool | str | Iterable[str] | None) -> Callable[[_Leaf], bool]:
    """Which passes to print around: True (all), a name or names (a pass argument, or its pipeline text)."""
    if spec is None or spec is False:
        return lambda leaf: False
    if spec is True:
        return lambda leaf: True
    names = {spec} if isinstance(spec, str) else set(spec)
    return lambda leaf: leaf.element.name in names or leaf.label in names or str(leaf.element) in names


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

    def pretty(self) -> str:
        """The pipeline one element per line, as ``mlir-opt --dump-pass-pipeline`` prints it."""
        return ir_dump.pretty_pipeline(str(self))

    def pass_names(self) -> list[str]:
        """The name of every pass, nested ones included, in run order."""
        return [leaf.element.name for element in self.elements for leaf in _leaves(element)]

    def leaves(self) -> list[str]:
        """Every pass as its own pipeline text: ``func.func(cse, canonicalize)`` gives ``func.func(cse)``, ``func.func(canonicalize)``."""
        return [leaf.label for element in self.elements for leaf in _leaves(element)]

    def run(self, module: ir.Module | ir.Operation, *,
            print_ir_before: bool | str | Iterable[str] | None = None,
            print_ir_after: bool | str | Iterable[str] | None = None,
            print_after_change: bool = True, timing: bool = False, verify: bool = True,
            dump_dir: str | None = None, statistics: bool = False,
            debug_info: bool = False, stream: TextIO | None = None,
            capture_diagnostics: bool = True,
            observe: Callable[[PassRecord, ir.Operation, str], None] | None = None,
            print_module_scope: bool = False, print_after_failure: bool = False,
            timing_display: str = "tree",
            on_pass_start: Callable[[str, ir.Operation], None] | None = None,
            keep_module_before: bool = True, print_warnings: bool = False) -> PipelineReport:
        """Run on ``module`` in place; see :func:`run_pipeline` for the options."""
        op = module.operation
        run = _Run(self, module, print_before=_selector(print_ir_before), print_after=_selector(print_ir_after),
                   print_after_change=print_after_change, stream=stream or sys.stderr,
                   dump_dir=dump_dir, debug_info=debug_info)
        run.observe = observe
        run.on_pass_start = on_pass_start
        run.module_scope = print_module_scope
        run.count_cxx_ops = statistics
        # Every pass runs as its own element: func.func(a, b) as func.func(a), func.func(b) (the same
        # passes on the same ops), so each is timed, printed, verified and named on failure.
        leaves = [leaf for element in self.elements for leaf in _leaves(element)]
        # The input, kept (as bytecode: cheap) so a failure can rebuild the module before the failing pass.
        snapshot = None
        if keep_module_before and leaves:
            snapshot = io.BytesIO()  # bytecode keeps locations (get_asm(binary=True) is text without them)
            op.write_bytecode(snapshot)
        with op.context:
            pm = passmanager.PassManager("builtin.module")
            # Our probes verify instead: MLIR would verify after every Python
            # pass (they cannot declare "nothing changed"), probes included.
            pm.enable_verifier(False)
            run.verify = verify
            for leaf in leaves:
                policy = _verify_policy(leaf.element)
                checked = (leaf.element.name,) if leaf.element.name in preconditions.PRECONDITIONS else ()
                pm.add(lambda o, p, leaf=leaf, checked=checked: run.before(leaf, o.operation, p, checked),
                       name="toolkit-probe", argument="toolkit-probe")
                if leaf.element.python_pass is not None:
                    pm.add(run.python_pass(leaf.element.python_pass, leaf.path),
                           name=leaf.element.name, argument=leaf.element.name)
                else:
                    pm.add(leaf.label)
                pm.add(lambda o, p, leaf=leaf, policy=policy: run.after(leaf, o.operation, p, policy),
                       name="toolkit-probe", argument="toolkit-probe")
            handler = (ir_diagnostics.attach_diagnostic_handler(op.context, lambda d: run.capture(d, print_warnings))
                       if capture_diagnostics else None)
            start = time.perf_counter()
            try:
                pm.run(op)
            except ir.MLIRError as error:
                failure = self._failure(run, op, error)
                if run.current is not None:
                    leaf = run.current
                    if print_after_failure or run.print_after(leaf):
                        run.emit_failure(leaf, op)
                    failure.pass_name = leaf.element.name
                    failure.pass_pipeline = _wrap_nested(("builtin.module",), leaf.label)
                    if snapshot is not None:
                        _rebuild_module_before(failure, snapshot.getvalue(), op.context, leaves, leaves.index(leaf))
                raise failure from failure.__cause__
            finally:
                run.report.total_seconds = time.perf_counter() - start
                if handler is not None:
                    handler.detach()
        out = run.stream
        if timing:
            out.write(run.report.timing_report(timing_display))
        if statistics:
            out.write(run.report.statistics_report())
        return run.report

    def _failure(self, run: _Run, op: ir.Operation, error: ir.MLIRError) -> PipelineError:
        label = str(run.current.element) if run.current is not None else "<pipeline>"
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


def _rebuild_module_before(failure: PipelineError, snapshot: bytes, context: ir.Context,
                           leaves: list[_Leaf], index: int) -> None:
    """Set ``failure.module_before``: the input with the passes before the failing one run again (only on
    failure). If that fails (a pass that is not deterministic): the input, with every pass up to the failing one.
    """
    with context:
        copy = ir.Module.parse(snapshot)
    if index:
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # passes that print do not print twice
                Pipeline(tuple(_nest(leaf.path, leaf.element) for leaf in leaves[:index])).run(
                    copy, stream=io.StringIO(), keep_module_before=False)
        except PipelineError:
            with context:
                copy = ir.Module.parse(snapshot)
            failure.pass_pipeline = _wrap_nested(
                ("builtin.module",), ", ".join(leaf.label for leaf in leaves[:index + 1]))
    failure.module_before = copy.operation.get_asm(enable_debug_info=True)


def _nest(path: Sequence[str], element: PassElement) -> Element:
    wrapped: Element = element
    for anchor in reversed(path):
        wrapped = NestedPipeline(anchor, (wrapped,))
    return wrapped


def run_pipeline(module: ir.Module | ir.Operation, pipeline: str | Pipeline, **options: Any) -> PipelineReport:
    """Run a pipeline (text or :class:`Pipeline`) on ``module`` in place; ``options`` as :meth:`Pipeline.run` takes them.

    Every pass runs, prints, is timed and is verified on its own
    (``func.func(cse, canonicalize)`` as ``func.func(cse)``, ``func.func(canonicalize)``).

    * ``print_ir_before`` / ``print_ir_after``: True for every pass, or pass
      names (``cse``) / pipeline texts (``func.func(cse)``). With
      ``print_after_change`` (default) "after" dumps only when the IR changed;
      ``print_after_failure``: dump the IR after the failing pass;
      ``print_module_scope``: dump the whole module, not the op a nested pass ran on.
      Dumps are headed as MLIR's (``// -----// IR Dump After CSEPass: cse //----- //``).
    * ``dump_dir``: write numbered files there instead of printing to ``stream``
      (stderr by default).
    * ``timing``: write a timing table (``timing_display``: ``tree`` or ``list``);
      ``statistics``: which rewrite fired (C++ passes: the ops they erased and created).
    * ``verify``: verify after each pass; a failure names the pass.
    * ``capture_diagnostics``: errors go into the raised error, warnings and remarks into ``report.diagnostics``
      only (``toolkit-opt`` turns it off: its handler prints them); ``print_warnings``: also to stderr, once.
    * ``observe(record, op, text)``: called after every pass (``TOOLKIT_DUMP_IR_TO``, reports);
      ``on_pass_start(pass_pipeline_text, module)``: before every pass (local crash reproducers).
    * ``keep_module_before`` (default True): keep the input's bytecode so a failure's
      :class:`PipelineError` carries ``module_before`` (see :mod:`toolkit.passes.reproducer`).

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
    return pipeline.run(module, **options)
