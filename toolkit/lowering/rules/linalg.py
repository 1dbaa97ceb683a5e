"""StableHLO for ``toolkit.lax.linalg``."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.lax import dot_algorithms, linalg
from toolkit.lax.dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.convolution import precision_config
from toolkit.lowering.types import element_type, tensor_type


# JAX's list for mixed float8 operands, which XLA multiplies without converting them.
_FLOAT8 = frozenset(np.dtype(getattr(ml_dtypes, name)) for name in (
    "float8_e4m3fn", "float8_e5m2", "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu"))


@register_lowering(linalg.dot_general_p)
def _dot_general(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return _dot_general_algorithm(ctx, lhs, rhs, dimension_numbers, precision)
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out_dtype = ctx.avals_out[0].dtype
    # XLA wants equal operand types: operands of two types are both converted to the result type first (JAX's
    # rule on CPU and GPU, identity converts included; not two float8 types, which XLA takes as they are).
    # Operands of one type stay as they are whatever the result type (int8 x int8 -> int32, bf16 x bf16 -> f32).
    if lhs_aval.dtype != rhs_aval.dtype and not (lhs_aval.dtype in _FLOAT8 and rhs_aval.dtype in _FLOAT8):
        lhs = stablehlo.ConvertOp(_retyped(ctx, 0, out_dtype), lhs).result
        rhs = stablehlo.ConvertOp(_retyped(ctx, 1, out_dtype), rhs).result
    dn = stablehlo.DotDimensionNumbers.get(lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
                                           lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
    # precision_config only when asked for (JAX always writes [DEFAULT, DEFAULT], which means the same).
    return stablehlo.DotGeneralOp(ctx.out_type, lhs, rhs, dn, precision_config=precision_config(precision)).result


def _algorithm_attr(algorithm, lhs_dtype, rhs_dtype):
    """StableHLO's ``#stablehlo.dot_algorithm`` for a ``DotAlgorithm`` or a preset (None for DEFAULT), as JAX."""
    if isinstance(algorithm, DotAlgorithm):
        return stablehlo.DotAlgorithm.get(
            element_type(np.dtype(algorithm.lhs_precision_type)), element_type(np.dtype(algorithm.rhs_precision_type)),
            element_type(np.dtype(algorithm.accumulation_type)), algorithm.lhs_component_count,
            algorithm.rhs_component_count, algorithm.num_primitive_operations, algorithm.allow_imprecise_accumulation)
    name = algorithm.name
    if name == "DEFAULT":
        return None
    if name.startswith("ANY_F8"):
        if lhs_dtype not in dot_algorithms._F8 or rhs_dtype not in dot_algorithms._F8:
            raise ValueError(f"The dot algorithm '{algorithm}' requires both inputs to have float8 dtypes. Got "
                             f"{lhs_dtype} and {rhs_dtype} instead.")
        return stablehlo.DotAlgorithm.get(element_type(lhs_dtype), element_type(rhs_dtype), ir.F32Type.get(), 1, 1, 1,
                                          algorithm == DotAlgorithmPreset.ANY_F8_ANY_F8_F32_FAST_ACCUM)
    kinds = {"F16": ir.F16Type.get, "BF16": ir.BF16Type.get, "TF32": ir.FloatTF32Type.get, "F32": ir.F32Type.get,
             "F64": ir.F64Type.get}
    parts = name.split("_")
    operations = int(parts[3][1:]) if len(parts) == 4 else 1
    return stablehlo.DotAlgorithm.get(kinds[parts[0]](), kinds[parts[1]](), kinds[parts[2]](), 1, 1, operations, False)


def _dot_general_algorithm(ctx, lhs, rhs, dimension_numbers, algorithm):
    """JAX's lowering of an explicit algorithm: operands converted to its types, accumulate, convert the result."""
    if ctx.platform == "cpu" and algorithm not in dot_algorithms.CPU_PRESETS:
        raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")
    lhs_aval, rhs_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    lhs_dtype, rhs_dtype, acc_dtype = dot_algorithms.algorithm_compute_types(algorithm, lhs_aval.dtype,
                                                                             rhs_aval.dtype, out_aval.dtype)
    if lhs_aval.dtype != lhs_dtype:
        lhs = stablehlo.ConvertOp(_retyped(ctx, 0, lhs_dtype), lhs).result
    if rhs_aval.dtype != rhs_dtype:
        rhs = stablehlo.ConvertOp(_retyped(ctx, 1, rhs_dtype), rhs).result
    acc_aval = out_aval if acc_dtype is None else out_aval.update(dtype=acc_dtype)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = stablehlo.DotDimensionNumbers.get(lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
                                           lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
    out = stablehlo.DotGeneralOp(tensor_type(acc_aval), lhs, rhs, dn, precision_config=precision_config(algorithm),
                                 algorithm=_algorithm_attr(algorithm, lhs_dtype, rhs_dtype)).result
    if acc_aval.dtype != out_aval.dtype:
        out = stablehlo.ConvertOp(ctx.out_type, out).result
    return out


def _retyped(ctx, i, dtype):
    return tensor_type(ctx.avals_in[i].update(dtype=dtype))
