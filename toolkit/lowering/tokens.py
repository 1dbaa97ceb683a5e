"""Ordered effects across nested computations: one ``!stablehlo.token`` chain through the whole module.

The callback lowering (``lowering/rules/callbacks.py``) chains the ordered
callbacks of one block (a function body or a region) in program order,
starting from ``stablehlo.create_token``. Between blocks nothing orders them:
XLA was free to run a nested ``jit``'s callbacks after the caller's later ones.
:func:`thread_ordered_tokens` rewires the chains after lowering, as JAX threads
its ordered-effect tokens:

* a private function that (transitively) runs ordered callbacks takes the token
  as a trailing argument and returns the next one as a trailing result; its
  ``func.call``s pass and receive it;
* a ``stablehlo.case``/``stablehlo.if`` whose branches run them returns the
  token as a trailing result, each branch starting from the token before it
  (branch regions may use values from above);
* a ``stablehlo.while`` whose body runs them carries the token as a trailing
  loop value;
* ``@main`` starts the chain with one ``stablehlo.create_token`` (its signature
  is unchanged: toolkit's ``@main`` takes no token, see docs/debugging.md).

Regions of other ops (``sdy.manual_computation``, a ``shard_map`` body) keep
their own chain, and ops carrying a per-result sharding attribute are left
alone (their attribute would need a token entry). Pure MLIR: no tracing here.
"""

from __future__ import annotations

from typing import Any, Iterator

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from toolkit.core.host_callbacks import CALLBACK_TARGET

__all__ = ["thread_ordered_tokens"]

_TOKEN = "!stablehlo.token"
_SHARDING_ATTRIBUTES = ("sdy.sharding", "mhlo.sharding")


def _ops(block: ir.Block) -> Iterator[Any]:
    return iter(list(block.operations))


def _is_ordered_callback(op: Any) -> bool:
    operation = op.operation
    if operation.name != "stablehlo.custom_call" or not len(operation.operands):
        return False
    target = operation.attributes["call_target_name"]
    return ir.StringAttr(target).value == CALLBACK_TARGET and str(operation.operands[0].type) == _TOKEN


def _callee(op: Any) -> str | None:
    operation = op.operation
    if operation.name != "func.call":
        return None
    return ir.FlatSymbolRefAttr(operation.attributes["callee"]).value


def _is_private(function: Any) -> bool:
    attributes = function.operation.attributes
    return "sym_visibility" in attributes and ir.StringAttr(attributes["sym_visibility"]).value == "private"


class _Threader:
    def __init__(self, module: ir.Module):
        self.functions = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op
                          for op in module.body.operations if op.operation.name == "func.func"}
        self.effectful = self._effectful_functions()
        #: The effectful functions whose signature takes and returns the token (private ones; @main's stays).
        self.threaded = {name for name in self.effectful if name != "main" and _is_private(self.functions[name])}
        self.token_type = stablehlo.TokenType.get()

    # -- analysis ---------------------------------------------------------------------------------------
    def _scan(self, op: Any, callees: set[str]) -> bool:
        """Whether ``op``'s regions run an ordered callback directly; collects the functions they call."""
        direct = False
        for region in op.operation.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if _is_ordered_callback(inner):
                        direct = True
                    name = _callee(inner)
                    if name is not None:
                        callees.add(name)
                    if len(inner.operation.regions) and self._scan(inner, callees):
                        direct = True
        return direct

    def _effectful_functions(self) -> set[str]:
        calls: dict[str, set[str]] = {}
        effectful: set[str] = set()
        for name, function in self.functions.items():
            callees: set[str] = set()
            if self._scan(function, callees):
                effectful.add(name)
            calls[name] = callees
        changed = True
        while changed:  # a function calling an effectful one is effectful
            changed = False
            for name, callees in calls.items():
                if name not in effectful and callees & effectful:
                    effectful.add(name)
                    changed = True
        return effectful

    def _has_effect(self, op: Any) -> bool:
        callees: set[str] = set()
        return self._scan(op, callees) or bool(callees & self.effectful)

    # -- rewriting --------------------------------------------------------------------------------------
    def run(self) -> None:
        for name in self.effectful:
            function = self.functions[name]
            block = function.regions[0].blocks[0]
            if name not in self.threaded:
                first = next(iter(block.operations), None)
                with (ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(block)), \
                        function.location:
                    token = stablehlo.CreateTokenOp().result
                self._thread(block, token)
                continue
            self._add_token_to_signature(function)
            token = block.add_argument(self.token_type, function.operation.location)
            out = self._thread(block, token)
            self._replace_terminator(block, out, func.ReturnOp)

    def _add_token_to_signature(self, function: Any) -> None:
        attributes = function.operation.attributes
        kind = ir.FunctionType(ir.TypeAttr(attributes["function_type"]).value)
        attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            list(kind.inputs) + [self.token_type], list(kind.results) + [self.token_type]))
        for key in ("arg_attrs", "res_attrs"):
            if key in attributes:
                entries = list(ir.ArrayAttr(attributes[key]))
                attributes[key] = ir.ArrayAttr.get(entries + [ir.DictAttr.get({})])

    def _replace_terminator(self, block: ir.Block, token: ir.Value, make: Any) -> None:
        terminator = list(block.operations)[-1]
        with ir.InsertionPoint(terminator), terminator.location:
            make(list(terminator.operation.operands) + [token])
        terminator.operation.erase()

    def _thread(self, block: ir.Block, token: ir.Value) -> ir.Value:
        """Chain every ordered effect of ``block`` (and what it calls or nests) after ``token``; the last token."""
        for op in _ops(block):
            operation = op.operation
            name = operation.name
            if _is_ordered_callback(op):
                operation.operands[0] = token
                token = operation.results[0]
            elif name == "func.call":
                if _callee(op) in self.threaded:
                    token = self._recreate(op, [token], lambda new: new)
            elif len(operation.regions) and self._has_effect(op):
                if name in ("stablehlo.case", "stablehlo.if", "stablehlo.while") and \
                        not any(a in operation.attributes for a in _SHARDING_ATTRIBUTES):
                    token = self._thread_regions(op, token)
                else:
                    self._thread_locally([b for region in operation.regions for b in region.blocks])
        return token

    def _thread_locally(self, blocks: list) -> None:
        """Give each of ``blocks`` (a ``shard_map`` body's) a chain of its own: its calls of effectful
        functions still pass a token, as their new signatures need."""
        for block in blocks:
            first = next(iter(block.operations), None)
            if first is None:
                continue
            with ir.InsertionPoint(first), first.location:
                start = stablehlo.CreateTokenOp().result
            self._thread(block, start)

    def _recreate(self, op: Any, extra_operands: list, regions: Any) -> ir.Value:
        """``op`` again with a trailing token operand (``extra_operands``) and result; returns the new token."""
        operation = op.operation
        attributes = {name: operation.attributes[name] for name in operation.attributes}
        with ir.InsertionPoint(operation), operation.location:
            new = ir.Operation.create(operation.name, results=[r.type for r in operation.results] + [self.token_type],
                                      operands=list(operation.operands) + extra_operands, attributes=attributes,
                                      regions=len(operation.regions))
        regions(new)
        for old, value in zip(operation.results, new.results):
            old.replace_all_uses_with(value)
        operation.erase()
        return new.results[len(new.results) - 1]

    def _thread_regions(self, op: Any, token: ir.Value) -> ir.Value:
        operation = op.operation
        is_while = operation.name == "stablehlo.while"

        def move_regions(new: Any) -> None:
            for index, (old_region, new_region) in enumerate(zip(operation.regions, new.regions)):
                old_block = old_region.blocks[0]
                types = [a.type for a in old_block.arguments] + ([self.token_type] if is_while else [])
                with operation.location:
                    new_block = new_region.blocks.append(*types)
                for old_arg, new_arg in zip(old_block.arguments, new_block.arguments):
                    old_arg.replace_all_uses_with(new_arg)
                for inner in list(old_block.operations):
                    new_block.append(inner.operation)
                if is_while and index == 0:
                    # The condition returns its predicate alone (JAX refuses effects there): its own chain.
                    self._thread_locally([new_block])
                    continue
                start = new_block.arguments[len(new_block.arguments) - 1] if is_while else token
                out = self._thread(new_block, start)
                self._replace_terminator(new_block, out, stablehlo.ReturnOp)

        return self._recreate(op, [token] if is_while else [], move_regions)


def thread_ordered_tokens(module: ir.Module) -> None:
    """Thread one token through every ordered host callback of ``module``, across calls and regions
    (see the module docstring); ``create_token`` ops left unused are erased. A module without ordered
    callbacks is unchanged."""
    threader = _Threader(module)
    if not threader.effectful:
        return
    threader.run()
    for function in threader.functions.values():
        _erase_unused_create_tokens(function)


def _erase_unused_create_tokens(op: Any) -> None:
    for region in op.operation.regions:
        for block in region.blocks:
            for inner in list(block.operations):
                operation = inner.operation
                if operation.name == "stablehlo.create_token" and not list(operation.results[0].uses):
                    operation.erase()
                elif len(operation.regions):
                    _erase_unused_create_tokens(inner)
