"""``toolkit-simplify``: small algebraic StableHLO cleanups, as rewrite patterns.

IR contract: before — any valid StableHLO; after — the same values computed
with fewer ops. Each rule only fires when the replacement has exactly the
result type of the op it replaces. Which rule fired how often is recorded as
pass statistics (``toolkit-opt --mlir-pass-statistics``).

Float ``x + 0 -> x`` turns ``-0.0 + 0.0 = +0.0`` into ``-0.0``; pass
``ieee-strict=true`` to keep float additions of zero.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from jaxlib.mlir import ir

from toolkit.ir.builders import build, is_splat_constant
from toolkit.passes.pass_base import Pattern, PatternPass, pattern
from toolkit.passes.registry import register_pass


def _is_float_tensor(value: ir.Value) -> bool:
    element = getattr(value.type, "element_type", None)
    return isinstance(element, (ir.FloatType, ir.ComplexType))


def _replace_with(op: ir.Operation, rewriter: Any, value: ir.Value) -> bool:
    if value.type != op.results[0].type:
        return False
    rewriter.replace_op(op, [value])
    return True


def _identity_operand(op: ir.Operation, rewriter: Any, neutral: float, *, commutative: bool) -> bool:
    lhs, rhs = op.operands[0], op.operands[1]
    if is_splat_constant(rhs, neutral):
        return _replace_with(op, rewriter, lhs)
    if commutative and is_splat_constant(lhs, neutral):
        return _replace_with(op, rewriter, rhs)
    return False


@pattern("stablehlo.add")
def add_zero(op: ir.Operation, rewriter: Any) -> bool:
    # x + 0 -> x ; 0 + x -> x
    return _identity_operand(op, rewriter, 0, commutative=True)


@pattern("stablehlo.add", name="add_zero")
def add_zero_integer(op: ir.Operation, rewriter: Any) -> bool:
    # x + 0 -> x (integers only: exact for every x)
    if _is_float_tensor(op.operands[0]):
        return False
    return _identity_operand(op, rewriter, 0, commutative=True)


@pattern("stablehlo.multiply")
def multiply_one(op: ir.Operation, rewriter: Any) -> bool:
    # x * 1 -> x ; 1 * x -> x
    return _identity_operand(op, rewriter, 1, commutative=True)


@pattern("stablehlo.subtract")
def subtract_zero(op: ir.Operation, rewriter: Any) -> bool:
    # x - 0 -> x
    return _identity_operand(op, rewriter, 0, commutative=False)


@pattern("stablehlo.transpose")
def transpose_of_transpose(op: ir.Operation, rewriter: Any) -> bool:
    # transpose(transpose(x, p), q) -> transpose(x, p[q]) ; -> x when p[q] is the identity
    inner = op.operands[0].owner
    if not isinstance(inner, (ir.Operation, ir.OpView)) or inner.operation.name != "stablehlo.transpose":
        return False
    inner = inner.operation
    outer_perm = list(op.attributes["permutation"])
    inner_perm = list(inner.attributes["permutation"])
    combined = [inner_perm[axis] for axis in outer_perm]
    source = inner.operands[0]
    if combined == list(range(len(combined))):
        return _replace_with(op, rewriter, source)
    with op.context, op.location, ir.InsertionPoint(op):
        fused = build("stablehlo.transpose", [source], [op.results[0].type],
                      {"permutation": ir.DenseI64ArrayAttr.get(combined)})
    rewriter.replace_op(op, [fused.result])
    return True


@pattern("stablehlo.reshape")
def reshape_of_reshape(op: ir.Operation, rewriter: Any) -> bool:
    # reshape(reshape(x)) -> reshape(x) ; -> x when the shapes already agree
    inner = op.operands[0].owner
    if not isinstance(inner, (ir.Operation, ir.OpView)) or inner.operation.name != "stablehlo.reshape":
        return False
    source = inner.operation.operands[0]
    if source.type == op.results[0].type:
        return _replace_with(op, rewriter, source)
    with op.context, op.location, ir.InsertionPoint(op):
        fused = build("stablehlo.reshape", [source], [op.results[0].type])
    rewriter.replace_op(op, [fused.result])
    return True


@pattern("stablehlo.reshape")
def reshape_to_same_type(op: ir.Operation, rewriter: Any) -> bool:
    # reshape(x : T) : T -> x
    return _replace_with(op, rewriter, op.operands[0])


@pattern("stablehlo.convert")
def convert_to_same_type(op: ir.Operation, rewriter: Any) -> bool:
    # convert(x : T) : T -> x
    return _replace_with(op, rewriter, op.operands[0])


@pattern("stablehlo.broadcast_in_dim")
def broadcast_to_same_shape(op: ir.Operation, rewriter: Any) -> bool:
    # broadcast_in_dim(x : T, dims = [0, 1, ..]) : T -> x
    dims = list(op.attributes["broadcast_dimensions"])
    if dims != list(range(len(dims))):
        return False
    return _replace_with(op, rewriter, op.operands[0])


@register_pass
@dataclasses.dataclass(frozen=True)
class SimplifyPass(PatternPass):
    """Algebraic StableHLO simplifications (see module docstring)."""

    name: ClassVar[str] = "toolkit-simplify"
    description: ClassVar[str] = (
        "Algebraic StableHLO cleanups: x+0, x*1, x-0, transpose/reshape chains, no-op convert/broadcast.")

    ieee_strict: bool = dataclasses.field(
        default=False, metadata={"help": "keep float x+0 (it maps -0.0 to +0.0)"})

    def patterns(self) -> list[Pattern]:
        return [add_zero_integer if self.ieee_strict else add_zero, multiply_one, subtract_zero,
                transpose_of_transpose, reshape_to_same_type, reshape_of_reshape,
                convert_to_same_type, broadcast_to_same_shape]
