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
first, marked ``jax.global_constant``) and ``custom_call @shape_assertion``.

After (``mode=jax``, the default): every value has a static type; dimension
arithmetic is folded to constants; dynamic ops are replaced by their static
forms; each callee is specialized per distinct (constant dimension arguments,
argument types) key — a clone per key, the dimension arguments substituted
and removed from its signature; shape assertions are checked and erased (a
false one fails the pass with its own ``error_message``, ``{N}`` placeholders
filled with the values of its operands); function types and ``func.return``s
match. With ``validate-static-shapes=true`` any remaining dynamic shape fails
the pass, naming the op.

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
import re
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.pass_base import ModulePass, PassFailure, record_statistic
from toolkit.passes.refine import folding, rules
from toolkit.passes.refine.rules import DYNAMIC, ShapeError, is_static, shape_of
from toolkit.passes.registry import register_pass

_SUPPORTED_USER_DIALECTS = ("stablehlo", "chlo", "func")
_SIDE_EFFECTING = frozenset({
    "stablehlo.send", "stablehlo.recv", "stablehlo.infeed", "stablehlo.outfeed",
    "func.call_indirect", "stablehlo.rng_bit_generator",
})
_PLACEHOLDER = re.compile(r"\{(\d+)\}")
_ASSERTION = "shape_assertion"
_OPERAND_WRAPPER = "stablehlo.shape_refinement_operand_wrapper"


def _operation(op_like: Any) -> ir.Operation:
    return op_like.operation if hasattr(op_like, "operation") else op_like


def _is_static_type(type_: ir.Type) -> bool:
    if isinstance(type_, ir.RankedTensorType):
        return type_.has_static_shape
    if isinstance(type_, ir.ShapedType):  # unranked tensors
        return False
    if isinstance(type_, ir.TupleType):
        return all(_is_static_type(type_.get_type(i)) for i in range(type_.num_types))
    return True


def _with_shape(old: ir.Type, shape: list[int]) -> ir.Type | None:
    """``old`` refined with ``shape`` (-1 = unknown); None if nothing changes.

    Raises ShapeError when a static size of ``old`` contradicts ``shape``.
    """
    if isinstance(old, ir.RankedTensorType):
        current = old.shape
        if len(current) != len(shape):
            raise ShapeError(f"inferred rank {len(shape)} differs from result type {old}")
        merged, changed = [], False
        for have, new in zip(current, shape):
            if have == DYNAMIC and new >= 0:
                merged.append(new)
                changed = True
            else:
                if have != DYNAMIC and new >= 0 and have != new:
                    raise ShapeError(f"inferred shape {_shape_text(shape)} is incompatible with result type {old}")
                merged.append(have)
        if not changed:
            return None
        return ir.RankedTensorType.get(merged, old.element_type, old.encoding)
    if isinstance(old, ir.ShapedType) and not old.has_rank:
        return ir.RankedTensorType.get([d if d >= 0 else DYNAMIC for d in shape], old.element_type)
    return None


def _shape_text(shape: list[int]) -> str:
    return "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"


def _refine_type(old: ir.Type, new: ir.Type) -> ir.Type | None:
    """``old`` refined with the knowledge in ``new``; None if nothing changes."""
    new_shape = shape_of(new)
    if new_shape is None:
        return None
    return _with_shape(old, new_shape)


class _Refiner:
    """One run of the pass over one module."""

    def __init__(self, config: "RefineShapesPass", module_op: ir.Operation):
        self.config = config
        self.jax_mode = config.mode == "jax"
        self.module_op = module_op
        self.context = module_op.context
        self.body = module_op.regions[0].blocks[0]
        self.functions: dict[str, ir.Operation] = {}
        for op in self.body.operations:
            op = _operation(op)
            if op.name == "func.func":
                self.functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
        self.constants: dict[ir.Value, np.ndarray | None] = {}
        self.refining: list[str] = []
        self.refined_keys: dict[str, tuple] = {}
        self.specializations: dict[tuple, str] = {}
        self.templates: dict[str, ir.Operation] = {}
        self.purity: dict[str, bool] = {}
        self.call_counts: collections.Counter[str] = collections.Counter()
        self.touched_functions: set[str] = set()
        self.i32 = ir.IntegerType.get_signless(32, self.context)

    # -- entry -------------------------------------------------------------
    def run(self) -> None:
        if not self.functions:
            return
        entry = self._entry_function()
        if self.jax_mode:
            self._count_calls()
        name = ir.StringAttr(entry.attributes["sym_name"]).value
        self._refine_function(entry, name)
        if self.jax_mode:
            self._erase_unused_functions()
        if self.jax_mode and self.config.validate_static_shapes:
            self._validate_static()

    def _entry_function(self) -> ir.Operation:
        if "main" in self.functions:
            return self.functions["main"]
        if len(self.functions) == 1:
            return next(iter(self.functions.values()))
        raise PassFailure("must have no more than one function or a `main` function to clearly identify "
                          "which function will be refined", self.module_op)

    def _count_calls(self) -> None:
        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.call":
                self.call_counts[ir.FlatSymbolRefAttr(op.attributes["callee"]).value] += 1
            return ir.WalkResult.ADVANCE

        self.module_op.walk(visit)

    # -- constants ---------------------------------------------------------
    def constant(self, value: ir.Value) -> np.ndarray | None:
        """The value of ``value`` if it is an integer constant (numpy), else None."""
        try:
            return self.constants[value]
        except KeyError:
            pass
        result = None
        owner = value.owner
        if isinstance(owner, (ir.Operation, ir.OpView)):
            owner = _operation(owner)
            if owner.name == "stablehlo.constant" and isinstance(value.type, ir.RankedTensorType):
                result = folding.attribute_to_array(owner.attributes["value"], value.type)
        self.constants[value] = result
        return result

    def _make_constant(self, array: np.ndarray, tensor_type: ir.RankedTensorType, location: ir.Location
                       ) -> ir.Value:
        attr = folding.array_to_attribute(array, tensor_type)
        op = ir.Operation.create("stablehlo.constant", results=[tensor_type], attributes={"value": attr},
                                 loc=location)
        return op.result

    # -- functions ---------------------------------------------------------
    def _refine_function(self, function: ir.Operation, name: str) -> None:
        region = function.regions[0]
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise PassFailure("'func.func' op must have exactly one block", function)
        self.refining.append(name)
        self.touched_functions.add(name)
        try:
            self._refine_block(blocks[0])
            self._erase_dead_ops(blocks[0])
            self._update_function_type(function)
        finally:
            self.refining.pop()

    def _update_function_type(self, function: ir.Operation) -> None:
        block = function.regions[0].blocks[0]
        inputs = [arg.type for arg in block.arguments]
        terminator = _operation(list(block.operations)[-1])
        old = ir.TypeAttr(function.attributes["function_type"]).value
        results = [v.type for v in terminator.operands] if terminator.name == "func.return" else list(old.results)
        new = ir.FunctionType.get(inputs, results)
        if new != old:
            function.attributes["function_type"] = ir.TypeAttr.get(new)

    # -- blocks and ops ----------------------------------------------------
    def _refine_block(self, block: ir.Block) -> None:
        for op in list(block.operations):
            self._refine_op(_operation(op))

    def _refine_op(self, op: ir.Operation) -> None:
        name = op.name
        if name == "func.return" or name == "stablehlo.return" or name == "stablehlo.constant":
            return
        if name == "func.call":
            self._refine_call(op)
            return
        if name == "stablehlo.while":
            self._refine_while(op)
            return
        if name == "stablehlo.case" or name == "stablehlo.if":
            self._refine_branches(op)
            return
        if name == "stablehlo.custom_call":
            self._refine_custom_call(op)
            return
        if name == "builtin.unrealized_conversion_cast":
            self._refine_cast(op)
            return
        for region in op.regions:
            for block in region.blocks:
                self._refine_block(block)
        results = op.results
        if not all(_is_static_type(r.type) for r in results):
            self._infer_and_refine(op)
        if name == "stablehlo.get_dimension_size":
            if self._fold_dimension_size(op):
                return
        elif name in folding.FOLDABLE and len(results) == 1:
            if self._try_fold(op):
                return
        if self.jax_mode and name in _DYNAMIC_TO_STATIC:
            _DYNAMIC_TO_STATIC[name](self, op)

    def _infer_and_refine(self, op: ir.Operation) -> None:
        types = [v.type for v in op.operands]
        try:
            shapes = rules.infer_shapes(op, types, self.constant)
        except ShapeError as error:
            raise PassFailure(str(error), op) from None
        if shapes is None:
            inferred = rules.infer_with_cxx(op) if op.name.startswith(("stablehlo.", "chlo.")) else None
            if inferred is None:
                return
            shapes = [shape_of(t) for t in inferred]
        for result, shape in zip(op.results, shapes):
            if shape is not None:
                self._refine_value(result, shape, op)

    def _refine_value(self, value: ir.Value, shape: list[int], op: ir.Operation) -> bool:
        try:
            new_type = _with_shape(value.type, shape)
        except ShapeError as error:
            raise PassFailure(f"'{op.name}' op {error}", op) from None
        if new_type is None or not self._users_accept_new_types(value):
            return False
        value.set_type(new_type)
        record_statistic("refined-values")
        return True

    def _set_type(self, value: ir.Value, new_type: ir.Type) -> bool:
        refined = _refine_type(value.type, new_type)
        if refined is None or not self._users_accept_new_types(value):
            return False
        value.set_type(refined)
        record_statistic("refined-values")
        return True

    @staticmethod
    def _users_accept_new_types(value: ir.Value) -> bool:
        for use in value.uses:
            owner = _operation(use.owner)
            if owner.name.partition(".")[0] not in _SUPPORTED_USER_DIALECTS:
                return False
        return True

    # -- folding -----------------------------------------------------------
    def _replace_with_constant(self, op: ir.Operation, array: np.ndarray) -> None:
        result = op.results[0]
        with op.context, ir.InsertionPoint(op):
            value = self._make_constant(array, result.type, op.location)
        result.replace_all_uses_with(value)
        self.constants.pop(result, None)
        op.erase()
        record_statistic("folded-ops")

    def _try_fold(self, op: ir.Operation) -> bool:
        result_type = op.results[0].type
        if not isinstance(result_type, ir.RankedTensorType) or not result_type.has_static_shape:
            return False
        if not folding.is_integer_like(result_type.element_type):
            return False
        operands = []
        for value in op.operands:
            array = self.constant(value)
            if array is None:
                return False
            operands.append(array)
        value = folding.fold(op, operands, result_type)
        if value is None:
            return False
        self._replace_with_constant(op, value)
        return True

    def _fold_dimension_size(self, op: ir.Operation) -> bool:
        source = shape_of(op.operands[0].type)
        dimension = ir.IntegerAttr(op.attributes["dimension"]).value
        if source is None or source[dimension] < 0:
            return False
        result_type = op.results[0].type
        dtype = folding.numpy_dtype(result_type.element_type)
        self._replace_with_constant(op, np.array(source[dimension], dtype=dtype))
        return True

    # -- regions -----------------------------------------------------------
    def _refine_while(self, op: ir.Operation) -> None:
        operand_types = [v.type for v in op.operands]
        for region in op.regions:
            block = region.blocks[0]
            for arg, operand_type in zip(block.arguments, operand_types):
                self._set_type(arg, operand_type)
        for region in op.regions:
            self._refine_block(region.blocks[0])
        for result, operand_type in zip(op.results, operand_types):
            self._set_type(result, operand_type)

    def _refine_branches(self, op: ir.Operation) -> None:
        yielded: list[list[ir.Type]] = []
        for region in op.regions:
            block = region.blocks[0]
            self._refine_block(block)
            terminator = _operation(list(block.operations)[-1])
            yielded.append([v.type for v in terminator.operands])
        for index, result in enumerate(op.results):
            shapes = [shape_of(types[index]) for types in yielded if index < len(types)]
            if not shapes or any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:
                continue
            merged = [s0 if all(s[i] == s0 for s in shapes) else -1 for i, s0 in enumerate(shapes[0])]
            self._refine_value(result, merged, op)

    # -- custom calls ------------------------------------------------------
    def _refine_custom_call(self, op: ir.Operation) -> None:
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if target == _ASSERTION:
            self._check_assertion(op)
            return
        if target == _OPERAND_WRAPPER:
            source = op.operands[0]
            wanted = self.constant(op.operands[1])
            have = shape_of(source.type)
            if wanted is not None and have is not None and [int(x) for x in wanted.reshape(-1)] == have:
                op.results[0].replace_all_uses_with(source)
                op.erase()
                record_statistic("erased-operand-wrappers")
            return
        if target in _DYNAMIC_CUSTOM_CALLS:
            _DYNAMIC_CUSTOM_CALLS[target](self, op)
            return
        self._refine_shape_operand_results(op)

    def _refine_shape_operand_results(self, op: ir.Operation) -> None:
        """Results of a custom call whose shapes are given by operands (``indices_of_shape_operands``)."""
        if "indices_of_shape_operands" not in op.attributes:
            return
        indices = [int(i) for i in np.array(op.attributes["indices_of_shape_operands"]).reshape(-1)]
        shapes = [rules._const_shape(self.constant, op.operands[i]) for i in indices]
        flat_index = 0
        for result in op.results:
            result_type = result.type
            if isinstance(result_type, ir.TupleType):
                elements = []
                for i in range(result_type.num_types):
                    element = result_type.get_type(i)
                    shape = shapes[flat_index] if flat_index < len(shapes) else None
                    flat_index += 1
                    refined = _with_shape(element, shape) if shape is not None else None
                    elements.append(refined or element)
                new_type = ir.TupleType.get_tuple(elements)
                if new_type != result_type and self._users_accept_new_types(result):
                    result.set_type(new_type)
            else:
                shape = shapes[flat_index] if flat_index < len(shapes) else None
                flat_index += 1
                if shape is not None:
                    self._refine_value(result, shape, op)

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
        if callee_name in self.refining:
            callee.location.emit_error(f"Function {callee_name} is being refined recursively")
            raise PassFailure("'func.call' op incorrect number of operands for callee", op)

        target_name = callee_name
        if self.jax_mode:
            target_name = self._specialize(callee_name, key, dimension_args, operand_types)
        else:
            previous = self.refined_keys.get(callee_name)
            if previous is not None and previous != key:
                callee.location.emit_error("'func.func' op refined with incompatible refinement keys")
                raise PassFailure("'func.call' op incorrect number of operands for callee", op)
            if previous is None:
                self.refined_keys[callee_name] = key
                self._refine_callee(callee, callee_name, dimension_args, operand_types)
        target = self.functions[target_name]
        self._rewrite_call(op, target, target_name, dimension_args)

    def _specialize(self, callee_name: str, key: tuple, dimension_args: dict[int, np.ndarray],
                    operand_types: list[ir.Type]) -> str:
        existing = self.specializations.get((callee_name, key))
        if existing is not None:
            return existing
        callee = self.functions[callee_name]
        if callee_name not in self.refined_keys:
            if self.call_counts[callee_name] > 1:
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
            target = _operation(target)
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
            first = _operation(list(block.operations)[0])
            with self.context, ir.InsertionPoint(first):
                for index, array in dimension_args.items():
                    arg = arguments[index]
                    value = self._make_constant(np.asarray(array), arg.type, callee.location)
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
                self._set_type(arg, operand_type)
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
        terminator = _operation(list(target.regions[0].blocks[0].operations)[-1])
        for index, returned in enumerate(terminator.operands):
            array = self.constant(returned)
            result = call.results[index]
            if array is None or not isinstance(result.type, ir.RankedTensorType) \
                    or not result.type.has_static_shape or len(list(result.uses)) == 0:
                continue
            with self.context, ir.InsertionPoint(call):
                value = self._make_constant(array, result.type, call.location)
            result.replace_all_uses_with(value)

    def _is_pure_function(self, name: str) -> bool:
        known = self.purity.get(name)
        if known is not None:
            return known
        self.purity[name] = False  # recursion counts as impure
        function = self.functions.get(name)
        pure = function is not None and all(self._is_pure_op(_operation(op))
                                            for block in function.regions[0].blocks
                                            for op in block.operations)
        self.purity[name] = pure
        return pure

    def _is_pure_op(self, op: ir.Operation) -> bool:
        name = op.name
        if name in _SIDE_EFFECTING:
            return False
        if name == "stablehlo.custom_call":
            attr = op.attributes["has_side_effect"] if "has_side_effect" in op.attributes else None
            return not (attr is not None and ir.BoolAttr(attr).value)
        if name == "func.call":
            return self._is_pure_function(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        if name in ("func.return", "stablehlo.return"):
            return True
        if not name.startswith(("stablehlo.", "chlo.")):
            return False
        return all(self._is_pure_op(_operation(inner)) for region in op.regions
                   for block in region.blocks for inner in block.operations)

    # -- cleanup -----------------------------------------------------------
    def _erase_dead_ops(self, block: ir.Block) -> None:
        for op in reversed(list(block.operations)):
            op = _operation(op)
            results = op.results
            if len(results) == 0:
                for region in op.regions:
                    for inner in region.blocks:
                        self._erase_dead_ops(inner)
                continue
            if any(True for r in results for _ in r.uses):
                for region in op.regions:
                    for inner in region.blocks:
                        self._erase_dead_ops(inner)
                continue
            if self._is_pure_op(op):
                for r in results:
                    self.constants.pop(r, None)
                op.erase()

    def _erase_unused_functions(self) -> None:
        for template in self.templates.values():
            template.erase()
        self.templates.clear()
        used: set[str] = set()

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.call":
                used.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            return ir.WalkResult.ADVANCE

        self.module_op.walk(visit)
        for name in list(self.functions):
            function = self.functions[name]
            private = "sym_visibility" in function.attributes and \
                ir.StringAttr(function.attributes["sym_visibility"]).value == "private"
            if name in self.touched_functions and name not in used and private:
                function.erase()
                del self.functions[name]

    def _validate_static(self) -> None:
        problems: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.func":
                function_type = ir.TypeAttr(op.attributes["function_type"]).value
                if not all(_is_static_type(t) for t in list(function_type.inputs) + list(function_type.results)):
                    problems.append(op)
                    return ir.WalkResult.INTERRUPT
                return ir.WalkResult.ADVANCE
            if not all(_is_static_type(r.type) for r in op.results):
                problems.append(op)
                return ir.WalkResult.INTERRUPT
            if op.name == "stablehlo.custom_call" and \
                    ir.StringAttr(op.attributes["call_target_name"]).value == _ASSERTION:
                problems.append(op)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        self.module_op.walk(visit)
        if problems:
            op = problems[0]
            if op.name == "stablehlo.custom_call":
                raise PassFailure("shape assertion could not be decided: its predicate did not fold to a "
                                  "constant (are all argument shapes of @main static?)", op)
            text = op.get_asm(large_elements_limit=4) if op.name != "func.func" else \
                f"@{ir.StringAttr(op.attributes['sym_name']).value}: {ir.TypeAttr(op.attributes['function_type']).value}"
            raise PassFailure("module has dynamic shapes after refinement (pass validate-static-shapes=false "
                              f"to allow them); first one: {text.strip().splitlines()[0]}", op)


# -- dynamic ops to static ops (mode=jax) -----------------------------------

def _replace_op(op: ir.Operation, name: str, operands: Iterable[ir.Value], attributes: dict[str, ir.Attribute]
                ) -> None:
    with op.context, ir.InsertionPoint(op):
        new = ir.Operation.create(name, results=[op.results[0].type], operands=list(operands),
                                  attributes=attributes, loc=op.location)
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()
    record_statistic("static-" + name.partition(".")[2])


def _static_result(op: ir.Operation) -> bool:
    result_type = op.results[0].type
    return isinstance(result_type, ir.RankedTensorType) and result_type.has_static_shape


def _i64_array(values: Iterable[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _to_broadcast_in_dim(refiner: _Refiner, op: ir.Operation) -> None:
    if _static_result(op):
        _replace_op(op, "stablehlo.broadcast_in_dim", [op.operands[0]],
                    {"broadcast_dimensions": op.attributes["broadcast_dimensions"]})


def _to_reshape(refiner: _Refiner, op: ir.Operation) -> None:
    if not _static_result(op):
        return
    source = shape_of(op.operands[0].type)
    target = shape_of(op.results[0].type)
    if source is not None and all(d >= 0 for d in source) and \
            int(np.prod(source, dtype=np.int64)) != int(np.prod(target, dtype=np.int64)):
        raise PassFailure(f"number of output elements ({int(np.prod(target, dtype=np.int64))}) doesn't match "
                          f"expected number of elements ({int(np.prod(source, dtype=np.int64))})", op)
    _replace_op(op, "stablehlo.reshape", [op.operands[0]], {})


def _to_iota(refiner: _Refiner, op: ir.Operation) -> None:
    if _static_result(op):
        _replace_op(op, "stablehlo.iota", [], {"iota_dimension": op.attributes["iota_dimension"]})


def _to_slice(refiner: _Refiner, op: ir.Operation) -> None:
    parts = [refiner.constant(v) for v in list(op.operands)[1:4]]
    if not _static_result(op) or any(p is None for p in parts):
        return
    with op.context:
        attributes = {"start_indices": _i64_array(parts[0]), "limit_indices": _i64_array(parts[1]),
                      "strides": _i64_array(parts[2])}
    _replace_op(op, "stablehlo.slice", [op.operands[0]], attributes)


def _to_pad(refiner: _Refiner, op: ir.Operation) -> None:
    parts = [refiner.constant(v) for v in list(op.operands)[2:5]]
    if not _static_result(op) or any(p is None for p in parts):
        return
    with op.context:
        attributes = {"edge_padding_low": _i64_array(parts[0]), "edge_padding_high": _i64_array(parts[1]),
                      "interior_padding": _i64_array(parts[2])}
    _replace_op(op, "stablehlo.pad", list(op.operands)[:2], attributes)


def _to_gather(refiner: _Refiner, op: ir.Operation) -> None:
    sizes = refiner.constant(op.operands[2])
    if not _static_result(op) or sizes is None:
        return
    attributes = {name: op.attributes[name] for name in op.attributes}
    with op.context:
        attributes["slice_sizes"] = _i64_array(sizes.reshape(-1))
    _replace_op(op, "stablehlo.gather", list(op.operands)[:2], attributes)


def _to_convolution(refiner: _Refiner, op: ir.Operation) -> None:
    padding = refiner.constant(op.operands[2])
    if not _static_result(op) or padding is None:
        return
    attributes = {name: op.attributes[name] for name in op.attributes}
    with op.context:
        attributes["padding"] = ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(-1, 2))
    _replace_op(op, "stablehlo.convolution", list(op.operands)[:2], attributes)


_DYNAMIC_TO_STATIC = {
    "stablehlo.dynamic_broadcast_in_dim": _to_broadcast_in_dim,
    "stablehlo.dynamic_reshape": _to_reshape,
    "stablehlo.dynamic_iota": _to_iota,
    "stablehlo.real_dynamic_slice": _to_slice,
    "stablehlo.dynamic_pad": _to_pad,
    "stablehlo.dynamic_gather": _to_gather,
    "stablehlo.dynamic_conv": _to_convolution,
}


# -- JAX's dynamic custom calls (stablehlo.dynamic_*) -------------------------------
# jax.export writes ops StableHLO has no dynamic form for as custom calls whose shapes come from
# operands. Once those operands fold to constants, mode=jax turns them into the static ops (what
# StableHLO's canonicalize-dynamism does, which jaxlib does not ship).

def _replace_results(op: ir.Operation, new: ir.Operation, statistic: str) -> None:
    for old_result, new_result in zip(op.results, new.results):
        old_result.replace_all_uses_with(new_result)
    op.erase()
    record_statistic(statistic)


def _with_last_dim(type_: ir.Type, size: int) -> ir.Type | None:
    shape = shape_of(type_)
    return None if shape is None else _with_shape(type_, shape[:-1] + [size])


def _dynamic_top_k(refiner: _Refiner, op: ir.Operation) -> None:
    # custom_call @stablehlo.dynamic_top_k(operand, k) -> (values, indices), k along the last dimension.
    k = refiner.constant(op.operands[1])
    operand_shape = shape_of(op.operands[0].type)
    if k is None or operand_shape is None or not is_static(operand_shape):
        return
    k = int(np.asarray(k).reshape(()))
    for result in op.results:
        refined = _with_last_dim(result.type, k)
        if refined is not None and refined != result.type:
            refiner._set_type(result, refined)
    if refiner.jax_mode and all(_is_static_type(r.type) for r in op.results):
        with op.context, ir.InsertionPoint(op), op.location:
            new = ir.Operation.create("chlo.top_k", results=[r.type for r in op.results], operands=[op.operands[0]],
                                      attributes={"k": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)})
        _replace_results(op, new, "static-top_k")


def _dynamic_rng_bit_generator(refiner: _Refiner, op: ir.Operation) -> None:
    # custom_call @stablehlo.dynamic_rng_bit_generator(key, shape) {rng_algorithm} -> (new key, bits).
    shape = refiner.constant(op.operands[1])
    if shape is None:
        return
    refined = _with_shape(op.results[1].type, [int(d) for d in np.asarray(shape).reshape(-1)])
    if refined is not None and refined != op.results[1].type:
        refiner._set_type(op.results[1], refined)
    if refiner.jax_mode and all(_is_static_type(r.type) for r in op.results):
        with op.context, ir.InsertionPoint(op), op.location:
            new = ir.Operation.create("stablehlo.rng_bit_generator", results=[r.type for r in op.results],
                                      operands=[op.operands[0]],
                                      attributes={"rng_algorithm": op.attributes["rng_algorithm"]})
        _replace_results(op, new, "static-rng_bit_generator")


def _dynamic_approx_top_k(refiner: _Refiner, op: ir.Operation) -> None:
    # custom_call @stablehlo.dynamic_approx_top_k(operand, iota, init value, init index, k, result shapes...)
    # is refined from its shape operands, then becomes the static @ApproxTopK XLA knows: the first four
    # operands, with k moved into the backend config as `top_k`.
    refiner._refine_shape_operand_results(op)
    k = refiner.constant(op.operands[4]) if len(op.operands) > 4 else None
    if k is None or not (refiner.jax_mode and all(_is_static_type(r.type) for r in op.results)):
        return
    attributes = {name: op.attributes[name] for name in op.attributes if name != "indices_of_shape_operands"}
    with op.context, ir.InsertionPoint(op), op.location:
        # JAX writes the config as the discardable `mhlo.backend_config` (a dictionary: API version 4).
        config = ir.DictAttr(attributes.pop("mhlo.backend_config", None) or attributes["backend_config"])
        entries = {config[i].name: config[i].attr for i in range(len(config))}
        entries["top_k"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(np.asarray(k).reshape(())))
        attributes["backend_config"] = ir.DictAttr.get(entries)
        attributes["api_version"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4)
        attributes["call_target_name"] = ir.StringAttr.get("ApproxTopK")
        new = ir.Operation.create("stablehlo.custom_call", results=[r.type for r in op.results],
                                  operands=list(op.operands)[:4], attributes=attributes)
    _replace_results(op, new, "static-approx_top_k")


_DYNAMIC_CUSTOM_CALLS = {
    "stablehlo.dynamic_top_k": _dynamic_top_k,
    "stablehlo.dynamic_rng_bit_generator": _dynamic_rng_bit_generator,
    "stablehlo.dynamic_approx_top_k": _dynamic_approx_top_k,
}


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
        operation = _operation(op)
        if operation.name != "builtin.module":
            raise PassFailure(f"{self.name} runs on a builtin.module, not on {operation.name}", operation)
        with operation.context, ir.Location.unknown():
            _Refiner(self, operation).run()
