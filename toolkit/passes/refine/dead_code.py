"""Dead-code erasure under shape refinement: unused pure ops, then unreferenced private functions.

Refinement leaves dead ops behind — the shape arithmetic it folded, the
operands of dynamic ops that became static — and functions nothing calls any
more (the pristine originals of specialized callees, reducers whose bodies were
copied into a ``reduce_window``). After each function's sweep the driver calls
:meth:`DeadCodeErasure.erase_dead_ops` on its body; at the end,
:meth:`DeadCodeErasure.erase_unused_functions`.

An op is pure (may go when unused) unless it has side effects: ``send``,
``recv``, ``infeed``, ``outfeed``, ``rng_bit_generator``, ``call_indirect``, a
custom call with ``has_side_effect``, a call of an impure function, or any op
outside StableHLO/CHLO.

Example::

    dead_code = DeadCodeErasure(constants, functions, touched_functions)
    may_be_dynamic = dead_code.erase_dead_ops(body_ops(function))
    ...
    dead_code.erase_unused_functions(module_op, swept)
"""

from __future__ import annotations

import dataclasses

from jaxlib.mlir import ir

from toolkit.passes.refine.constants import KnownConstants
from toolkit.passes.refine.static_check import may_fail_static_check
from toolkit.passes.refine.traversal import REGION_FREE, block_ops, operation, refined_callee, referenced_functions
from toolkit.passes.refine.types import is_static_type

_SIDE_EFFECTING = frozenset({
    "stablehlo.send", "stablehlo.recv", "stablehlo.infeed", "stablehlo.outfeed",
    "func.call_indirect", "stablehlo.rng_bit_generator",
})


@dataclasses.dataclass(slots=True)
class DeadCodeErasure:
    """What dead-code erasure of one run keeps between functions: references seen, purity known."""

    #: The run's constants (an erased op's results are forgotten; a folded op still used is materialized).
    constants: KnownConstants
    #: The module's functions by name (the driver's table; unused ones are erased from it).
    functions: dict[str, ir.Operation]
    #: Functions the pass refined or a rewrite read: only these may be erased when unreferenced.
    touched_functions: set[str]
    #: Functions named by the ops that survived the dead-op sweeps (see ``erase_unused_functions``).
    referenced: set[str] = dataclasses.field(default_factory=set)
    #: Function name -> True if calling it has no side effect (recursion counts as impure).
    purity: dict[str, bool] = dataclasses.field(default_factory=dict)

    def erase_dead_ops(self, ops: list[ir.Operation]) -> bool:
        """Erase the pure ops among ``ops`` (a block's) whose results are unused, last to first.

        Returns True if an op that stays may fail the static check (a dynamic result, a
        shape assertion, a custom call keeping shape operands): the check walks the
        module only then, so a module that refines cleanly is read once more here, not twice.
        The functions named by the ops that stay are noted for ``erase_unused_functions``.
        """
        flagged = False
        folded = self.constants.folded
        constants = self.constants.arrays
        materialize = self.constants.materialize
        referenced = self.referenced
        for op in reversed(ops):
            name = op.name
            results = op.results
            count = len(results)
            # One result is nearly every op: read it once (each read makes a new Python handle).
            values = (results[0],) if count == 1 else results
            used = False
            for value in values:
                for _ in value.uses:
                    used = True
                    break
                if used:
                    break
            if count and not used and self.is_pure_op(op, name):
                for value in values:
                    constants.pop(value, None)
                    if folded:
                        folded.discard(value)
                op.erase()
                continue
            if used and count == 1 and folded and values[0] in folded:
                materialize(op, values[0])
                continue
            # The op stays.
            referenced_functions(op, name, referenced)
            if name not in REGION_FREE and len(op.regions):
                if used or not count:
                    for region in op.regions:
                        for inner in region.blocks:
                            flagged |= self.erase_dead_ops(block_ops(inner))
                else:  # unused but not pure: its regions stay as they are
                    op.walk(self._note_references)
            if not flagged:
                if name == "stablehlo.custom_call" and may_fail_static_check(op):
                    flagged = True
                else:
                    for value in values:
                        type_ = value.type
                        if not (type_.has_static_shape if isinstance(type_, ir.RankedTensorType)
                                else is_static_type(type_)):
                            flagged = True
                            break
        return flagged

    def _note_references(self, op: ir.Operation) -> ir.WalkResult:
        """Walk callback: note the functions ``op`` names (see ``erase_dead_ops``)."""
        referenced_functions(op, op.name, self.referenced)
        return ir.WalkResult.ADVANCE

    def erase_unused_functions(self, module_op: ir.Operation, swept: set[str]) -> None:
        """Erase the private functions the pass touched that nothing references any more.

        The ``swept`` functions' references were noted by their dead-op sweeps (their bodies
        do not change after it); the rest of the module is walked here.
        """
        used = self.referenced
        referenced_functions(module_op, module_op.name, used)
        for op in module_op.regions[0].blocks[0].operations:
            op = op.operation
            if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value in swept:
                referenced_functions(op, "func.func", used)  # the function op itself; its body is noted
                continue
            op.walk(self._note_references)
        for name in list(self.functions):
            function = self.functions[name]
            private = "sym_visibility" in function.attributes and \
                ir.StringAttr(function.attributes["sym_visibility"]).value == "private"
            if name in self.touched_functions and name not in used and private:
                function.erase()
                del self.functions[name]

    def is_pure_function(self, name: str) -> bool:
        """True if calling ``name`` has no side effect (an unknown function is impure)."""
        known = self.purity.get(name)
        if known is not None:
            return known
        self.purity[name] = False  # recursion counts as impure
        function = self.functions.get(name)
        pure = function is not None and all(self.is_pure_op(operation(op))
                                            for block in function.regions[0].blocks
                                            for op in block.operations)
        self.purity[name] = pure
        return pure

    def is_pure_op(self, op: ir.Operation, name: str | None = None) -> bool:
        """True if ``op`` (named ``name`` if the caller has it) may be erased when unused."""
        if name is None:
            name = op.name
        if name in _SIDE_EFFECTING:
            return False
        if name == "stablehlo.custom_call":
            attr = op.attributes["has_side_effect"] if "has_side_effect" in op.attributes else None
            return not (attr is not None and ir.BoolAttr(attr).value)
        callee = refined_callee(op, name)
        if callee is not None:
            return self.is_pure_function(callee)
        if name in ("func.return", "stablehlo.return"):
            return True
        if not name.startswith(("stablehlo.", "chlo.")):
            return False
        if name in REGION_FREE:
            return True
        return all(self.is_pure_op(operation(inner)) for region in op.regions
                   for block in region.blocks for inner in block.operations)
