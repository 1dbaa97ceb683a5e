"""Rules for ``toolkit/lax/calls.py``: ``custom_jvp_call``, ``custom_vjp_call``, ``checkpoint``, ``name``.

* ``custom_jvp_call``: forward mode evaluates the user's rule (traced when the
  function was called, or called now with ``SymbolicZero``s); values the
  function closed over that carry tangents add their ordinary derivative.
  Reverse mode has no rule of its own: it linearizes this JVP and transposes it,
  as JAX does.
* ``custom_vjp_call``: reverse mode runs the user's ``fwd`` (residuals kept in
  Python) and ``bwd``; forward mode is refused, as in JAX.
* ``checkpoint``: forward mode is a ``checkpoint`` of the JVP (marked
  ``differentiated``). Reverse mode's forward pass is the checkpoint itself,
  also returning the values its policy saves; the backward pass is a
  ``checkpoint`` (``differentiated``, so behind an ``optimization_barrier``)
  that recomputes the other intermediate values from the inputs and runs the
  body's VJP.
* ``name``: the identity.
* ``jit`` (a nested ``toolkit.jit``): forward mode is a ``jit`` call of the
  body's JVP (the function keeps the name ``g``, as JAX 0.10's; the call's
  location is ``jvp(jit(g))``). Reverse mode's forward pass is the call
  itself; the backward pass is a ``jit`` call (``g_0``, located at
  ``transpose(jvp(jit(g)))``) of the body's VJP, which evaluates the body again from the saved inputs (as
  the rest of reverse mode recomputes primal values: XLA inlines the calls and
  CSE merges the two evaluations).
"""

from __future__ import annotations

import weakref
from typing import Any

from toolkit.ad.interpret import eval_program
from toolkit.ad.jvp import jvp_program
from toolkit.ad.registry import JVP_RULES, VJP_RULES
from toolkit.ad.values import Zero, add_any, instantiate, is_differentiable, tangent_aval, value_aval
from toolkit.ad.vjp import vjp_program
from toolkit.core import tracing
from toolkit.core.program import Program
from toolkit.lax import calls


# --- custom_jvp_call --------------------------------------------------------------------------------


def _custom_jvp_call_jvp(primals, tangents, *, call, jvp, num_consts, symbolic_zeros):
    n = len(primals) - num_consts
    args, consts = list(primals[:n]), list(primals[n:])
    arg_tangents, const_tangents = list(tangents[:n]), list(tangents[n:])
    num_out = len(call.outvars)
    if jvp.program is not None:
        results = eval_program(jvp.program, args + [instantiate(t) for t in arg_tangents] + consts)
        outs, out_tangents = list(results[:num_out]), list(results[num_out:])
    else:
        outs, out_tangents = jvp.fun(args, arg_tangents)
        outs, out_tangents = list(outs), list(out_tangents)
    if any(not isinstance(t, Zero) for t in const_tangents):
        # Closed-over values the rule does not see: their part of the derivative is the function's own.
        _, extra = jvp_program(call, list(primals), [Zero(tangent_aval(value_aval(a))) for a in args] + const_tangents)
        out_tangents = [add_any(t, e) for t, e in zip(out_tangents, extra)]
    return outs, out_tangents


JVP_RULES[calls.custom_jvp_call_p] = _custom_jvp_call_jvp


# --- custom_vjp_call --------------------------------------------------------------------------------


def _custom_vjp_call_jvp(primals, tangents, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_vjp_call_forward(primals, active, *, call, fwd, bwd, num_consts, symbolic_zeros):
    n = len(primals) - num_consts
    outs, residuals = fwd.fwd(list(primals[:n]), list(active[:n]))
    return outs, residuals


def _custom_vjp_call_backward(residuals, active, cotangents, *, call, fwd, bwd, num_consts, symbolic_zeros):
    return list(bwd.bwd(residuals, list(cotangents))) + [None] * num_consts


JVP_RULES[calls.custom_vjp_call_p] = _custom_vjp_call_jvp
VJP_RULES[calls.custom_vjp_call_p] = (_custom_vjp_call_forward, _custom_vjp_call_backward)


# --- checkpoint -------------------------------------------------------------------------------------


def _checkpoint_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nonzero = [not isinstance(t, Zero) for t in tangents]
    in_avals = [value_aval(p) for p in primals]
    out_diff = [is_differentiable(a) for a in jaxpr.out_avals]
    n = len(primals)

    def fun(*args: Any) -> list[Any]:
        it = iter(args[n:])
        ts = [next(it) if m else Zero(tangent_aval(a)) for m, a in zip(nonzero, in_avals)]
        outs, out_ts = jvp_program(jaxpr, list(args[:n]), ts)
        return list(outs) + [instantiate(t) for t, d in zip(out_ts, out_diff) if d]

    t_avals = [tangent_aval(a) for a, m in zip(in_avals, nonzero) if m]
    program, captured = tracing.trace_flat(fun, in_avals + t_avals)
    outs = calls.checkpoint_p.bind(*primals, *[t for t in tangents if not isinstance(t, Zero)], *captured,
                                   jaxpr=program, prevent_cse=prevent_cse, differentiated=True, policy=policy)
    num_out = len(jaxpr.outvars)
    it = iter(outs[num_out:])
    return list(outs[:num_out]), [next(it) if d else Zero(tangent_aval(a)) for d, a in zip(out_diff, jaxpr.out_avals)]


def _saved_by_policy(jaxpr: Program, policy: Any) -> list[Any]:
    """The variables of ``jaxpr``'s top-level equations whose values ``policy`` allows to save."""
    if policy is None:
        return []
    saved = []
    inputs = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        decision = policy(eqn.primitive, *[a.aval for a in eqn.inputs], **eqn.params)
        # Offloadable: saved. JAX moves the residual to `dst` and back with device_puts that its CPU lowering
        # drops (no transfer op reaches XLA); toolkit, CPU-only, saves it where it is (docs/sharding.md).
        if decision:
            saved += [v for v in eqn.outputs if v not in inputs]
    return saved


def _checkpoint_vjp_forward(primals, active, *, jaxpr, prevent_cse, differentiated, policy):
    saved_vars = _saved_by_policy(jaxpr, policy)
    num_out = len(jaxpr.outvars)
    body = jaxpr
    if saved_vars:
        body = Program(jaxpr.constvars, jaxpr.consts, jaxpr.invars, list(jaxpr.outvars) + saved_vars, jaxpr.eqns)
    outs = calls.checkpoint_p.bind(*primals, jaxpr=body, prevent_cse=prevent_cse, differentiated=differentiated,
                                   policy=policy)
    return list(outs[:num_out]), (list(primals), list(outs[num_out:]), saved_vars)


def _checkpoint_vjp_backward(residuals, active, cotangents, *, jaxpr, prevent_cse, differentiated, policy):
    primals, saved, saved_vars = residuals
    n = len(primals)
    in_avals = [value_aval(p) for p in primals]
    body_active = [a and is_differentiable(v) for a, v in zip(active, in_avals)]
    out_avals = jaxpr.out_avals
    out_diff = [is_differentiable(a) for a in out_avals]
    cts = [instantiate(ct) for ct, d in zip(cotangents, out_diff) if d]

    def fun(*args: Any) -> list[Any]:
        xs, known_values, cts_in = args[:n], args[n:n + len(saved)], args[n + len(saved):]
        _, backward = vjp_program(jaxpr, list(xs), body_active, known=dict(zip(saved_vars, known_values)))
        it = iter(cts_in)
        cts_in_full = [next(it) if d else Zero(tangent_aval(a)) for d, a in zip(out_diff, out_avals)]
        return [instantiate(ct) for ct, a in zip(backward(cts_in_full), body_active) if a]

    program, captured = tracing.trace_flat(fun, in_avals + [value_aval(s) for s in saved]
                                           + [value_aval(c) for c in cts])
    results = calls.checkpoint_p.bind(*primals, *saved, *cts, *captured, jaxpr=program, prevent_cse=prevent_cse,
                                      differentiated=True, policy=policy)
    it = iter(results)
    return [next(it) if a else None for a in body_active]


JVP_RULES[calls.checkpoint_p] = _checkpoint_jvp
VJP_RULES[calls.checkpoint_p] = (_checkpoint_vjp_forward, _checkpoint_vjp_backward)


# --- name -------------------------------------------------------------------------------------------


def _name_jvp(primals, tangents, *, name):
    return calls.name_p.bind(primals[0], name=name), tangents[0]


JVP_RULES[calls.name_p] = _name_jvp


# --- jit (nested jit calls) -------------------------------------------------------------------------


#: body program -> {(kind, avals, mask): derived program}: derivatives of one nested jit body are traced once
#: per signature (when they capture nothing), so repeated calls share one private function, as in JAX.
_DERIVED: "weakref.WeakKeyDictionary[Program, dict]" = weakref.WeakKeyDictionary()


def _trace_derived(jaxpr: Program, key: tuple, fun: Any, avals: list) -> tuple[Program, list]:
    table = _DERIVED.setdefault(jaxpr, {})
    program = table.get(key)
    if program is not None:
        return program, []
    program, captured = tracing.trace_flat(fun, avals)
    if not captured:
        table[key] = program
    return program, captured


def _jit_call_jvp(primals, tangents, *, name, jaxpr):
    nonzero = [not isinstance(t, Zero) for t in tangents]
    in_avals = [value_aval(p) for p in primals]
    out_diff = [is_differentiable(a) for a in jaxpr.out_avals]
    n = len(primals)

    def fun(*args: Any) -> list[Any]:
        it = iter(args[n:])
        ts = [next(it) if m else Zero(tangent_aval(a)) for m, a in zip(nonzero, in_avals)]
        outs, out_ts = jvp_program(jaxpr, list(args[:n]), ts)
        return list(outs) + [instantiate(t) for t, d in zip(out_ts, out_diff) if d]

    t_avals = [tangent_aval(a) for a, m in zip(in_avals, nonzero) if m]
    program, captured = _trace_derived(jaxpr, ("jvp", tuple(in_avals), tuple(nonzero)), fun, in_avals + t_avals)
    outs = calls.jit_call_p.bind(*primals, *[t for t in tangents if not isinstance(t, Zero)], *captured,
                                 name=name, jaxpr=program)  # JAX 0.10 keeps the name; the call is jvp(jit(g))
    num_out = len(jaxpr.outvars)
    it = iter(outs[num_out:])
    return list(outs[:num_out]), [next(it) if d else Zero(tangent_aval(a)) for d, a in zip(out_diff, jaxpr.out_avals)]


def _jit_call_vjp_forward(primals, active, *, name, jaxpr):
    outs = calls.jit_call_p.bind(*primals, name=name, jaxpr=jaxpr)
    return list(outs), list(primals)


def _jit_call_vjp_backward(primals, active, cotangents, *, name, jaxpr):
    n = len(primals)
    in_avals = [value_aval(p) for p in primals]
    body_active = [a and is_differentiable(v) for a, v in zip(active, in_avals)]
    out_avals = jaxpr.out_avals
    out_diff = [is_differentiable(a) for a in out_avals]
    cts = [instantiate(ct) for ct, d in zip(cotangents, out_diff) if d]

    def fun(*args: Any) -> list[Any]:
        xs, cts_in = args[:n], args[n:]
        _, backward = vjp_program(jaxpr, list(xs), body_active)
        it = iter(cts_in)
        cts_in_full = [next(it) if d else Zero(tangent_aval(a)) for d, a in zip(out_diff, out_avals)]
        return [instantiate(ct) for ct, a in zip(backward(cts_in_full), body_active) if a]

    program, captured = _trace_derived(jaxpr, ("vjp", tuple(in_avals), tuple(body_active),
                                              tuple(value_aval(c) for c in cts)), fun,
                                       in_avals + [value_aval(c) for c in cts])
    results = calls.jit_call_p.bind(*primals, *cts, *captured, name=name, jaxpr=program)
    it = iter(results)
    return [next(it) if a else None for a in body_active]


JVP_RULES[calls.jit_call_p] = _jit_call_jvp
VJP_RULES[calls.jit_call_p] = (_jit_call_vjp_forward, _jit_call_vjp_backward)
