"""StableHLO for ``toolkit.lax.sorting``: ``stablehlo.sort`` with a lexicographic
comparator region, and ``chlo.top_k``."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, stablehlo

from toolkit.core import dtypes
from toolkit.lax import sorting
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.elementwise import compare_type
from toolkit.lowering.rules.structural import assert_dim_at_least
from toolkit.lowering.types import tensor_type


def _cmp(a, b, direction: str, dtype) -> ir.Value:
    return stablehlo.CompareOp(a, b, stablehlo.ComparisonDirectionAttr.get(direction),
                               compare_type=stablehlo.ComparisonTypeAttr.get(compare_type(dtype))).result


def _less_and_equal(a, b, dtype, need_equal: bool = True) -> tuple[ir.Value, ir.Value | None]:
    """``(a < b, a == b)`` in numpy's sort order (NaN largest and equal to itself); ``a == b`` only if needed."""
    if dtypes.is_complex(dtype):
        part_dtype = dtypes.float32 if dtype == dtypes.complex64 else dtypes.float64
        ra, rb = stablehlo.RealOp(a).result, stablehlo.RealOp(b).result
        ia, ib = stablehlo.ImagOp(a).result, stablehlo.ImagOp(b).result
        r_lt, r_eq = _less_and_equal(ra, rb, part_dtype)
        i_lt, i_eq = _less_and_equal(ia, ib, part_dtype, need_equal)
        lt = stablehlo.OrOp(r_lt, stablehlo.AndOp(r_eq, i_lt).result).result
        return lt, stablehlo.AndOp(r_eq, i_eq).result if need_equal else None
    if dtypes.is_inexact(dtype):
        a_nan = _cmp(a, a, "NE", dtype)
        b_nan = _cmp(b, b, "NE", dtype)
        not_a_nan = stablehlo.NotOp(a_nan).result
        lt = stablehlo.OrOp(_cmp(a, b, "LT", dtype), stablehlo.AndOp(b_nan, not_a_nan).result).result
        if not need_equal:
            return lt, None
        return lt, stablehlo.OrOp(_cmp(a, b, "EQ", dtype), stablehlo.AndOp(a_nan, b_nan).result).result
    return _cmp(a, b, "LT", dtype), _cmp(a, b, "EQ", dtype) if need_equal else None


@register_lowering(sorting.sort_p)
def _sort(ctx, *operands, dimension, is_stable, num_keys):
    op = stablehlo.SortOp(ctx.out_types, list(operands), dimension=dimension, is_stable=is_stable)
    scalar_types = []
    for aval in ctx.avals_in:
        t = tensor_type(aval.update(shape=(), weak_type=False))
        scalar_types += [t, t]
    block = op.comparator.blocks.append(*scalar_types)
    args = list(block.arguments)
    with ir.InsertionPoint(block):
        # Lexicographic: a < b on key 0, or equal on key 0 and a < b on key 1, ...
        result = None
        for key in reversed(range(num_keys)):
            dtype = ctx.avals_in[key].dtype
            lt, eq = _less_and_equal(args[2 * key], args[2 * key + 1], dtype, need_equal=result is not None)
            result = lt if result is None else stablehlo.OrOp(lt, stablehlo.AndOp(eq, result).result).result
        stablehlo.ReturnOp([result])
    return list(op.results)


@register_lowering(sorting.top_k_p)
def _top_k(ctx, operand, *, k):
    assert_dim_at_least(ctx, ctx.avals_in[0].shape[-1], k, f"top_k: k={k} and the last dimension")
    op = chlo.TopKOp(operand, k, results=ctx.out_types)
    return list(op.results)
