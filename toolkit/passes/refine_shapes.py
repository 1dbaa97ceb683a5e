"""``toolkit-refine-shapes``: make a shape-polymorphic StableHLO module static.

IR contract
-----------
Before: a module whose entry function (``@main``, or its only function) has
static argument types — typically after :mod:`toolkit.passes.bind_shapes` —
and whose body computes with dynamic shapes (``tensor<?x4xf32>``), dimension
arithmetic on ``tensor<i32>``/``tensor<i64>`` values, dynamic ops
(``dynamic_broadcast_in_dim``, ``dynamic_reshape``, ``dynamic_iota``,
``real_dynamic_slice``, ``dynamic_pad``, ``dynamic_gather``, ``dynamic_conv``),
``func.call``s with dimension arguments (what ``jax.export`` writes:
``@main`` calling ``@_wrapped_jax_export_main`` with the dimension variables
first, marked ``jax.global_constant``), ``stablehlo.composite``s with dynamic
decompositions, custom calls with shape operands (``indices_of_shape_operands``),
JAX's ``stablehlo.dynamic_*`` custom calls and ``custom_call @shape_assertion``.

After (``mode=jax``, the default): every value has a static type; dimension
arithmetic is folded to constants; dynamic ops and JAX's dynamic custom calls
are replaced by their static forms (:mod:`.refine.dynamic_ops`,
:mod:`.refine.custom_calls`) and custom calls lose their shape operands;
each callee (and composite decomposition) is specialized per distinct
(constant dimension arguments, argument types) key — a clone per key, the
dimension arguments substituted and removed from its signature; shape
assertions are checked and erased (a
false one fails the pass with its own ``error_message``, ``{N}`` placeholders
filled with the values of its operands); function types and ``func.return``s
match. With ``validate-static-shapes=true`` any remaining dynamic shape fails
the pass, naming the op where refinement stopped, its location and the values
of its operands (:mod:`.refine.diagnostics`).

``mode=stablehlo`` mirrors StableHLO's C++ ``stablehlo-refine-shapes``: dynamic
ops keep their names (only their result types are refined), a callee reached
with two different keys is an error instead of being cloned, and no static
check is made. The upstream lit tests run in this mode.

Algorithm: one forward sweep over each function body in block order (SSA
order), recursing into regions and into callees at their call sites; each op
is visited once, so the cost is linear in module size. Result types change
in place with ``Value.set_type``; only values whose every user is a
StableHLO/CHLO/func op are retyped (others could become invalid).

The parts, in :mod:`toolkit.passes.refine`, each with its own small state:
:mod:`.refine.retyping` (each op's result types; the special forms),
:mod:`.refine.constants` (known constants, folding),
:mod:`.refine.specialization` (callees per key), :mod:`.refine.dead_code`
(dead ops, unused functions) and :mod:`.refine.static_check`. This module
holds the pass, its options, the pre-scan and the sweep of one function,
which ties the parts together.

Example::

    run_pipeline(module, "builtin.module(toolkit-bind-shapes{types=tensor<8x4xf32>}, "
                         "toolkit-refine-shapes)")
"""

from __future__ import annotations

import collections
import dataclasses
import gc
from typing import ClassVar, Literal

from jaxlib.mlir import ir

from toolkit.passes.pass_base import ModulePass, PassFailure, record_statistic
from toolkit.passes.refine import rules, types
from toolkit.passes.refine.constants import KnownConstants
from toolkit.passes.refine.dead_code import DeadCodeErasure
from toolkit.passes.refine.retyping import OpRetyping
from toolkit.passes.refine.specialization import CalleeSpecialization
from toolkit.passes.refine.static_check import StaticCheck
from toolkit.passes.refine.traversal import REGION_FREE, body_ops, operation, refined_callee
from toolkit.passes.refine.types import is_static_type
from toolkit.passes.registry import register_pass

#: Ops that may use a retyped value without a check (the pre-scan looks for any other op).
_SUPPORTED_PREFIXES = ("stablehlo.", "chlo.", "func.", "builtin.module")


class _RefinementRun:
    """One run of the pass over one module: the parts, wired together, and the sweep of each function."""

    __slots__ = ("options", "jax_mode", "module_op", "module_body", "functions", "touched_functions", "swept",
                 "bodies", "statistics", "constants", "retyping", "specialization", "dead_code", "static_check")

    def __init__(self, options: RefineShapesPass, module_op: ir.Operation):
        self.options = options
        self.jax_mode = options.mode == "jax"
        self.module_op = module_op
        self.module_body = module_op.regions[0].blocks[0]
        #: Function name -> its ``func.func`` (one table for all parts: clones are added, unused ones erased).
        self.functions: dict[str, ir.Operation] = {}
        for op in self.module_body.operations:
            op = operation(op)
            if op.name == "func.func":
                self.functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
        #: Functions the pass refined or a rewrite read: only these may be erased when unreferenced.
        self.touched_functions: set[str] = set()
        #: Functions swept by ``_refine_function`` (their bodies were checked while erasing dead ops).
        self.swept: set[str] = set()
        #: Function name -> the ops of its body as the pre-scan found them, until the sweep takes them.
        self.bodies: dict[str, list[ir.Operation]] = {}
        #: The sweep's own statistics, added to the pass's at the end (a context variable per event costs).
        self.statistics: collections.Counter[str] = collections.Counter()
        self.constants = KnownConstants(self.statistics)
        self.retyping = OpRetyping(self.jax_mode, options.enable_assertions, self.constants, self.functions,
                                   self.touched_functions, self.statistics)
        self.specialization = CalleeSpecialization(self.jax_mode, module_op.context, self.functions,
                                                   self.module_body, self.constants, self.retyping.set_type,
                                                   self._refine_function)
        self.retyping.special_forms["func.call"] = self.specialization.refine_call
        self.retyping.special_forms["stablehlo.composite"] = self.specialization.refine_composite
        self.dead_code = DeadCodeErasure(self.constants, self.functions, self.touched_functions)
        self.static_check = StaticCheck(self.functions, self.constants.constant)

    def run(self) -> None:
        """Refine the module from its entry function; the sweep's statistics go to the pass's."""
        try:
            self._run()
        finally:
            for key, count in self.statistics.items():
                record_statistic(key, count)

    def _run(self) -> None:
        if not self.functions:
            return
        entry = self._entry_function()
        self._scan()
        name = ir.StringAttr(entry.attributes["sym_name"]).value
        self._refine_function(entry, name)
        if self.jax_mode:
            self.specialization.erase_templates()
            self.dead_code.erase_unused_functions(self.module_op, self.swept)
        if self.jax_mode and self.options.validate_static_shapes:
            self.static_check.run(self.module_op, self.swept)

    def _entry_function(self) -> ir.Operation:
        if "main" in self.functions:
            return self.functions["main"]
        if len(self.functions) == 1:
            return next(iter(self.functions.values()))
        raise PassFailure("must have no more than one function or a `main` function to clearly identify "
                          "which function will be refined", self.module_op)

    def _scan(self) -> None:
        """The one walk before the sweep: note the ops of each function's body (the sweep starts from
        them: a Python handle per op is the largest cost of reading the IR, so each is made once
        here), count the call sites (calls and composites) of each function and note who makes them,
        and note whether any op is outside stablehlo/chlo/func."""
        foreign = False
        call_counts, callers = self.specialization.call_counts, self.specialization.callers
        skip, advance = ir.WalkResult.SKIP, ir.WalkResult.ADVANCE
        for caller, function in self.functions.items():
            body: list[ir.Operation] = []
            entered = False

            def note(op: ir.Operation, name: str, caller: str = caller) -> None:
                nonlocal foreign
                if name == "func.call" or name == "stablehlo.composite":
                    callee = refined_callee(op, name)
                    assert callee is not None  # a call or composite names its callee
                    call_counts[callee] += 1
                    callers[callee].add(caller)
                elif not name.startswith(_SUPPORTED_PREFIXES):
                    foreign = True

            def visit_nested(op: ir.Operation, note=note) -> ir.WalkResult:
                note(op, op.name)
                return advance

            def visit(op: ir.Operation, body=body, note=note, visit_nested=visit_nested) -> ir.WalkResult:
                nonlocal entered
                if not entered:  # the function itself comes first
                    entered = True
                    return advance
                body.append(op)
                name = op.name
                note(op, name)
                if name not in REGION_FREE and len(op.regions):
                    for region in op.regions:
                        for block in region.blocks:
                            for inner in block.operations:
                                inner.operation.walk(visit_nested)
                return skip  # nested ops are not the body's

            function.walk(visit, ir.WalkOrder.PRE_ORDER)
            self.bodies[caller] = body
        for op in self.module_body.operations:
            if op.operation.name != "func.func":
                foreign = True
        self.retyping.note_foreign_ops(foreign)

    def _refine_function(self, function: ir.Operation, name: str) -> None:
        """Sweep one function (the entry, or a callee from its call site): retype its ops, erase the
        dead ones, make its type match; note whether it may fail the static check."""
        region = function.regions[0]
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise PassFailure("'func.func' op must have exactly one block", function)
        refining = self.specialization.refining
        refining.append(name)
        self.touched_functions.add(name)
        self.swept.add(name)
        try:
            ops = self.bodies.pop(name, None)  # None for the clones made since the pre-scan
            self.retyping.refine_ops(body_ops(function) if ops is None else ops)
            if self.dead_code.erase_dead_ops(body_ops(function)):
                self.static_check.maybe_dynamic.add(name)
            if self._update_function_type(function):
                self.static_check.maybe_dynamic.add(name)
        finally:
            refining.pop()

    def _update_function_type(self, function: ir.Operation) -> bool:
        """Make the function type match the arguments and the return; True if it is not static."""
        block = function.regions[0].blocks[0]
        inputs = [arg.type for arg in block.arguments]
        terminator = operation(block.operations[-1])
        old = ir.TypeAttr(function.attributes["function_type"]).value
        results = [v.type for v in terminator.operands] if terminator.name == "func.return" else list(old.results)
        new = ir.FunctionType.get(inputs, results)
        if new != old:
            function.attributes["function_type"] = ir.TypeAttr.get(new)
        return not all(is_static_type(t) for t in inputs) or not all(is_static_type(t) for t in results)


@register_pass
@dataclasses.dataclass(frozen=True)
class RefineShapesPass(ModulePass):
    """Propagate static shapes from ``@main``'s arguments through the module (see module docstring)."""

    name: ClassVar[str] = "toolkit-refine-shapes"
    description: ClassVar[str] = (
        "Make a shape-polymorphic module static: refine types, fold dimension arithmetic, "
        "specialize callees, check shape assertions.")

    enable_assertions: bool = dataclasses.field(
        default=True, metadata={"help": "check custom_call @shape_assertion (false: erase them unchecked)"})
    validate_static_shapes: bool = dataclasses.field(
        default=True, metadata={"help": "fail if a dynamic shape remains (mode=jax only)"})
    mode: Literal["jax", "stablehlo"] = dataclasses.field(
        default="jax", metadata={"help": "jax: static ops, callee cloning, like jax.export's refinement; "
                                         "stablehlo: like the C++ stablehlo-refine-shapes pass"})

    def apply(self, op: ir.Operation) -> None:
        module_op = operation(op)
        if module_op.name != "builtin.module":
            raise PassFailure(f"{self.name} runs on a builtin.module, not on {module_op.name}", module_op)
        # The sweep makes a few Python objects per op and frees them at once: cyclic garbage
        # collection would rescan every live op handle many times (~15% of the run), for nothing.
        collecting = gc.isenabled()
        gc.disable()
        try:
            with module_op.context, ir.Location.unknown():
                _RefinementRun(self, module_op).run()
        finally:
            if collecting:
                gc.enable()
            rules.SHAPE_CACHE.clear()
            types.WITH_SHAPE_CACHE.clear()
