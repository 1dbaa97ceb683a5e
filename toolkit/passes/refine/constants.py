"""Constant tracking under shape refinement: which values are known integer constants.

A value is a constant when a ``stablehlo.constant`` makes it (read once, then
remembered) or when the sweep folded the op making it (:mod:`.folding`
evaluates the op; :meth:`KnownConstants.try_fold` decides when to ask). A
folded op is not replaced at once: its result reads as the constant from then
on, and only if something still uses it when the dead ops of its block are
erased does a ``stablehlo.constant`` take its place (:meth:`KnownConstants.materialize`).

Example::

    constants = KnownConstants(statistics)
    constants.constant(value)                      # numpy array or None
    constants.try_fold(op, op.results[0], op.results[0].type, op.name)
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.refine import folding, rules
from toolkit.passes.refine.rules import shape_of
from toolkit.passes.refine.traversal import operation


def make_constant(array: np.ndarray, tensor_type: ir.RankedTensorType, location: ir.Location) -> ir.Value:
    """A new ``stablehlo.constant`` of ``array`` (at the current insertion point): its result."""
    attr = folding.array_to_attribute(array, tensor_type)
    op = ir.Operation.create("stablehlo.constant", results=[tensor_type], attributes={"value": attr},
                             loc=location)
    return op.result


@dataclasses.dataclass(slots=True)
class KnownConstants:
    """The integer constants of one refinement run, and the folds that made them."""

    #: The run's statistics (``folded-ops``).
    statistics: collections.Counter[str]
    #: Value -> its array if it is an integer constant, None if it is known not to be one.
    arrays: dict[ir.Value, np.ndarray | None] = dataclasses.field(default_factory=dict)
    #: Results of folded ops not yet replaced by constants (see ``fold_to``).
    folded: set[ir.Value] = dataclasses.field(default_factory=set)
    #: Result tensor type -> numpy dtype if ops of that type may fold (static integer tensors), else None.
    foldable_types: dict[ir.Type, np.dtype | None] = dataclasses.field(default_factory=dict)
    #: (op name, result type, ids of the operand arrays) -> (folded array, operand arrays), for the ops
    #: whose value depends on nothing else (``folding.ATTRIBUTE_FREE``). JAX recomputes a shape before
    #: every dynamic op from the same constants; the repeats take the first fold's array. The operand
    #: arrays are kept so their ids stay theirs.
    fold_cache: dict[tuple, tuple[np.ndarray | None, list[np.ndarray]]] = dataclasses.field(default_factory=dict)

    def constant(self, value: ir.Value) -> np.ndarray | None:
        """The value of ``value`` if it is an integer constant (numpy), else None."""
        try:
            return self.arrays[value]
        except KeyError:
            pass
        result = None
        owner = value.owner
        if isinstance(owner, (ir.Operation, ir.OpView)):
            owner = operation(owner)
            if owner.name == "stablehlo.constant" and isinstance(value.type, ir.RankedTensorType):
                result = folding.attribute_to_array(owner.attributes["value"], value.type)
        self.arrays[value] = result
        return result

    def fold_to(self, op: ir.Operation, array: np.ndarray, result: ir.Value | None = None) -> None:
        """Fold ``op`` (one result, ``result`` if the caller has it) to ``array``.

        From now on its result reads as that constant; the op itself stays until the
        dead ops of its block are erased: then it goes if every user folded too (the
        usual case for shape arithmetic), else a ``stablehlo.constant`` takes its place
        there (``materialize``). Creating the constant only when it is needed saves
        an op creation, a use replacement and an erasure per folded op.
        """
        if result is None:
            result = op.results[0]
        self.arrays[result] = array
        self.folded.add(result)
        self.statistics["folded-ops"] += 1

    def materialize(self, op: ir.Operation, result: ir.Value) -> None:
        """Replace the folded, still used ``op`` by a ``stablehlo.constant`` of its value."""
        array = self.arrays.pop(result)
        assert array is not None  # a folded result's array is its value (fold_to)
        self.folded.discard(result)
        with op.context, ir.InsertionPoint(op):
            value = make_constant(array, result.type, op.location)
        result.replace_all_uses_with(value)
        op.erase()
        self.arrays[value] = array

    def try_fold(self, op: ir.Operation, result: ir.Value, result_type: ir.Type, name: str) -> bool:
        """Fold the one-result ``op`` (``result`` of ``result_type``) if its operands are constants."""
        try:
            dtype = self.foldable_types[result_type]
        except KeyError:
            dtype = None
            if isinstance(result_type, ir.RankedTensorType) and result_type.has_static_shape:
                dtype = folding.numpy_dtype(result_type.element_type)
            self.foldable_types[result_type] = dtype
        if dtype is None:
            return False
        constant = self.constant
        operands = []
        for value in op.operands:
            array = constant(value)
            if array is None:
                return False
            operands.append(array)
        if name in folding.ATTRIBUTE_FREE or (name == "stablehlo.concatenate" and operands[0].ndim == 1):
            key = (name, result_type, *map(id, operands))
            cached = self.fold_cache.get(key)
            if cached is None:
                cached = self.fold_cache[key] = (
                    folding.fold(op, operands, result_type, dtype, rules.SHAPE_CACHE.get(result_type), name),
                    operands)
            value = cached[0]
        else:
            value = folding.fold(op, operands, result_type, dtype, rules.SHAPE_CACHE.get(result_type), name)
        if value is None:
            return False
        self.fold_to(op, value, result)
        return True

    def fold_dimension_size(self, op: ir.Operation, result: ir.Value, result_type: ir.Type) -> bool:
        """Fold the ``get_dimension_size`` ``op`` if the dimension it reads is static."""
        source = shape_of(op.operands[0].type)
        dimension = ir.IntegerAttr(op.attributes["dimension"]).value
        if source is None or source[dimension] < 0:
            return False
        dtype = folding.numpy_dtype(result_type.element_type)
        self.fold_to(op, np.array(source[dimension], dtype=dtype), result)
        return True
