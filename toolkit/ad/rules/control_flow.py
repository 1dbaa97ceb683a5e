"""Rules for ``toolkit/lax/control_flow.py``: ``cond``/``switch``, ``while``, ``scan``.

Forward mode re-traces each body with ``jvp_program`` into a new body that
carries tangents next to primals (only the nonzero ones: a fixed point over
the loop carry decides which tangents the carry needs). Reverse mode uses
VJP rules (``VJP_RULES`` in ``toolkit/ad/registry.py``). What a rule derives
from a body is kept with it (``toolkit.lax.body_traces.derived``), so an eager
``jvp``/``grad`` of the same function derives it, and compiles it, once:

* ``cond``: the backward pass is a ``cond`` on the same index whose branches
  are the VJPs of the original branches;
* ``scan``: the forward scan also stacks every step's input carry and the
  results of its products (``dot_general``, convolutions); the backward pass
  is a scan in the opposite direction whose body runs the VJP of the original
  body at the saved carry, reading the saved products and recomputing the
  elementwise rest, and accumulates the cotangents of the loop constants;
* ``while``: reverse mode is refused, as in JAX (the trip count is unknown,
  so nothing can be stacked); use ``scan``.
"""

from __future__ import annotations

import weakref
from typing import Any, Sequence

from toolkit.ad.interpret import eval_program
from toolkit.ad.jvp import DifferentiationError, jvp_program
from toolkit.ad.registry import JVP_RULES, VJP_RULES
from toolkit.ad.values import Zero, add_any, instantiate, is_differentiable, tangent_aval, value_aval
from toolkit.ad.vjp import OUTPUT_ACTIVITY, active_outputs, vjp_program
from toolkit.core import tracing
from toolkit.core.program import Program, Var
from toolkit.lax import body_traces, control_flow, convolution, linalg


def _avals(values: Sequence[Any]) -> list[Any]:
    return [value_aval(v) for v in values]


def _tangent_avals(values: Sequence[Any]) -> list[Any]:
    return [tangent_aval(value_aval(v)) for v in values]


def _select(values: Sequence[Any], mask: Sequence[bool]) -> list[Any]:
    return [v for v, m in zip(values, mask) if m]


def _fill(mask: Sequence[bool], given: Sequence[Any], avals: Sequence[Any]) -> list[Any]:
    """Values at the ``mask`` positions from ``given``, ``Zero``s elsewhere."""
    it = iter(given)
    return [next(it) if m else Zero(tangent_aval(a)) for m, a in zip(mask, avals)]


def _unify_captures(traced: Sequence[tuple[Program, list[Any]]], num_explicit: int) -> tuple[list[Program], list[Any]]:
    """Branch programs that all take every branch's captured values (their own ones in place)."""
    captured_all = [c for _, captured in traced for c in captured]
    programs = []
    for k, (program, captured) in enumerate(traced):
        invars = list(program.invars[:num_explicit])
        for j, (_, other) in enumerate(traced):
            if j == k:
                invars += program.invars[num_explicit:]
            else:
                invars += [Var(value_aval(c)) for c in other]
        programs.append(Program(program.constvars, program.consts, invars, program.outvars, program.eqns))
    return programs, captured_all


# --- cond ------------------------------------------------------------------------------


def _cond_jvp(primals, tangents, *, branches):
    index, *operands = primals
    operand_tangents = tangents[1:]
    nonzero = [not isinstance(t, Zero) for t in operand_tangents]
    operand_avals = _avals(operands)
    num_out = len(branches[0].outvars)

    def branch_jvp(branch: Program, out_nonzero: list[bool] | None, seen: list[bool]):
        def fun(*args: Any) -> list[Any]:
            ops, ts = args[:len(operands)], args[len(operands):]
            outs, out_ts = jvp_program(branch, list(ops), _fill(nonzero, ts, operand_avals))
            for i, t in enumerate(out_ts):
                seen[i] = seen[i] or not isinstance(t, Zero)
            mask = out_nonzero if out_nonzero is not None else [False] * num_out
            return list(outs) + [instantiate(t) for t, m in zip(out_ts, mask) if m]
        return fun

    in_avals = operand_avals + [tangent_aval(a) for a in _select(operand_avals, nonzero)]

    def derive() -> tuple[tuple[tuple[Program, ...], list[bool]], list[Any]]:
        seen = [False] * num_out
        for branch in branches:
            tracing.trace_flat(branch_jvp(branch, None, seen), in_avals)
        out_nonzero = [s and is_differentiable(a) for s, a in zip(seen, branches[0].out_avals)]
        traced = [tracing.trace_flat(branch_jvp(b, out_nonzero, [False] * num_out), in_avals) for b in branches]
        programs, captured = _unify_captures(traced, len(in_avals))
        return (tuple(programs), out_nonzero), captured

    (programs, out_nonzero), captured = body_traces.derived(branches, ("cond jvp", tuple(nonzero), tuple(in_avals)), derive)
    outs = control_flow.cond_p.bind(index, *operands, *_select(operand_tangents, nonzero), *captured,
                                    branches=programs)
    primal_outs = outs[:num_out]
    return primal_outs, _fill(out_nonzero, outs[num_out:], _avals(primal_outs))


def _cond_vjp_forward(primals, active, *, branches):
    return control_flow.cond_p.bind(*primals, branches=branches), list(primals)


def _cond_vjp_backward(primals, active, cotangents, *, branches):
    index, *operands = primals
    operand_active = [a and is_differentiable(value_aval(x)) for a, x in zip(active[1:], operands)]
    out_avals = branches[0].out_avals
    out_diff = [is_differentiable(a) for a in out_avals]
    cts = [instantiate(ct) for ct, d in zip(cotangents, out_diff) if d]

    def branch_vjp(branch: Program):
        def fun(*args: Any) -> list[Any]:
            ops, cts_in = list(args[:len(operands)]), args[len(operands):]
            _, backward = vjp_program(branch, ops, operand_active)
            cts_ops = backward(_fill(out_diff, cts_in, out_avals))
            return [instantiate(ct) for ct, a in zip(cts_ops, operand_active) if a]
        return fun

    in_avals = _avals(operands) + _avals(cts)
    programs, captured = body_traces.derived(branches, ("cond vjp", tuple(operand_active), tuple(in_avals)), lambda: _unify_captures(
        [tracing.trace_flat(branch_vjp(b), in_avals) for b in branches], len(in_avals)))
    results = control_flow.cond_p.bind(index, *operands, *cts, *captured, branches=tuple(programs))
    it = iter(results)
    return [None] + [next(it) if a else None for a in operand_active]


JVP_RULES[control_flow.cond_p] = _cond_jvp
VJP_RULES[control_flow.cond_p] = (_cond_vjp_forward, _cond_vjp_backward)


# --- while -------------------------------------------------------------------------------


def _while_jvp(primals: list[Any], tangents: list[Any], *, cond_program: Program, body_program: Program,
               cond_nconsts: int, body_nconsts: int) -> tuple[list[Any], list[Any]]:
    cond_consts = primals[:cond_nconsts]
    body_consts = primals[cond_nconsts:cond_nconsts + body_nconsts]
    carry = primals[cond_nconsts + body_nconsts:]
    body_const_t = tangents[cond_nconsts:cond_nconsts + body_nconsts]
    carry_t = tangents[cond_nconsts + body_nconsts:]
    const_nonzero = [not isinstance(t, Zero) for t in body_const_t]
    carry_avals, const_avals = _avals(carry), _avals(body_consts)
    carry_nonzero = [not isinstance(t, Zero) and is_differentiable(a) for t, a in zip(carry_t, carry_avals)]
    cond_avals = _avals(cond_consts)
    key = ("while jvp", tuple(carry_nonzero), tuple(const_nonzero), tuple(carry_avals), tuple(const_avals),
           tuple(cond_avals))
    (new_body, new_cond, carry_nonzero, num_body_captured), captured = body_traces.derived(
        [body_program, cond_program], key,
        lambda: _derive_while_jvp(cond_program, body_program, carry_nonzero, const_nonzero, carry_avals, const_avals,
                                  cond_avals))
    body_captured, cond_captured = captured[:num_body_captured], captured[num_body_captured:]
    carry_t_in = [instantiate(carry_t[i]) if not isinstance(carry_t[i], Zero) else instantiate(Zero(
        tangent_aval(carry_avals[i]))) for i in range(len(carry)) if carry_nonzero[i]]
    new_body_consts = list(body_consts) + _select(body_const_t, const_nonzero) + list(body_captured)
    new_cond_consts = list(cond_consts) + list(cond_captured)
    outs = control_flow.while_p.bind(*new_cond_consts, *new_body_consts, *carry, *carry_t_in, cond_program=new_cond,
                                     body_program=new_body, cond_nconsts=len(new_cond_consts),
                                     body_nconsts=len(new_body_consts))
    primal_outs = outs[:len(carry)]
    return primal_outs, _fill(carry_nonzero, outs[len(carry):], carry_avals)


def _derive_while_jvp(cond_program: Program, body_program: Program, carry_nonzero: list[bool],
                      const_nonzero: list[bool], carry_avals: list[Any], const_avals: list[Any],
                      cond_avals: list[Any]) -> tuple[tuple[Program, Program, list[bool], int], list[Any]]:
    """The forward-mode loop's body and condition, the carries with tangents, and what they captured."""
    num_carry, num_consts = len(carry_avals), len(const_avals)
    while True:  # a fixed point: a carry whose tangent becomes nonzero in the body needs one throughout
        grown: list[bool] = list(carry_nonzero)

        def body(*args: Any, mask=list(carry_nonzero), grown=grown) -> list[Any]:
            n, nt = num_carry, sum(mask)
            c, ct = args[:n], args[n:n + nt]
            k, kt = args[n + nt:n + nt + num_consts], args[n + nt + num_consts:]
            outs, out_ts = jvp_program(body_program, list(c) + list(k),
                                       _fill(mask, ct, carry_avals) + _fill(const_nonzero, kt, const_avals))
            for i, t in enumerate(out_ts):
                grown[i] = grown[i] or (not isinstance(t, Zero) and is_differentiable(carry_avals[i]))
            return list(outs) + [instantiate(t) for t, m in zip(out_ts, mask) if m]

        in_avals = (carry_avals + [tangent_aval(a) for a in _select(carry_avals, carry_nonzero)] + const_avals
                    + [tangent_aval(a) for a in _select(const_avals, const_nonzero)])
        new_body, body_captured = tracing.trace_flat(body, in_avals)
        if grown == carry_nonzero:
            break
        carry_nonzero = grown

    num_carry_t = sum(carry_nonzero)

    def cond(*args: Any) -> list[Any]:
        return eval_program(cond_program, list(args[:num_carry]) + list(args[num_carry + num_carry_t:]))

    cond_in = carry_avals + [tangent_aval(a) for a in _select(carry_avals, carry_nonzero)] + cond_avals
    new_cond, cond_captured = tracing.trace_flat(cond, cond_in)
    return (new_body, new_cond, carry_nonzero, len(body_captured)), list(body_captured) + list(cond_captured)


def _while_vjp_forward(primals, active, **params):
    raise DifferentiationError(
        "Reverse-mode differentiation does not work for toolkit.lax.while_loop or fori_loop: the number of "
        "iterations is unknown when the program is built, so the loop's intermediate values cannot be saved. "
        "Use toolkit.lax.scan (a fixed number of steps) for reverse mode, or forward mode (toolkit.jvp).")


def _while_active_outputs(active_in, *, cond_program, body_program, cond_nconsts, body_nconsts):
    """The carries that pick up a derivative: those active at entry, and (to a fixed point) those the body makes
    from active carries or constants. A loop that only counts (its carries made by comparisons, floor and
    constants) has none, so reverse mode leaves it out, as JAX's JVP finds its tangents zero."""
    body_consts = list(active_in[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(active_in[cond_nconsts + body_nconsts:])
    while True:
        out = active_outputs(body_program, body_consts + carry)
        grown = [a or b for a, b in zip(carry, out)]
        if grown == carry:
            return carry
        carry = grown


JVP_RULES[control_flow.while_p] = _while_jvp
VJP_RULES[control_flow.while_p] = (_while_vjp_forward, None)
OUTPUT_ACTIVITY[control_flow.while_p] = _while_active_outputs


# --- scan ---------------------------------------------------------------------------------


def _split_scan(values: Sequence[Any], num_carry: int, num_consts: int):
    values = list(values)
    num_xs = len(values) - num_carry - num_consts
    return values[:num_carry], values[num_carry:num_carry + num_xs], values[num_carry + num_xs:]


def _scan_jvp(primals, tangents, *, body, num_carry, num_consts, length, reverse, unroll):
    carry, xs, consts = _split_scan(primals, num_carry, num_consts)
    carry_t, xs_t, consts_t = _split_scan(tangents, num_carry, num_consts)
    carry_avals, const_avals = _avals(carry), _avals(consts)
    x_avals = body.in_avals[num_carry:num_carry + len(xs)]
    xs_nonzero = [not isinstance(t, Zero) for t in xs_t]
    consts_nonzero = [not isinstance(t, Zero) for t in consts_t]
    carry_nonzero = [not isinstance(t, Zero) and is_differentiable(a) for t, a in zip(carry_t, carry_avals)]
    num_ys = len(body.outvars) - num_carry
    key = ("scan jvp", tuple(carry_nonzero), tuple(xs_nonzero), tuple(consts_nonzero), tuple(carry_avals),
           tuple(const_avals))
    (new_body, carry_nonzero, ys_nonzero), captured = body_traces.derived([body], key, lambda: _derive_scan_jvp(
        body, num_carry, carry_nonzero, xs_nonzero, consts_nonzero, carry_avals, list(x_avals), const_avals))
    carry_t_in = [instantiate(carry_t[i]) if not isinstance(carry_t[i], Zero) else instantiate(Zero(
        tangent_aval(carry_avals[i]))) for i in range(num_carry) if carry_nonzero[i]]
    operands = (list(carry) + carry_t_in + list(xs) + _select(xs_t, xs_nonzero) + list(consts)
                + _select(consts_t, consts_nonzero) + list(captured))
    num_carry_t = len(carry_t_in)
    outs = control_flow.scan_p.bind(*operands, body=new_body, num_carry=num_carry + num_carry_t,
                                    num_consts=num_consts + sum(consts_nonzero) + len(captured), length=length,
                                    reverse=reverse, unroll=unroll)
    carry_out = outs[:num_carry]
    carry_out_t = outs[num_carry:num_carry + num_carry_t]
    ys = outs[num_carry + num_carry_t:num_carry + num_carry_t + num_ys]
    ys_t = outs[num_carry + num_carry_t + num_ys:]
    primal_outs = list(carry_out) + list(ys)
    return primal_outs, _fill(carry_nonzero, carry_out_t, carry_avals) + _fill(ys_nonzero, ys_t, _avals(ys))


def _derive_scan_jvp(body: Program, num_carry: int, carry_nonzero: list[bool], xs_nonzero: list[bool],
                     consts_nonzero: list[bool], carry_avals: list[Any], x_avals: list[Any],
                     const_avals: list[Any]) -> tuple[tuple[Program, list[bool], list[bool]], list[Any]]:
    """The forward-mode scan's step, the carries and outputs with tangents, and what the step captured."""
    num_xs, num_consts = len(x_avals), len(const_avals)
    num_ys = len(body.outvars) - num_carry
    while True:
        grown = list(carry_nonzero)
        ys_nonzero = [False] * num_ys

        def step(*step_args: Any, mask=list(carry_nonzero), grown=grown, ys_nonzero=ys_nonzero) -> list[Any]:
            args = list(step_args)
            c, args = args[:num_carry], args[num_carry:]
            ct, args = args[:sum(mask)], args[sum(mask):]
            x, args = args[:num_xs], args[num_xs:]
            xt, args = args[:sum(xs_nonzero)], args[sum(xs_nonzero):]
            k, kt = args[:num_consts], args[num_consts:]
            outs, out_ts = jvp_program(body, c + x + k, _fill(mask, ct, carry_avals) + _fill(xs_nonzero, xt, x_avals)
                                       + _fill(consts_nonzero, kt, const_avals))
            for i in range(num_carry):
                grown[i] = grown[i] or (not isinstance(out_ts[i], Zero) and is_differentiable(carry_avals[i]))
            for j in range(num_ys):
                ys_nonzero[j] = not isinstance(out_ts[num_carry + j], Zero)
            carry_out_t = [instantiate(t) for t, m in zip(out_ts[:num_carry], mask) if m]
            ys_t = [t for t in out_ts[num_carry:] if not isinstance(t, Zero)]
            return list(outs[:num_carry]) + carry_out_t + list(outs[num_carry:]) + ys_t

        in_avals = (carry_avals + [tangent_aval(a) for a in _select(carry_avals, carry_nonzero)] + x_avals
                    + [tangent_aval(a) for a in _select(x_avals, xs_nonzero)] + const_avals
                    + [tangent_aval(a) for a in _select(const_avals, consts_nonzero)])
        new_body, captured = tracing.trace_flat(step, in_avals)
        if grown == carry_nonzero:
            return (new_body, carry_nonzero, ys_nonzero), list(captured)
        carry_nonzero = grown


#: Primitives whose results the forward scan stacks for the backward pass instead of letting it recompute them
#: (``checkpoint_policies.dots_saveable``'s choice): products are most of a step's work, and the elementwise
#: rest is cheaper to recompute than to store and read back per step.
_SAVED_PRIMITIVES = (linalg.dot_general_p, convolution.conv_general_dilated_p)


def _step_dependent_products(body: Program, num_varying: int) -> list[Var]:
    """Outputs of ``body``'s top-level products that depend on a carry or ``xs`` input (its first ``num_varying``).

    A product of loop constants alone is the same every step: the backward body recomputes it
    (XLA hoists it) rather than reading a stack of copies.
    """
    varying: set[Var] = set(body.invars[:num_varying])
    saved: list[Var] = []
    for eqn in body.eqns:
        if any(isinstance(a, Var) and a in varying for a in eqn.inputs):
            varying.update(eqn.outputs)
            if eqn.primitive in _SAVED_PRIMITIVES:
                saved += [v for v in eqn.outputs if v not in saved]
    return saved


#: body -> {number of varying inputs: (the forward body that also stacks what the backward pass reads, its vars)}
_SAVING: "weakref.WeakKeyDictionary[Program, dict[int, tuple[Program, list[Var]]]]" = weakref.WeakKeyDictionary()


def _scan_vjp_forward(primals, active, *, body, num_carry, num_consts, length, reverse, unroll):
    # The same loop, also stacking the carry each step starts from (the backward pass restarts there) and the
    # step's products (the backward pass reads them instead of computing them again).
    num_xs = len(primals) - num_carry - num_consts
    made = _SAVING.setdefault(body, {})
    if num_carry + num_xs not in made:  # a function of the body alone: made once per body (its executable found again)
        saved = _step_dependent_products(body, num_carry + num_xs)
        made[num_carry + num_xs] = (Program(body.constvars, body.consts, body.invars,
                                            body.outvars + body.invars[:num_carry] + saved, body.eqns), saved)
    saving, saved_vars = made[num_carry + num_xs]
    outs = control_flow.scan_p.bind(*primals, body=saving, num_carry=num_carry, num_consts=num_consts, length=length,
                          reverse=reverse, unroll=unroll)
    num_outs = len(body.outvars)
    saved_carries = outs[num_outs:num_outs + num_carry]
    return outs[:num_outs], (list(primals), saved_carries, outs[num_outs + num_carry:], saved_vars)


def _scan_vjp_backward(residuals, active, cotangents, *, body, num_carry, num_consts, length, reverse, unroll):
    primals, saved_carries, saved_products, saved_vars = residuals
    carry, xs, consts = _split_scan(primals, num_carry, num_consts)
    _, xs_active, consts_active = _split_scan(active, num_carry, num_consts)
    carry_avals = _avals(carry)
    x_avals = body.in_avals[num_carry:num_carry + len(xs)]
    const_avals = _avals(consts)
    y_avals = body.out_avals[num_carry:]
    carry_diff = [is_differentiable(a) for a in carry_avals]
    xs_diff = [a and is_differentiable(v) for a, v in zip(xs_active, x_avals)]
    consts_diff = [a and is_differentiable(v) for a, v in zip(consts_active, const_avals)]
    # A ys output nobody differentiates (its cotangent is a symbolic zero, as for the ys a caller drops) is not
    # stacked as zeros, read and added every step: the body sees a Zero.
    ys_nonzero = [is_differentiable(a) and not isinstance(ct, Zero) and ct is not None
                  for a, ct in zip(y_avals, cotangents[num_carry:])]
    ct_carry = [instantiate(ct) for ct, d in zip(cotangents[:num_carry], carry_diff) if d]
    ct_ys = [ct for ct, d in zip(cotangents[num_carry:], ys_nonzero) if d]
    accumulators = [instantiate(Zero(tangent_aval(a))) for a in _select(const_avals, consts_diff)]
    body_active = carry_diff + xs_diff + consts_diff
    num_saved = len(saved_vars)

    def step(*step_args: Any) -> list[Any]:
        args = list(step_args)
        n_ct, n_acc = len(ct_carry), len(accumulators)
        ct_c, acc, args = args[:n_ct], args[n_ct:n_ct + n_acc], args[n_ct + n_acc:]
        c, args = args[:num_carry], args[num_carry:]
        x, args = args[:len(xs)], args[len(xs):]
        products, args = args[:num_saved], args[num_saved:]
        ct_y, k = args[:len(ct_ys)], args[len(ct_ys):]
        _, backward = vjp_program(body, c + x + k, body_active, known=dict(zip(saved_vars, products)))
        cts = backward(_fill(carry_diff, ct_c, carry_avals) + _fill(ys_nonzero, ct_y, y_avals))
        ct_c_prev = [instantiate(ct) for ct, d in zip(cts[:num_carry], carry_diff) if d]
        ct_x = [instantiate(ct) for ct, d in zip(cts[num_carry:num_carry + len(xs)], xs_diff) if d]
        ct_k = [ct for ct, d in zip(cts[num_carry + len(xs):], consts_diff) if d]
        new_acc = [instantiate(add_any(a, ct)) for a, ct in zip(acc, ct_k)]
        return ct_c_prev + new_acc + ct_x

    in_avals = (_avals(ct_carry) + _avals(accumulators) + carry_avals + list(x_avals)
                + [v.aval for v in saved_vars] + [a.update(shape=a.shape[1:]) for a in _avals(ct_ys)] + const_avals)
    key = ("scan vjp", tuple(body_active), tuple(ys_nonzero), tuple(in_avals), len(xs), tuple(map(id, saved_vars)))
    program, captured = body_traces.derived([body], key, lambda: tracing.trace_flat(step, in_avals))
    num_new_carry = len(ct_carry) + len(accumulators)
    outs = control_flow.scan_p.bind(*ct_carry, *accumulators, *saved_carries, *xs, *saved_products, *ct_ys, *consts,
                          *captured, body=program, num_carry=num_new_carry, num_consts=len(consts) + len(captured),
                          length=length, reverse=not reverse, unroll=unroll)
    it_carry = iter(outs[:len(ct_carry)])
    it_consts = iter(outs[len(ct_carry):num_new_carry])
    it_xs = iter(outs[num_new_carry:])
    cts_in = [next(it_carry) if d else None for d in carry_diff]
    cts_in += [next(it_xs) if d else None for d in xs_diff]
    cts_in += [next(it_consts) if d else None for d in consts_diff]
    return cts_in


JVP_RULES[control_flow.scan_p] = _scan_jvp
VJP_RULES[control_flow.scan_p] = (_scan_vjp_forward, _scan_vjp_backward)
