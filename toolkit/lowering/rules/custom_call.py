"""StableHLO for ``toolkit.lax.custom_call``: ``stablehlo.custom_call``."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.core.avals import is_static_shape
from toolkit.lax.custom_call import custom_call_p, effectful_custom_call_p
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import element_type


def _attribute(value) -> ir.Attribute:
    """A typed-FFI attribute: numpy scalars keep their width, Python ints are i64, floats f64."""
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, np.generic):
        dtype = dtypes.canonicalize_dtype(value.dtype)
        if dtypes.is_integer(dtype):
            return ir.IntegerAttr.get(element_type(dtype), int(value))
        return ir.FloatAttr.get(element_type(dtype), float(value))
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    return ir.FloatAttr.get(ir.F64Type.get(), float(value))


def _layouts(layouts) -> ir.ArrayAttr | None:
    if layouts is None:
        return None
    index = ir.IndexType.get()
    return ir.ArrayAttr.get([ir.DenseIntElementsAttr.get(np.asarray(layout, np.int64), type=ir.RankedTensorType.get(
        [len(layout)], index)) for layout in layouts])


def _custom_call(ctx, *operands, call_target_name, result_avals, has_side_effect, backend_config, api_version,
                 operand_layouts, result_layouts):
    symbolic = [a.str_short() for a in ctx.avals_out if not is_static_shape(a.shape)]
    if symbolic:
        # Symbolic results need JAX's indices_of_shape_operands convention, whose extra shape operands only
        # StableHLO's C++ canonicalization strips after refinement; refuse clearly instead.
        raise NotImplementedError(f"custom_call {call_target_name!r} with results of symbolic shape "
                                  f"({', '.join(symbolic)}) is not supported; operands may be symbolic")
    if isinstance(backend_config, tuple):
        config = ir.DictAttr.get({name: _attribute(v) for name, v in backend_config})
    elif backend_config is not None:
        config = ir.StringAttr.get(backend_config)
    else:
        config = ir.StringAttr.get("") if api_version < 4 else ir.DictAttr.get({})
    op = stablehlo.CustomCallOp(
        ctx.out_types, list(operands), call_target_name, has_side_effect=has_side_effect, backend_config=config,
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version),
        operand_layouts=_layouts(operand_layouts), result_layouts=_layouts(result_layouts))
    return list(op.results)


register_lowering(custom_call_p)(_custom_call)
register_lowering(effectful_custom_call_p)(_custom_call)
