"""StableHLO's dynamic ops become their static forms once their result is static (``mode=jax``).

What StableHLO's ``stablehlo-canonicalize-dynamism`` does (jaxlib does not
ship that pass to Python): after refinement a ``dynamic_reshape`` whose result
type is static is just a ``reshape``, and so on. Each rewrite needs the shape
operands that became attributes to be constants; otherwise the op stays
dynamic and the static check reports it.

| dynamic op | static op |
| --- | --- |
| ``dynamic_broadcast_in_dim`` | ``broadcast_in_dim`` |
| ``dynamic_reshape`` | ``reshape`` |
| ``dynamic_iota`` | ``iota`` |
| ``real_dynamic_slice`` | ``slice`` |
| ``dynamic_pad`` | ``pad`` |
| ``dynamic_gather`` | ``gather`` |
| ``dynamic_conv`` | ``convolution`` |

Example::

    TO_STATIC["stablehlo.dynamic_iota"](refinement, op)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import cast

import numpy as np
from jaxlib.mlir import ir

from toolkit.passes.pass_base import PassFailure, record_statistic
from toolkit.passes.refine import diagnostics
from toolkit.passes.refine.interface import Refinement
from toolkit.passes.refine.rules import shape_of


def replace_op(op: ir.Operation, name: str, operands: Iterable[ir.Value], attributes: dict[str, ir.Attribute]
               ) -> ir.Operation:
    """Replace the one-result ``op`` by a new op ``name`` with the same result type."""
    with op.context, ir.InsertionPoint(op):
        new = ir.Operation.create(name, results=[op.results[0].type], operands=list(operands),
                                  attributes=attributes, loc=op.location)
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()
    record_statistic("static-" + name.partition(".")[2])
    return new


def static_result(op: ir.Operation) -> bool:
    """True if the first result of ``op`` has a static tensor type."""
    result_type = op.results[0].type
    return isinstance(result_type, ir.RankedTensorType) and result_type.has_static_shape


def i64_array(values: Iterable[int]) -> ir.Attribute:
    """A ``DenseI64ArrayAttr`` (``array<i64: ...>``) of ``values``."""
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _to_broadcast_in_dim(refinement: Refinement, op: ir.Operation) -> None:
    if static_result(op):
        replace_op(op, "stablehlo.broadcast_in_dim", [op.operands[0]],
                   {"broadcast_dimensions": op.attributes["broadcast_dimensions"]})


def _to_reshape(refinement: Refinement, op: ir.Operation) -> None:
    if not static_result(op):
        return
    source = shape_of(op.operands[0].type)
    target = shape_of(op.results[0].type)
    assert target is not None  # static_result: a ranked result type
    if source is not None and all(d >= 0 for d in source) and \
            int(np.prod(source, dtype=np.int64)) != int(np.prod(target, dtype=np.int64)):
        raise PassFailure(f"number of output elements ({int(np.prod(target, dtype=np.int64))}) doesn't match "
                          f"expected number of elements ({int(np.prod(source, dtype=np.int64))})"
                          + diagnostics.context(op, refinement.constant), op)
    replace_op(op, "stablehlo.reshape", [op.operands[0]], {})


def _to_iota(refinement: Refinement, op: ir.Operation) -> None:
    if static_result(op):
        replace_op(op, "stablehlo.iota", [], {"iota_dimension": op.attributes["iota_dimension"]})


def _to_slice(refinement: Refinement, op: ir.Operation) -> None:
    maybe_parts = [refinement.constant(v) for v in list(op.operands)[1:4]]
    if not static_result(op) or any(p is None for p in maybe_parts):
        return
    parts = cast("list[np.ndarray]", maybe_parts)  # none is None (checked above)
    with op.context:
        attributes = {"start_indices": i64_array(parts[0]), "limit_indices": i64_array(parts[1]),
                      "strides": i64_array(parts[2])}
    replace_op(op, "stablehlo.slice", [op.operands[0]], attributes)


def _to_pad(refinement: Refinement, op: ir.Operation) -> None:
    maybe_parts = [refinement.constant(v) for v in list(op.operands)[2:5]]
    if not static_result(op) or any(p is None for p in maybe_parts):
        return
    parts = cast("list[np.ndarray]", maybe_parts)  # none is None (checked above)
    with op.context:
        attributes = {"edge_padding_low": i64_array(parts[0]), "edge_padding_high": i64_array(parts[1]),
                      "interior_padding": i64_array(parts[2])}
    replace_op(op, "stablehlo.pad", list(op.operands)[:2], attributes)


def _to_gather(refinement: Refinement, op: ir.Operation) -> None:
    sizes = refinement.constant(op.operands[2])
    if not static_result(op) or sizes is None:
        return
    attributes = {name: op.attributes[name] for name in op.attributes}
    with op.context:
        attributes["slice_sizes"] = i64_array(sizes.reshape(-1))
    replace_op(op, "stablehlo.gather", list(op.operands)[:2], attributes)


def _to_convolution(refinement: Refinement, op: ir.Operation) -> None:
    padding = refinement.constant(op.operands[2])
    if not static_result(op) or padding is None:
        return
    attributes = {name: op.attributes[name] for name in op.attributes}
    with op.context:
        attributes["padding"] = ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(-1, 2))
    replace_op(op, "stablehlo.convolution", list(op.operands)[:2], attributes)


#: Dynamic op name -> rewrite to its static form (a no-op while the result is dynamic).
TO_STATIC: dict[str, Callable[[Refinement, ir.Operation], None]] = {
    "stablehlo.dynamic_broadcast_in_dim": _to_broadcast_in_dim,
    "stablehlo.dynamic_reshape": _to_reshape,
    "stablehlo.dynamic_iota": _to_iota,
    "stablehlo.real_dynamic_slice": _to_slice,
    "stablehlo.dynamic_pad": _to_pad,
    "stablehlo.dynamic_gather": _to_gather,
    "stablehlo.dynamic_conv": _to_convolution,
}
