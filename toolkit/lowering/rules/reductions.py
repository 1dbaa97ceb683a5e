"""StableHLO for ``toolkit.lax.reductions``: ``stablehlo.reduce`` with a one-op body."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.lax import reductions
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.elementwise import compare_type, complex_extremum
from toolkit.lowering.types import tensor_type


def identity(kind: str, dtype: np.dtype):
    """The neutral element of a monoid for ``dtype``."""
    if kind == "sum" or kind == "or" or kind == "xor":
        return 0
    if kind == "prod":
        return 1
    if kind == "and":
        return True if dtype == dtypes.bool_ else -1 if dtypes.is_signed(dtype) else np.iinfo(dtype).max
    if kind == "max":
        if dtypes.is_inexact(dtype):
            return -np.inf
        return False if dtype == dtypes.bool_ else np.iinfo(dtype).min
    if kind == "min":
        if dtypes.is_inexact(dtype):
            return np.inf
        return True if dtype == dtypes.bool_ else np.iinfo(dtype).max
    raise ValueError(kind)


_BODY_OPS = {"sum": stablehlo.AddOp, "prod": stablehlo.MulOp, "max": stablehlo.MaxOp, "min": stablehlo.MinOp,
             "and": stablehlo.AndOp, "or": stablehlo.OrOp, "xor": stablehlo.XorOp}


def reduce_with(ctx, x, kind: str, axes, aval_in, out_type):
    scalar = aval_in.update(shape=(), weak_type=False)
    init = ctx.constant(identity(kind, aval_in.dtype), scalar)
    op = stablehlo.ReduceOp([out_type], [x], [init], list(axes))
    scalar_type = tensor_type(scalar)
    block = op.body.blocks.append(scalar_type, scalar_type)
    with ir.InsertionPoint(block):
        if kind in ("max", "min") and dtypes.is_complex(aval_in.dtype):  # JAX's lexicographic order
            a, b = block.arguments
            body = complex_extremum(a, b, "GT" if kind == "max" else "LT", aval_in.dtype)
        else:
            body = _BODY_OPS[kind](*block.arguments).result
        stablehlo.ReturnOp([body])
    return op.result


def _rule(kind: str):
    def rule(ctx, x, *, axes):
        return reduce_with(ctx, x, kind, axes, ctx.avals_in[0], ctx.out_type)
    return rule


for _p, _kind in ((reductions.reduce_sum_p, "sum"), (reductions.reduce_prod_p, "prod"), (reductions.reduce_max_p, "max"),
                  (reductions.reduce_min_p, "min"), (reductions.reduce_and_p, "and"), (reductions.reduce_or_p, "or"),
                  (reductions.reduce_xor_p, "xor")):
    register_lowering(_p)(_rule(_kind))


def _arg_rule(is_max: bool):
    # A variadic reduce over (value, index) pairs; ties keep the lower index and NaN wins, as in numpy.
    def rule(ctx, x, *, axis, index_dtype):
        aval = ctx.avals_in[0]
        value_scalar = aval.update(shape=(), weak_type=False)
        index_scalar = ctx.avals_out[0].update(shape=())
        iota = ctx.iota(aval.update(dtype=index_dtype, weak_type=False), axis)
        init_value = ctx.constant(identity("max" if is_max else "min", aval.dtype), value_scalar)
        init_index = ctx.constant(0, index_scalar)
        vt, it = tensor_type(value_scalar), tensor_type(index_scalar)
        out_value_type = tensor_type(ctx.avals_out[0].update(dtype=aval.dtype))
        op = stablehlo.ReduceOp([out_value_type, ctx.out_type], [x, iota], [init_value, init_index], [axis])
        block = op.body.blocks.append(vt, it, vt, it)
        a_val, a_idx, b_val, b_idx = block.arguments
        with ir.InsertionPoint(block):
            direction = "GT" if is_max else "LT"
            ctype = stablehlo.ComparisonTypeAttr.get(compare_type(aval.dtype))
            better = stablehlo.CompareOp(a_val, b_val, stablehlo.ComparisonDirectionAttr.get(direction),
                                         compare_type=ctype).result
            if dtypes.is_inexact(aval.dtype):
                a_nan = stablehlo.CompareOp(a_val, a_val, stablehlo.ComparisonDirectionAttr.get("NE"),
                                            compare_type=ctype).result
                better = stablehlo.OrOp(better, a_nan).result
            equal = stablehlo.CompareOp(a_val, b_val, stablehlo.ComparisonDirectionAttr.get("EQ"),
                                        compare_type=ctype).result
            lower_index = stablehlo.CompareOp(a_idx, b_idx, stablehlo.ComparisonDirectionAttr.get("LT"),
                                              compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result
            take_a = stablehlo.OrOp(better, stablehlo.AndOp(equal, lower_index).result).result
            stablehlo.ReturnOp([stablehlo.SelectOp(take_a, a_val, b_val).result,
                                stablehlo.SelectOp(take_a, a_idx, b_idx).result])
        return op.results[1]
    return rule


register_lowering(reductions.argmax_p)(_arg_rule(True))
register_lowering(reductions.argmin_p)(_arg_rule(False))
