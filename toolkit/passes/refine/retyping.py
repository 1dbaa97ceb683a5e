"""Per-op retyping under shape refinement: each op's result types from its operands.

The driver hands each function's body to :meth:`OpRetyping.refine_ops`, first
op to last (SSA order, so operands are refined before their users). Most ops
take the generic path: their result shapes come from :mod:`.rules` (or
StableHLO's C++ type inference), then the op folds to a constant
(:class:`.constants.KnownConstants`) or, in ``mode=jax``, becomes its static
form (:mod:`.dynamic_ops`). Special forms have their own method
(:attr:`OpRetyping.special_forms`): ``while`` (carried types), ``case``/``if``
(what the branches agree on), custom calls (operand wrappers, shape assertions,
then :mod:`.custom_calls`), casts, and the calls and composites the driver
routes to :mod:`.specialization`.

Result types change in place with ``Value.set_type``; only when the module has
an op outside StableHLO/CHLO/func (the driver's pre-scan) is every user of a
value checked first (another dialect's op could become invalid).

:class:`OpRetyping` is the :class:`.interface.Refinement` the rewrites see.

Example::

    retyping = OpRetyping(jax_mode=True, enable_assertions=True, constants=constants,
                          functions=functions, touched_functions=set(), statistics=statistics)
    retyping.note_foreign_ops(False)
    retyping.refine_ops(body_ops(function))
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections.abc import Callable
from typing import cast

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.pass_base import PassFailure, record_statistic
from toolkit.passes.refine import diagnostics, folding, rules
from toolkit.passes.refine.constants import KnownConstants
from toolkit.passes.refine.custom_calls import OPERAND_WRAPPER, SHAPE_ASSERTION, refine_custom_call
from toolkit.passes.refine.dynamic_ops import TO_STATIC
from toolkit.passes.refine.rules import ConstantLookup, ShapeError, shape_of
from toolkit.passes.refine.traversal import REGION_FREE, block_ops, operation
from toolkit.passes.refine.types import is_static_type, refine_type, with_shape

#: Dialects whose ops accept a retyped operand without a check.
_SUPPORTED_USER_DIALECTS = ("stablehlo", "chlo", "func")
#: Ops the sweep leaves alone.
_SKIPPED = frozenset({"func.return", "stablehlo.return", "stablehlo.constant"})
#: ``{N}`` in a shape assertion's message: the value of its operand N.
_PLACEHOLDER = re.compile(r"\{(\d+)\}")


@dataclasses.dataclass(slots=True)
class OpRetyping:
    """What retyping the ops of one run needs: the options, the constants, the function table."""

    #: True for ``mode=jax`` (dynamic forms become static ops), False for ``mode=stablehlo``.
    jax_mode: bool
    #: Check ``@shape_assertion``s (False: erase them unchecked).
    enable_assertions: bool
    #: The run's constants: operands read through them, ops folded into them.
    constants: KnownConstants
    #: The module's functions by name (the driver's table), for the rewrites that copy a body.
    functions: dict[str, ir.Operation]
    #: Functions the pass refined or a rewrite read (only these may be erased when unreferenced).
    touched_functions: set[str]
    #: The run's statistics (``refined-values``, ``static-broadcast_in_dim``).
    statistics: collections.Counter[str]
    #: False once the pre-scan found every op inside stablehlo/chlo/func: only while it is True are
    #: users checked before a value is retyped (the check reads every use, ~10 µs per value).
    foreign_ops: bool = True
    #: Op name -> the method that refines it; other ops take the generic path in ``refine_op``.
    special_forms: dict[str, Callable[[ir.Operation], None]] = dataclasses.field(init=False)
    #: The constants' lookup, bound once (rules and rewrites call it per operand).
    constant: ConstantLookup = dataclasses.field(init=False)
    _try_fold: Callable[[ir.Operation, ir.Value, ir.Type, str], bool] = dataclasses.field(init=False)
    _fold_dimension_size: Callable[[ir.Operation, ir.Value, ir.Type], bool] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.constant = self.constants.constant
        # Bound once: the generic path asks for every op.
        self._try_fold = self.constants.try_fold
        self._fold_dimension_size = self.constants.fold_dimension_size
        self.special_forms = {
            "stablehlo.while": self._refine_while,
            "stablehlo.case": self._refine_branches,
            "stablehlo.if": self._refine_branches,
            "stablehlo.custom_call": self._refine_custom_call,
            "builtin.unrealized_conversion_cast": self._refine_cast,
        }

    def note_foreign_ops(self, foreign: bool) -> None:
        """Record whether the module has ops outside stablehlo/chlo/func (the pre-scan's finding).

        Without any, ``dynamic_broadcast_in_dim`` takes its shortcut in ``mode=jax``.
        """
        self.foreign_ops = foreign
        if self.jax_mode and not foreign:
            self.special_forms["stablehlo.dynamic_broadcast_in_dim"] = self._refine_dynamic_broadcast

    # -- what the rewrites ask for ------------------------------------------
    def function(self, name: str) -> ir.Operation | None:
        """The module's ``func.func`` called ``name``, if any.

        A rewrite asks for a function to copy its body (a reducer), so the
        function is erased at the end if it is private and no longer referenced.
        """
        if name in self.functions:
            self.touched_functions.add(name)
        return self.functions.get(name)

    # -- ops -----------------------------------------------------------------
    def refine_block(self, block: ir.Block) -> None:
        """Refine the ops of ``block`` (a region's), first to last."""
        self.refine_ops(block_ops(block))

    def refine_ops(self, ops: list[ir.Operation]) -> None:
        """Refine ``ops`` (a block's, first to last) one by one."""
        refine_op = self.refine_op
        for op in ops:
            refine_op(op)

    def refine_op(self, op: ir.Operation) -> None:
        """Refine one op: special forms by name (``special_forms``), else infer, fold, make static."""
        name = op.name
        if name in _SKIPPED:
            return
        special = self.special_forms.get(name)
        if special is not None:
            special(op)
            return
        self._refine_generic(op, name)

    def _refine_generic(self, op: ir.Operation, name: str) -> None:
        """Infer the results from the operands, then fold the op or make it static."""
        if name not in REGION_FREE and len(op.regions):
            for region in op.regions:
                for block in region.blocks:
                    self.refine_block(block)
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
        """Give ``value`` the sizes in ``shape`` (-1 = keep); True if its type changed.

        Fails the pass, naming ``op``, when ``shape`` contradicts the current type.
        """
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
        """Refine ``value``'s type with the sizes known in ``new_type``; True if it changed."""
        refined = refine_type(value.type, new_type)
        if refined is None or not self._users_accept_new_types(value):
            return False
        value.set_type(refined)
        self.statistics["refined-values"] += 1
        return True

    def _users_accept_new_types(self, value: ir.Value) -> bool:
        """True if every user of ``value`` is a StableHLO/CHLO/func op (always, without foreign ops)."""
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
        """The carried values take the operands' types, in both regions and as results."""
        operand_types = [v.type for v in op.operands]
        for region in op.regions:
            block = region.blocks[0]
            for arg, operand_type in zip(block.arguments, operand_types):
                self.set_type(arg, operand_type)
        for region in op.regions:
            self.refine_block(region.blocks[0])
        for result, operand_type in zip(op.results, operand_types):
            self.set_type(result, operand_type)

    def _refine_branches(self, op: ir.Operation) -> None:
        """``case``/``if``: each result takes the sizes all branches yield alike."""
        yielded: list[list[ir.Type]] = []
        for region in op.regions:
            block = region.blocks[0]
            self.refine_block(block)
            terminator = operation(block.operations[-1])
            yielded.append([v.type for v in terminator.operands])
        for index, result in enumerate(op.results):
            maybe_shapes = [shape_of(types[index]) for types in yielded if index < len(types)]
            if not maybe_shapes or any(s is None for s in maybe_shapes):
                continue
            shapes = cast("list[rules.Shape]", maybe_shapes)  # none is None (checked above)
            if len({len(s) for s in shapes}) != 1:
                continue
            merged = [s0 if all(s[i] == s0 for s in shapes) else -1 for i, s0 in enumerate(shapes[0])]
            self.refine_value(result, merged, op)

    # -- custom calls ------------------------------------------------------
    def _refine_custom_call(self, op: ir.Operation) -> None:
        """Shape assertions and operand wrappers here; the other targets in :mod:`.custom_calls`."""
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
        """Erase a true ``@shape_assertion``; fail with its message, ``{N}`` filled, if false."""
        if not self.enable_assertions:
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
            if index < len(values) and (array := values[index]) is not None:
                return str(array.item()) if array.size == 1 else str(array.tolist())
            return match.group(0)

        raise PassFailure(_PLACEHOLDER.sub(fill, message), op)

    def _refine_cast(self, op: ir.Operation) -> None:
        """A cast of a ranked tensor to a shaped type of its element type is replaced by its operand."""
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
