"""Building StableHLO ops at a place in the IR.

Example::

    with insert_before(op):                 # insertion point + op's location
        zero = constant(np.zeros((), np.float32))
        total = build("stablehlo.add", [x, zero], [x.type])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from toolkit.ir.attributes import _location, to_attribute


@contextlib.contextmanager
def insert_before(op: ir.Operation | ir.OpView) -> Iterator[ir.InsertionPoint]:
    """Context: new ops go right before ``op`` and carry its location."""
    operation = op.operation
    with operation.context, operation.location, ir.InsertionPoint(operation) as point:
        yield point


@contextlib.contextmanager
def insert_at_end(block: ir.Block, location: ir.Location | None = None) -> Iterator[ir.InsertionPoint]:
    """Context: new ops go at the end of ``block``."""
    owner = block.owner
    with owner.context, (location or owner.location), ir.InsertionPoint(block) as point:
        yield point


def build(name: str, operands: Sequence[ir.Value], result_types: Sequence[ir.Type],
          attributes: Mapping[str, Any] | None = None, *, location: ir.Location | None = None
          ) -> ir.Operation:
    """Create op ``name`` at the current insertion point (generic form).

    ``attributes`` values may be Python values (see ``to_attribute``).
    """
    attrs = {key: to_attribute(value) for key, value in (attributes or {}).items()}
    return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                               attributes=attrs, loc=location)


def constant(value: np.ndarray | float | int | bool, *, dtype: Any = None,
             location: ir.Location | None = None) -> ir.Value:
    """A ``stablehlo.constant`` of ``value`` at the current insertion point."""
    array = np.asarray(value, dtype=dtype)
    attr = ir.DenseElementsAttr.get(array)
    return build("stablehlo.constant", [], [attr.type], {"value": attr}, location=location).result


def splat_constant(value: float | int | bool, tensor_type: ir.RankedTensorType, *,
                   location: ir.Location | None = None) -> ir.Value:
    """A ``stablehlo.constant`` filling ``tensor_type`` with ``value``."""
    element = tensor_type.element_type
    if isinstance(element, ir.IntegerType):
        scalar = ir.IntegerAttr.get(element, int(value))
    elif isinstance(element, ir.FloatType):
        scalar = ir.FloatAttr.get(element, float(value), loc=_location())
    else:
        raise TypeError(f"splat_constant supports integer and float tensors, not {tensor_type}")
    attr = ir.DenseElementsAttr.get_splat(tensor_type, scalar)
    return build("stablehlo.constant", [], [tensor_type], {"value": attr}, location=location).result


def tensor_type(shape: Sequence[int], element_type: ir.Type) -> ir.RankedTensorType:
    """``tensor<shape x element_type>`` in the current context."""
    return ir.RankedTensorType.get(list(shape), element_type, loc=_location())


def is_splat_constant(value: ir.Value, number: float) -> bool:
    """True if ``value`` comes from a constant whose every element equals ``number``.

    Works for integer, float and complex splats (complex: real part equals
    ``number``, imaginary part 0).
    """
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.operation.name != "stablehlo.constant":
        return False
    attr = owner.operation.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        return False
    splat = attr.get_splat_value()
    if isinstance(splat, (ir.IntegerAttr, ir.FloatAttr)) and not isinstance(splat, ir.BoolAttr):
        try:
            return float(splat.value) == float(number)
        except (TypeError, ValueError):
            return False
    if isinstance(splat, ir.BoolAttr):
        return bool(splat.value) == bool(number) and number in (0, 1)
    return False
