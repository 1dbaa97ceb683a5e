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

Example::

    run_pipeline(module, "builtin.module(toolkit-bind-shapes{types=tensor<8x4xf32>}, "
                         "toolkit-refine-shapes)")
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import re
from typing import ClassVar, Literal

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.pass_base import ModulePass, PassFailure, record_statistic
from toolkit.passes.refine import diagnostics, folding, rules, types
from toolkit.passes.refine.custom_calls import OPERAND_WRAPPER, SHAPE_ASSERTION, refine_custom_call
from toolkit.passes.refine.dead_code import DeadCodeErasure
from toolkit.passes.refine.dynamic_ops import TO_STATIC
from toolkit.passes.refine.rules import ShapeError, shape_of
from toolkit.passes.refine.constants import KnownConstants
from toolkit.passes.refine.traversal import REGION_FREE, block_ops, body_ops, operation, refined_callee
from toolkit.passes.refine.specialization import CalleeSpecialization
from toolkit.passes.refine.static_check import StaticCheck
from toolkit.passes.refine.types import is_static_type, refine_type, with_shape
from toolkit.passes.registry import register_pass

_SUPPORTED_USER_DIALECTS = ("stablehlo", "chlo", "func")
#: Ops that may use a retyped value without a check (the pre-scan looks for any other op).
_SUPPORTED_PREFIXES = ("stablehlo.", "chlo.", "func.", "builtin.module")
#: Ops the sweep leaves alone.
_SKIPPED = frozenset({"func.return", "stablehlo.return", "stablehlo.constant"})
_PLACEHOLDER = re.compile(r"\{(\d+)\}")


class _Refiner:
    """One run of the pass over one module."""

    def __init__(self, config: "RefineShapesPass", module_op: ir.Operation):
        self.config = config
        self.jax_mode = config.mode == "jax"
        self.module_op = module_op
        self.context = module_op.context
        self.body = module_op.regions[0].blocks[0]
        self.functions: dict[str, ir.Operation] = {}
        #: The sweep's own statistics, added to the pass's at the end (a context variable per event costs).
        self.statistics: collections.Counter[str] = collections.Counter()
        self.known = KnownConstants(self.statistics)
        self.constant = self.known.constant
        self._try_fold = self.known.try_fold
        self._fold_dimension_size = self.known.fold_dimension_size
        for op in self.body.operations:
            op = operation(op)
            if op.name == "func.func":
                self.functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
        self.specialization = CalleeSpecialization(self.jax_mode, self.context, self.functions, self.body,
                                                   self.known, self.set_type, self._refine_function)
        self.touched_functions: set[str] = set()
        self.dead_code = DeadCodeErasure(self.known, self.functions, self.touched_functions)
        self.static_check = StaticCheck(self.functions, self.constant)
        #: True once the pre-scan saw an op outside stablehlo/chlo/func: only then are users checked
        #: before a value is retyped (the check reads every use, ~10 µs per value).
        self.foreign_ops = True
        #: Functions swept by ``_refine_function`` (their bodies were checked while erasing dead ops).
        self.swept: set[str] = set()
        #: Function name -> the ops of its body as the pre-scan found them, until the sweep takes them.
        self.bodies: dict[str, list[ir.Operation]] = {}
        #: Op name -> the method that refines it; other ops take the generic path in ``_refine_op``.
        self.dispatch = {
            "func.call": self.specialization.refine_call,
            "stablehlo.while": self._refine_while,
            "stablehlo.case": self._refine_branches,
            "stablehlo.if": self._refine_branches,
            "stablehlo.custom_call": self._refine_custom_call,
            "stablehlo.composite": self.specialization.refine_composite,
            "builtin.unrealized_conversion_cast": self._refine_cast,
        }

    # -- entry -------------------------------------------------------------
    def run(self) -> None:
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
        if self.jax_mode and self.config.validate_static_shapes:
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
        for op in self.body.operations:
            if op.operation.name != "func.func":
                foreign = True
        self.foreign_ops = foreign
        if self.jax_mode and not foreign:
            self.dispatch["stablehlo.dynamic_broadcast_in_dim"] = self._refine_dynamic_broadcast

    def function(self, name: str) -> ir.Operation | None:
        """The module's ``func.func`` called ``name``, if any.

        A rewrite asks for a function to copy its body (a reducer), so the
        function is erased at the end if it is private and no longer referenced.
        """
        if name in self.functions:
            self.touched_functions.add(name)
        return self.functions.get(name)

    # -- functions ---------------------------------------------------------
    def _refine_function(self, function: ir.Operation, name: str) -> None:
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
            self._refine_ops(body_ops(function) if ops is None else ops)
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

    # -- blocks and ops ----------------------------------------------------
    def _refine_block(self, block: ir.Block) -> None:
        self._refine_ops(block_ops(block))

    def _refine_ops(self, ops: list[ir.Operation]) -> None:
        """Refine ``ops`` (a block's, first to last) one by one."""
        refine_op = self._refine_op
        for op in ops:
            refine_op(op)

    def _refine_op(self, op: ir.Operation) -> None:
        """Refine one op: special forms by name (``self.dispatch``), else infer, fold, make static."""
        name = op.name
        if name in _SKIPPED:
            return
        special = self.dispatch.get(name)
        if special is not None:
            special(op)
            return
        self._refine_generic(op, name)

    def _refine_generic(self, op: ir.Operation, name: str) -> None:
        """Infer the results from the operands, then fold the op or make it static."""
        if name not in REGION_FREE and len(op.regions):
            for region in op.regions:
                for block in region.blocks:
                    self._refine_block(block)
        results = op.results
        count = len(results)
        if count == 1:
            # The one-result case is nearly every op: its result and type are read once and passed on.
            result = results[0]
            result_type = result.type
            if not (result_type.has_static_shape if isinstance(result_type, ir.RankedTensorType)
                    else is_static_type(result_type)):
                result_type = self._infer_and_refine_result(op, name, result, result_type)
            if name == "stablehlo.get_dimension_size":
                if self._fold_dimension_size(op, result, result_type):
                    return
            elif name in folding.FOLDABLE:
                if self._try_fold(op, result, result_type, name):
                    return
        elif count and not all(is_static_type(r.type) for r in results):
            self._infer_and_refine(op)
        if self.jax_mode and name in TO_STATIC:
            TO_STATIC[name](self, op)

    def _infer_shapes(self, op: ir.Operation, name: str) -> list | None:
        """The rules' (or StableHLO's C++) result shapes for ``op``; None if nothing is known."""
        types = [v.type for v in op.operands]
        try:
            shapes = rules.infer_shapes(op, types, self.constant, name)
        except ShapeError as error:
            raise PassFailure(str(error) + diagnostics.context(op, self.constant), op) from None
        if shapes is None:
            inferred = rules.infer_with_cxx(op) if name.startswith(("stablehlo.", "chlo.")) else None
            if inferred is None:
                return None
            shapes = [shape_of(t) for t in inferred]
        return shapes

    def _infer_and_refine(self, op: ir.Operation) -> None:
        """Refine ``op``'s results from its operands."""
        shapes = self._infer_shapes(op, op.name)
        if shapes is None:
            return
        for result, shape in zip(op.results, shapes):
            if shape is not None:
                self.refine_value(result, shape, op)

    def _infer_and_refine_result(self, op: ir.Operation, name: str, result: ir.Value, result_type: ir.Type
                                 ) -> ir.Type:
        """``_infer_and_refine`` for a one-result op whose ``result`` has ``result_type``: its type after."""
        shapes = self._infer_shapes(op, name)
        shape = None if shapes is None else shapes[0]
        if shape is None:
            return result_type
        try:
            new_type = with_shape(result_type, shape)
        except ShapeError as error:
            raise PassFailure(f"'{name}' op {error}" + diagnostics.context(op, self.constant), op) from None
        if new_type is None or not self._users_accept_new_types(result):
            return result_type
        result.set_type(new_type)
        self.statistics["refined-values"] += 1
        return new_type

    def refine_value(self, value: ir.Value, shape: list[int], op: ir.Operation) -> bool:
        try:
            new_type = with_shape(value.type, shape)
        except ShapeError as error:
            raise PassFailure(f"'{op.name}' op {error}" + diagnostics.context(op, self.constant), op) from None
        if new_type is None or not self._users_accept_new_types(value):
            return False
        value.set_type(new_type)
        self.statistics["refined-values"] += 1
        return True

    def set_type(self, value: ir.Value, new_type: ir.Type) -> bool:
        refined = refine_type(value.type, new_type)
        if refined is None or not self._users_accept_new_types(value):
            return False
        value.set_type(refined)
        self.statistics["refined-values"] += 1
        return True

    def _users_accept_new_types(self, value: ir.Value) -> bool:
        if not self.foreign_ops:
            return True
        for use in value.uses:
            owner = operation(use.owner)
            if owner.name.partition(".")[0] not in _SUPPORTED_USER_DIALECTS:
                return False
        return True

    def _refine_dynamic_broadcast(self, op: ir.Operation) -> None:
        """``dynamic_broadcast_in_dim`` in ``mode=jax`` without foreign users: straight to ``broadcast_in_dim``.

        What the generic path does (the result shape from the constant shape
        operand, then the static form), without retyping the op that is
        replaced next: one read of each type, one op created.
        """
        result = op.results[0]
        result_type = result.type
        if not isinstance(result_type, ir.RankedTensorType):
            self._refine_generic(op, "stablehlo.dynamic_broadcast_in_dim")
            return
        source, output_dimensions = op.operands
        final = result_type
        if not result_type.has_static_shape:
            array = self.constant(output_dimensions)
            if array is None:
                return  # nothing known; the static check reports it
            try:
                refined = with_shape(result_type, array.reshape(-1).tolist())
            except ShapeError as error:
                raise PassFailure(f"'{op.name}' op {error}" + diagnostics.context(op, self.constant), op) from None
            if refined is None:
                return
            self.statistics["refined-values"] += 1
            if not refined.has_static_shape:
                result.set_type(refined)
                return
            final = refined
        new = ir.Operation.create("stablehlo.broadcast_in_dim", results=[final], operands=[source],
                                  attributes={"broadcast_dimensions": op.attributes["broadcast_dimensions"]},
                                  loc=op.location, ip=ir.InsertionPoint(op))
        result.replace_all_uses_with(new.result)
        op.erase()
        self.statistics["static-broadcast_in_dim"] += 1

    # -- regions -----------------------------------------------------------
    def _refine_while(self, op: ir.Operation) -> None:
        operand_types = [v.type for v in op.operands]
        for region in op.regions:
            block = region.blocks[0]
            for arg, operand_type in zip(block.arguments, operand_types):
                self.set_type(arg, operand_type)
        for region in op.regions:
            self._refine_block(region.blocks[0])
        for result, operand_type in zip(op.results, operand_types):
            self.set_type(result, operand_type)

    def _refine_branches(self, op: ir.Operation) -> None:
        yielded: list[list[ir.Type]] = []
        for region in op.regions:
            block = region.blocks[0]
            self._refine_block(block)
            terminator = operation(block.operations[-1])
            yielded.append([v.type for v in terminator.operands])
        for index, result in enumerate(op.results):
            shapes = [shape_of(types[index]) for types in yielded if index < len(types)]
            if not shapes or any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:
                continue
            merged = [s0 if all(s[i] == s0 for s in shapes) else -1 for i, s0 in enumerate(shapes[0])]
            self.refine_value(result, merged, op)

    # -- custom calls ------------------------------------------------------
    def _refine_custom_call(self, op: ir.Operation) -> None:
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if target == SHAPE_ASSERTION:
            self._check_assertion(op)
            return
        if target == OPERAND_WRAPPER:
            source = op.operands[0]
            wanted = self.constant(op.operands[1])
            have = shape_of(source.type)
            if wanted is not None and have is not None and [int(x) for x in wanted.reshape(-1)] == have:
                op.results[0].replace_all_uses_with(source)
                op.erase()
                record_statistic("erased-operand-wrappers")
            return
        refine_custom_call(self, op)

    def _check_assertion(self, op: ir.Operation) -> None:
        if not self.config.enable_assertions:
            op.erase()
            record_statistic("erased-shape-assertions")
            return
        predicate = self.constant(op.operands[0])
        if predicate is None:
            return  # reported by the static check, if any
        if bool(np.all(predicate)):
            op.erase()
            record_statistic("checked-shape-assertions")
            return
        message = (ir.StringAttr(op.attributes["error_message"]).value
                   if "error_message" in op.attributes else "shape assertion failed")
        values = [self.constant(v) for v in list(op.operands)[1:]]

        def fill(match: re.Match) -> str:
            index = int(match.group(1))
            if index < len(values) and values[index] is not None:
                array = values[index]
                return str(array.item()) if array.size == 1 else str(array.tolist())
            return match.group(0)

        raise PassFailure(_PLACEHOLDER.sub(fill, message), op)

    def _refine_cast(self, op: ir.Operation) -> None:
        if len(op.operands) != 1 or len(op.results) != 1:
            return
        source, result = op.operands[0], op.results[0]
        if not isinstance(source.type, ir.RankedTensorType) or not isinstance(result.type, ir.ShapedType):
            return
        if source.type.element_type != result.type.element_type:
            return
        if not self._users_accept_new_types(result):
            return
        result.replace_all_uses_with(source)
        op.erase()

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
                _Refiner(self, module_op).run()
        finally:
            if collecting:
                gc.enable()
            rules.SHAPE_CACHE.clear()
            types.WITH_SHAPE_CACHE.clear()
