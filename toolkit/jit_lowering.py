"""The StableHLO module of a traced jit function: its ``@main`` as JAX writes it.

``Traced.lower`` keeps the inputs ``toolkit.core.program.kept_inputs`` names (the used ones,
unless ``keep_unused``) and calls :func:`lower_traced`: the program lowered by
``toolkit.lowering`` with the user's argument and result names, donated inputs
aliased to outputs of their type (``tf.aliasing_output``) and, when
partitioned, the plan's shardings annotated (GSPMD or Shardy; ``@main``'s
meshes named first, as JAX names them).
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Sequence

from jaxlib.mlir import ir

from toolkit import lowering, monitoring
from toolkit.call_trees import path_name
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray
from toolkit.core.program import Program
from toolkit.ir.context import shared_context
from toolkit.lowering import dims
from toolkit.passes.sharding_annotate import annotate_shardings, name_shardy_meshes


def lower_traced(traced: Any, plan: Any, kept: Sequence[int], platforms: Sequence[str] | None,
                 dim_vars_as_arguments: bool) -> ir.Module:
    """``traced`` (a ``toolkit.stages.Traced``) as a module taking the inputs ``kept``, placed as ``plan`` says."""
    program = _restrict_inputs(traced.program, kept) if len(kept) != len(traced.program.invars) else traced.program
    with shared_context() as context:
        arg_attrs: list[dict[str, Any]] = [{} for _ in kept]
        taken: set[int] = set()
        for position, i in enumerate(kept):
            if traced.donated[i]:
                alias = _find_alias(traced.flat_in_avals[i], program.out_avals, taken)
                if alias is not None:
                    arg_attrs[position]["tf.aliasing_output"] = ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(32), alias)
        partitioned = plan.num_partitions > 1
        mesh_symbols = None
        if partitioned and plan.partitioner == "shardy":
            # @main's meshes are named first (@mesh, @mesh_0, ...), as JAX names them; the lowering
            # names the meshes only its ops use after them.
            mesh_symbols = name_shardy_meshes(
                [(s, traced.flat_in_avals[i].ndim) for s, i in zip(plan.annotated_arg_shardings(kept), kept)]
                + [(s, a.ndim) for s, a in zip(plan.annotated_out_shardings(), traced.program.out_avals)]
                + list(plan.constraint_shardings))
        with monitoring.timed_phase("Finished jaxpr to MLIR module conversion {fun_name} in {elapsed_time:.9f} sec",
                                    f"jit({traced.fun_name})", monitoring.JAXPR_TO_MLIR_MODULE_EVENT):
            module = lowering.lower_program(
                program, name=traced.fun_name, result_names=_output_paths(traced.out_tree), arg_attrs=arg_attrs,
                num_partitions=plan.num_partitions, platforms=tuple(platforms or (plan.platform,)), context=context,
                arg_names=[traced.arg_paths[i] for i in kept], dim_vars_as_arguments=dim_vars_as_arguments,
                partitioner=plan.partitioner if partitioned else "gspmd", shardy_meshes=mesh_symbols,
                arg_locations=parameter_paths(getattr(traced, "_wrapped", None),
                                              [traced.arg_paths[i] for i in kept]))
        if partitioned:
            arg_shardings = plan.annotated_arg_shardings(kept)
            # The platform index and dimension-variable arguments come first and are not sharded.
            leading = (1 if platforms is not None and len(platforms) > 1 else 0) + (
                len(dims.dim_var_names(traced.flat_in_avals)) if dim_vars_as_arguments else 0)
            arg_shardings = [None] * leading + list(arg_shardings)
            annotate_shardings(module, arg_shardings, plan.annotated_out_shardings(), mode=plan.partitioner,
                               body_shardings=plan.constraint_shardings, mesh_symbols=mesh_symbols)
        memory_kinds = plan.memory_kinds(kept)
        if memory_kinds is not None:
            leading = (1 if platforms is not None and len(platforms) > 1 else 0) + (
                len(dims.dim_var_names(traced.flat_in_avals)) if dim_vars_as_arguments else 0)
            annotate_memory_kinds(module, [None] * leading + memory_kinds[0], memory_kinds[1], memory_kinds[2])
    return module


def annotate_memory_kinds(module: ir.Module, arg_kinds: Sequence[str | None],
                          result_kinds: Sequence[str | None], placed: Sequence[bool]) -> None:
    """Write memory kinds on ``@main`` as JAX does: ``mhlo.memory_kind`` on the arguments and results
    that have one, and each result ``placed`` says passed through the ``annotate_device_placement``
    custom call (``_xla_buffer_placement``) that tells XLA where to place the buffer it returns."""
    main = next(op for op in module.body.operations
                if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main")
    function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    # Leading arguments/results the kinds do not cover (effect tokens) get none: align at the end.
    num_results = len(function_type.results)
    result_kinds = [None] * (num_results - len(result_kinds)) + list(result_kinds)
    placed = [False] * (num_results - len(placed)) + list(placed)
    arg_kinds = [None] * (len(function_type.inputs) - len(arg_kinds)) + list(arg_kinds)
    for name, kinds in (("arg_attrs", arg_kinds), ("res_attrs", result_kinds)):
        if not any(k is not None for k in kinds):
            continue
        old = list(ir.ArrayAttr(main.attributes[name])) if name in main.attributes else [
            ir.DictAttr.get({}) for _ in kinds]
        dicts = []
        for attrs, kind in zip(old, kinds):
            entries = {a.name: a.attr for a in ir.DictAttr(attrs)}
            if kind is not None:
                entries["mhlo.memory_kind"] = ir.StringAttr.get(kind)
            dicts.append(ir.DictAttr.get(entries))
        main.attributes[name] = ir.ArrayAttr.get(dicts)
    block = main.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    with ir.InsertionPoint(ret), ret.location:
        for i, (kind, place) in enumerate(zip(result_kinds, placed)):
            if kind is None or not place:
                continue
            value = ret.operands[i]
            annotation = ir.Operation.create("stablehlo.custom_call", results=[value.type], operands=[value], attributes={
                "call_target_name": ir.StringAttr.get("annotate_device_placement"),
                "has_side_effect": ir.BoolAttr.get(True), "backend_config": ir.StringAttr.get(""),
                "mhlo.frontend_attributes": ir.DictAttr.get({"_xla_buffer_placement": ir.StringAttr.get(kind)})})
            ret.operands[i] = annotation.result


def _restrict_inputs(program: Program, kept: Sequence[int]) -> Program:
    return Program(program.constvars, program.consts, [program.invars[i] for i in kept], program.outvars,
                   program.eqns, source_info=program.source_info)


def parameter_paths(wrapped: Any, paths: Sequence[str]) -> list[str]:
    """Argument paths (``args[0]['w']``, ``k``) named after the function's parameters, as JAX names ``@main``'s
    arguments (``params['w']``, ``rest[0]`` for ``*rest``, ``kw['k']`` for ``**kw``); unchanged when the
    function has no signature to read."""
    fun = getattr(wrapped, "fun", None)
    try:
        parameters = list(inspect.signature(fun).parameters.values()) if fun is not None else None
    except (TypeError, ValueError):
        parameters = None
    if not parameters:
        return list(paths)
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_positional = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), None)
    var_keyword = next((p.name for p in parameters if p.kind is p.VAR_KEYWORD), None)
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names = []
    for path in paths:
        match = re.fullmatch(r"args\[(\d+)\](.*)", path, re.S)
        if match is not None:
            position, rest = int(match.group(1)), match.group(2)
            if position < len(positional):
                path = positional[position] + rest
            elif var_positional is not None:
                path = f"{var_positional}[{position - len(positional)}]{rest}"
        else:
            key, bracket, rest = path.partition("[")
            if key not in named and var_keyword is not None:
                path = f"{var_keyword}[{key!r}]" + bracket + rest
        names.append(path)
    return names


def _find_alias(aval: ShapedArray, out_avals: Sequence[ShapedArray], taken: set[int]) -> int | None:
    """The first output not yet aliased that a donated input of ``aval``'s type can hold."""
    for j, out in enumerate(out_avals):
        if j not in taken and out.shape == aval.shape and out.dtype == aval.dtype:
            taken.add(j)
            return j
    return None


def _output_paths(out_tree: pytrees.PyTreeDef) -> list[str]:
    dummy = pytrees.structure_of(out_tree, list(range(out_tree.num_leaves)))
    return ["result" + path_name(path) for path, _ in pytrees.tree_flatten_with_path(dummy)[0]]
