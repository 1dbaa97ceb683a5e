"""Reading and writing typed attributes as Python values.

Example::

    axes = get_attr(op, "dimensions")        # -> [1, 0] for array<i64: 1, 0>
    set_attr(op, "toolkit.tag", "fused")     # -> "fused" (a StringAttr)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir


def to_python(attr: ir.Attribute) -> Any:
    """Convert a common builtin attribute to a Python value.

    Bool/Integer/Float/String/unit, dense i64/i32/bool arrays, array attributes
    (recursively), dictionaries, symbol refs (the name), types (the type), and
    dense elements (a numpy array). Other attributes are returned unchanged.
    """
    if isinstance(attr, ir.BoolAttr):
        return bool(attr.value)
    if isinstance(attr, ir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, ir.StringAttr):
        return attr.value
    if isinstance(attr, ir.UnitAttr):
        return True
    if isinstance(attr, (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr, ir.DenseI16ArrayAttr,
                         ir.DenseI8ArrayAttr, ir.DenseF32ArrayAttr, ir.DenseF64ArrayAttr,
                         ir.DenseBoolArrayAttr)):
        return list(attr)
    if isinstance(attr, ir.ArrayAttr):
        return [to_python(a) for a in attr]
    if isinstance(attr, ir.DictAttr):
        return {attr[i].name: to_python(attr[i].attr) for i in range(len(attr))}
    if isinstance(attr, ir.FlatSymbolRefAttr):
        return attr.value
    if isinstance(attr, ir.TypeAttr):
        return attr.value
    if isinstance(attr, ir.DenseElementsAttr):
        return np.array(attr)
    return attr


def _location() -> ir.Location:
    # Some attribute builders report errors at a location; any will do.
    try:
        current = ir.Location.current
    except ValueError:
        current = None
    return current if current is not None else ir.Location.unknown()


def to_attribute(value: Any, *, element_type: ir.Type | None = None) -> ir.Attribute:
    """Convert a Python value to an attribute (needs an active context).

    bool -> BoolAttr, int -> i64 IntegerAttr (or ``element_type``), float ->
    f32/``element_type`` FloatAttr, str -> StringAttr, list of ints ->
    ``array<i64: ...>``, list of other -> ArrayAttr, dict -> DictAttr, numpy
    array -> DenseElementsAttr, an Attribute is returned as is.
    """
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return ir.IntegerAttr.get(element_type or ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get(element_type or ir.F32Type.get(), value, loc=_location())
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, np.ndarray):
        return ir.DenseElementsAttr.get(value)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return ir.DenseI64ArrayAttr.get(list(value))
        return ir.ArrayAttr.get([to_attribute(v) for v in value])
    if isinstance(value, dict):
        return ir.DictAttr.get({k: to_attribute(v) for k, v in value.items()})
    raise TypeError(f"cannot make an MLIR attribute from {type(value).__name__}: {value!r}")


def get_attr(op: ir.Operation | ir.OpView, name: str, default: Any = None) -> Any:
    """Attribute ``name`` of ``op`` as a Python value, or ``default`` if absent."""
    attributes = op.operation.attributes
    if name not in attributes:
        return default
    return to_python(attributes[name])


def set_attr(op: ir.Operation | ir.OpView, name: str, value: Any) -> None:
    """Set attribute ``name`` of ``op`` from a Python value (see :func:`to_attribute`)."""
    with op.operation.context:
        op.operation.attributes[name] = to_attribute(value)
