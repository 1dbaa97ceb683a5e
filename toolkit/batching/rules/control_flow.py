"""Batching rules for ``cond``, ``while`` and ``scan``.

Which loop carries and branch outputs become batched is found before
tracing, from the programs' data dependencies (``batched_outputs``, iterated
to a fixed point for loop carries); the batched bodies are traced with the
batch dimension first on every batched value (``batch_subprogram``).

* ``cond``/``switch`` with a batched index: every branch runs on the whole
  batch and ``select_n`` picks each element's result (as JAX does); a branch
  sees the elements it does not take through ``stop_gradient`` (JAX's guard
  against NaN derivatives of untaken branches).
  With an unbatched index: one ``cond`` of batched branches.
* ``while`` with a batched predicate: the loop runs while *any* element's
  predicate holds; the body computes every element's predicate and keeps
  the old carry of the finished ones (``select_n``), so every carry is batched.
* ``scan``: batched scanned operands carry the batch in dimension 1 (the
  scanned axis stays first), so stacked outputs are batched in dimension 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit.batching.interpret import (
    AxisData,
    batch_program,
    batch_subprogram,
    batched_outputs,
    bdim_at_front,
    moveaxis,
    staged,
)
from toolkit.batching.registry import register_batching
from toolkit.core import tracing
from toolkit.core.avals import aval_of
from toolkit.lax import autodiff, control_flow
from toolkit.lax import elementwise
from toolkit.lax import reductions
from toolkit.lax import structural


def _front_all(axis: AxisData, xs: Sequence[Any], dims: Sequence[int | None], want: Sequence[bool]) -> list[Any]:
    return [bdim_at_front(x, d, axis.size) if w else x for x, d, w in zip(xs, dims, want)]


def _select(which: Any, cases: Sequence[Any]) -> Any:
    """``select_n`` with a ``(B,)`` selector broadcast to the cases' ``(B, ...)`` shape."""
    shape = aval_of(cases[0]).shape
    if len(shape) > 1:
        which = structural.broadcast_in_dim(which, tuple(shape), (0,))
    return elementwise.select_n(which, *cases)


# --- cond -------------------------------------------------------------------------------


# The rules' `run` closures hold tuples, not lists: an eager vmap of the same function (its bodies kept by
# toolkit.lax.body_traces) is then the same closure, whose batched program compiles once (core.eager_functions).


def _cond(axis, args, dims, *, branches):
    (index, *ops), (di, *dops) = args, dims
    dops = tuple(dops)
    if di is not None:
        def run(index: Any, *ops: Any) -> list[Any]:
            index = elementwise.clamp(np.int32(0), moveaxis(index, di, 0), np.int32(len(branches) - 1))
            ops = tuple(bdim_at_front(x, d, axis.size) for x, d in zip(ops, dops))
            per_branch = []
            for i, branch in enumerate(branches):
                # JAX's guard for reverse mode (jax#1052): a branch sees the elements it does not take through
                # stop_gradient, so its derivative there (log of a negative: NaN) never reaches the operands.
                taken = elementwise.eq(index, np.int32(i))
                guarded = [_select(taken, [autodiff.stop_gradient(x), x]) for x in ops]
                outs, out_dims = batch_program(branch, guarded, (0,) * len(ops), axis)
                per_branch.append([bdim_at_front(x, d, axis.size) for x, d in zip(outs, out_dims)])
            return [_select(index, cases) for cases in zip(*per_branch)]
        outs = staged(run, index, *ops)
        return outs, [0] * len(outs)

    in_b = tuple(d is not None for d in dops)
    out_b = tuple(any(col) for col in zip(*(batched_outputs(b, in_b) for b in branches)))

    def run(index: Any, *operands: Any) -> list[Any]:
        ops = _front_all(axis, operands, dops, in_b)
        traced = [batch_subprogram(b, in_b, axis, out_b) for b in branches]
        programs, captured = control_flow.common_captured(traced, len(ops))
        return list(control_flow.cond_p.bind(index, *ops, *captured, branches=tuple(programs)))

    outs = staged(run, index, *ops)
    return outs, [0 if b else None for b in out_b]


# --- while ------------------------------------------------------------------------------


def _while(axis, args, dims, *, cond_program, body_program, cond_nconsts, body_nconsts):
    # Operands: cond consts, body consts, carry; the programs take (carry, consts).
    nc, nb = cond_nconsts, body_nconsts
    dc, db, dx = tuple(dims[:nc]), tuple(dims[nc:nc + nb]), tuple(dims[nc + nb:])
    cb, bb = [d is not None for d in dc], [d is not None for d in db]
    carry_b = [d is not None for d in dx]
    while True:
        out = batched_outputs(body_program, carry_b + bb)
        new = [a or b for a, b in zip(carry_b, out)]
        if new == carry_b:
            break
        carry_b = new
    pred_b = batched_outputs(cond_program, carry_b + cb)[0]
    size = axis.size
    if pred_b:
        carry_b = [True] * len(dx)  # a batched predicate: every carry is batched
    cb, bb, carry_b = tuple(cb), tuple(bb), tuple(carry_b)

    def run(*xs: Any) -> list[Any]:
        cc = _front_all(axis, xs[:nc], dc, cb)
        bc = _front_all(axis, xs[nc:nc + nb], db, bb)
        x = _front_all(axis, xs[nc + nb:], dx, carry_b)
        if not pred_b:
            cprog, ccap = batch_subprogram(cond_program, carry_b + cb, axis, [False])
            bprog, bcap = batch_subprogram(body_program, carry_b + bb, axis, carry_b)
            return list(control_flow.while_p.bind(*cc, *ccap, *bc, *bcap, *x, cond_program=cprog, body_program=bprog,
                                        cond_nconsts=nc + len(ccap), body_nconsts=nb + len(bcap)))
        c_dims = [0 if b else None for b in cb]
        b_dims = [0 if b else None for b in bb]
        n = len(x)

        def pred_of(carry: Sequence[Any], consts: Sequence[Any]) -> Any:
            (pred,), (d,) = batch_program(cond_program, list(carry) + list(consts), [0] * n + c_dims, axis)
            return bdim_at_front(pred, d, size)

        def new_cond(*ins: Any) -> list[Any]:
            return [reductions.reduce_or(pred_of(ins[:n], ins[n:]), (0,))]

        def new_body(*ins: Any) -> list[Any]:
            carry, consts_c, consts_b = ins[:n], ins[n:n + nc], ins[n + nc:]
            pred = pred_of(carry, consts_c)
            outs, out_dims = batch_program(body_program, list(carry) + list(consts_b), [0] * n + b_dims, axis)
            return [_select(pred, [old, bdim_at_front(new, d, size)])
                    for old, new, d in zip(carry, outs, out_dims)]

        carry_avals = [aval_of(v) for v in x]
        c_avals, b_avals = [aval_of(v) for v in cc], [aval_of(v) for v in bc]
        cprog, ccap = tracing.trace_flat(new_cond, carry_avals + c_avals)
        bprog, bcap = tracing.trace_flat(new_body, carry_avals + c_avals + b_avals)
        return list(control_flow.while_p.bind(*cc, *ccap, *cc, *bc, *bcap, *x, cond_program=cprog, body_program=bprog,
                                    cond_nconsts=nc + len(ccap), body_nconsts=nc + nb + len(bcap)))

    outs = staged(run, *args)
    return outs, [0 if b else None for b in carry_b]


# --- scan -------------------------------------------------------------------------------


def _scan(axis, args, dims, *, body, num_carry, num_consts, length, reverse, unroll):
    n_xs = len(args) - num_carry - num_consts
    dcarry, dxs = tuple(dims[:num_carry]), tuple(dims[num_carry:num_carry + n_xs])
    dconsts = tuple(dims[num_carry + n_xs:])
    xs_b, consts_b = [d is not None for d in dxs], [d is not None for d in dconsts]
    carry_b = [d is not None for d in dcarry]
    while True:
        out = batched_outputs(body, carry_b + xs_b + consts_b)[:num_carry]
        new = [a or b for a, b in zip(carry_b, out)]
        if new == carry_b:
            break
        carry_b = new
    ys_b = tuple(batched_outputs(body, carry_b + xs_b + consts_b)[num_carry:])
    in_b, carry_b, consts_b = tuple(carry_b + xs_b + consts_b), tuple(carry_b), tuple(consts_b)

    def run(*ins: Any) -> list[Any]:
        carry = _front_all(axis, ins[:num_carry], dcarry, carry_b)
        xs = [moveaxis(x, d, 1) if d is not None else x for x, d in zip(ins[num_carry:num_carry + n_xs], dxs)]
        consts = _front_all(axis, ins[num_carry + n_xs:], dconsts, consts_b)
        program, captured = batch_subprogram(body, in_b, axis, carry_b + ys_b)
        return list(control_flow.scan_p.bind(*carry, *xs, *consts, *captured, body=program, num_carry=num_carry,
                                   num_consts=num_consts + len(captured), length=length, reverse=reverse,
                                   unroll=unroll))

    outs = staged(run, *args)
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in ys_b]


register_batching(control_flow.cond_p, _cond)
register_batching(control_flow.while_p, _while)
register_batching(control_flow.scan_p, _scan)
