"""From toolkit's abstract values to MLIR types and constants."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, abstract_token, is_static_shape

_ELEMENT_TYPE_MAKERS = {
    dtypes.bool_: lambda: ir.IntegerType.get_signless(1),
    dtypes.int8: lambda: ir.IntegerType.get_signless(8),
    dtypes.int16: lambda: ir.IntegerType.get_signless(16),
    dtypes.int32: lambda: ir.IntegerType.get_signless(32),
    dtypes.int64: lambda: ir.IntegerType.get_signless(64),
    dtypes.uint8: lambda: ir.IntegerType.get_unsigned(8),
    dtypes.uint16: lambda: ir.IntegerType.get_unsigned(16),
    dtypes.uint32: lambda: ir.IntegerType.get_unsigned(32),
    dtypes.uint64: lambda: ir.IntegerType.get_unsigned(64),
    dtypes.bfloat16: ir.BF16Type.get,
    dtypes.float16: ir.F16Type.get,
    dtypes.float32: ir.F32Type.get,
    dtypes.float64: ir.F64Type.get,
    dtypes.complex64: lambda: ir.ComplexType.get(ir.F32Type.get()),
    dtypes.complex128: lambda: ir.ComplexType.get(ir.F64Type.get()),
}
# Every low-precision type JAX 0.10.2 lowers (dtypes.LOW_PRECISION_*_NAMES); a missing entry made the fnuz
# float8s a KeyError when lowering.
for _name, _maker in (("float8_e3m4", "Float8E3M4Type"), ("float8_e4m3", "Float8E4M3Type"),
                      ("float8_e4m3b11fnuz", "Float8E4M3B11FNUZType"), ("float8_e4m3fn", "Float8E4M3FNType"),
                      ("float8_e4m3fnuz", "Float8E4M3FNUZType"), ("float8_e5m2", "Float8E5M2Type"),
                      ("float8_e5m2fnuz", "Float8E5M2FNUZType"), ("float8_e8m0fnu", "Float8E8M0FNUType"),
                      ("float4_e2m1fn", "Float4E2M1FNType")):
    _ELEMENT_TYPE_MAKERS[np.dtype(getattr(ml_dtypes, _name))] = getattr(ir, _maker).get
for _name, _width, _signed in (("int2", 2, True), ("int4", 4, True), ("uint2", 2, False), ("uint4", 4, False)):
    _ELEMENT_TYPE_MAKERS[np.dtype(getattr(ml_dtypes, _name))] = (
        (lambda w=_width: ir.IntegerType.get_signless(w)) if _signed else (lambda w=_width: ir.IntegerType.get_unsigned(w)))

DYNAMIC = ir.ShapedType.get_dynamic_size()


def element_type(dtype: np.dtype) -> ir.Type:
    """The MLIR element type of a dtype (needs an active context)."""
    return _ELEMENT_TYPE_MAKERS[dtype]()


def tensor_type(aval: ShapedArray) -> ir.RankedTensorType:
    """``tensor<2x3xf32>``; symbolic dimensions become ``?``; the token type is ``!stablehlo.token``."""
    if aval is abstract_token:  # toolkit.lax.create_token's values (typed as a tensor type: read as one nowhere)
        return stablehlo.TokenType.get()  # type: ignore[return-value]
    shape = aval.shape if is_static_shape(aval.shape) else [d if type(d) is int else DYNAMIC for d in aval.shape]
    return ir.RankedTensorType.get(shape, element_type(aval.dtype))


def dense_constant_attr(value: Any, aval: ShapedArray) -> ir.DenseElementsAttr:
    """A dense attribute holding ``value`` with ``aval``'s type; uniform arrays become splats."""
    value = np.ascontiguousarray(value, dtype=aval.dtype)  # views such as np.broadcast_to results are strided
    ttype = tensor_type(aval)
    flat = value.reshape(-1)
    if flat.size >= 1 and (flat.size == 1 or _is_uniform(flat)):
        one = flat[:1]
        raw = np.packbits(one, bitorder="little") if aval.dtype == dtypes.bool_ else one.view(np.uint8)
        return ir.DenseElementsAttr.get(raw, type=ttype)
    if aval.dtype == dtypes.bool_:
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=ttype)
    # Raw bytes work for every element type, bfloat16 and complex included.
    return ir.DenseElementsAttr.get(np.ascontiguousarray(value).view(np.uint8), type=ttype)


def _is_uniform(flat: np.ndarray) -> bool:
    # Bitwise comparison, so NaNs and signed zeros are told apart correctly.
    as_bytes = flat.view(np.uint8).reshape(flat.size, -1) if flat.dtype != np.bool_ else flat.reshape(-1, 1)
    return bool((as_bytes == as_bytes[0]).all())
