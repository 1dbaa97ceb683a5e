"""Batching rules for the call primitives of ``toolkit/lax/calls.py`` (``checkpoint``, ``name``,
``custom_jvp_call``, ``custom_vjp_call``, ``jit``).

* ``checkpoint``: its sub-program is batched and the ``checkpoint`` kept, so
  ``grad(vmap(checkpoint(f)))`` still recomputes;
* ``name``: the identity, the batch dimension stays;
* ``jit`` (a nested ``toolkit.jit``): its sub-program is batched and the call
  kept (same ``name``, as JAX), so ``vmap`` of a nested jit is still one private
  function in the module;
* ``custom_jvp_call`` / ``custom_vjp_call``: the primal sub-program is
  batched inline. ``vmap(grad(f))`` uses the custom rule (``grad`` runs
  first); differentiating a ``vmap`` of a custom-derivative function
  differentiates the primal computation instead of the custom rule.

Registered only when ``toolkit.lax.calls`` exists.
"""

from __future__ import annotations

import weakref
from typing import Any

from toolkit.batching.interpret import (
    batch_program,
    batch_subprogram,
    batched_outputs,
    bdim_at_front,
    staged,
)
from toolkit.batching.registry import register_batching

#: nested jit body -> {(axis, batched inputs): batched body}
_BATCHED: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def _register() -> None:
    try:
        from toolkit.lax import calls
    except ImportError:
        return

    def checkpoint_rule(axis, args, dims, **params):
        program = params["jaxpr"]
        in_b = [d is not None for d in dims]
        out_b = batched_outputs(program, in_b)

        def run(*xs):
            xs = [bdim_at_front(x, d, axis.size) if b else x for x, d, b in zip(xs, dims, in_b)]
            batched, captured = batch_subprogram(program, in_b, axis, out_b)
            return list(calls.checkpoint_p.bind(*xs, *captured, **dict(params, jaxpr=batched)))

        outs = staged(run, *args)
        return outs, [0 if b else None for b in out_b]

    def jit_call_rule(axis, args, dims, *, name, jaxpr):
        in_b = [d is not None for d in dims]
        out_b = batched_outputs(jaxpr, in_b)

        def run(*xs):
            xs = [bdim_at_front(x, d, axis.size) if b else x for x, d, b in zip(xs, dims, in_b)]
            # Batched once per body and batching (when it captures nothing): repeated calls share one function.
            table = _BATCHED.setdefault(jaxpr, {})
            try:
                from toolkit.lax import parallel
                key = (axis, tuple(in_b), parallel.current_frame())
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

    def inline(key):
        def rule(axis, args, dims, **params):
            return batch_program(params[key], args, dims, axis)
        return rule

    def name_rule(axis, args, dims, **params):
        return calls.name_p.bind(args[0], **params), dims[0]

    register_batching(calls.checkpoint_p, checkpoint_rule)
    register_batching(calls.name_p, name_rule)
    register_batching(calls.jit_call_p, jit_call_rule)
    register_batching(calls.custom_jvp_call_p, inline("call"))
    register_batching(calls.custom_vjp_call_p, inline("call"))


_register()
