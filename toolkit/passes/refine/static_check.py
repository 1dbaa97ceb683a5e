"""The static check of ``toolkit-refine-shapes`` (``validate-static-shapes=true``, ``mode=jax``).

After the sweep nothing may be left dynamic: no dynamic result, block argument
or function type, no undecided ``@shape_assertion``, no custom call keeping
shape operands. The check fails the pass naming the op where refinement
stopped — a dynamic result computed from static operands (a shape operand
that did not fold, an op without a rule) — before the calls, composites and
later ops that only pass the dynamism on, with its operands' values or
origins (:mod:`.diagnostics`).

Reading the whole module again costs as much as a quarter of the sweep, so the
driver's dead-op sweeps already say which functions *may* fail
(:func:`may_fail_static_check` for custom calls, a dynamic type for the rest;
:attr:`StaticCheck.maybe_dynamic`): a module that refines cleanly is walked
only where nothing was swept.

Example::

    check = StaticCheck(functions, constants.constant)
    check.maybe_dynamic.add("main")        # the sweep saw a dynamic type in @main
    check.run(module_op, swept={"main"})   # raises PassFailure naming the first dynamic op
"""

from __future__ import annotations

import dataclasses
from typing import NoReturn

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.pass_base import PassFailure
from toolkit.passes.refine import diagnostics
from toolkit.passes.refine.custom_calls import SHAPE_ASSERTION, SHAPE_OPERANDS, target_of
from toolkit.passes.refine.rules import ConstantLookup
from toolkit.passes.refine.traversal import refined_callee
from toolkit.passes.refine.types import is_static_type

_PREFIX = "module has dynamic shapes after refinement (pass validate-static-shapes=false to allow them); "


def may_fail_static_check(custom_call: ir.Operation) -> bool:
    """A custom call the static check looks at: a shape assertion left, or shape operands kept."""
    return SHAPE_OPERANDS in custom_call.attributes or target_of(custom_call) == SHAPE_ASSERTION


@dataclasses.dataclass(slots=True)
class StaticCheck:
    """What the static check of one run knows before it walks anything."""

    #: The module's functions by name (the driver's table: specializations added, unused ones erased).
    functions: dict[str, ir.Operation]
    #: The run's constant lookup, to show operand values in the failure message.
    constant: ConstantLookup
    #: Functions whose refined body may fail the check (their dead-op sweep or function type said so).
    maybe_dynamic: set[str] = dataclasses.field(default_factory=set)

    def run(self, module_op: ir.Operation, swept: set[str]) -> None:
        """Fail if anything is left dynamic; ``swept`` are the functions whose bodies the sweep checked."""
        # Swept functions were checked while their dead ops were erased; walk the rest.
        unswept = [f for n, f in self.functions.items() if n not in swept]
        if self.maybe_dynamic.intersection(self.functions) or any(find_dynamic(f) for f in unswept):
            found = find_dynamic(module_op)
            if found:
                report_dynamic(found, self.constant)


def find_dynamic(root: ir.Operation) -> dict[str, ir.Operation]:
    """What the static check would report under ``root``: kind -> first op of that kind.

    Kinds: ``origin`` (a dynamic result from static operands), ``undecided`` (a shape
    assertion left), ``shape_operands`` (a custom call keeping them), ``passing_on``
    (a dynamic result or function type from dynamic operands or a callee).
    """
    found: dict[str, ir.Operation] = {}

    def note(kind: str, op: ir.Operation) -> None:
        found.setdefault(kind, op)

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.func":
            function_type = ir.TypeAttr(op.attributes["function_type"]).value
            if not all(is_static_type(t) for t in list(function_type.inputs) + list(function_type.results)):
                note("passing_on", op)
            return ir.WalkResult.ADVANCE
        if op.name == "stablehlo.custom_call":
            if target_of(op) == SHAPE_ASSERTION:
                note("undecided", op)
            elif SHAPE_OPERANDS in op.attributes and \
                    all(isinstance(r.type, ir.RankedTensorType) for r in op.results):
                note("shape_operands", op)  # tuple results keep them, as upstream
        if not all(is_static_type(r.type) for r in op.results):
            origin = refined_callee(op) is None and all(is_static_type(v.type) for v in op.operands)
            note("origin" if origin else "passing_on", op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def report_dynamic(found: dict[str, ir.Operation], constant: ConstantLookup) -> NoReturn:
    """Fail the pass for what ``find_dynamic`` found, naming the op where the dynamism starts."""
    if "origin" in found:
        op = found["origin"]
        results = ", ".join(str(r.type) for r in op.results)
        operands = diagnostics.describe_operands(op, constant) or "none"
        raise PassFailure(f"{_PREFIX}first one: {diagnostics.describe_op(op)} could not be refined: results "
                          f"{results}; operands {operands}", op)
    if "undecided" in found:
        op = found["undecided"]
        raise PassFailure("shape assertion could not be decided: its predicate did not fold to a constant "
                          f"(are all argument shapes of @main static?): {diagnostics.describe_op(op)} with "
                          f"{diagnostics.describe_operands(op, constant, [0])}", op)
    if "shape_operands" in found:
        op = found["shape_operands"]
        indices = [int(i) for i in np.array(op.attributes[SHAPE_OPERANDS]).reshape(-1)]
        results = ", ".join(str(r.type) for r in op.results)
        raise PassFailure(f"{diagnostics.describe_op(op)} keeps its shape operands: they must be constants "
                          f"equal to its static results ({results}) to be dropped, got "
                          f"{diagnostics.describe_operands(op, constant, indices)}", op)
    op = found["passing_on"]
    if op.name == "func.func":
        text = (f"@{ir.StringAttr(op.attributes['sym_name']).value}: "
                f"{ir.TypeAttr(op.attributes['function_type']).value}")
    else:
        text = f"{diagnostics.describe_op(op)}: {op.get_asm(large_elements_limit=4).strip().splitlines()[0]}"
    raise PassFailure(f"{_PREFIX}first one: {text}", op)
