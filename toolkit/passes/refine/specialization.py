"""Callee specialization under shape refinement: calls and composites refine their callees per key.

A ``func.call`` (or a ``stablehlo.composite``, whose decomposition is refined
like a callee) refines the function it names for its call site. The key is
the site's *dimension arguments* — constant scalar integer operands: JAX's
dimension variables marked ``jax.global_constant``, helper arguments such as
``_where``'s predicate — and the types of its other operands.

``mode=jax``: the first key refines the callee in place; each further key
refines a clone (``@f_1``, ...) of a pristine template kept before the first
refinement — kept only when the function may be reached with a second key
(several call sites, or a caller that may itself be cloned). The dimension
arguments are substituted into the body and dropped from the signature and
the call; constants the callee returns become constants at the call site.

``mode=stablehlo`` (StableHLO's C++ pass): only the leading dimension
arguments count (tokens skipped), and a callee reached with a second key is an
error. In both modes recursion is an error.

The body of a callee is refined by the driver's sweep
(:attr:`CalleeSpecialization.refine_function`), which may reach further calls.

Example::

    specialization = CalleeSpecialization(jax_mode, context, functions, module_body, constants,
                                          set_type=retyping.set_type, refine_function=sweep)
    specialization.refine_call(call_op)
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.pass_base import PassFailure, record_statistic
from toolkit.passes.refine.constants import KnownConstants, make_constant
from toolkit.passes.refine.traversal import operation


@dataclasses.dataclass(slots=True)
class CalleeSpecialization:
    """The callees of one run: which key refined each, its specializations and templates."""

    #: True for ``mode=jax`` (a clone per key), False for ``mode=stablehlo`` (one key per callee).
    jax_mode: bool
    context: ir.Context
    #: The module's functions by name (the driver's table; clones are added to it).
    functions: dict[str, ir.Operation]
    #: The module's block, where templates are kept.
    module_body: ir.Block
    #: The run's constants (dimension arguments, constants a callee returns).
    constants: KnownConstants
    #: Refines a value's type from a known one (the per-op retyping's), for a callee's arguments.
    set_type: Callable[[ir.Value, ir.Type], bool]
    #: The driver's sweep of one function's body (``function, name``).
    refine_function: Callable[[ir.Operation, str], None]
    #: Function name -> its call sites (calls and composites), counted by the driver's pre-scan.
    call_counts: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    #: Function name -> the functions calling it (the pre-scan's).
    callers: collections.defaultdict[str, set[str]] = dataclasses.field(
        default_factory=lambda: collections.defaultdict(set))
    #: The functions being refined, outermost first (a call of one of them is recursion).
    refining: list[str] = dataclasses.field(default_factory=list)
    #: Function name -> the key it was refined with first (in place).
    refined_keys: dict[str, tuple] = dataclasses.field(default_factory=dict)
    #: (function name, key) -> the name of the function refined for that key (mode=jax).
    specializations: dict[tuple, str] = dataclasses.field(default_factory=dict)
    #: Function name -> its pristine copy, cloned for each further key (erased at the end).
    templates: dict[str, ir.Operation] = dataclasses.field(default_factory=dict)
    #: Function name -> True if it may be reached with a second key (see ``_may_be_refined_again``).
    reentrant: dict[str, bool] = dataclasses.field(default_factory=dict)

    def erase_templates(self) -> None:
        """Erase the pristine copies (no more keys come once the sweep is over)."""
        for template in self.templates.values():
            template.erase()
        self.templates.clear()

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
            array = self.constants.constant(value) if is_scalar_integer else None
            if array is None:
                if self.jax_mode:
                    continue
                break
            dimension_args[index] = array
        operand_types = [v.type for i, v in enumerate(op.operands) if i not in dimension_args]
        key = (tuple((i, int(a)) for i, a in dimension_args.items()), tuple(str(t) for t in operand_types))
        return dimension_args, key, operand_types

    def refine_call(self, op: ir.Operation) -> None:
        """Refine the callee of the ``func.call`` ``op`` for its key; the call then names the refined
        function, without its dimension arguments."""
        callee_name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        callee = self.functions.get(callee_name)
        if callee is None or len(callee.regions[0].blocks) == 0:
            return
        dimension_args, key, operand_types = self._call_key(op)
        target_name = self._refine_target(op, callee_name, key, dimension_args, operand_types)
        target = self.functions[target_name]
        self._rewrite_call(op, target, target_name, dimension_args)

    def refine_composite(self, op: ir.Operation) -> None:
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
                template = callee.clone(ir.InsertionPoint(self.module_body))
                self.templates[callee_name] = template
            self.refined_keys[callee_name] = key
            target_name, target = callee_name, callee
        else:
            template = self.templates[callee_name]
            target_name = self._unique_name(f"{callee_name}_{len(self.specializations)}")
            target = template.clone(ir.InsertionPoint.after(callee) if hasattr(ir.InsertionPoint, "after")
                                    else ir.InsertionPoint(self.module_body))
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
            self.refine_function(callee, name)

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
            array = self.constants.constant(returned)
            result = call.results[index]
            if array is None or not isinstance(result.type, ir.RankedTensorType) \
                    or not result.type.has_static_shape or len(list(result.uses)) == 0:
                continue
            with self.context, ir.InsertionPoint(call):
                value = make_constant(array, result.type, call.location)
            result.replace_all_uses_with(value)
