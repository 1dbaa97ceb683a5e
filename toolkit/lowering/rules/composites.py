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


def _attribute(value):
    """An MLIR attribute for a composite attribute value, as JAX's ``mlir.ir_attribute``."""
    if isinstance(value, composites.HashableArray):
        value = value.value
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    array = np.asarray(value)
    if array.ndim == 0:
        kind = element_type(array.dtype)
        if np.issubdtype(array.dtype, np.integer):
            return ir.IntegerAttr.get(kind, int(array))
        if np.issubdtype(array.dtype, np.floating):
            return ir.FloatAttr.get(kind, float(array))
    return ir.DenseElementsAttr.get(np.ascontiguousarray(array), type=element_type(array.dtype))


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
