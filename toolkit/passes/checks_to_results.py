"""Passes that make StableHLO's self-checking test programs runnable by XLA.

``toolkit-checks-to-results``: every ``stablehlo.custom_call @check.<kind>(actual,
expected)`` in ``@main`` is erased and ``actual, expected`` are appended to
``@main``'s results, in program order. ``@main`` gets the attribute
``toolkit.checks = ["expect_close", ...]`` naming the kinds, so a runner can
pair the extra results up. IR contract: after it, no ``check.*`` custom call
remains in ``@main``.

``toolkit-inputs-to-arguments``: ``%x = call @inputs()`` in ``@main`` becomes
new leading arguments of ``@main`` (the constant inputs turn into runtime
parameters XLA cannot fold, as JAX ran these programs).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from jaxlib.mlir import ir

from toolkit.ir.symbols import lookup_function
from toolkit.passes.pass_base import ModulePass, PassFailure
from toolkit.passes.registry import register_pass

CHECK_PREFIX = "check."


def _target_name(op: ir.Operation) -> str | None:
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _function_type(function: ir.Operation) -> ir.FunctionType:
    return ir.TypeAttr(function.attributes["function_type"]).value


def _set_results(function: ir.Operation, new_results: list[ir.Value], extra: int) -> None:
    block = function.regions[0].blocks[0]
    old_return = block.operations[len(block.operations) - 1].operation
    with function.context, old_return.location, ir.InsertionPoint(old_return):
        ir.Operation.create("func.return", operands=new_results)
    old_return.erase()
    old_type = _function_type(function)
    with function.context:
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(old_type.inputs), [v.type for v in new_results]))
        if "res_attrs" in function.attributes:
            attrs = list(ir.ArrayAttr(function.attributes["res_attrs"]))
            attrs += [ir.DictAttr.get({})] * extra
            function.attributes["res_attrs"] = ir.ArrayAttr.get(attrs)


def _function(op: ir.Operation, name: str) -> ir.Operation:
    try:
        return lookup_function(op, name).operation
    except KeyError as error:
        raise PassFailure(str(error.args[0])) from None


@register_pass
@dataclasses.dataclass(frozen=True)
class ChecksToResultsPass(ModulePass):
    """Turn ``check.*`` custom calls of ``@main`` into extra results."""

    name: ClassVar[str] = "toolkit-checks-to-results"
    description: ClassVar[str] = "Turn check.expect_* custom calls in @main into extra (actual, expected) results."

    function: str = "main"

    def apply(self, op: ir.Operation) -> None:
        main = _function(op, self.function)
        block = main.regions[0].blocks[0]
        kinds: list[str] = []
        pairs: list[ir.Value] = []
        for child in list(block.operations):
            child = child.operation
            target = _target_name(child)
            if target is None or not target.startswith(CHECK_PREFIX):
                continue
            if len(child.operands) != 2:
                raise PassFailure(f"{target} needs 2 operands (actual, expected), has {len(child.operands)}",
                                  op=child)
            kinds.append(target[len(CHECK_PREFIX):])
            pairs += [child.operands[0], child.operands[1]]
            child.erase()
        if not kinds:
            return
        old_return = block.operations[len(block.operations) - 1].operation
        _set_results(main, list(old_return.operands) + pairs, len(pairs))
        with main.context:
            main.attributes["toolkit.checks"] = ir.ArrayAttr.get([ir.StringAttr.get(k) for k in kinds])


@register_pass
@dataclasses.dataclass(frozen=True)
class InputsToArgumentsPass(ModulePass):
    """Replace ``call @inputs()`` in ``@main`` by new leading ``@main`` arguments."""

    name: ClassVar[str] = "toolkit-inputs-to-arguments"
    description: ClassVar[str] = "Replace `call @inputs()` in @main by arguments of @main (runtime parameters)."

    function: str = "main"
    callee: str = "inputs"

    def apply(self, op: ir.Operation) -> None:
        main = _function(op, self.function)
        block = main.regions[0].blocks[0]
        calls = [c.operation for c in block.operations
                 if c.operation.name == "func.call"
                 and ir.FlatSymbolRefAttr(c.operation.attributes["callee"]).value == self.callee]
        if not calls:
            return
        if len(calls) > 1:
            raise PassFailure(f"@{self.function} calls @{self.callee} {len(calls)} times; expected once")
        call = calls[0]
        if len(block.arguments) != 0:
            raise PassFailure(f"@{self.function} already has arguments")
        for result in call.results:
            argument = block.add_argument(result.type, call.location)
            result.replace_all_uses_with(argument)
        call.erase()
        old_type = _function_type(main)
        with main.context:
            main.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([a.type for a in block.arguments], list(old_type.results)))
