"""Batching of ``composite`` (JAX has none): the same op over the batched decomposition.

The batched composite keeps its name and attributes; a compiler matching the name sees operands
with a leading batch dimension, and everything else inlines the batched decomposition.
"""

from __future__ import annotations

from toolkit.batching.interpret import batch_subprogram, batched_outputs, bdim_at_front
from toolkit.batching.registry import register_batching
from toolkit.lax import composites


def _composite(axis, args, dims, *, name, attributes, version, program, num_consts):
    in_batched = [d is not None for d in dims]
    out_batched = batched_outputs(program, in_batched)
    batched_program, captured = batch_subprogram(program, in_batched, axis, out_batched)
    moved = [bdim_at_front(x, d, axis.size) if d is not None else x for x, d in zip(args, dims)]
    # Values the batched decomposition captured become leading operands, as the decomposition's own consts.
    invars = list(batched_program.invars)
    count = len(moved)
    batched_program = type(batched_program)(batched_program.constvars, batched_program.consts,
                                            invars[count:] + invars[:count], batched_program.outvars,
                                            batched_program.eqns)
    outs = composites.composite_p.bind(*captured, *moved, name=name, attributes=attributes, version=version,
                                       program=batched_program, num_consts=num_consts + len(captured))
    return list(outs), [0 if b else None for b in out_batched]


register_batching(composites.composite_p, _composite)
