"""``toolkit-bind-shapes{types=...}``: give a polymorphic ``@main`` concrete argument types.

What a caller does before :mod:`toolkit.passes.refine_shapes`: with
``types=tensor<i32>,!stablehlo.token,tensor<5x4xf32>`` (one type per argument,
the option syntax of StableHLO's ``stablehlo-refine-arguments``) each argument
of the entry function (``@main``, or the module's only function) gets the
given type.

IR contract (``wrap=true``, the default — what the C++ pass produces): for
every argument whose type changes, the argument is retyped and its uses read
``custom_call @stablehlo.shape_refinement_operand_wrapper(%arg, shape)``
whose result has the old type, so the body stays valid until refinement
erases the wrappers. With ``wrap=false`` the arguments are retyped directly
(the body may be temporarily ill-typed until refinement runs).

A refinement must keep tokens tokens, tensors tensors, the element type, the
rank (of ranked arguments) and every static size; anything else fails with
the same messages as the C++ pass, e.g. ``invalid refinement for argument 1,
refinement element types must match in tensor<1xi32> -> tensor<1xf32>``.

Example::

    run_pipeline(module, "builtin.module(toolkit-bind-shapes{types=tensor<8x4xf32>}, toolkit-refine-shapes)")
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.pass_base import ModulePass, PassFailure, PassOptionError
from toolkit.passes.registry import register_pass

_WRAPPER = "stablehlo.shape_refinement_operand_wrapper"


def split_types(text: str) -> list[str]:
    """Split ``"tensor<2x?xf32>,!stablehlo.token"`` on top-level commas.

    Commas inside ``<...>``, ``(...)``, ``[...]`` or ``{...}`` belong to a type.
    """
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def parse_types(text: str, context: ir.Context) -> list[ir.Type]:
    """The types listed in ``text``; raises PassOptionError ``Invalid type string: ...``."""
    types = []
    for piece in split_types(text):
        try:
            types.append(ir.Type.parse(piece, context))
        except (ir.MLIRError, ValueError):
            raise PassOptionError(f"Invalid type string: {piece}") from None
    return types


def _is_token(type_: ir.Type) -> bool:
    return str(type_) == "!stablehlo.token"


def refinement_error(index: int, original: ir.Type, refined: ir.Type) -> str | None:
    """Why ``refined`` may not replace argument ``index`` of type ``original`` (None if it may)."""
    def bad(reason: str) -> str:
        return f"invalid refinement for argument {index}, refinement {reason} in {original} -> {refined}"

    if _is_token(original) or _is_token(refined):
        if _is_token(original) and _is_token(refined):
            return None
        return bad("must be a token") if _is_token(original) else bad("must be a tensor")
    if not isinstance(original, ir.ShapedType) or not isinstance(refined, ir.ShapedType):
        return None if original == refined else bad("must be a tensor")
    if original.element_type != refined.element_type:
        return bad("element types must match")
    if not original.has_rank:
        return None
    if not refined.has_rank:
        return bad("must be ranked")
    if original.rank != refined.rank:
        return bad("rank must match operand rank")
    dynamic = ir.ShapedType.get_dynamic_size()
    for have, want in zip(original.shape, refined.shape):
        if have != dynamic and have != want:
            return bad("dimension sizes must match for static dimensions")
    return None


@register_pass
@dataclasses.dataclass(frozen=True)
class BindShapesPass(ModulePass):
    """Set the argument types of the entry function (see module docstring)."""

    name: ClassVar[str] = "toolkit-bind-shapes"
    description: ClassVar[str] = "Set concrete argument types on @main (types=... like stablehlo-refine-arguments)."

    types: str = dataclasses.field(
        default="", metadata={"help": "one type per argument of @main, comma separated"})
    wrap: bool = dataclasses.field(
        default=True, metadata={"help": "keep old types behind shape_refinement_operand_wrapper custom calls"})

    def apply(self, op: ir.Operation) -> None:
        module = op.operation
        context = module.context
        types = parse_types(self.types, context)
        functions = [o.operation for o in module.regions[0].blocks[0].operations
                     if o.operation.name == "func.func"]
        by_name = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in functions}
        if "main" in by_name:
            function = by_name["main"]
        elif len(functions) == 1:
            function = functions[0]
        else:
            raise PassFailure("must have no more than one function or a `main` function to clearly identify "
                              "which function will be refined", module)
        block = function.regions[0].blocks[0]
        arguments = list(block.arguments)
        if len(types) != len(arguments):
            raise PassFailure(f"number of refinements must match number of op operands {len(types)} vs "
                              f"{len(arguments)}", function)
        for index, (arg, refined) in enumerate(zip(arguments, types)):
            problem = refinement_error(index, arg.type, refined)
            if problem is not None:
                raise PassFailure(problem, function)
        first = list(block.operations)[0].operation
        with context, function.location:
            for arg, refined in zip(arguments, types):
                original = arg.type
                if original == refined:
                    continue
                arg.set_type(refined)
                if not self.wrap or not isinstance(refined, ir.RankedTensorType):
                    continue
                with ir.InsertionPoint(first):
                    shape = np.asarray(refined.shape, dtype=np.int64)
                    shape_type = ir.RankedTensorType.get([len(refined.shape)], ir.IntegerType.get_signless(64))
                    constant = ir.Operation.create(
                        "stablehlo.constant", results=[shape_type],
                        attributes={"value": ir.DenseElementsAttr.get(shape, type=shape_type)})
                    wrapper = ir.Operation.create(
                        "stablehlo.custom_call", results=[original], operands=[arg, constant.result],
                        attributes={"call_target_name": ir.StringAttr.get(_WRAPPER),
                                    "indices_of_shape_operands": ir.DenseElementsAttr.get(
                                        np.array([1], dtype=np.int64))})
                arg.replace_all_uses_except(wrapper.result, wrapper)
            old = ir.TypeAttr(function.attributes["function_type"]).value
            function.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([a.type for a in block.arguments], list(old.results)))
