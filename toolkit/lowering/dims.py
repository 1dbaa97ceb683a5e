"""Symbolic dimensions in StableHLO: dimension variables, their arithmetic, and shape assertions.

A polymorphic module computes each dimension variable from the shapes of
``@main``'s arguments (``stablehlo.get_dimension_size``), as JAX does, and
checks what the tracer assumed with ``custom_call @shape_assertion`` ops that
carry the error message (``toolkit-refine-shapes`` folds them once shapes are
known, failing with the message when one is false).

Dimension values are ``tensor<i64>`` scalars; ``shape_value`` packs a shape
into the ``tensor<Nxi64>`` operand that dynamic ops
(``dynamic_broadcast_in_dim``, ``dynamic_reshape``, ``dynamic_iota``, ...) take.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import shape_poly
from toolkit.core.avals import ShapedArray

SHAPE_ASSERTION = "shape_assertion"


def _i64_scalar_type() -> ir.Type:
    return ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))


def i64_constant(value: int) -> ir.Value:
    attr = ir.DenseElementsAttr.get(np.asarray(value, np.int64).reshape(1).view(np.uint8), type=_i64_scalar_type())
    return stablehlo.ConstantOp(attr).result


def _compare(x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    return stablehlo.CompareOp(x, y, stablehlo.ComparisonDirectionAttr.get(direction),
                               compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result


class MlirDimOps:
    """``DimExpr.evaluate`` operations producing ``tensor<i64>`` values (Python's // and % semantics)."""

    def constant(self, value: int) -> ir.Value:
        return i64_constant(int(value))

    def add(self, x: ir.Value, y: ir.Value) -> ir.Value:
        return stablehlo.AddOp(x, y).result

    def mul(self, x: ir.Value, y: ir.Value) -> ir.Value:
        return stablehlo.MulOp(x, y).result

    def neg(self, x: ir.Value) -> ir.Value:
        return stablehlo.NegOp(x).result

    def floordiv(self, x: ir.Value, y: ir.Value) -> ir.Value:
        # Division truncates; step down when the signs differ and there is a remainder.
        quotient = stablehlo.DivOp(x, y).result
        remainder = stablehlo.RemOp(x, y).result
        zero = i64_constant(0)
        signs_differ = stablehlo.XorOp(_compare(x, zero, "LT"), _compare(y, zero, "LT")).result
        inexact = _compare(remainder, zero, "NE")
        adjust = stablehlo.AndOp(signs_differ, inexact).result
        return stablehlo.SelectOp(adjust, stablehlo.SubtractOp(quotient, i64_constant(1)).result, quotient).result

    def mod(self, x: ir.Value, y: ir.Value) -> ir.Value:
        # x - y * floordiv(x, y): the remainder takes the divisor's sign.
        return stablehlo.SubtractOp(x, stablehlo.MulOp(y, self.floordiv(x, y)).result).result

    def max(self, x: ir.Value, y: ir.Value) -> ir.Value:
        return stablehlo.MaxOp(x, y).result

    def min(self, x: ir.Value, y: ir.Value) -> ir.Value:
        return stablehlo.MinOp(x, y).result


_OPS = MlirDimOps()


def has_symbolic_dims(avals: Sequence[ShapedArray]) -> bool:
    return any(shape_poly.is_symbolic_dim(d) for a in avals for d in a.shape)


def dim_var_names(avals: Sequence[ShapedArray]) -> list[str]:
    """The dimension variables of ``avals``' shapes, sorted by name (JAX's order)."""
    return sorted({v for a in avals for d in a.shape if shape_poly.is_symbolic_dim(d) for v in d.get_vars()})


def dim_value(env: dict[str, ir.Value], d: Any) -> ir.Value:
    """``d`` (an int or a ``DimExpr``) as a ``tensor<i64>`` value."""
    if shape_poly.is_symbolic_dim(d):
        return d.evaluate(env, ops=_OPS)
    return i64_constant(int(d))


def shape_value(env: dict[str, ir.Value], shape: Sequence[Any]) -> ir.Value:
    """``shape`` as a ``tensor<Nxi64>`` value (for dynamic ops)."""
    one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(64))
    if not shape:
        attr = ir.DenseElementsAttr.get(np.zeros((0,), np.int64), type=ir.RankedTensorType.get(
            [0], ir.IntegerType.get_signless(64)))
        return stablehlo.ConstantOp(attr).result
    pieces = [stablehlo.ReshapeOp(one, dim_value(env, d)).result for d in shape]
    return pieces[0] if len(pieces) == 1 else stablehlo.ConcatenateOp(pieces, 0).result


def shape_assertion(predicate: ir.Value, message: str, values: Sequence[ir.Value] = ()) -> None:
    """``custom_call @shape_assertion(pred, values...) {error_message = message}``, as JAX emits.

    ``{0}``, ``{1}``, ... in ``message`` stand for ``values`` (filled in when the check fails).
    """
    op = stablehlo.CustomCallOp([], [predicate, *values], SHAPE_ASSERTION, has_side_effect=True)
    op.attributes["error_message"] = ir.StringAttr.get(message)


def _dimension_size(arg: ir.Value, axis: int) -> ir.Value:
    size = stablehlo.GetDimensionSizeOp(arg, axis).result
    return stablehlo.ConvertOp(_i64_scalar_type(), size).result


def _linear_in(expr: Any, var: str, var_exprs: dict[str, Any]) -> tuple[int, Any] | None:
    """``(k, rest)`` with ``expr == k * var + rest`` and ``rest`` free of ``var``; None if not linear."""
    env0 = {**var_exprs, var: 0}
    env1 = {**var_exprs, var: 1}
    rest = expr.evaluate(env0)
    k = expr.evaluate(env1) - rest
    if type(k) is not int or k == 0:
        return None
    if shape_poly.is_symbolic_dim(rest) and var in rest.get_vars():
        return None
    if not shape_poly.definitely_equal(k * var_exprs[var] + rest, expr):
        return None
    return k, rest


def compute_dim_vars(avals: Sequence[ShapedArray], args: Sequence[ir.Value],
                     arg_names: Sequence[str], *, assertions: bool = True) -> dict[str, ir.Value]:
    """Dimension variable values computed from the argument shapes, with JAX-style shape assertions.

    Solves one variable at a time from dimensions that are linear in a single
    unknown (``b``, ``2*b``, ``b + 3``); every other dimension, and every
    constraint of the scope, is asserted.
    """
    equations = []  # (expression, axis value, description)
    scope = None
    for aval, arg, name in zip(avals, args, arg_names):
        for axis, d in enumerate(aval.shape):
            if shape_poly.is_symbolic_dim(d):
                equations.append((d, _dimension_size(arg, axis), f"dimension {axis} of {name}"))
                scope = d.scope
    if not equations:
        return {}
    variables = sorted({v for d, _, _ in equations for v in d.get_vars()})
    var_exprs = {v: shape_poly.symbolic_shape(v, scope=scope)[0] for v in variables}
    env: dict[str, ir.Value] = {}
    origins: dict[str, str] = {}
    used: set[int] = set()  # equations a variable was solved from: they hold by construction
    progress = True
    while progress:
        progress = False
        for index, (expr, value, where) in enumerate(equations):
            unknown = [v for v in expr.get_vars() if v not in env]
            if index in used or len(unknown) != 1:
                continue
            var = unknown[0]
            linear = _linear_in(expr, var, {v: var_exprs[v] for v in variables})
            if linear is None:
                continue
            k, rest = linear
            numerator = _OPS.add(value, _OPS.mul(dim_value(env, rest), i64_constant(-1))) if rest != 0 else value
            if k != 1 and assertions:
                remainder = _OPS.mod(numerator, i64_constant(k))
                shape_assertion(_compare(remainder, i64_constant(0), "EQ"),
                                f"Input shapes do not match the polymorphic shapes specification. "
                                f"Division had remainder {{0}} when computing the value of '{var}' from "
                                f"{where}, which should be '{expr}'.", [remainder])
            env[var] = _OPS.floordiv(numerator, i64_constant(k)) if k != 1 else numerator
            origins[var] = where
            used.add(index)
            progress = True
    unsolved = sorted(set(variables) - set(env))
    if unsolved:
        raise ValueError(f"cannot solve for dimension variable(s) {', '.join(repr(v) for v in unsolved)} from the "
                         "argument shapes: each variable must appear alone (or linearly, e.g. 2*b + 1) in some "
                         "argument dimension")
    if not assertions:
        return env
    for var in variables:
        shape_assertion(_compare(env[var], i64_constant(1), "GE"),
                        f"Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for "
                        f"dimension variable '{var}'. Obtained '{var}' = {{0}} from {origins[var]}.", [env[var]])
    for index, (expr, value, where) in enumerate(equations):
        if index in used:
            continue
        expected = dim_value(env, expr)
        shape_assertion(_compare(value, expected, "EQ"),
                        f"Input shapes do not match the polymorphic shapes specification. Found inconsistency "
                        f"between {where} of size {{0}} and the expected '{expr}' = {{1}}.", [value, expected])
    if scope is not None:
        for is_equality, difference, text in scope.explicit_constraints():
            diff = dim_value(env, difference)
            predicate = _compare(diff, i64_constant(0), "EQ" if is_equality else "GE")
            shape_assertion(predicate, f"Input shapes do not match the polymorphic shapes specification. "
                            f"Constraint '{text}' is not satisfied.", [])
    return env
