"""Forward-mode rule of ``toolkit.lax.custom_batching``: the JVP of ``custom_vmap_call``, as JAX's.

The JVP is a ``custom_vmap_call`` again: its sub-program is the JVP of the call (operands: the
arguments, their tangents, then the closed-over values and theirs), and its rule is the JVP of the
user's rule. Where only one of a primal and its tangent is batched, toolkit gives the other the batch
dimension too (a broadcast) and runs the user's rule on both batched; JAX instead vmaps the rule's JVP
over the extra batched one. The values agree for any correct rule; toolkit's outputs are batched where
either input was. Like JAX's ``custom_vmap_jvp``, the rule's JVP does not see the tangents of closed-over
values. Reverse mode has no rule: JAX's ``custom_vmap`` is not reverse-differentiable either (wrap it in
``custom_vjp``).
"""

from __future__ import annotations

from toolkit.ad.api import jvp as jvp_api
from toolkit.ad.jvp import jvp_program
from toolkit.ad.registry import JVP_RULES
from toolkit.ad.values import instantiate, tangent_aval, value_aval
from toolkit.batching.interpret import broadcast_batched, staged
from toolkit.core import tracing
from toolkit.lax import custom_batching


def _jvp_of_rule(rule, num_args):

    def run(axis_size, in_batched, xs):
        primals, tangents = list(xs[:num_args]), list(xs[num_args:])
        either = [p or t for p, t in zip(in_batched[:num_args], in_batched[num_args:])]
        primals = [broadcast_batched(x, axis_size, 0) if e and not b else x
                   for x, b, e in zip(primals, in_batched[:num_args], either)]
        tangents = [broadcast_batched(x, axis_size, 0) if e and not b else x
                    for x, b, e in zip(tangents, in_batched[num_args:], either)]
        flags = []

        def on_primals(*ps):
            outs, out_batched = rule(axis_size, list(either), list(ps))
            flags.append(out_batched)
            return list(outs)

        outs, out_tangents = jvp_api(on_primals, primals, tangents)
        return list(outs) + list(out_tangents), list(flags[0]) * 2

    return custom_batching.FlatVmapRule(f"jvp({rule.name})", run)


def _custom_vmap_call_jvp(primals, tangents, *, call, rule, num_consts):
    num_args = len(primals) - num_consts
    avals = [value_aval(p) for p in primals]
    tangents = [instantiate(t) for t in tangents]
    num_out = len(call.outvars)

    def jvp_call(*xs):
        args, arg_ts = xs[:num_args], xs[num_args:2 * num_args]
        consts, const_ts = xs[2 * num_args:2 * num_args + num_consts], xs[2 * num_args + num_consts:]
        outs, out_ts = jvp_program(call, [*args, *consts], [*arg_ts, *const_ts])
        return [*outs, *(instantiate(t) for t in out_ts)]

    def run(*xs):
        t_avals = [tangent_aval(a) for a in avals]
        in_avals = avals[:num_args] + t_avals[:num_args] + avals[num_args:] + t_avals[num_args:]
        program, captured = tracing.trace_flat(jvp_call, in_avals)
        return list(custom_batching.custom_vmap_call_p.bind(
            *xs, *captured, call=program, rule=_jvp_of_rule(rule, num_args),
            num_consts=2 * num_consts + len(captured)))

    operands = [*primals[:num_args], *tangents[:num_args], *primals[num_args:], *tangents[num_args:]]
    outs = staged(run, *operands)
    return list(outs[:num_out]), list(outs[num_out:])


JVP_RULES[custom_batching.custom_vmap_call_p] = _custom_vmap_call_jvp
