"""From a jit's lowered module to an XLA executable: its pass pipeline, then XLA.

:func:`passes_then_xla` is ``Lowered.compile``'s work on a private copy of the
module; :func:`compile_for_shapes` is a shape-polymorphic lowering's for one
set of concrete argument shapes (``toolkit-bind-shapes``, then
``toolkit-refine-shapes``, which checks the shape assertions). A failing pass
raises a :class:`~toolkit.passes.PipelineError` naming a reproducer file
(``toolkit.passes.reproducer``; in ``TOOLKIT_REPRODUCER_DIR``, default the
temporary folder) that ``toolkit-opt --run-reproducer`` replays. With dumping or
reports on (``TOOLKIT_DUMP_IR_TO`` / ``TOOLKIT_REPORT``) each finishes the
lowering's IR timeline (``toolkit.passes.dump``), on failure too.
"""

from __future__ import annotations

import io
import logging
from typing import Any, Mapping, Sequence

from jaxlib.mlir import ir

from toolkit import compilation_cache, executables_by_module, monitoring
from toolkit.core.config import flag_value
from toolkit.core.avals import ShapedArray
from toolkit.lowering.types import tensor_type
from toolkit.passes import dump as ir_dump
from toolkit.passes import reproducer
from toolkit.passes.pipeline import Pipeline, PipelineError, parse_pipeline
from toolkit.runtime import debug_checks
from toolkit.runtime import executable as runtime_executable


def checked_compiler_options(options: Any) -> Mapping[str, Any] | None:
    """``options`` (``jit(compiler_options=)``, ``Lowered.compile(options)``) if None or a mapping, else a
    ``TypeError``; XLA itself names an unknown option when compiling."""
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"compiler_options must be a dict of XLA option names to values, got {type(options).__name__}")
    return options


def passes_then_xla(lowered: Any, module: ir.Module, pipeline: Pipeline,
                    compiler_options: Mapping[str, Any] | None, timeline: Any) -> Any:
    """Run ``pipeline`` on ``module`` (a private copy), then compile it with XLA for ``lowered``'s plan.

    With dumping or reports on (``timeline``), the timeline is finished either
    way: on a failing pass or XLA error the report and the dump (XLA's
    scratch folder collected and removed) show how far it got, and the error
    propagates unchanged.
    """
    try:
        if pipeline.elements:
            try:
                # jit keeps no report: a pass's warnings are printed, once (issue 27).
                pipeline.run(module, observe=timeline and timeline.observe, print_warnings=True)
            except PipelineError as error:
                raise _with_reproducer(error, lowered) from error.__cause__
        plan = lowered._plan
        # Bytecode, which keeps the ops' locations: XLA makes them each HLO op's op_name and stack frame
        # (the source file and line). `get_asm(binary=True)` is text without them, where XLA saw "-":<line>.
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        traced = getattr(lowered, "_traced", None)
        name = f"jit({getattr(traced, 'fun_name', 'fun')})"
        priority = logging.WARNING if flag_value("jax_log_compiles") else logging.DEBUG
        if monitoring.logger.isEnabledFor(priority):  # JAX's pxla message before it compiles
            monitoring.logger.log(priority, "Compiling %s with global shapes and types %s.", name,
                                  list(getattr(traced, "in_avals", ())))
        bytecode, spmd, use_shardy = buffer.getvalue(), plan.num_partitions > 1, plan.partitioner == "shardy"
        propagate = plan.output_propagation()

        def compile_module() -> Any:
            return compilation_cache.compile_cached(  # from the persistent cache when it is on
                module, bytecode, plan.devices, pipeline_text=str(pipeline), num_partitions=plan.num_partitions,
                spmd=spmd, use_shardy=use_shardy, compiler_options=compiler_options,
                propagate_output_shardings=propagate, dump_to=timeline and timeline.xla_dump_folder())
        with monitoring.timed_phase("Finished XLA compilation of {fun_name} in {elapsed_time:.9f} sec", name,
                                    monitoring.BACKEND_COMPILE_EVENT):
            if timeline is None and getattr(getattr(traced, "_wrapped", None), "_executables_by_module", False):
                # Eager execution's jit of a function made for this call: the executable of an equal module
                # compiled before (toolkit.executables_by_module says why it is the same).
                settings = (plan.num_partitions, spmd, use_shardy,
                            tuple(sorted(compiler_options.items())) if compiler_options else (),
                            None if propagate is None else tuple(propagate))
                executable = executables_by_module.EAGER.find_or_compile(bytecode, plan.devices, settings,
                                                                         compile_module)
            else:
                executable = compile_module()
    except Exception as error:
        if timeline is not None:
            timeline.finish(module, failure=f"compilation failed: {type(error).__name__}: {error}")
        raise
    if timeline is not None:
        timeline.finish(module, lambda: runtime_executable.optimized_hlo_text(executable))
    if debug_checks.enabled():  # jax_debug_nans / jax_debug_infs: runs check their outputs
        name = getattr(getattr(lowered, "_traced", None), "fun_name", "fun")
        executable = debug_checks.checking(executable, f"jit({name})")
    return executable


def _with_reproducer(error: PipelineError, lowered: Any) -> PipelineError:
    """``error`` naming a reproducer of the failing pass (``TOOLKIT_REPRODUCER_DIR``), written only now."""
    traced = getattr(lowered, "_traced", None)
    stem = f"jit_{getattr(traced, 'fun_name', 'fun')}-{error.pass_name or 'pipeline'}"
    path = reproducer.write_unique_failure_reproducer(error, stem)
    if path is None:
        return error
    named = PipelineError(f"{error}\n  reproducer of the failing pass: {path} "
                          f"(replay: toolkit-opt --run-reproducer {path})")
    named.pass_name, named.pass_pipeline, named.module_before = error.pass_name, error.pass_pipeline, error.module_before
    named.reproducer_path = path  # type: ignore[attr-defined]
    return named


def compile_for_shapes(lowered: Any, avals: Sequence[ShapedArray],
                       compiler_options: Mapping[str, Any] | None) -> tuple[Any, list[ShapedArray]]:
    """The executable of shape-polymorphic ``lowered`` at the concrete argument types ``avals``, and its result types.

    ``ValueError`` (naming the function) when the shapes break the lowering's
    shape assertions.
    """
    with lowered._module.context, ir.Location.unknown():
        module = ir.Module.parse(lowered._bytecode())
        types = ",".join(str(tensor_type(avals[i])) for i in lowered.kept_var_idx)
    bind = parse_pipeline(f"builtin.module(toolkit-bind-shapes{{types={types}}}, toolkit-refine-shapes)")
    timeline = ir_dump.timeline_for(lowered)  # None unless TOOLKIT_DUMP_IR_TO / TOOLKIT_REPORT is set
    try:
        (lowered._platform_pipeline() + bind).run(module, observe=timeline and timeline.observe,
                                                  print_warnings=True)
    except PipelineError as error:
        if timeline is not None:
            timeline.finish(module, failure=f"shape specialization failed: {error}")
        raise ValueError(f"{lowered._traced.fun_name}: {error}") from None
    executable = passes_then_xla(lowered, module, lowered.pipeline, compiler_options, timeline)
    main = next(op for op in module.body.operations if getattr(op, "name", None) is not None
                and op.name.value == "main")
    result_types = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results
    out_avals = [ShapedArray(tuple(ir.RankedTensorType(t).shape), a.dtype, a.weak_type)
                 for t, a in zip(result_types, lowered._traced.program.out_avals)]
    return executable, out_avals
