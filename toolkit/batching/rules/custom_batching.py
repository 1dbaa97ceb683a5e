"""Batching rule of ``toolkit.lax.custom_batching``: ``custom_vmap_call`` runs the user's rule.

The batched operands get their batch dimension in front (JAX's ``maybe_bdim_at_front``: unbatched ones
stay as they are); the rule says which outputs are batched, and each output is checked against the
call's output type (with the batch dimension in front when batched), so a wrong rule is an error naming
it rather than a wrong result. The function's closed-over values are not the rule's to see: they must
be unbatched (JAX asserts the same).
"""

from __future__ import annotations

from toolkit.batching.interpret import moveaxis
from toolkit.batching.registry import register_batching
from toolkit.core.avals import aval_of
from toolkit.lax import custom_batching


def _custom_vmap_rule(axis, args, dims, *, call, rule, num_consts):
    num_args = len(args) - num_consts
    if any(d is not None for d in dims[num_args:]):
        raise ValueError(f"custom_vmap rule {rule.name}: the function closes over a value that vmap batches; "
                         "pass it to the custom_vmap function as an argument instead")
    xs = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args[:num_args], dims[:num_args])]
    in_batched = [d is not None for d in dims[:num_args]]
    outs, out_batched = rule(axis.size, in_batched, xs)
    if len(outs) != len(call.outvars) or len(out_batched) != len(outs):
        raise ValueError(f"custom vmap rule {rule.name} returned {len(outs)} outputs and {len(out_batched)} "
                         f"batching flags; the function has {len(call.outvars)} outputs")
    for i, (out, batched, expected) in enumerate(zip(outs, out_batched, call.out_avals)):
        got = aval_of(out)
        shape = ((axis.size,) if batched else ()) + tuple(expected.shape)
        if tuple(got.shape) != shape or got.dtype != expected.dtype:
            raise ValueError(f"custom vmap rule {rule.name}: output leaf {i} is {got.str_short()} but should be "
                             f"{expected.dtype}{list(shape)} ({'batched' if batched else 'unbatched'} as the "
                             "rule says)")
    return list(outs), [0 if b else None for b in out_batched]


register_batching(custom_batching.custom_vmap_call_p, _custom_vmap_rule)
