"""A pass pipeline measured on real programs: what ``toolkit lab`` prints, as rows.

:func:`measure_pipeline` takes a pipeline and programs and returns one
:class:`LabRow` per program, in order. For each program it

1. loads it (a zoo program, a path, MLIR text or bytecode, an ``Exported``,
   a ``toolkit.Lowered``, a JAX ``Lowered``/``Exported`` — whatever
   :func:`toolkit.load_module` takes — or a :class:`LabProgram`) and makes its
   inputs from a seed (the zoo program's own ``inputs(seed)``, else
   :func:`toolkit.passes.random_inputs` for ``@main``);
2. runs the pipeline on a copy of the module: op counts per op and per
   dialect before and after (``toolkit.passes.op_stats.count_ops``) and the
   pipeline's wall time; a failing pass is recorded with a reproducer file;
3. asks XLA's cost model for flops, transcendentals and bytes accessed of the
   module handed to XLA (``Lowered.cost_analysis``'s numbers: the unoptimized
   module, where the pass's effect shows) and of the optimized executable;
4. compiles it twice, timed: "before" is ``Lowered.compile()`` (the normal
   jit pipeline, then XLA), "after" ``Lowered.compile(pipeline=...)`` (the
   pipeline too), and counts what XLA made of each (kernels, copies, loops:
   :class:`toolkit.lab.xla_program.XlaCounts`, which XLA's compile time
   follows); both run the same inputs ``runs`` times after one warm-up
   call each, taking turns, each call waited for, giving the median, min, max
   and quartiles;
5. with ``verify_numerics=True``, runs :func:`toolkit.passes.verify_numerics`
   on the module and the pipeline with the same inputs (bisecting: the module
   after the whole pipeline is compared first, the passes only when it
   diverged): equal or not, and if not, the pass whose results diverged.

Nothing one program does stops the others: any error is caught and recorded
in its row (``row.failure``: the stage, the message, the failing pass and the
reproducer), and the measurements made before it are kept.

Rows print as JSON with :meth:`LabRow.to_dict` (keys listed in
:data:`ROW_KEYS` and documented in ``docs/pass-lab.md``).

Example::

    from toolkit.lab.measurement import measure_pipeline
    rows = measure_pipeline("toolkit-simplify, cse", ["resnet", "gpt2_decode"], verify_numerics=True)
    for row in rows:
        print(row.program, row.status, row.ops_before.total, "->", row.ops_after.total)
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from toolkit import compilation_cache
from toolkit.core import pytrees
from toolkit.core.config import config as toolkit_config
from toolkit.lab import zoo
from toolkit.lab.loading import load_module
from toolkit.lab.xla_program import XlaCounts
from toolkit.passes import PipelineError, parse_pipeline
from toolkit.passes import numerics as pass_numerics
from toolkit.passes import reproducer as pass_reproducer
from toolkit.passes.op_stats import count_ops
from toolkit.passes.pipeline import Pipeline
from toolkit.runtime import client as runtime_client
from toolkit.runtime import executable as runtime_executable
from toolkit.stages import Compiled, Lowered, PolymorphicCompiled, jit


#: The stages of one program's measurement, in order; ``LabRow.failure.stage`` is one of them.
STAGES = ("load", "inputs", "pipeline", "cost", "compile before", "run before", "compile after", "run after",
          "numerics")

#: The keys of :meth:`LabRow.to_dict`, in order (stable: tools may read them).
ROW_KEYS = ("program", "origin", "pipeline", "status", "ops_before", "ops_after", "cost_before", "cost_after",
            "optimized_cost_before", "optimized_cost_after", "xla_before", "xla_after", "pipeline_seconds",
            "compile_seconds_before",
            "compile_seconds_after", "run_before", "run_after", "numerics", "failure")

#: A progress callback: ``progress(index, total, program, stage)``; ``stage`` is one of :data:`STAGES`,
#: or ``"done"`` once the program's row is complete (``index`` counts from 0).
ProgressCallback = Callable[[int, int, str, str], None]


# --- the rows ----------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class OpCounts:
    """Ops in a module (the module op itself excluded): the total, per dialect and per op name."""

    total: int
    dialects: Mapping[str, int]
    ops: Mapping[str, int]

    @staticmethod
    def of(module: ir.Module) -> "OpCounts":
        """The counts of ``module``'s ops."""
        counts = count_ops(module.operation)
        dialects: dict[str, int] = {}
        for name, count in counts.items():
            dialect = name.split(".", 1)[0]
            dialects[dialect] = dialects.get(dialect, 0) + count
        return OpCounts(sum(counts.values()), dict(sorted(dialects.items())), dict(sorted(counts.items())))

    def to_dict(self) -> dict[str, Any]:
        """``{"total", "dialects", "ops"}``: the counts as JSON-ready values (the lab's ``--json`` rows)."""
        return {"total": self.total, "dialects": dict(self.dialects), "ops": dict(self.ops)}


@dataclasses.dataclass(frozen=True)
class Cost:
    """XLA's cost model of a module: flops, transcendental ops and bytes read and written (estimates)."""

    flops: float
    transcendentals: float
    bytes_accessed: float

    @staticmethod
    def of(analysis: Mapping[str, float]) -> "Cost":
        """From XLA's cost-analysis dictionary (``flops``, ``transcendentals``, ``bytes accessed``)."""
        return Cost(float(analysis.get("flops", 0.0)), float(analysis.get("transcendentals", 0.0)),
                    float(analysis.get("bytes accessed", 0.0)))

    def to_dict(self) -> dict[str, float]:
        """``{"flops", "transcendentals", "bytes_accessed"}``, as XLA's cost model gave them."""
        return {"flops": self.flops, "transcendentals": self.transcendentals, "bytes_accessed": self.bytes_accessed}


@dataclasses.dataclass(frozen=True)
class RunTimes:
    """Wall times of ``runs`` calls (seconds, each waited for): median, extremes and quartiles."""

    runs: int
    median: float
    min: float
    max: float
    q1: float
    q3: float

    @staticmethod
    def of(seconds: Sequence[float]) -> "RunTimes":
        """The summary of a non-empty list of timings."""
        if not seconds:
            raise ValueError("no timings to summarize")
        q1, q3 = (float(q) for q in np.percentile(np.asarray(seconds), [25, 75]))
        return RunTimes(len(seconds), float(statistics.median(seconds)), float(min(seconds)), float(max(seconds)),
                        q1, q3)

    def to_dict(self) -> dict[str, float]:
        """The run times in seconds: ``runs`` (how many), ``median``, ``min``, ``max``, ``q1``, ``q3``."""
        return {"runs": self.runs, "median": self.median, "min": self.min, "max": self.max, "q1": self.q1,
                "q3": self.q3}


@dataclasses.dataclass(frozen=True)
class NumericsResult:
    """What :func:`toolkit.passes.verify_numerics` found: equal or not, where it diverged and by how much."""

    equal: bool
    first_divergent_pass: str | None
    result_index: int | None
    max_abs_error: float | None
    max_rel_error: float | None
    seed: int
    summary: str

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (JSON-ready)."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Failure:
    """Why a program's measurement stopped: the stage, the error, the failing pass and a reproducer file."""

    stage: str
    message: str
    pass_name: str | None = None
    reproducer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (JSON-ready): the stage, the message, the pass and the reproducer path."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class LabRow:
    """One program's numbers before and after a pipeline (``None`` where not measured; see ``failure``)."""

    program: str
    origin: str
    pipeline: str
    ops_before: OpCounts | None = None
    ops_after: OpCounts | None = None
    cost_before: Cost | None = None  # XLA's cost of the module as handed to XLA (unoptimized)
    cost_after: Cost | None = None
    optimized_cost_before: Cost | None = None  # XLA's cost of the optimized executable
    optimized_cost_after: Cost | None = None
    xla_before: XlaCounts | None = None  # what XLA made of the module: kernels, copies, loops
    xla_after: XlaCounts | None = None
    pipeline_seconds: float | None = None
    compile_seconds_before: float | None = None
    compile_seconds_after: float | None = None
    run_before: RunTimes | None = None
    run_after: RunTimes | None = None
    numerics: NumericsResult | None = None
    failure: Failure | None = None

    @property
    def status(self) -> str:
        """``"ok"``, ``"numerics differ"`` or ``"failed: <stage>"``."""
        if self.failure is not None:
            return f"failed: {self.failure.stage}"
        if self.numerics is not None and not self.numerics.equal:
            return "numerics differ"
        return "ok"

    @property
    def ok(self) -> bool:
        """No failure, and numerics equal when they were checked."""
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """The row as plain JSON values, keys in :data:`ROW_KEYS` order."""
        out: dict[str, Any] = {}
        for key in ROW_KEYS:
            value = self.status if key == "status" else getattr(self, key)
            out[key] = value.to_dict() if hasattr(value, "to_dict") else value
        return out


# --- programs ------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LabProgram:
    """A program to measure, named: what :func:`toolkit.load_module` takes (or a ``toolkit.Lowered``) and inputs.

    ``inputs`` is a list of flat argument arrays, a function ``seed -> list``,
    or ``None`` for seeded random inputs made from ``@main``'s types.
    ``num_devices`` is how many devices it runs on (checked before compiling).
    ``rtol``/``atol``: the tolerances its numerics are checked with (None:
    ``verify_numerics``'s defaults per dtype; a zoo program's are the zoo's own,
    those its results are checked against JAX's with).
    """

    name: str
    source: Any
    inputs: Sequence[Any] | Callable[[int], Sequence[Any]] | None = None
    num_devices: int = 1
    origin: str = ""
    rtol: float | None = None
    atol: float | None = None

    def load(self) -> Lowered:
        """The program as a ``toolkit.Lowered``."""
        if isinstance(self.source, Lowered):
            return self.source
        if callable(getattr(self.source, "load", None)) and hasattr(self.source, "inputs"):
            return self.source.load()  # a zoo program
        return load_module(self.source, name=self.name)

    def make_inputs(self, seed: int) -> list[Any] | None:
        """The flat arguments for ``seed`` (``None``: make them from ``@main``'s types)."""
        if self.inputs is None:
            return None
        made = self.inputs(seed) if callable(self.inputs) else self.inputs
        return list(made)


def _zoo_tolerances(item: Any) -> tuple[float | None, float | None]:
    """The zoo's tolerances for the program's float results (the loosest over their dtypes); None without any."""
    pairs = []
    for record in getattr(item, "outputs", ()):
        try:
            dtype = np.dtype(record["dtype"]) if record["dtype"] != "bfloat16" else np.dtype(ml_dtypes.bfloat16)
        except (KeyError, TypeError):
            continue
        if dtype.kind in "fcV":
            pairs.append(zoo.tolerances(dtype))
    if not pairs:
        return None, None
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _zoo_program(item: Any) -> LabProgram:
    rtol, atol = _zoo_tolerances(item)
    return LabProgram(item.name, item, item.inputs, int(getattr(item, "num_devices", 1) or 1),
                      f"zoo ({getattr(item, 'frontend', '?')})", rtol, atol)


def _looks_like_mlir(text: str) -> bool:
    return bool(re.search(r"\bmodule\b|func\.func", text)) and ("{" in text)


def resolve_programs(programs: Any) -> list[LabProgram]:
    """``programs`` as a list of :class:`LabProgram`.

    Accepts ``"zoo"`` (every zoo program), a zoo program or its name, a path,
    MLIR text, a ``(name, source)`` pair, a :class:`LabProgram`, anything
    :func:`toolkit.load_module` takes, or a list of these. ``ValueError`` for
    an unknown name or an empty list.
    """
    if isinstance(programs, (str, os.PathLike)) or not isinstance(programs, Sequence) \
            or (isinstance(programs, tuple) and len(programs) == 2 and isinstance(programs[0], str)
                and not isinstance(programs[1], str)):
        programs = [programs]
    resolved: list[LabProgram] = []
    for item in programs:
        if isinstance(item, str) and item == "zoo":
            resolved += [_zoo_program(p) for p in zoo.programs()]
        elif isinstance(item, LabProgram):
            resolved.append(item)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            inner = resolve_programs([item[1]])[0]
            resolved.append(dataclasses.replace(inner, name=item[0]))
        elif callable(getattr(item, "load", None)) and callable(getattr(item, "inputs", None)):
            resolved.append(_zoo_program(item))
        elif isinstance(item, os.PathLike) or (isinstance(item, str) and os.path.exists(item)):
            path = os.fspath(item)
            resolved.append(LabProgram(os.path.basename(path), path, origin=path))
        elif isinstance(item, str) and not _looks_like_mlir(item):
            try:
                resolved.append(_zoo_program(zoo.get(item)))
            except (KeyError, ValueError):
                names = ", ".join(p.name for p in zoo.programs())
                raise ValueError(f"'{item}' is neither a file nor a zoo program (the zoo has: {names})") from None
        elif isinstance(item, Lowered):
            name = getattr(getattr(item, "_traced", None), "fun_name", None) or "lowered"
            resolved.append(LabProgram(name, item, origin="toolkit.Lowered"))
        else:
            name = "module" if isinstance(item, (str, bytes, ir.Module)) else type(item).__name__
            resolved.append(LabProgram(name, item, origin=type(item).__name__))
    if not resolved:
        raise ValueError("no programs to measure")
    seen: dict[str, int] = {}
    for index, program in enumerate(resolved):  # names are keys of the report: make them unique
        count = seen.get(program.name, 0)
        seen[program.name] = count + 1
        if count:
            resolved[index] = dataclasses.replace(program, name=f"{program.name}#{count + 1}")
    return resolved


# --- measuring ------------------------------------------------------------------------------------------------------


class _StageError(Exception):
    """An error in one stage of one program (caught by :func:`measure_pipeline`, recorded in the row)."""

    def __init__(self, stage: str, error: BaseException, pass_name: str | None = None,
                 reproducer: str | None = None):
        super().__init__(f"{type(error).__name__}: {error}" if not isinstance(error, PipelineError) else str(error))
        self.stage, self.pass_name, self.reproducer = stage, pass_name, reproducer


def _copy(module: ir.Module) -> ir.Module:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    with module.context:
        return ir.Module.parse(buffer.getvalue())


def _bytecode(module: ir.Module) -> bytes:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def _block(tree: Any) -> None:
    for leaf in pytrees.tree_leaves(tree):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None:
            wait()


def _arguments(lowered: Lowered, flat: Sequence[Any]) -> tuple[tuple, dict]:
    args, kwargs = pytrees.tree_unflatten(lowered.in_tree, list(flat))
    return tuple(args), dict(kwargs)


def _flat_inputs(program: LabProgram, lowered: Lowered, module: ir.Module, seed: int) -> list[Any]:
    """Every flat argument of ``lowered`` (unused ones too) as arrays made from ``seed``."""
    made = program.make_inputs(seed)
    n_args = len(pytrees.tree_leaves(lowered.args_info))
    if made is None:
        made = list(pass_numerics.random_inputs(module, seed=seed))
        kept = list(lowered.kept_var_idx)
        if len(made) == len(kept) and len(kept) != n_args:
            # @main has only the arguments the program uses: zeros for the others (never read).
            full: list[Any] = [None] * n_args
            infos = pytrees.tree_leaves(lowered.args_info)
            for i, info in enumerate(infos):
                full[i] = np.zeros(info.shape, info.dtype)
            for i, value in zip(kept, made):
                full[i] = value
            made = full
    if len(made) != n_args:
        raise ValueError(f"{program.name}: {len(made)} inputs given, the program takes {n_args} arguments")
    return made


@contextlib.contextmanager
def _persistent_cache_off() -> Any:
    """XLA compiles for real inside: with a persistent compilation cache folder set, a second lab run would
    read its executables from disk and report that as compile time."""
    flag = compilation_cache.ENABLE.name
    saved = toolkit_config.read(flag)
    toolkit_config.update(flag, False)
    try:
        yield
    finally:
        toolkit_config.update(flag, saved)


def _compile(lowered: Lowered, pipeline: Pipeline | None, flat: Sequence[Any]) -> tuple[Compiled, float]:
    """Compile (with ``pipeline`` too, when given) and, if shape-polymorphic, specialize to ``flat``; timed."""
    with _persistent_cache_off():
        start = time.perf_counter()
        compiled: Any = lowered.compile() if pipeline is None else lowered.compile(pipeline=pipeline)
        if isinstance(compiled, PolymorphicCompiled):
            args, kwargs = _arguments(lowered, flat)
            compiled = compiled.specialize(*args, **kwargs)
        return compiled, time.perf_counter() - start


def _warm_call(compiled: Compiled, lowered: Lowered, flat: Sequence[Any]) -> list[np.ndarray]:
    """One call, waited for (the warm-up before timing); its results as numpy arrays."""
    args, kwargs = _arguments(lowered, flat)
    results = compiled(*args, **kwargs)
    _block(results)
    return [np.asarray(leaf) for leaf in pytrees.tree_leaves(results)]


def _time_calls(executables: Sequence[tuple[str, Compiled]], lowered: Lowered, flat: Sequence[Any],
                runs: int) -> list[RunTimes]:
    """``runs`` timed calls of each executable, each waited for, taking turns (before, after, before, ...).

    Taking turns gives both the same machine: on a shared machine load comes
    and goes, and timing all "before" calls first would hand a load spike to one side.
    """
    args, kwargs = _arguments(lowered, flat)
    seconds: list[list[float]] = [[] for _ in executables]
    for _ in range(runs):
        for (stage, compiled), timings in zip(executables, seconds):
            start = time.perf_counter()
            try:
                _block(compiled(*args, **kwargs))
            except Exception as error:  # name the side that failed
                raise _StageError(stage, error) from error
            timings.append(time.perf_counter() - start)
    return [RunTimes.of(timings) for timings in seconds]


def compare_results(before: Sequence[np.ndarray], after: Sequence[np.ndarray], *, seed: int,
                    rtol: float | None = None, atol: float | None = None) -> NumericsResult:
    """Whole-program results before and after a pipeline compared within ``rtol``/``atol`` (floats; default per dtype).

    What ``verify_numerics=True`` reports for a program ``verify_numerics``
    cannot run pass by pass (one on several devices): equal or not, the first
    result that differs and the worst errors, but not which pass.
    """
    if len(before) != len(after):
        return NumericsResult(False, None, None, None, None, seed,
                              f"the pipeline changed the number of results from {len(before)} to {len(after)}")
    worst_abs = worst_rel = 0.0
    for index, (b, a) in enumerate(zip(before, after)):
        if b.shape != a.shape or b.dtype != a.dtype:
            return NumericsResult(False, None, index, None, None, seed,
                                  f"result {index} changed type from {b.dtype}{list(b.shape)} to "
                                  f"{a.dtype}{list(a.shape)}")
        default_rtol, default_atol = pass_numerics.default_tolerance(b.dtype)
        exact = b.dtype.kind not in "fcV"  # integers and booleans must be equal
        rtol_b = default_rtol if exact or rtol is None else rtol
        atol_b = default_atol if exact or atol is None else atol
        wide_b, wide_a = b.astype(np.complex128 if b.dtype.kind == "c" else np.float64), \
            a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        nan_b, nan_a = np.isnan(wide_b), np.isnan(wide_a)
        finite = ~(nan_b | nan_a)
        error = np.abs(wide_a - wide_b)[finite & np.isfinite(wide_a) & np.isfinite(wide_b)]
        scale = np.abs(wide_b)[finite & np.isfinite(wide_a) & np.isfinite(wide_b)]
        max_abs = float(error.max()) if error.size else 0.0
        max_rel = float((error / np.maximum(scale, np.finfo(np.float64).tiny)).max()) if error.size else 0.0
        same = bool(np.array_equal(nan_b, nan_a)) and bool(
            np.all((wide_a == wide_b) | ~finite | (np.abs(wide_a - wide_b) <= atol_b + rtol_b * np.abs(wide_b))))
        if not same:
            return NumericsResult(False, None, index, max_abs, max_rel, seed,
                                  f"result {index} differs after the pipeline (max abs error {max_abs:.4g}, max rel "
                                  f"error {max_rel:.4g}, rtol {rtol_b:g}, atol {atol_b:g}); compared whole-program "
                                  "results, so no pass is named")
        worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, max_rel)
    return NumericsResult(True, None, None, worst_abs, worst_rel, seed,
                          f"all {len(before)} results equal within tolerance (whole-program results compared)")


def _unoptimized_cost(module: ir.Module) -> Cost | None:
    """XLA's cost of the module before its optimizations; None when XLA cannot analyse it (dynamic shapes)."""
    try:
        return Cost.of(runtime_executable.hlo_cost_analysis(_bytecode(module)))
    except Exception:  # jaxlib's own error types: a module XLA cannot convert as is
        return None


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "program"


def _write_reproducer(directory: str, program: str, module: ir.Module, pipeline: Pipeline,
                      error: PipelineError) -> str:
    """A reproducer file of a failing pipeline (``toolkit-opt --run-reproducer FILE``); its path.

    The module just before the failing pass with that pass alone, when the
    error carries them (MLIR's local reproducer); else the program's module
    with the whole pipeline.
    """
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{_safe_name(program)}.reproducer.mlir")
    if not pass_reproducer.write_failure_reproducer(path, error):
        pass_reproducer.write_reproducer(path, module, str(pipeline))
    return path


class _Measurement:
    """One program measured stage by stage into ``row``; every stage's error becomes a :class:`_StageError`."""

    def __init__(self, program: LabProgram, pipeline: Pipeline, row: LabRow, *, runs: int, seed: int,
                 verify: bool, rtol: float | None, atol: float | None, reproducer_dir: Callable[[], str],
                 report: Callable[[str], None]):
        self.program, self.pipeline, self.row = program, pipeline, row
        self.runs, self.seed, self.verify, self.rtol, self.atol = runs, seed, verify, rtol, atol
        self.reproducer_dir, self.report = reproducer_dir, report

    def stage(self, name: str, work: Callable[[], Any]) -> Any:
        self.report(name)
        try:
            return work()
        except _StageError:
            raise
        except Exception as error:  # any error of this program ends its row, never the other programs
            raise _StageError(name, error) from error

    def run(self) -> None:
        program, row = self.program, self.row
        lowered, module = self.stage("load", self.load)
        flat = self.stage("inputs", lambda: _flat_inputs(program, lowered, module, self.seed))
        after, pipeline_error = self.stage("pipeline", lambda: self.run_pipeline(module))

        def costs() -> None:
            row.cost_before = _unoptimized_cost(module)
            row.cost_after = _unoptimized_cost(after) if after is not None else None
        self.stage("cost", costs)

        def compile_before() -> Compiled:
            compiled, row.compile_seconds_before = _compile(lowered, None, flat)
            row.optimized_cost_before = Cost.of(compiled.cost_analysis())
            row.xla_before = XlaCounts.of(compiled.as_text())
            return compiled

        def compile_after() -> Compiled:
            compiled, row.compile_seconds_after = _compile(lowered, self.pipeline, flat)
            row.optimized_cost_after = Cost.of(compiled.cost_analysis())
            row.xla_after = XlaCounts.of(compiled.as_text())
            return compiled
        before = self.stage("compile before", compile_before)
        results_before = self.stage("run before", lambda: _warm_call(before, lowered, flat))
        if pipeline_error is not None:  # measure what can be measured, then report the pass that failed
            (row.run_before,) = _time_calls([("run before", before)], lowered, flat, self.runs)
            raise pipeline_error
        compiled_after = self.stage("compile after", compile_after)
        results_after = self.stage("run after", lambda: _warm_call(compiled_after, lowered, flat))
        row.run_before, row.run_after = _time_calls([("run before", before), ("run after", compiled_after)],
                                                    lowered, flat, self.runs)
        if self.verify:
            kept = [flat[i] for i in lowered.kept_var_idx]
            row.numerics = self.stage("numerics", lambda: self.check_numerics(module, kept, results_before,
                                                                                results_after))

    def load(self) -> tuple[Lowered, ir.Module]:
        """The program's ``Lowered`` and its module, after checking there are devices enough."""
        need = self.program.num_devices
        have = len(runtime_client.devices())
        if need > have:
            raise ValueError(f"{self.program.name} runs on {need} devices, this process has {have} "
                             f"(set TOOLKIT_NUM_CPU_DEVICES={need} before toolkit first uses a device)")
        lowered = self.program.load()
        if not isinstance(lowered, Lowered):
            raise TypeError(f"loading {self.program.name} gave a {type(lowered).__name__}, not a toolkit.Lowered")
        # compiler_ir() hands the module out: compile() then never answers from jit's executable cache,
        # so "before" pays its compilation as "after" does.
        return lowered, lowered.compiler_ir()

    def run_pipeline(self, module: ir.Module) -> tuple[ir.Module | None, _StageError | None]:
        """The module after the pipeline (a copy), or the failure with its reproducer; op counts of both."""
        self.row.ops_before = OpCounts.of(module)
        after = _copy(module)
        start = time.perf_counter()
        try:
            self.pipeline.run(after)
        except PipelineError as error:
            pass_name = getattr(error, "pass_name", None)
            try:
                reproducer = _write_reproducer(self.reproducer_dir(), self.program.name, module, self.pipeline,
                                               error)
            except Exception as write_error:  # the failure still counts; say the reproducer is missing
                reproducer = None
                error = PipelineError(f"{error} (and no reproducer: {write_error})")
            return None, _StageError("pipeline", error, pass_name, reproducer)
        self.row.pipeline_seconds = time.perf_counter() - start
        self.row.ops_after = OpCounts.of(after)
        return after, None

    def check_numerics(self, module: ir.Module, inputs: list[Any], results_before: list[np.ndarray],
                       results_after: list[np.ndarray]) -> NumericsResult:
        """``verify_numerics`` pass by pass; for a module it cannot run, the whole program's results compared."""
        # Inputs made from the seed are made again by verify_numerics: its report then names a command
        # that reproduces it. A program's own inputs (the zoo's) are passed as they are.
        given = None if self.program.inputs is None else inputs
        rtol = self.rtol if self.rtol is not None else self.program.rtol
        atol = self.atol if self.atol is not None else self.program.atol
        # Bisecting compiles the module after the whole pipeline first and looks for the pass only when it
        # diverged: two XLA compilations for a correct pipeline instead of one per pass that changed the module.
        origin = self.program.origin
        module_path = origin if origin.endswith(".mlir") else f"{_safe_name(self.program.name)}.mlir"
        try:
            report = pass_numerics.verify_numerics(_copy(module), self.pipeline, seed=self.seed, trials=1,
                                                   inputs=given, rtol=rtol, atol=atol, bisect=True,
                                                   module_path=module_path)
        except pass_numerics.UnsupportedModuleError as error:
            result = compare_results(results_before, results_after, seed=self.seed, rtol=rtol, atol=atol)
            return dataclasses.replace(result, summary=f"{result.summary} ({error})")
        return NumericsResult(bool(report.ok), report.first_divergent_pass or report.failed_pass,
                              report.result_index, _finite_or_none(report.max_abs_error),
                              _finite_or_none(report.max_rel_error),
                              report.seed if report.seed is not None else self.seed, str(report))


def _finite_or_none(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


_warmed_up = False


def _warm_up() -> None:
    """Compile and run one tiny program once per process.

    The process's first XLA compilation pays one-time set-up costs (hundreds of
    milliseconds) that would otherwise count as the first program's "before"
    compile time.
    """
    global _warmed_up
    if not _warmed_up:
        with _persistent_cache_off():  # the warm-up is XLA compiling, not reading a file
            lowered = jit(lambda x: x * 2.0 + 1.0).lower(np.zeros((4,), np.float32))
            _block(lowered.compile()(np.zeros((4,), np.float32)))
        _warmed_up = True


def measure_pipeline(pipeline: str | Pipeline, programs: Any, *, verify_numerics: bool = False, runs: int = 5,
                     seed: int = 0, rtol: float | None = None, atol: float | None = None,
                     reproducer_dir: str | os.PathLike | None = None,
                     progress: ProgressCallback | None = None) -> list[LabRow]:
    """Measure ``pipeline`` on ``programs``: one :class:`LabRow` per program, in order.

    ``pipeline``: text (``"toolkit-simplify, cse"`` or ``builtin.module(...)``)
    or a :class:`toolkit.passes.Pipeline`; ``programs``: see
    :func:`resolve_programs` (``"zoo"``, zoo names, paths, modules, ...).
    ``runs`` timed calls per executable (≥ 1) after one warm-up call; inputs
    are made from ``seed``. ``verify_numerics`` checks each program with
    :func:`toolkit.passes.verify_numerics` (same inputs) within ``rtol`` and
    ``atol`` for float results (default: each program's own, see
    :class:`LabProgram`, else ``verify_numerics``'s per dtype). A failing pass
    writes a reproducer into ``reproducer_dir`` (default: a new temporary
    folder, made only when needed). ``progress(index, total, program, stage)``
    is called as each stage starts.

    ``ValueError`` for a pipeline that does not parse, ``runs < 1`` or
    unknown programs; an error while measuring a program is recorded in its
    row (``row.failure``) and the next program is measured.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    for label, tolerance in (("rtol", rtol), ("atol", atol)):
        if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float))
                                      or not tolerance >= 0):
            raise ValueError(f"{label} must be a non-negative number, got {tolerance!r}")
    if isinstance(pipeline, str):
        parsed = parse_pipeline(pipeline)
    elif isinstance(pipeline, Pipeline):
        parsed = pipeline
    else:
        raise TypeError(f"pipeline must be pipeline text or a toolkit.passes.Pipeline, got {type(pipeline).__name__}")
    resolved = resolve_programs(programs)
    folder: list[str] = [os.fspath(reproducer_dir)] if reproducer_dir is not None else []

    def reproducers() -> str:
        if not folder:
            folder.append(tempfile.mkdtemp(prefix="toolkit-lab-reproducers-"))
        return folder[0]

    rows = []
    total = len(resolved)
    _warm_up()
    for index, program in enumerate(resolved):
        row = LabRow(program.name, program.origin, str(parsed))

        def report(stage: str, index: int = index, name: str = program.name) -> None:
            if progress is not None:
                progress(index, total, name, stage)
        try:
            _Measurement(program, parsed, row, runs=runs, seed=seed, verify=verify_numerics, rtol=rtol, atol=atol,
                         reproducer_dir=reproducers, report=report).run()
        except _StageError as failure:
            row.failure = Failure(failure.stage, str(failure), failure.pass_name, failure.reproducer)
        report("done")
        rows.append(row)
    return rows
