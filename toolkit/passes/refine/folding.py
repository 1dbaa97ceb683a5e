"""Constant folding of small integer computations (shape arithmetic).

Only integer and boolean tensors are folded — float arithmetic is left to the
compiler, like StableHLO's own refinement does (folding floats here could
change results bit-for-bit). Every rule computes in the element type with
wrap-around, and returns None when it would divide by zero.

Example::

    fold("stablehlo.add", [np.array(2, np.int32), np.array(3, np.int32)], attrs, np.int32)
    # -> array(5, dtype=int32)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

#: Results larger than this are not folded (shape tensors are tiny).
FOLD_ELEMENT_LIMIT = 65536


_dtype_cache: dict[ir.Type, np.dtype | None] = {}


def numpy_dtype(element_type: ir.Type) -> np.dtype | None:
    """The numpy dtype of an integer/boolean element type, None for others."""
    try:
        return _dtype_cache[element_type]
    except KeyError:
        pass
    dtype = _numpy_dtype(element_type)
    if len(_dtype_cache) < 256:
        _dtype_cache[element_type] = dtype
    return dtype


def _numpy_dtype(element_type: ir.Type) -> np.dtype | None:
    if not isinstance(element_type, ir.IntegerType):
        return None
    width = element_type.width
    if width == 1:
        return np.dtype(np.bool_)
    if width not in (8, 16, 32, 64):
        return None
    return np.dtype(f"{'u' if element_type.is_unsigned else ''}int{width}")


def attribute_to_array(attr: ir.Attribute, tensor_type: ir.RankedTensorType) -> np.ndarray | None:
    """The value of an integer ``DenseElementsAttr`` as a numpy array of the tensor's shape."""
    dtype = numpy_dtype(tensor_type.element_type)
    if dtype is None or not isinstance(attr, ir.DenseElementsAttr):
        return None
    if not isinstance(attr, ir.DenseIntElementsAttr):
        attr = ir.DenseIntElementsAttr(attr)
    shape = tuple(tensor_type.shape)
    if attr.is_splat:
        splat = attr.get_splat_value()
        value = bool(splat.value) if dtype == np.bool_ else int(splat.value)
        if dtype.kind == "u" and value < 0:
            value += 1 << (8 * dtype.itemsize)
        return np.full(shape, value, dtype=dtype)
    return np.asarray(np.array(attr), dtype=dtype).reshape(shape)


def array_to_attribute(array: np.ndarray, tensor_type: ir.RankedTensorType) -> ir.DenseElementsAttr:
    """A ``DenseElementsAttr`` of ``tensor_type`` holding ``array``."""
    dtype = numpy_dtype(tensor_type.element_type)
    return ir.DenseElementsAttr.get(np.ascontiguousarray(array, dtype=dtype), type=tensor_type)


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray | None]:
    def rule(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
        lhs, rhs = operands
        return fn(lhs, rhs)
    return rule


def _divide(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    lhs, rhs = operands
    if np.any(rhs == 0) or dtype == np.bool_:
        return None
    # StableHLO divides integers truncating toward zero (C semantics).
    quotient = np.abs(lhs.astype(object)) // np.abs(rhs.astype(object))
    sign = np.where((lhs < 0) != (rhs < 0), -1, 1)
    return np.asarray(quotient * sign).astype(dtype)


def _remainder(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    lhs, rhs = operands
    if np.any(rhs == 0) or dtype == np.bool_:
        return None
    # The remainder takes the sign of the dividend (C fmod semantics).
    return np.fmod(lhs, rhs).astype(dtype)


_DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
               "GT": np.greater, "GE": np.greater_equal}


def _compare(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    direction = stablehlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value
    lhs, rhs = operands
    if lhs.dtype.kind not in "biu":
        return None
    return _DIRECTIONS[direction](lhs, rhs)


def _select(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    pred, on_true, on_false = operands
    return np.where(pred, on_true, on_false)


def _clamp(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    low, value, high = operands
    return np.minimum(np.maximum(value, low), high)


def _sign(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    return np.sign(operands[0]).astype(dtype)


def _not(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    return np.logical_not(operands[0]) if dtype == np.bool_ else np.invert(operands[0])


def _convert(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    source = operands[0]
    if dtype == np.bool_:
        return source != 0
    return source.astype(dtype)


def _shape_only(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype) -> np.ndarray | None:
    return None  # handled by the caller, which knows the result shape


def _broadcast_in_dim(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype,
                      result_shape: Sequence[int]) -> np.ndarray | None:
    source = operands[0]
    dims = list(op.attributes["broadcast_dimensions"])
    expanded_shape = [1] * len(result_shape)
    for axis, dim in enumerate(dims):
        expanded_shape[dim] = source.shape[axis]
    return np.broadcast_to(source.reshape(expanded_shape), tuple(result_shape)).copy()


def _concatenate(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype,
                 result_shape: Sequence[int]) -> np.ndarray | None:
    # One-dimensional operands (shapes being built) can only be joined along 0: no attribute to read.
    axis = 0 if operands[0].ndim == 1 else ir.IntegerAttr(op.attributes["dimension"]).value
    return np.concatenate(operands, axis=axis)


def _slice(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype,
           result_shape: Sequence[int]) -> np.ndarray | None:
    starts = list(op.attributes["start_indices"])
    limits = list(op.attributes["limit_indices"])
    strides = list(op.attributes["strides"])
    index = tuple(slice(start, limit, stride) for start, limit, stride in zip(starts, limits, strides))
    return operands[0][index]


def _reshape(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype,
             result_shape: Sequence[int]) -> np.ndarray | None:
    return operands[0].reshape(tuple(result_shape))


def _transpose(operands: Sequence[np.ndarray], op: ir.Operation, dtype: np.dtype,
               result_shape: Sequence[int]) -> np.ndarray | None:
    return np.transpose(operands[0], list(op.attributes["permutation"]))


_ELEMENTWISE: dict[str, Callable[..., np.ndarray | None]] = {
    "stablehlo.add": _binary(np.add),
    "stablehlo.subtract": _binary(np.subtract),
    "stablehlo.multiply": _binary(np.multiply),
    "stablehlo.maximum": _binary(np.maximum),
    "stablehlo.minimum": _binary(np.minimum),
    "stablehlo.and": _binary(np.bitwise_and),
    "stablehlo.or": _binary(np.bitwise_or),
    "stablehlo.xor": _binary(np.bitwise_xor),
    "stablehlo.divide": _divide,
    "stablehlo.remainder": _remainder,
    "stablehlo.compare": _compare,
    "stablehlo.select": _select,
    "stablehlo.clamp": _clamp,
    "stablehlo.sign": _sign,
    "stablehlo.not": _not,
    "stablehlo.negate": lambda ops, op, dtype: np.negative(ops[0]),
    "stablehlo.abs": lambda ops, op, dtype: np.abs(ops[0]),
    "stablehlo.convert": _convert,
}

_STRUCTURAL: dict[str, Callable[..., np.ndarray | None]] = {
    "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.concatenate": _concatenate,
    "stablehlo.slice": _slice,
    "stablehlo.reshape": _reshape,
    "stablehlo.transpose": _transpose,
}

#: Op names :func:`fold` may evaluate.
FOLDABLE = frozenset(_ELEMENTWISE) | frozenset(_STRUCTURAL)

#: Foldable ops whose value depends only on the operand values and the result type (no attribute
#: changes it): folding one again on the same operands gives the same array. Also true of a
#: ``concatenate`` of one-dimensional operands (the only possible dimension is 0).
ATTRIBUTE_FREE = frozenset(_ELEMENTWISE) - {"stablehlo.compare"} | {"stablehlo.reshape"}


def fold(op: ir.Operation, operands: Sequence[np.ndarray], result_type: ir.RankedTensorType,
         dtype: np.dtype | None = None, shape: tuple[int, ...] | None = None, name: str | None = None
         ) -> np.ndarray | None:
    """Evaluate ``op`` on constant ``operands``; None when it should not be folded.

    ``result_type`` must be static; its element type must be an integer or i1.
    ``dtype``, ``shape`` and ``name`` (``op.name``), when the caller knows them,
    save reading them through the bindings again.
    """
    if dtype is None:
        dtype = numpy_dtype(result_type.element_type)
        if dtype is None:
            return None
    if shape is None:
        shape = tuple(result_type.shape)
    if math.prod(shape) > FOLD_ELEMENT_LIMIT:
        return None
    if name is None:
        name = op.name
    structural = _STRUCTURAL.get(name)
    if structural is not None:
        value = structural(operands, op, dtype, shape)  # moves elements only: no arithmetic to warn about
    else:
        rule = _ELEMENTWISE.get(name)
        if rule is None:
            return None
        if name == "stablehlo.select" or name == "stablehlo.clamp":
            operands = [np.broadcast_to(o, shape) for o in operands]
        with np.errstate(all="ignore"):
            value = rule(operands, op, dtype)
    if value is None:
        return None
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    if value.shape != shape:
        try:
            value = np.broadcast_to(value, shape)
        except ValueError:
            return None
    return value.astype(dtype, copy=False)


def is_integer_like(element_type: Any) -> bool:
    """True for integer and boolean element types (the ones :func:`fold` handles)."""
    return numpy_dtype(element_type) is not None
