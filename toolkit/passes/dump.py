"""Dumping IR: one numbered timeline per compilation, from Python to XLA's optimized HLO.

This module owns every IR file toolkit writes.

* ``TOOLKIT_DUMP_IR_TO=dir``: every ``jit`` compilation writes one folder,
  ``dir/jit_f/`` (``jit_f.2``, ... for later compilations of the same name),
  holding ONE numbered sequence::

      000-traced.txt                      the traced program
      001-lowered.mlir                    the lowered StableHLO module
      002-after-toolkit-simplify.mlir     the IR after every pass of the jit pipeline
      003-after-func.func_cse_.mlir       (nested pipelines run one pass at a time)
      004-xla-before-optimizations.txt    the HLO XLA starts from
      005-xla-simplification-after-algsimp.txt   XLA's HLO after each pass that changed it
      ...
      0NN-xla-optimized.txt               XLA's optimized HLO (what ``Compiled.as_text()`` shows)
      xla-extra/                          XLA's other dump files (buffer assignment, LLVM IR, ...)

  XLA's files come from XLA's own dump options (``xla_dump_to``,
  ``xla_dump_hlo_pass_re=.*``, ``xla_dump_hlo_as_text``), written to a
  scratch folder and renamed into the sequence in XLA's order.
* ``TOOLKIT_REPORT=dir``: the same stages as one self-contained HTML page per
  compilation, ``dir/jit_f.html`` (see :mod:`toolkit.passes.report`).
* ``toolkit-opt --dump-ir-to DIR`` / ``--report FILE`` use the same
  :class:`Timeline` (the input module, then every pass).

With both variables unset a lowering costs two environment lookups; the
call path of an already compiled function costs nothing.

:func:`maybe_dump` (one flat numbered file per call) and
:func:`write_numbered` (``Pipeline.run(dump_dir=...)``'s printouts) remain for
ad-hoc dumps.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from typing import Any, Callable

from toolkit.passes.op_stats import count_ops
from toolkit.passes.report import render_report
from toolkit.passes.sharding_report import collect_sharded_values

_counter = itertools.count(1)
_lock = threading.Lock()

#: The environment variable naming the dump folder.
DUMP_ENV = "TOOLKIT_DUMP_IR_TO"
#: The environment variable naming the folder of HTML pipeline reports.
REPORT_ENV = "TOOLKIT_REPORT"


def dump_dir() -> str | None:
    """The folder from ``TOOLKIT_DUMP_IR_TO``, or None when dumping is off."""
    return os.environ.get(DUMP_ENV) or None


def report_dir() -> str | None:
    """The folder from ``TOOLKIT_REPORT``, or None when reports are off."""
    return os.environ.get(REPORT_ENV) or None


def safe_name(name: str, limit: int = 100) -> str:
    """``name`` made safe as (part of) a file name."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", name).strip("_.")[:limit] or "stage"


def _text_of(module_or_text: Any, debug_info: bool = False) -> str:
    if isinstance(module_or_text, str):
        return module_or_text
    operation = getattr(module_or_text, "operation", None)
    if operation is not None:
        return operation.get_asm(enable_debug_info=debug_info)
    return str(module_or_text)


def maybe_dump(stage_name: str, module_or_text: Any) -> str | None:
    """Write ``module_or_text`` as one flat numbered file if ``TOOLKIT_DUMP_IR_TO`` is set; return the path.

    ``module_or_text`` is an ``ir.Module``, an ``ir.Operation``, ``str`` or
    ``bytes`` (bytecode is written as ``.mlirbc``). Files are numbered in call
    order across the process. (``jit`` writes a :class:`Timeline` instead.)
    """
    folder = dump_dir()
    if folder is None:
        return None
    os.makedirs(folder, exist_ok=True)
    with _lock:
        number = next(_counter)
    safe = safe_name(stage_name, 200)
    if isinstance(module_or_text, (bytes, bytearray)):
        path = os.path.join(folder, f"{number:04d}_{safe}.mlirbc")
        with open(path, "wb") as f:
            f.write(module_or_text)
        return path
    path = os.path.join(folder, f"{number:04d}_{safe}.mlir")
    with open(path, "w") as f:
        f.write(_text_of(module_or_text))
    return path


def write_numbered(folder: str, number: int, name: str, text: str, ext: str = "mlir",
                   width: int = 3, separator: str = "_") -> str:
    """Write ``text`` to ``folder/NNN<separator><name>.<ext>``; return the path."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{number:0{width}d}{separator}{safe_name(name)}.{ext}")
    with open(path, "w") as f:
        f.write(text)
    return path


def _unique_path(parent: str, stem: str, suffix: str = "") -> str:
    """``parent/stem<suffix>``, or ``parent/stem.2<suffix>``, ... — created atomically when a folder."""
    os.makedirs(parent, exist_ok=True)
    for k in itertools.count(1):
        name = f"{stem}{'' if k == 1 else f'.{k}'}{suffix}"
        path = os.path.join(parent, name)
        try:
            if suffix:
                with open(path, "x"):
                    pass
            else:
                os.mkdir(path)
            return path
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------
# The timeline of one compilation
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Stage:
    """One step of a compilation: the IR (or HLO, or traced program) after it."""

    number: int
    kind: str  # "traced", "input", "lowered", "pass", "xla", "optimized"
    name: str  # file-name part, e.g. "after-toolkit-simplify"
    label: str  # what the report shows, e.g. "toolkit-simplify"
    text: str
    ext: str = "mlir"
    seconds: float | None = None
    changed: bool | None = None
    op_counts: Counter | None = None
    statistics: dict[str, int] = dataclasses.field(default_factory=dict)
    path: str | None = None


_HLO_OPCODE = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*.*?\s([a-z][a-z0-9\-]*)\(", re.MULTILINE)


def hlo_op_counts(text: str) -> Counter:
    """``{opcode: count}`` of the instructions in HLO text (parsed from the text)."""
    return Counter(match.group(1) for match in _HLO_OPCODE.finditer(text))


_XLA_PASS_FILE = re.compile(r"^module_\d+\.(?P<module>.+?)\.(?P<step>\d{4})\.(?P<rest>.+)\.txt$")
_XLA_BEFORE = re.compile(r"^module_\d+\.(?P<module>.+)\.before_optimizations\.txt$")
_XLA_AFTER = re.compile(r"^module_\d+\.(?P<module>.+)\.(?P<platform>[a-z]+)_after_optimizations\.txt$")


def _xla_label(rest: str) -> tuple[str, str]:
    """(file-name part, report label) of XLA's ``<pipeline>.after_<pass>.before_<next>`` dump name."""
    pipeline, _, what = rest.partition(".")
    what = re.sub(r"\.before_.*$", "", what)
    if what == "after_pipeline-start":
        return f"xla-{pipeline}-start", f"XLA {pipeline}: start"
    after = what[len("after_"):] if what.startswith("after_") else what
    return f"xla-{pipeline}-after-{after}", f"XLA {pipeline}: after {after}"


class Timeline:
    """The stages of one compilation, written as they come and kept for the HTML report.

    ``folder``: where the numbered files go (None: no files). ``report_path``:
    where :meth:`finish` writes the HTML page (None: no page).
    """

    def __init__(self, name: str, *, folder: str | None = None, report_path: str | None = None):
        self.name = name
        self.folder = folder
        self.report_path = report_path
        self.stages: list[Stage] = []
        self.finished = False
        self.started = time.time()
        self.sharding_rows: list[Any] | None = None
        self.pipeline_text: str | None = None
        self.notes: list[str] = []
        self._xla_scratch: str | None = None

    # -- recording -------------------------------------------------------
    def add(self, kind: str, name: str, text: str, *, ext: str = "mlir", label: str | None = None,
            op_counts: Counter | None = None, **info: Any) -> Stage:
        """Append a stage (and write its file when dumping)."""
        stage = Stage(len(self.stages), kind, name, label or name, text, ext, op_counts=op_counts, **info)
        if self.folder is not None:
            stage.path = write_numbered(self.folder, stage.number, name, text, ext, separator="-")
        self.stages.append(stage)
        return stage

    def add_module(self, kind: str, name: str, module: Any, **info: Any) -> Stage:
        """Append an MLIR module (its text and op counts)."""
        return self.add(kind, name, _text_of(module), op_counts=count_ops(module.operation), **info)

    def observe(self, record: Any, op: Any, text: str) -> None:
        """``Pipeline.run(observe=...)``: one stage per pass, with time, change and rewrite counts."""
        self.add("pass", f"after-{record.label}", text, label=record.label, op_counts=count_ops(op),
                 seconds=record.seconds, changed=record.changed, statistics=dict(record.statistics))

    # -- XLA -------------------------------------------------------------
    def xla_dump_folder(self) -> str:
        """A fresh scratch folder for XLA's ``xla_dump_to`` (collected by :meth:`collect_xla`)."""
        parent = self.folder if self.folder is not None else None
        self._xla_scratch = tempfile.mkdtemp(prefix=".xla-dump-", dir=parent)
        return self._xla_scratch

    def collect_xla(self, optimized_hlo: Callable[[], str] | None = None) -> None:
        """Move XLA's dump into the sequence: before optimizations, each pass in XLA's order, optimized HLO.

        ``optimized_hlo()`` gives the optimized HLO's text when XLA wrote none (the caller asks its executable:
        this package never reaches the runtime).
        """
        scratch, self._xla_scratch = self._xla_scratch, None
        if scratch is None:
            return
        try:
            names = sorted(os.listdir(scratch))
            before = [n for n in names if _XLA_BEFORE.match(n)]
            steps = sorted((m for m in map(_XLA_PASS_FILE.match, names) if m), key=lambda m: int(m.group("step")))
            after = [n for n in names if _XLA_AFTER.match(n)]
            used = set(before) | {m.group(0) for m in steps} | set(after)

            def read(name: str) -> str:
                with open(os.path.join(scratch, name), errors="replace") as f:
                    return f.read()

            for name in before:
                text = read(name)
                self.add("xla", "xla-before-optimizations", text, ext="txt", label="XLA: before optimizations",
                         op_counts=hlo_op_counts(text))
            for match in steps:
                text = read(match.group(0))
                file_part, label = _xla_label(match.group("rest"))
                self.add("xla", file_part, text, ext="txt", label=label, op_counts=hlo_op_counts(text))
            if after:
                texts = [read(n) for n in after]
            elif optimized_hlo is not None:  # XLA wrote no dump (an older jaxlib): ask the executable
                texts = [optimized_hlo()]
            else:
                texts = []
            for text in texts:
                self.add("optimized", "xla-optimized", text, ext="txt", label="XLA: optimized HLO",
                         op_counts=hlo_op_counts(text))
            extra = [n for n in names if n not in used]
            if self.folder is not None and extra:
                target = os.path.join(self.folder, "xla-extra")
                os.makedirs(target, exist_ok=True)
                for n in extra:
                    shutil.move(os.path.join(scratch, n), os.path.join(target, n))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    # -- the end -----------------------------------------------------------
    def finish(self, module: Any = None, optimized_hlo: Callable[[], str] | None = None, *,
               failure: str | None = None) -> None:
        """Collect XLA's dump and the sharding report of ``module``; write the HTML report.

        ``optimized_hlo``: see :meth:`collect_xla`.
        """
        if self.finished:
            return
        self.finished = True
        self.collect_xla(optimized_hlo)
        if failure:
            self.notes.append(failure)
        if module is not None:
            try:
                self.sharding_rows = collect_sharded_values(module.operation)
            except Exception as error:  # noqa: BLE001 - the report shows why, never fails a compilation
                self.notes.append(f"sharding report unavailable: {type(error).__name__}: {error}")
        if self.report_path is not None:
            with open(self.report_path, "w", encoding="utf-8") as f:
                f.write(render_report(self))


def start_timeline(name: str, *, traced: Callable[[], str] | None = None, module: Any = None,
                   kind: str = "lowered") -> Timeline | None:
    """A :class:`Timeline` for compiling ``name`` when ``TOOLKIT_DUMP_IR_TO`` or ``TOOLKIT_REPORT`` is set, else None.

    ``traced()`` gives the traced program's text (stage ``traced``); ``module``
    is recorded as stage ``kind``.
    """
    environ = os.environ
    folder, reports = environ.get(DUMP_ENV), environ.get(REPORT_ENV)
    if not folder and not reports:
        return None
    stem = safe_name(name)
    timeline = Timeline(name, folder=_unique_path(folder, stem) if folder else None,
                        report_path=_unique_path(reports, stem, ".html") if reports else None)
    if traced is not None:
        timeline.add("traced", "traced", traced(), ext="txt", label="traced program")
    if module is not None:
        timeline.add_module(kind, kind, module, label=f"{kind} module")
    return timeline


def timeline_for(lowered: Any) -> Timeline | None:
    """The timeline ``lowered.compile()`` continues: the one its lowering started, or a new one.

    None when dumping and reports are off.
    """
    timeline = getattr(lowered, "_timeline", None)
    if timeline is None or timeline.finished:
        if not os.environ.get(DUMP_ENV) and not os.environ.get(REPORT_ENV):
            return None  # without touching lowered._module (a cached lowering parses it on first use)
        traced = lowered._traced
        timeline = start_timeline(f"jit_{traced.fun_name}", traced=traced.program.pretty, module=lowered._module)
        if timeline is None:
            return None
    timeline.pipeline_text = str(lowered._platform_pipeline() + lowered.pipeline)
    return timeline


# ---------------------------------------------------------------------------
# What a pipeline run prints: IR-dump headers, timing and statistics reports
# ---------------------------------------------------------------------------
#: ``Pass::getName()`` of the C++ passes jaxlib registers, as its own IR printing shows them
#: (``PassManager.enable_ir_printing`` on jaxlib 0.10.2). Others: CamelCase of the argument + ``Pass``.
CXX_PASS_CLASS_NAMES: dict[str, str] = {
    "canonicalize": "CanonicalizerPass", "cse": "CSEPass", "inline": "InlinerPass", "symbol-dce": "SymbolDCEPass",
    "sccp": "SCCPPass", "loop-invariant-code-motion": "LoopInvariantCodeMotionPass",
    "print-op-stats": "PrintOpStatsPass", "strip-debuginfo": "StripDebugInfoPass",
    "stablehlo-refine-arguments": "StablehloRefineArgumentsPass", "stablehlo-refine-shapes": "StablehloRefineShapesPass",
    "stablehlo-legalize-to-vhlo": "StablehloLegalizeToVhloPass", "vhlo-to-version": "VhloToVersionPass",
    "vhlo-legalize-to-stablehlo": "VhloLegalizeToStablehloPass",
    "stablehlo-compatibility-expander": "StablehloCompatibilityExpanderPass",
    "stablehlo-wrap-in-composite": "StablehloWrapInCompositePass",
    "stablehlo-convert-to-signless": "StablehloConvertToSignlessPass",
    "stablehlo-legalize-to-linalg": "StablehloLegalizeToLinalgPass",
    "sdy-close-shardings": "CloseShardingsPass", "sdy-lift-inlined-meshes": "LiftInlinedMeshesPass",
}


def pass_class_name(argument: str, python_pass: Any = None) -> str:
    """The name MLIR's printouts give a pass: the Python class's name, or the C++ ``getName()``."""
    if python_pass is not None:
        return type(python_pass).__name__
    known = CXX_PASS_CLASS_NAMES.get(argument)
    if known is not None:
        return known
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_.]", argument) if part) + "Pass"


def ir_dump_header(when: str, class_name: str, pass_text: str, *, failed: bool = False,
                   scope: tuple[str, str | None] | None = None) -> str:
    """``// -----// IR Dump After CSEPass: cse //----- //`` as MLIR's IR printing writes it.

    ``when``: ``Before`` or ``After``; ``failed`` adds `` Failed``; ``scope``
    (``--mlir-print-ir-module-scope``) adds `` ('func.func' operation: @name)``.
    """
    text = f"// -----// IR Dump {when} {class_name}{' Failed' if failed else ''}: {pass_text}"
    if scope is not None:
        op_name, symbol = scope
        text += f" ('{op_name}' operation{f': @{symbol}' if symbol else ''})"
    return text + " //----- //"


_BAR = "===" + "-" * 73 + "==="


def _tree(rows: list[tuple[tuple[str, ...], str, Any]]) -> list[tuple[int, str, list[Any]]]:
    """(depth, name, values) rows with ``'anchor' Pipeline`` groups for consecutive rows sharing anchors."""
    out: list[tuple[int, str, list[Any]]] = []
    open_groups: list[tuple[str, list[Any]]] = []  # (anchor, values of the group's row)
    for anchors, name, value in rows:
        common = 0
        while (common < len(open_groups) and common < len(anchors)
               and open_groups[common][0] == anchors[common]):
            common += 1
        del open_groups[common:]
        for anchor in anchors[common:]:
            values: list[Any] = []
            out.append((len(open_groups), f"'{anchor}' Pipeline", values))
            open_groups.append((anchor, values))
        for _, values in open_groups:
            values.append(value)
        out.append((len(anchors), name, [value]))
    return out


def timing_report(rows: list[tuple[tuple[str, ...], str, float]], total: float, display: str = "tree") -> str:
    """mlir-opt's ``--mlir-timing`` table over ``(anchors, pass name, seconds)`` rows.

    ``display``: ``tree`` (nested pipelines as ``'func.func' Pipeline`` groups,
    in run order) or ``list`` (one row per pass name, summed, slowest first).
    """
    if display not in ("tree", "list"):
        raise ValueError(f"timing display must be 'list' or 'tree', got {display!r}")
    denominator = total or 1e-12
    lines = [_BAR, "... Execution time report ...".center(79).rstrip(), _BAR,
             f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]
    if display == "list":
        sums: dict[str, float] = {}
        for _, name, seconds in rows:
            sums[name] = sums.get(name, 0.0) + seconds
        table = [(0, name, [seconds]) for name, seconds in sorted(sums.items(), key=lambda item: -item[1])]
    else:
        table = _tree(rows)
    for depth, name, values in table:
        seconds = sum(values)
        lines.append(f"  {seconds:8.4f} ({100 * seconds / denominator:5.1f}%)  {'  ' * depth}{name}")
    lines.append(f"  {total:8.4f} (100.0%)  Total")
    return "\n".join(lines) + "\n"


def statistics_report(rows: list[tuple[tuple[str, ...], str, dict[str, int]]]) -> str:
    """mlir-opt's ``--mlir-pass-statistics`` report over ``(anchors, pass name, {statistic: count})`` rows.

    Each pass prints as ``PassName`` and its statistics as ``(S) count name``.
    """
    lines = [_BAR, "... Pass statistics report ...".center(79).rstrip(), _BAR]
    for depth, name, values in _tree(rows):
        lines.append("  " * depth + name)
        if name.endswith(" Pipeline") and name.startswith("'"):
            continue
        for key, count in sorted(values[0].items()):
            lines.append(f"{'  ' * (depth + 1)}(S) {count} {key}")
    return "\n".join(lines) + "\n"


def pretty_pipeline(text: str) -> str:
    """Pipeline text one element per line, nested elements indented (``mlir-opt --dump-pass-pipeline``)."""
    lines, depth, current, braces, quoted = [], 0, "", 0, False
    for char in text:
        if quoted or braces:
            current += char
            if char == '"':
                quoted = not quoted
            elif not quoted:
                braces += {"{": 1, "}": -1}.get(char, 0)
        elif char == '"':
            quoted, current = True, current + char
        elif char == "{":
            braces, current = 1, current + char
        elif char == "(":
            lines.append("  " * depth + current.strip() + "(")
            depth, current = depth + 1, ""
        elif char == ",":
            if current.strip():
                lines.append("  " * depth + current.strip() + ",")
            elif lines:
                lines[-1] += ","
            current = ""
        elif char == ")":
            if current.strip():
                lines.append("  " * depth + current.strip())
            depth, current = depth - 1, ""
            lines.append("  " * depth + ")")
        else:
            current += char
    if current.strip():
        lines.append("  " * depth + current.strip())
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# What a pipeline run records
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PassRecord:
    """What happened in one pass of a run (``label``: the pass as a pipeline element, anchors included)."""

    label: str
    seconds: float = 0.0
    changed: bool | None = None  # None: not tracked (no printing asked)
    statistics: dict[str, int] = dataclasses.field(default_factory=dict)
    name: str = ""  # the pass argument, e.g. "cse"
    class_name: str = ""  # what MLIR's printouts call it, e.g. "CSEPass"
    anchors: tuple[str, ...] = ()  # e.g. ("func.func",) for func.func(cse)


@dataclasses.dataclass(frozen=True)
class ReportedDiagnostic:
    """A warning or remark a pass emitted during a run (``location`` as ``file:line:col`` when known)."""

    severity: str  # "warning", "remark" or "note"
    location: str
    message: str


@dataclasses.dataclass
class PipelineReport:
    """Per-pass timings and rewrite statistics of one :meth:`Pipeline.run`.

    ``records`` has one row per pass (``func.func(cse, canonicalize)`` gives
    two). ``diagnostics`` holds the warnings and remarks passes emitted (when
    the run captured diagnostics, the default).
    """

    records: list[PassRecord] = dataclasses.field(default_factory=list)
    total_seconds: float = 0.0
    diagnostics: list[ReportedDiagnostic] = dataclasses.field(default_factory=list)

    def timing_report(self, display: str = "tree") -> str:
        """An mlir-opt ``--mlir-timing`` table; ``display``: ``tree`` (default) or ``list``."""
        return timing_report([(r.anchors, r.class_name or r.label, r.seconds) for r in self.records],
                                     self.total_seconds, display)

    def statistics_report(self) -> str:
        """mlir-opt's ``--mlir-pass-statistics`` report: which rewrite fired how often, per pass.

        C++ passes (whose own statistics jaxlib's build does not keep) report
        the ops they erased and created.
        """
        return statistics_report([(r.anchors, r.class_name or r.label, r.statistics) for r in self.records])
