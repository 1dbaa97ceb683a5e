"""Differential numerics for passes: did each pass of a pipeline keep ``@main``'s results?

:func:`verify_numerics` runs the pipeline once, one pass at a time (the
pipeline runner's ``observe`` hook: nested pipelines such as
``func.func(cse, canonicalize)`` count as one step per pass), keeps the
module after every pass, then runs ``@main`` on XLA (CPU) before the pipeline
and after each pass that changed the module, on seeded random inputs
(:mod:`.numerics_inputs`), and stops at the first pass whose results differ
from the original module's beyond tolerance. Each distinct module is
compiled once; a pass that left the text unchanged is not re-run
(``bisect=True`` compiles only the ends unless they differ). A module
partitioned over N devices runs SPMD on N CPU devices.

Comparison, per result: shapes and element types must stay; integers and
booleans must be equal; floats and complex numbers must satisfy
``|after - before| <= atol + rtol * |before|`` where both are finite, NaNs
must stay where they were and infinities must stay equal. Default
tolerances depend on the element type (:func:`default_tolerance`).

Example::

    report = verify_numerics(module, "toolkit-simplify, my-pass, cse")
    if not report.ok:
        print(report)            # names the pass, the result, the errors and the seed
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from toolkit.core.avals import ShapedArray
from toolkit.passes.numerics_inputs import (
    UnsupportedModuleError,
    argument_types,
    as_module,
    bind_static_shapes,
    element_dtype,
    is_polymorphic,
    main_function,
    random_inputs,
)
from toolkit.passes.pass_base import PipelineError
from toolkit.passes.pipeline import Pipeline, _leaf_elements, parse_pipeline
from toolkit.runtime import arrays, client, shardings, standalone
from toolkit.runtime import executable as runtime_executable

__all__ = ["NumericsReport", "PassNumerics", "UnsupportedModuleError", "default_tolerance", "random_inputs",
           "run_main", "verify_numerics"]

# (rtol, atol) by element type; types not listed use 2 and 1 machine epsilons (float8/6/4 types).
_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-12, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (4e-3, 2e-3),
    "bfloat16": (3e-2, 1.6e-2),
}


def default_tolerance(dtype: Any) -> tuple[float, float]:
    """``(rtol, atol)`` used for results of ``dtype`` when the caller gives none.

    f64 1e-12/1e-12, f32 1e-5/1e-6, f16 4e-3/2e-3, bf16 3e-2/1.6e-2, other
    floats 2 and 1 machine epsilons; complex numbers use their component's;
    integers and booleans (0, 0): exact.
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        dtype = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    if dtype.name in _TOLERANCES:
        return _TOLERANCES[dtype.name]
    if dtype.kind == "f" or (dtype.kind == "V" and "float" in dtype.name):
        eps = float(ml_dtypes.finfo(dtype).eps)
        return (2 * eps, eps)
    return (0.0, 0.0)


# --------------------------------------------------------------------------
# Running @main
# --------------------------------------------------------------------------
def _num_partitions(module: ir.Module) -> int:
    attributes = module.operation.attributes
    return ir.IntegerAttr(attributes["mhlo.num_partitions"]).value if "mhlo.num_partitions" in attributes else 1


def _check_runnable(module: ir.Module) -> None:
    attributes = module.operation.attributes
    if "mhlo.num_replicas" in attributes and ir.IntegerAttr(attributes["mhlo.num_replicas"]).value > 1:
        raise UnsupportedModuleError(
            f"the module is replicated (mhlo.num_replicas = {ir.IntegerAttr(attributes['mhlo.num_replicas']).value}); "
            "run_main and verify_numerics run one replica, partitioned over mhlo.num_partitions devices")
    partitions = _num_partitions(module)
    available = len(client.devices("cpu"))
    if partitions > available:
        raise UnsupportedModuleError(
            f"the module is partitioned over {partitions} devices (mhlo.num_partitions = {partitions}) but there "
            f"are {available} CPU device(s); set TOOLKIT_NUM_CPU_DEVICES={partitions} before toolkit starts")
    main = main_function(module)
    function_type = ir.TypeAttr(main.attributes["function_type"]).value
    for index, type_ in enumerate(function_type.results):
        if not isinstance(type_, ir.RankedTensorType):
            raise UnsupportedModuleError(f"result {index} of @main has type {type_}: only tensors can be compared")
        try:
            element_dtype(type_.element_type)
        except UnsupportedModuleError as error:
            raise UnsupportedModuleError(f"result {index} of @main ({type_}): {error}") from None
    argument_types(main)


def _prepared_inputs(types: Sequence[ir.RankedTensorType], inputs: Sequence[Any]) -> list[np.ndarray]:
    if len(inputs) != len(types):
        raise ValueError(f"@main takes {len(types)} arguments, got {len(inputs)} inputs")
    prepared = []
    for index, (value, type_) in enumerate(zip(inputs, types)):
        dtype = element_dtype(type_.element_type)
        array = np.asarray(value)
        if array.dtype != dtype:
            if isinstance(value, np.ndarray):
                raise ValueError(f"input {index} has dtype {array.dtype}, but argument {index} of @main is {type_}")
            array = np.asarray(value, dtype=dtype)
        if tuple(array.shape) != tuple(type_.shape):
            raise ValueError(f"input {index} has shape {tuple(array.shape)}, but argument {index} of @main is {type_}")
        prepared.append(array)
    return prepared


def _static_module(module: ir.Module | str | bytes, inputs: Sequence[Any] | None = None, *,
                   copy: bool = False) -> ir.Module:
    """``module`` parsed, a polymorphic @main bound (to the inputs' shapes when given), checked runnable.

    ``copy``: never return ``module`` itself (the caller changes the result).
    """
    parsed = as_module(module)
    if is_polymorphic(parsed):
        shapes = None if inputs is None else [np.shape(x) for x in inputs]
        parsed = bind_static_shapes(parsed, shapes)
    elif copy and id(parsed) == id(module):  # id(): no type narrowing of parsed to str | bytes
        with parsed.context, ir.Location.unknown():
            parsed = ir.Module.parse(parsed.operation.get_asm(enable_debug_info=True))
    _check_runnable(parsed)
    return parsed


def _module_text(module: ir.Module) -> str:
    return module.operation.get_asm(enable_debug_info=False)


def run_main(module: ir.Module | str | bytes, inputs: Sequence[Any]) -> list[np.ndarray]:
    """Compile ``module``'s ``@main`` with XLA for CPU, run it on ``inputs``, return its results.

    A module partitioned over N devices (``mhlo.num_partitions = N``, GSPMD
    or Shardy shardings) runs SPMD on the first N CPU devices, its inputs
    split as XLA's parameter shardings say and its results assembled.

    ``inputs``: one array per argument, of its shape and dtype (numpy arrays
    must match the dtype exactly; Python scalars and lists are converted). A
    shape-polymorphic @main is first bound to the inputs' shapes. Raises
    :class:`UnsupportedModuleError` (a ``ValueError``) for a module without
    @main, with token or other non-tensor arguments or results, replicated
    (``mhlo.num_replicas > 1``) or partitioned over more devices than there
    are; ``ValueError`` for inputs that do not fit or a module
    XLA cannot compile.
    """
    parsed = _static_module(module, inputs)
    prepared = _prepared_inputs(argument_types(main_function(parsed)), inputs)
    return _Program(_module_text(parsed), _num_partitions(parsed)).run(prepared)


#: XLA options every module is compiled with here. LLVM's optimizations at level 0 halve compile time
#: (21 s -> 9 s for the zoo's GPT-2 training step); both sides of a comparison are compiled the same way.
XLA_OPTIONS: dict[str, Any] = {"xla_backend_optimization_level": 0}


class _Program:
    """One compiled module: on the default device, or SPMD-partitioned over ``num_partitions`` CPU devices."""

    def __init__(self, text: str, num_partitions: int):
        self.num_partitions = num_partitions
        self.devices = (client.default_device(),) if num_partitions == 1 else tuple(
            client.devices("cpu")[:num_partitions])
        try:
            self.executable = runtime_executable.compile_module(
                text, self.devices, num_partitions=num_partitions, spmd=num_partitions > 1,
                use_shardy=num_partitions > 1 and "sdy." in text, compiler_options=XLA_OPTIONS)
        except runtime_executable.RuntimeError_ as error:
            raise ValueError(f"XLA could not compile the module: {error}") from None
        if num_partitions == 1:
            return
        self.input_shardings = runtime_executable.parameter_shardings(self.executable)
        self.output_shardings = runtime_executable.output_shardings(self.executable)
        main = main_function(as_module(text))
        self.result_avals = [(tuple(t.shape), element_dtype(t.element_type))
                             for t in ir.TypeAttr(main.attributes["function_type"]).value.results]

    def _sharding(self, hlo: Any) -> Any:
        return shardings.runtime_sharding(self.devices, hlo)

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """``@main`` on host arrays; its results as host arrays (assembled from every device's piece).

        Raises ``ValueError`` with XLA's message when the run fails.
        """
        try:
            if self.num_partitions == 1:
                return standalone.execute(self.executable, inputs)
            return self._run_partitioned(inputs)
        except runtime_executable.RuntimeError_ as error:
            raise ValueError(f"XLA could not run the module: {error}") from None

    def _run_partitioned(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if self.input_shardings is None or self.output_shardings is None:
            raise ValueError("XLA reported no parameter or output shardings for a partitioned module")
        device_inputs = []
        for value, hlo in zip(inputs, self.input_shardings):
            value = np.ascontiguousarray(value)
            pieces = [value[index] for index in shardings.shard_indices(hlo, len(self.devices), value.shape)]
            device_inputs.append(arrays.put_shards(ShapedArray(value.shape, value.dtype), self._sharding(hlo),
                                                   pieces, self.devices))
        handlers = [arrays.result_handler(ShapedArray(tuple(shape), dtype), self._sharding(hlo))
                    for (shape, dtype), hlo in zip(self.result_avals, self.output_shardings)]
        outputs = runtime_executable.execute(self.executable, device_inputs, handlers)
        return [arrays.to_numpy(output) for output in outputs]


# --------------------------------------------------------------------------
# Comparing results
# --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Comparison:
    ok: bool
    max_abs_error: float
    max_rel_error: float
    problem: str = ""  # why it is not ok, in words
    rtol: float = 0.0
    atol: float = 0.0
    result_type: str = ""


def _type_text(array: np.ndarray) -> str:
    return f"{array.dtype}[{','.join(map(str, array.shape))}]"


def _as_real(array: np.ndarray) -> np.ndarray:
    if array.dtype.kind == "c":
        return np.stack([array.real, array.imag], axis=-1).astype(np.float64)
    return array.astype(np.float64)


def _compare(before: np.ndarray, after: np.ndarray, rtol: float | None, atol: float | None) -> _Comparison:
    if before.dtype != after.dtype or before.shape != after.shape:
        return _Comparison(False, float("inf"), float("inf"),
                           f"its type changed from {_type_text(before)} to {_type_text(after)}")
    default_rtol, default_atol = default_tolerance(before.dtype)
    inexact = default_rtol > 0
    if inexact:
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
    else:
        rtol, atol = 0.0, 0.0  # integers and booleans: exact
    a, b = _as_real(before), _as_real(after)
    finite = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf and NaN are masked out by `finite`
        diff = np.where(finite, np.abs(a - b), 0.0)
    scale = np.abs(a)
    relative = np.divide(diff, scale, out=np.where(diff > 0, np.inf, 0.0), where=scale > 0)
    max_abs = float(diff.max()) if diff.size else 0.0
    max_rel = float(relative.max()) if relative.size else 0.0
    nan_moved = np.isnan(a) != np.isnan(b)
    if nan_moved.any():
        where = tuple(int(i) for i in np.argwhere(nan_moved)[0][:before.ndim])
        return _Comparison(False, max_abs, max_rel,
                           f"NaN positions differ at {int(nan_moved.sum())} element(s), first at index {where}",
                           rtol, atol)
    inf_changed = ~finite & ~np.isnan(a) & ~np.isnan(b) & (a != b)
    if inf_changed.any():
        where = tuple(int(i) for i in np.argwhere(inf_changed)[0][:before.ndim])
        return _Comparison(False, max_abs, max_rel,
                           f"infinities differ at {int(inf_changed.sum())} element(s), first at index {where}",
                           rtol, atol)
    beyond = diff > atol + rtol * scale
    if beyond.any():
        where = tuple(int(i) for i in np.argwhere(beyond)[0][:before.ndim])
        kind = f"rtol={rtol:g}, atol={atol:g}" if inexact else "integers must be equal"
        return _Comparison(False, max_abs, max_rel,
                           f"{int(beyond.sum())} of {before.size} element(s) differ beyond tolerance ({kind}), "
                           f"first at index {where}", rtol, atol)
    return _Comparison(True, max_abs, max_rel, "", rtol, atol)


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PassNumerics:
    """One pass of the pipeline: whether it changed the module and how far its results moved.

    Errors are the worst over all results and trials, against the module
    before the pipeline. ``error`` holds the pass's failure (or XLA's) when it
    failed; ``problem`` what diverged.
    """

    step: int  # 1-based position among the pipeline's passes
    name: str  # the pass as pipeline text, in its anchors (``func.func(cse)``)
    changed: bool  # the module text after it differs from the text before it
    ran: bool  # False: the pipeline failed at or before this pass
    checked: bool  # its results are known: compiled and compared, or the module unchanged since a checked one
    ok: bool  # checked (or, with bisect, assumed) within tolerance; False from the divergent pass on
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    result_index: int | None = None
    problem: str = ""
    error: str = ""


@dataclasses.dataclass(frozen=True)
class NumericsReport:
    """What :func:`verify_numerics` found; ``str(report)`` is a summary with the command to reproduce it.

    ``ok``: every pass ran and kept the results within tolerance.
    ``first_divergent_pass``: the first pass whose results differ (None if none
    did); ``result_index``, ``max_abs_error``, ``max_rel_error`` describe that
    divergence (``result_index`` None when the number of results changed) and
    ``seed`` is the seed of the inputs that showed it (None for given inputs).
    A pass that failed (raised, broke the IR, or made a module XLA cannot
    compile) gives ``ok=False`` with ``failed_pass`` and ``error`` set.
    When everything held, the errors are the worst seen over all passes.
    """

    ok: bool
    pipeline: str
    passes: tuple[PassNumerics, ...]
    seed: int | None
    trials: int
    rtol: float | None = None
    atol: float | None = None
    first_divergent_pass: str | None = None
    first_divergent_step: int | None = None
    result_index: int | None = None
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    problem: str = ""
    result_type: str = ""  # of the divergent result, e.g. "float32[4,3]"
    failed_pass: str | None = None
    error: str = ""
    module_path: str = "module.mlir"
    bisected: bool = False  # verify_numerics(bisect=True): only some passes were compiled
    #: The (bound) module's text right before the divergent or failing pass: with ``pipeline`` narrowed to that
    #: pass, a one-pass reproducer (``toolkit.passes.reproducer.write_reproducer``). Empty when ok.
    module_before: str = dataclasses.field(default="", repr=False)
    bound_shapes: tuple[str, ...] = ()  # @main's argument types when a polymorphic module was bound

    def command(self, path: str | None = None) -> str:
        """The ``toolkit-opt`` command line that runs this check again (on ``path``, default the module's)."""
        flag = "--verify-numerics"
        if self.rtol is not None or self.atol is not None:
            flag += f"={self.rtol if self.rtol is not None else ''},{self.atol if self.atol is not None else ''}"
        parts = ["toolkit-opt", shlex.quote(path or self.module_path),
                 "--pass-pipeline=" + shlex.quote(self.pipeline), flag]
        if self.seed is not None:
            parts.append(f"--verify-numerics-seed={self.seed}")
        return " ".join(parts)

    def __str__(self) -> str:
        count = len(self.passes)
        changed = sum(1 for p in self.passes if p.changed)
        inputs = f"the inputs of seed {self.seed}" if self.seed is not None else "the given inputs"
        reproduce = f"Reproduce: {self.command()}"
        if self.seed is None:
            reproduce += " (with other inputs: the given ones cannot be passed on the command line)"
        if self.first_divergent_pass is not None:
            where = "the results" if self.result_index is None else f"result {self.result_index}"
            if self.result_type:
                where += f" ({self.result_type})"
            return (f"numerics diverged at pass {self.first_divergent_step} of {count}, "
                    f"'{self.first_divergent_pass}': {where}: {self.problem}; max abs error "
                    f"{self.max_abs_error:.4g}, max rel error {self.max_rel_error:.4g}, with {inputs}. {reproduce}")
        if self.failed_pass is not None:
            step = next((p.step for p in self.passes if p.name == self.failed_pass and p.error), None)
            at = f" {step} of {count}" if step is not None else ""
            return (f"pass{at}, '{self.failed_pass}', failed: {self.error}. The passes before it kept the "
                    f"numerics with {inputs}. {reproduce}")
        trials = f"{self.trials} trial(s) from seed {self.seed}" if self.seed is not None else "the given inputs"
        if self.bisected:
            unchecked = sum(1 for p in self.passes if p.changed and not p.checked)
            trials += f"; bisect: {unchecked} changed module(s) not compiled"
        return (f"numerics held through all {count} pass(es) of {self.pipeline} ({changed} changed the module; "
                f"{trials}; worst max abs error {self.max_abs_error:.4g}, max rel error "
                f"{self.max_rel_error:.4g}). {reproduce}")


# --------------------------------------------------------------------------
# verify_numerics
# --------------------------------------------------------------------------
class _Runner:
    """Compiles each distinct module text once and runs it on every trial's inputs."""

    def __init__(self, trial_inputs: list[list[np.ndarray]], num_partitions: int):
        self.trial_inputs = trial_inputs
        self.num_partitions = num_partitions
        self.results: dict[str, list[list[np.ndarray]]] = {}

    def run(self, text: str) -> list[list[np.ndarray]]:
        if text not in self.results:
            program = _Program(text, self.num_partitions)
            self.results[text] = [program.run(inputs) for inputs in self.trial_inputs]
        return self.results[text]


def _compare_trials(reference: list[list[np.ndarray]], results: list[list[np.ndarray]],
                    rtol: float | None, atol: float | None) -> tuple[_Comparison, int | None, int]:
    """The worst comparison over trials and results: (comparison, result index, trial) of the first failure."""
    worst_abs = worst_rel = 0.0
    for trial, (before, after) in enumerate(zip(reference, results)):
        if len(before) != len(after):
            return (_Comparison(False, float("inf"), float("inf"),
                                f"changed in number: {len(before)} before, {len(after)} after"), None, trial)
        for index, (x, y) in enumerate(zip(before, after)):
            comparison = _compare(x, y, rtol, atol)
            if not comparison.ok:
                return dataclasses.replace(comparison, result_type=_type_text(x)), index, trial
            worst_abs, worst_rel = max(worst_abs, comparison.max_abs_error), max(worst_rel, comparison.max_rel_error)
    return _Comparison(True, worst_abs, worst_rel), None, 0


def _check_tolerance(name: str, value: float | None) -> None:
    if value is not None and (not isinstance(value, (int, float)) or not value >= 0):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")


def verify_numerics(module: ir.Module | str | bytes, pipeline: str | Pipeline, *, seed: int = 0, trials: int = 2,
                    rtol: float | None = None, atol: float | None = None, inputs: Sequence[Any] | None = None,
                    bisect: bool = False, module_path: str = "module.mlir") -> NumericsReport:
    """Run ``pipeline`` on a copy of ``module`` and check that every pass kept ``@main``'s results.

    * ``module``: an ``ir.Module`` (left unchanged), MLIR text, bytecode or a
      portable artifact; a shape-polymorphic @main is bound to small static
      shapes first (those of ``inputs`` when given).
    * ``pipeline``: pipeline text or a parsed :class:`Pipeline`; every pass
      (nested ones included) is one step.
    * ``seed``, ``trials``: trial ``t`` runs on ``random_inputs(module,
      seed=seed + t)``; ``inputs``: run on these instead (one trial).
    * ``rtol``, ``atol``: tolerances for float and complex results (default:
      :func:`default_tolerance` of each result's type); integer and boolean
      results must always be equal.
    * ``bisect``: compile the module after the last pass first; only if it
      diverges, bisect the passes that changed the module to name one whose
      results diverge while its predecessor's held (about log2 of the
      compilations; assumes a divergence is not undone by a later pass). The
      passes in between are then not compiled (``checked=False``).
    * ``module_path``: the file named in the reproducing command line.

    Returns a :class:`NumericsReport` (a pass that fails is reported there,
    not raised). Raises ``PipelineError`` / ``UnknownPassError`` for bad
    pipeline text, :class:`UnsupportedModuleError` for a module it cannot run
    (no @main, token or unsupported argument/result types, replicas, too few
    devices; see :func:`run_main`),
    ``ValueError`` for bad arguments or a module XLA cannot compile before
    any pass ran.
    """
    if not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    if not isinstance(seed, int):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__}")
    _check_tolerance("rtol", rtol)
    _check_tolerance("atol", atol)
    parsed_pipeline = parse_pipeline(pipeline) if isinstance(pipeline, str) else pipeline
    if not isinstance(parsed_pipeline, Pipeline):
        raise TypeError(f"pipeline must be pipeline text or a Pipeline, got {type(pipeline).__name__}")
    original = as_module(module)
    polymorphic = is_polymorphic(original)
    working = _static_module(original, inputs, copy=original is module)
    types = argument_types(main_function(working))
    bound_shapes = tuple(str(t) for t in types) if polymorphic else ()
    if inputs is not None:
        trial_inputs = [_prepared_inputs(types, inputs)]
        report_seed: int | None = None
    else:
        trial_inputs = [random_inputs(working, seed=seed + t) for t in range(trials)]
        report_seed = seed
    runner = _Runner(trial_inputs, _num_partitions(working))
    reference_text = _module_text(working)
    reference = runner.run(reference_text)

    # Run the whole pipeline first (cheap next to XLA), keeping the module after every pass.
    leaves = [str(leaf) for element in parsed_pipeline.elements for leaf in _leaf_elements(element, ())]
    steps: list[tuple[str, str]] = []

    def observe(record: Any, op: Any, text: str) -> None:
        steps.append((record.label, text))

    failure: tuple[str, str] | None = None
    try:
        parsed_pipeline.run(working, observe=observe)
    except PipelineError as error:
        # Every pass before the failing one was observed: the next leaf is the one that failed.
        name = leaves[len(steps)] if len(steps) < len(leaves) else (getattr(error, "pass_name", None) or "<pipeline>")
        # The report names the pass itself: drop the runner's own "pass '...' failed: " prefix.
        message = str(error)
        prefix = f"pass '{name}' failed:"
        failure = (str(name), message[len(prefix):].strip() if message.startswith(prefix) else message)

    common: dict[str, Any] = dict(pipeline=str(parsed_pipeline), seed=report_seed, trials=len(trial_inputs),
                                  rtol=rtol, atol=atol, module_path=module_path, bound_shapes=bound_shapes,
                                  bisected=bisect)
    texts = [reference_text] + [text for _, text in steps]
    changed = [i for i in range(len(steps)) if texts[i + 1] != texts[i]]
    # Step index -> (comparison, result index, trial), or XLA's error for a module it cannot compile or run.
    checks: dict[int, tuple[_Comparison, int | None, int] | str] = {}

    def holds(i: int) -> bool:
        try:
            results = runner.run(texts[i + 1])
        except ValueError as error:
            checks[i] = str(error)
            return False
        checks[i] = _compare_trials(reference, results, rtol, atol)
        return checks[i][0].ok  # type: ignore[union-attr]

    culprit: int | None = None
    if not bisect:
        culprit = next((i for i in changed if not holds(i)), None)
    elif changed and not holds(changed[-1]):
        # changed[high] diverges, changed[low] holds (-1: the original module).
        low, high = -1, len(changed) - 1
        while high - low > 1:
            middle = (low + high) // 2
            if holds(changed[middle]):
                low = middle
            else:
                high = middle
        culprit = changed[high]
    rows = _rows(steps, changed, checks, culprit)
    rows += [PassNumerics(number, name, False, False, False, False)
             for number, name in enumerate(leaves[len(steps):], start=len(steps) + 1)]
    if culprit is not None:
        label, found = steps[culprit][0], checks[culprit]
        common["module_before"] = texts[culprit]
        if isinstance(found, str):
            return NumericsReport(False, passes=tuple(rows), failed_pass=label,
                                  error=f"XLA cannot run the module after it: {found}", **common)
        comparison, index, trial = found
        common["seed"] = None if report_seed is None else report_seed + trial
        return NumericsReport(False, passes=tuple(rows), first_divergent_pass=label, first_divergent_step=culprit + 1,
                              result_index=index, max_abs_error=comparison.max_abs_error,
                              max_rel_error=comparison.max_rel_error, problem=comparison.problem,
                              result_type=comparison.result_type, **common)
    worst_abs = max((row.max_abs_error for row in rows), default=0.0)
    worst_rel = max((row.max_rel_error for row in rows), default=0.0)
    if failure is not None:
        name, message = failure
        common["module_before"] = texts[len(steps)]
        failed_row = PassNumerics(len(steps) + 1, name, False, False, False, False, error=message)
        if len(rows) > len(steps):
            rows[len(steps)] = failed_row
        else:
            rows.append(failed_row)
        return NumericsReport(False, passes=tuple(rows), failed_pass=name, error=message,
                              max_abs_error=worst_abs, max_rel_error=worst_rel, **common)
    return NumericsReport(True, passes=tuple(rows), max_abs_error=worst_abs, max_rel_error=worst_rel, **common)


def _rows(steps: Sequence[tuple[str, str]], changed: Sequence[int],
          checks: dict[int, tuple[_Comparison, int | None, int] | str], culprit: int | None) -> list[PassNumerics]:
    """One row per pass that ran (see :class:`PassNumerics`)."""
    rows: list[PassNumerics] = []
    changed_set = set(changed)
    for i, (label, _) in enumerate(steps):
        number, was_changed = i + 1, i in changed_set
        found = checks.get(i)
        if isinstance(found, str):
            rows.append(PassNumerics(number, label, True, True, False, False, error=found))
        elif found is not None:
            comparison, index, _ = found
            rows.append(PassNumerics(number, label, was_changed, True, True, comparison.ok,
                                     comparison.max_abs_error, comparison.max_rel_error,
                                     None if comparison.ok else index, comparison.problem))
        elif culprit is not None and i > culprit:
            rows.append(PassNumerics(number, label, was_changed, True, False, False))
        elif not was_changed:
            # The same module as before this pass: the same results.
            previous = rows[-1] if rows else PassNumerics(0, "", False, True, True, True)
            rows.append(dataclasses.replace(previous, step=number, name=label, changed=False))
        else:
            # bisect=True: not compiled; a later module held, so this one is taken to hold too.
            rows.append(PassNumerics(number, label, True, True, False, True))
    return rows
