"""StableHLO for ``composite``: a private function holding the decomposition and a ``stablehlo.composite``
calling it, named and attributed as JAX lowers ``lax.composite``."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import pytrees
from toolkit.lax import composites
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import element_type


# JAX's dtypes for Python scalars in attributes (bool before int: a bool is an int).
_PYTHON_SCALARS = ((bool, np.bool_), (int, np.int64), (float, np.float64), (complex, np.complex128))


def _attribute(value):
    """An MLIR attribute for a composite attribute value, by JAX's table (``mlir.ir_attribute``): a list or tuple
    is an array attribute of its items, a dict a dictionary attribute, a dtype a type attribute, a NumPy scalar
    and a Python scalar a scalar attribute (Python ``int``/``float`` as 64-bit, as JAX's), a NumPy array (0-d
    included) dense elements."""
    if isinstance(value, composites.HashableArray):
        value = value.value
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([_attribute(v) for v in value])
    if isinstance(value, dict):
        return ir.DictAttr.get({str(k): _attribute(v) for k, v in value.items()})
    if isinstance(value, np.dtype):
        return ir.TypeAttr.get(element_type(value))
    if isinstance(value, (str, bytes)):
        return ir.StringAttr.get(value)
    for python_type, dtype in _PYTHON_SCALARS:
        if isinstance(value, python_type):
            return _scalar(np.array(value, dtype))
    if isinstance(value, np.generic):
        return _scalar(np.asarray(value))
    array = np.asarray(value)
    return ir.DenseElementsAttr.get(np.ascontiguousarray(array), type=element_type(array.dtype), shape=array.shape)


def _scalar(value: np.ndarray) -> ir.Attribute:
    kind = element_type(value.dtype)
    if value.dtype == np.bool_:
        return ir.BoolAttr.get(bool(value))
    if isinstance(kind, ir.IntegerType):
        return ir.IntegerAttr.get(kind, int(value))
    if isinstance(kind, ir.FloatType):
        return ir.FloatAttr.get(kind, float(value))
    raise TypeError(f"Unsupported scalar attribute type: {value.dtype}")  # JAX's error (complex scalars)


@register_lowering(composites.composite_p)
def _composite(ctx, *operands, name, attributes, version, program, num_consts):
    symbol = ctx.module_context.private_function(program, name)
    attrs = {}
    for key, leaves, tree in attributes:
        value = pytrees.tree_unflatten(tree, list(leaves))
        if value is not None:
            attrs[key] = _attribute(value)
    op = stablehlo.CompositeOp(ctx.out_types, ctx.module_context.call_arguments() + list(operands),
                               name=ir.StringAttr.get(name), decomposition=ir.FlatSymbolRefAttr.get(symbol),
                               composite_attributes=ir.DictAttr.get(attrs),
                               version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), version))
    return list(op.results)
