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
from toolkit.passes.refine.constants import KnownConstants, make_constant
from toolkit.passes.refine.traversal import REGION_FREE, block_ops, body_ops, operation, refined_callee
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
        self.refining: list[str] = []
        self.refined_keys: dict[str, tuple] = {}
        self.specializations: dict[tuple, str] = {}
        self.templates: dict[str, ir.Operation] = {}
        self.call_counts: collections.Counter[str] = collections.Counter()
        self.callers: dict[str, set[str]] = collections.defaultdict(set)
        self.reentrant: dict[str, bool] = {}
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
            "func.call": self._refine_call,
            "stablehlo.while": self._refine_while,
            "stablehlo.case": self._refine_branches,
            "stablehlo.if": self._refine_branches,
            "stablehlo.custom_call": self._refine_custom_call,
            "stablehlo.composite": self._refine_composite,
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
            for template in self.templates.values():
                template.erase()
            self.templates.clear()
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
        skip, advance = ir.WalkResult.SKIP, ir.WalkResult.ADVANCE
        for caller, function in self.functions.items():
            body: list[ir.Operation] = []
            entered = False

            def note(op: ir.Operation, name: str, caller: str = caller) -> None:
                nonlocal foreign
                if name == "func.call" or name == "stablehlo.composite":
                    callee = refined_callee(op, name)
                    self.call_counts[callee] += 1
                    self.callers[callee].add(caller)
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

    def _may_be_refined_again(self, name: str) -> bool:
        """True if ``name`` can be reached with a second key, so its pristine body must be kept.

        That is when it has several call sites, or when a caller may be refined
        again: each clone of the caller brings a new call site.
        """
        known = self.reentrant.get(name)
        if known is not None:
            return known
        self.reentrant[name] = False  # a recursive cycle adds nothing (recursion is an error)
        again = self.call_counts[name] > 1 or any(self._may_be_refined_again(c) for c in self.callers[name])
        self.reentrant[name] = again
        return again

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
        self.refining.append(name)
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
            self.refining.pop()

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

    # -- calls -------------------------------------------------------------
    def _call_key(self, op: ir.Operation) -> tuple[dict[int, np.ndarray], tuple, list[ir.Type]]:
        """Dimension arguments (index -> value), the refinement key and the other operand types.

        Dimension arguments are constant 0-d integer operands. StableHLO takes
        the leading ones (tokens skipped); mode=jax takes every one, booleans
        included, so helpers like ``_where(pred, x, y)`` fold too.
        """
        dimension_args: dict[int, np.ndarray] = {}
        for index, value in enumerate(op.operands):
            type_ = value.type
            if not isinstance(type_, ir.RankedTensorType):
                if str(type_) == "!stablehlo.token" or self.jax_mode:
                    continue
                break
            is_scalar_integer = type_.rank == 0 and isinstance(type_.element_type, ir.IntegerType) and (
                self.jax_mode or type_.element_type.width != 1)
            array = self.constant(value) if is_scalar_integer else None
            if array is None:
                if self.jax_mode:
                    continue
                break
            dimension_args[index] = array
        operand_types = [v.type for i, v in enumerate(op.operands) if i not in dimension_args]
        key = (tuple((i, int(a)) for i, a in dimension_args.items()), tuple(str(t) for t in operand_types))
        return dimension_args, key, operand_types

    def _refine_call(self, op: ir.Operation) -> None:
        callee_name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        callee = self.functions.get(callee_name)
        if callee is None or len(callee.regions[0].blocks) == 0:
            return
        dimension_args, key, operand_types = self._call_key(op)
        target_name = self._refine_target(op, callee_name, key, dimension_args, operand_types)
        target = self.functions[target_name]
        self._rewrite_call(op, target, target_name, dimension_args)

    def _refine_composite(self, op: ir.Operation) -> None:
        """A composite is refined like a call of its decomposition (openxla/stablehlo#2779).

        The verifier wants the decomposition's signature to equal the
        composite's operand and result types, so no operand becomes a constant:
        the key is the operand types alone, and the composite is pointed at the
        decomposition specialized for them.
        """
        callee_name = ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value
        callee = self.functions.get(callee_name)
        if callee is None or len(callee.regions[0].blocks) == 0:
            return
        operand_types = [v.type for v in op.operands]
        key = ((), tuple(str(t) for t in operand_types))
        target_name = self._refine_target(op, callee_name, key, {}, operand_types)
        if target_name != callee_name:
            with self.context:
                op.attributes["decomposition"] = ir.FlatSymbolRefAttr.get(target_name)
        function_type = ir.TypeAttr(self.functions[target_name].attributes["function_type"]).value
        for result, result_type in zip(op.results, function_type.results):
            self.set_type(result, result_type)

    def _refine_target(self, op: ir.Operation, callee_name: str, key: tuple,
                       dimension_args: dict[int, np.ndarray], operand_types: list[ir.Type]) -> str:
        """Refine ``callee_name`` for the call site ``op``; the name of the function it should now reference."""
        callee = self.functions[callee_name]
        if callee_name in self.refining:
            callee.location.emit_error(f"Function {callee_name} is being refined recursively")
            raise PassFailure(f"'{op.name}' op incorrect number of operands for callee", op)  # upstream's words
        if self.jax_mode:
            return self._specialize(callee_name, key, dimension_args, operand_types)
        previous = self.refined_keys.get(callee_name)
        if previous is not None and previous != key:
            callee.location.emit_error("'func.func' op refined with incompatible refinement keys")
            if op.name == "stablehlo.composite":
                raise PassFailure(f"'stablehlo.composite' op decomposition @{callee_name} is reached with other "
                                  f"operand types ({', '.join(key[1])}) than before (mode=stablehlo does not "
                                  "specialize functions)", op)
            raise PassFailure("'func.call' op incorrect number of operands for callee", op)
        if previous is None:
            self.refined_keys[callee_name] = key
            self._refine_callee(callee, callee_name, dimension_args, operand_types)
        return callee_name

    def _specialize(self, callee_name: str, key: tuple, dimension_args: dict[int, np.ndarray],
                    operand_types: list[ir.Type]) -> str:
        existing = self.specializations.get((callee_name, key))
        if existing is not None:
            return existing
        callee = self.functions[callee_name]
        if callee_name not in self.refined_keys:
            if self._may_be_refined_again(callee_name):
                # Keep a pristine copy for other keys before refining in place.
                template = callee.clone(ir.InsertionPoint(self.body))
                self.templates[callee_name] = template
            self.refined_keys[callee_name] = key
            target_name, target = callee_name, callee
        else:
            template = self.templates[callee_name]
            target_name = self._unique_name(f"{callee_name}_{len(self.specializations)}")
            target = template.clone(ir.InsertionPoint.after(callee) if hasattr(ir.InsertionPoint, "after")
                                    else ir.InsertionPoint(self.body))
            target = operation(target)
            with self.context:
                target.attributes["sym_name"] = ir.StringAttr.get(target_name)
                target.attributes["sym_visibility"] = ir.StringAttr.get("private")
            self.functions[target_name] = target
            record_statistic("specialized-functions")
        self.specializations[(callee_name, key)] = target_name
        self._refine_callee(target, target_name, dimension_args, operand_types)
        return target_name

    def _unique_name(self, base: str) -> str:
        name, suffix = base, 0
        while name in self.functions:
            suffix += 1
            name = f"{base}_{suffix}"
        return name

    def _refine_callee(self, callee: ir.Operation, name: str, dimension_args: dict[int, np.ndarray],
                       operand_types: list[ir.Type]) -> None:
        block = callee.regions[0].blocks[0] if len(callee.regions[0].blocks) else None
        if block is None:
            return
        if len(list(callee.regions[0].blocks)) != 1:
            raise PassFailure("'func.func' op must have exactly one block", callee)
        arguments = list(block.arguments)
        # Substitute the dimension arguments by constants, then drop them.
        if dimension_args:
            first = operation(block.operations[0])
            with self.context, ir.InsertionPoint(first):
                for index, array in dimension_args.items():
                    arg = arguments[index]
                    value = make_constant(np.asarray(array), arg.type, callee.location)
                    arg.replace_all_uses_with(value)
            for index in sorted(dimension_args, reverse=True):
                block.erase_argument(index)
            if "arg_attrs" in callee.attributes:
                kept = [a for i, a in enumerate(ir.ArrayAttr(callee.attributes["arg_attrs"]))
                        if i not in dimension_args]
                with self.context:
                    callee.attributes["arg_attrs"] = ir.ArrayAttr.get(kept)
        with self.context:
            for arg, operand_type in zip(block.arguments, operand_types):
                self.set_type(arg, operand_type)
            self._refine_function(callee, name)

    def _rewrite_call(self, op: ir.Operation, target: ir.Operation, target_name: str,
                      dimension_args: dict[int, np.ndarray]) -> None:
        function_type = ir.TypeAttr(target.attributes["function_type"]).value
        operands = [v for i, v in enumerate(op.operands) if i not in dimension_args]
        results = list(function_type.results)
        old_results = list(op.results)
        call = op
        if dimension_args or target_name != ir.FlatSymbolRefAttr(op.attributes["callee"]).value \
                or [r.type for r in old_results] != results:
            attributes = {name: op.attributes[name] for name in op.attributes}
            with self.context:
                attributes["callee"] = ir.FlatSymbolRefAttr.get(target_name)
                if dimension_args and "arg_attrs" in attributes:
                    attributes["arg_attrs"] = ir.ArrayAttr.get(
                        [a for i, a in enumerate(ir.ArrayAttr(attributes["arg_attrs"])) if i not in dimension_args])
                call = ir.Operation.create("func.call", results=results, operands=operands,
                                           attributes=attributes, loc=op.location, ip=ir.InsertionPoint(op))
            for old, new in zip(old_results, call.results):
                old.replace_all_uses_with(new)
            op.erase()
        # Constants returned by the callee are constants here too.
        terminator = operation(target.regions[0].blocks[0].operations[-1])
        for index, returned in enumerate(terminator.operands):
            array = self.constant(returned)
            result = call.results[index]
            if array is None or not isinstance(result.type, ir.RankedTensorType) \
                    or not result.type.has_static_shape or len(list(result.uses)) == 0:
                continue
            with self.context, ir.InsertionPoint(call):
                value = make_constant(array, result.type, call.location)
            result.replace_all_uses_with(value)

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
