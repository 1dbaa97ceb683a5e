"""Batching rules for the call primitives of ``toolkit/lax/calls.py`` (``checkpoint``, ``name``,
``custom_jvp_call``, ``custom_vjp_call``, ``jit``).

* ``checkpoint``: its sub-program is batched and the ``checkpoint`` kept, so
  ``grad(vmap(checkpoint(f)))`` still recomputes;
* ``name``: the identity, the batch dimension stays;
* ``jit`` (a nested ``toolkit.jit``): its sub-program is batched and the call
  kept (same ``name``, as JAX), so ``vmap`` of a nested jit is still one private
  function in the module;
* ``custom_jvp_call``: the call is kept, with its primal sub-program and its
  JVP rule batched (every output batched), so ``grad(vmap(f))`` uses the
  custom rule as ``vmap(grad(f))`` does. A traced rule is batched as a
  program; a ``symbolic_zeros`` rule (a Python function run when
  differentiated) is wrapped in a ``vmap`` with its zero tangents kept
  symbolic.
* ``custom_vjp_call``: the call is kept with its primal batched; ``fwd`` and
  ``bwd`` are wrapped in ``vmap`` (residuals batched), and the cotangents of
  inputs that were not batched are summed over the batch, as JAX does.
"""

from __future__ import annotations

import weakref
from typing import Any

from toolkit.batching.interpret import (
    batch_subprogram,
    batched_outputs,
    bdim_at_front,
    staged,
    unbatched_aval,
)
from toolkit.ad.custom_derivatives import VJPFunctions
from toolkit.ad.values import Zero, instantiate
from toolkit.batching.api import vmap
from toolkit.batching.registry import register_batching
from toolkit.core import pytrees
from toolkit.core.avals import aval_of
from toolkit.lax import calls, parallel, reductions
from toolkit.lax.calls import JVPRule
from toolkit.lax.control_flow import common_captured

#: nested jit body -> {(axis, batched inputs): batched body}
_BATCHED: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def _vmap(fun, in_axes, axis):
    return vmap(fun, in_axes=tuple(in_axes), out_axes=0, axis_size=axis.size, spmd_axis_name=axis.spmd_axis_name)


def _per_example_zeros(tangents, in_b, present):
    """Tangents of one example: the given values at ``present``, unbatched symbolic zeros elsewhere."""

    def fill(values):
        out, given = [], iter(values)
        for t, b, here in zip(tangents, in_b, present):
            out.append(next(given) if here else Zero(unbatched_aval(t.aval, 0 if b else None)))
        return out
    return fill


def _vmapped_jvp_function(fun, in_b, axis):
    """A ``symbolic_zeros`` JVP function ``(args, tangents) -> (outs, out_tangents)`` of the batched call."""

    def batched(arg_values, tangents):
        present = [not isinstance(t, Zero) for t in tangents]
        fill = _per_example_zeros(tangents, in_b, present)
        num_args = len(arg_values)

        def one(*xs):
            outs, out_tangents = fun(list(xs[:num_args]), fill(xs[num_args:]))
            return list(outs), [instantiate(t) for t in out_tangents]

        axes = [0 if b else None for b in in_b] + [0 if b else None for b, p in zip(in_b, present) if p]
        given = [t for t, p in zip(tangents, present) if p]
        outs, out_tangents = _vmap(one, axes, axis)(*arg_values, *given)
        return outs, out_tangents
    return batched


def _vmapped_vjp_functions(fwd, bwd, in_b, axis):
    """``fwd``/``bwd`` of the batched call: per example under ``vmap``; unbatched inputs' cotangents summed."""

    def batched_fwd(leaf_values, perturbed):
        def one(*xs):
            outs, residuals = fwd.fwd(list(xs), perturbed)
            for leaf in pytrees.tree_leaves(residuals):
                try:
                    aval_of(leaf)
                except TypeError:
                    raise TypeError(f"custom_vjp rule {fwd.__name__} under vmap: the residuals fwd returns are "
                                    f"batched, so they must be arrays, but one is a {type(leaf).__name__}") from None
            return outs, residuals
        return _vmap(one, [0 if b else None for b in in_b], axis)(*leaf_values)

    def batched_bwd(residuals, cotangents):
        present = [not isinstance(c, Zero) for c in cotangents]
        fill = _per_example_zeros(cotangents, [True] * len(cotangents), present)

        def one(res, *cts):
            return list(bwd.bwd(res, fill(cts)))

        given = [c for c, p in zip(cotangents, present) if p]
        result = _vmap(one, [0] * (1 + len(given)), axis)(residuals, *given)
        return [c if c is None or b else reductions.reduce_sum(c, (0,)) for c, b in zip(result, in_b)]

    return batched_fwd, batched_bwd


def _checkpoint_rule(axis, args, dims, **params):
    program = params["jaxpr"]
    in_b = [d is not None for d in dims]
    out_b = batched_outputs(program, in_b)

    def run(*xs):
        xs = [bdim_at_front(x, d, axis.size) if b else x for x, d, b in zip(xs, dims, in_b)]
        batched, captured = batch_subprogram(program, in_b, axis, out_b)
        return list(calls.checkpoint_p.bind(*xs, *captured, **dict(params, jaxpr=batched)))

    outs = staged(run, *args)
    return outs, [0 if b else None for b in out_b]


def _jit_call_rule(axis, args, dims, *, name, jaxpr):
    # Tuples: `run` closes over hashable values only, so an eager vmap of the same jitted function at the same
    # batching is one closure (toolkit.core.eager_functions) and compiles once, as JAX's does.
    dims = tuple(dims)
    in_b = tuple(d is not None for d in dims)
    out_b = tuple(batched_outputs(jaxpr, in_b))

    def run(*xs):
        xs = [bdim_at_front(x, d, axis.size) if b else x for x, d, b in zip(xs, dims, in_b)]
        # Batched once per body and batching (when it captures nothing): repeated calls share one function.
        table = _BATCHED.setdefault(jaxpr, {})
        try:
            key = (axis, in_b, parallel.axis_context())
            batched = table.get(key)
        except TypeError:
            key, batched = None, None
        captured = []
        if batched is None:
            batched, captured = batch_subprogram(jaxpr, in_b, axis, out_b)
            if not captured and key is not None:
                table[key] = batched
        return list(calls.jit_call_p.bind(*xs, *captured, name=name, jaxpr=batched))

    outs = staged(run, *args)
    return outs, [0 if b else None for b in out_b]


def _custom_jvp_rule(axis, args, dims, *, call, jvp, num_consts, symbolic_zeros):

    in_b = [d is not None for d in dims]
    num_args, num_out = len(args) - num_consts, len(call.outvars)

    def run(*xs):
        xs = [bdim_at_front(x, d, axis.size) if b else x for x, d, b in zip(xs, dims, in_b)]
        batched_call, captured = batch_subprogram(call, in_b, axis, [True] * num_out)
        if jvp.program is not None:  # (*args, *tangents, *consts) -> (*outs, *out_tangents)
            jvp_in_b = in_b[:num_args] + in_b[:num_args] + in_b[num_args:]
            batched_jvp, jvp_captured = batch_subprogram(jvp.program, jvp_in_b, axis, [True] * (2 * num_out))
            (batched_call, batched_jvp), captured = common_captured(
                [(batched_call, captured), (batched_jvp, jvp_captured)], [len(in_b), len(jvp_in_b)])
            rule = JVPRule(jvp.__name__, batched_jvp, None)
        else:
            rule = JVPRule(jvp.__name__, None, _vmapped_jvp_function(jvp.fun, in_b[:num_args], axis))
        return list(calls.custom_jvp_call_p.bind(*xs, *captured, call=batched_call, jvp=rule,
                                                 num_consts=num_consts + len(captured),
                                                 symbolic_zeros=symbolic_zeros))

    return staged(run, *args), [0] * num_out


def _custom_vjp_rule(axis, args, dims, *, call, fwd, bwd, num_consts, symbolic_zeros):

    in_b = [d is not None for d in dims]
    num_args, num_out = len(args) - num_consts, len(call.outvars)

    def run(*xs):
        xs = [bdim_at_front(x, d, axis.size) if b else x for x, d, b in zip(xs, dims, in_b)]
        batched_call, captured = batch_subprogram(call, in_b, axis, [True] * num_out)
        functions = VJPFunctions(fwd.__name__, *_vmapped_vjp_functions(fwd, bwd, in_b[:num_args], axis))
        return list(calls.custom_vjp_call_p.bind(*xs, *captured, call=batched_call, fwd=functions,
                                                 bwd=functions, num_consts=num_consts + len(captured),
                                                 symbolic_zeros=symbolic_zeros))

    return staged(run, *args), [0] * num_out


def _name_rule(axis, args, dims, **params):
    return calls.name_p.bind(args[0], **params), dims[0]

register_batching(calls.checkpoint_p, _checkpoint_rule)
register_batching(calls.name_p, _name_rule)
register_batching(calls.jit_call_p, _jit_call_rule)
register_batching(calls.custom_jvp_call_p, _custom_jvp_rule)
register_batching(calls.custom_vjp_call_p, _custom_vjp_rule)
