"""StableHLO for ``toolkit.lax.control_flow``: ``stablehlo.case`` and ``stablehlo.while`` with regions.

Branch regions of ``case`` use the outer operands directly (its regions may
capture values from above, as JAX emits them). ``while`` regions get every value
they use as a loop-carried block argument, constants included: that is the form
XLA's HLO while takes, and it keeps the regions closed.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray
from toolkit.core.shape_poly import definitely_equal, is_symbolic_dim
from toolkit.lax import control_flow
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.structural import dynamic_slice, reshape_to
from toolkit.lowering.types import tensor_type


@register_lowering(control_flow.cond_p)
def _cond(ctx, index, *operands, branches):
    case = stablehlo.CaseOp(ctx.out_types, index, len(branches))
    for region, program in zip(case.regions, branches):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            stablehlo.ReturnOp(ctx.lower_program(program, list(operands)))
    return list(case.results)


@register_lowering(control_flow.while_p)
def _while(ctx, *operands, cond_program, body_program, cond_nconsts, body_nconsts):
    types = [tensor_type(a) for a in ctx.avals_in]
    loop = stablehlo.WhileOp(types, list(operands))
    nconsts = cond_nconsts + body_nconsts
    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        args = list(cond_block.arguments)
        cond_consts, carry = args[:cond_nconsts], args[nconsts:]
        stablehlo.ReturnOp(ctx.lower_program(cond_program, carry + cond_consts))
    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        args = list(body_block.arguments)
        body_consts, carry = args[cond_nconsts:nconsts], args[nconsts:]
        new_carry = ctx.lower_program(body_program, carry + body_consts)
        stablehlo.ReturnOp(args[:nconsts] + new_carry)
    return list(loop.results)[nconsts:]


def _scalar_i32(ctx, value: int) -> ir.Value:
    return ctx.constant(np.int32(value), ShapedArray((), dtypes.int32))


def _dim_i32(ctx, d) -> ir.Value:
    """A (possibly symbolic) size as an ``i32`` scalar, the scan counter's type."""
    if not is_symbolic_dim(d):
        return _scalar_i32(ctx, d)
    return stablehlo.ConvertOp(tensor_type(ShapedArray((), dtypes.int32)), ctx.dim_value(d)).result


@register_lowering(control_flow.scan_p)
def _scan(ctx, *operands, body, num_carry, num_consts, length, reverse, unroll):
    # Loop state: (counter, carry..., ys buffers..., xs..., consts...). The counter runs 0..length-1;
    # the slot it reads and writes is the counter, or length-1-counter when reversed.
    avals_in = list(ctx.avals_in)
    num_xs = len(operands) - num_carry - num_consts
    carry, xs, consts = (list(operands[:num_carry]), list(operands[num_carry:num_carry + num_xs]),
                         list(operands[num_carry + num_xs:]))
    ys_avals = list(ctx.avals_out[num_carry:])
    ys_init = []
    for aval in ys_avals:
        zero = ctx.constant(np.zeros((), aval.dtype), ShapedArray((), aval.dtype))
        ys_init.append(ctx.broadcast(zero, aval))
    if definitely_equal(length, 0):  # no iteration: slicing an empty xs would not even verify
        return carry + ys_init
    state = [_scalar_i32(ctx, 0)] + carry + ys_init + xs + consts
    i32 = tensor_type(ShapedArray((), dtypes.int32))
    types = ([i32] + [tensor_type(a) for a in avals_in[:num_carry]] + [tensor_type(a) for a in ys_avals]
             + [tensor_type(a) for a in avals_in[num_carry:]])
    loop = stablehlo.WhileOp(types, state)

    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        limit = _dim_i32(ctx, length)
        direction = stablehlo.ComparisonDirectionAttr.get("LT")
        less = stablehlo.CompareOp(cond_block.arguments[0], limit, direction,
                                   compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result
        stablehlo.ReturnOp([less])

    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        args = list(body_block.arguments)
        counter = args[0]
        b_carry = args[1:1 + num_carry]
        b_ys = args[1 + num_carry:1 + num_carry + len(ys_avals)]
        b_xs = args[1 + num_carry + len(ys_avals):1 + num_carry + len(ys_avals) + num_xs]
        b_consts = args[1 + num_carry + len(ys_avals) + num_xs:]
        slot = counter if not reverse else stablehlo.SubtractOp(_dim_i32(ctx, length - 1), counter).result
        ranks = [a.ndim for a in avals_in[num_carry:num_carry + num_xs]] + [a.ndim for a in ys_avals]
        zero = _scalar_i32(ctx, 0) if any(r > 1 for r in ranks) else None
        x_slices = []
        for x, aval in zip(b_xs, avals_in[num_carry:num_carry + num_xs]):
            sizes = (1,) + tuple(aval.shape[1:])
            piece = dynamic_slice(ctx, x, aval, [slot] + [zero] * (aval.ndim - 1), sizes, aval.update(shape=sizes))
            x_slices.append(reshape_to(ctx, piece, aval.update(shape=aval.shape[1:])))
        outs = ctx.lower_program(body, list(b_carry) + x_slices + list(b_consts))
        new_carry, new_ys = outs[:num_carry], outs[num_carry:]
        updated = []
        for buf, y, aval in zip(b_ys, new_ys, ys_avals):
            row = reshape_to(ctx, y, aval.update(shape=(1,) + tuple(aval.shape[1:])))
            updated.append(stablehlo.DynamicUpdateSliceOp(buf, row, [slot] + [zero] * (aval.ndim - 1)).result)
        next_counter = stablehlo.AddOp(counter, _scalar_i32(ctx, 1)).result
        stablehlo.ReturnOp([next_counter] + list(new_carry) + updated + list(b_xs) + list(b_consts))
    results = list(loop.results)
    return results[1:1 + num_carry + len(ys_avals)]
