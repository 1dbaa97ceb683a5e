"""Batching rules for ``toolkit/lax/decompositions.py``: every primitive takes leading batch dimensions.

The LAPACK custom calls loop over leading batch dimensions themselves (``num_batch_dims``), so a
vmapped decomposition is the same primitive with the batch dimension moved to the front;
an unbatched operand of a two-operand primitive (triangular solve, ...) is broadcast first.
"""

from __future__ import annotations

from toolkit.batching.interpret import bdim_at_front
from toolkit.batching.registry import register_batching
from toolkit.lax import control_flow, decompositions as dec


def _rule(prim):
    def rule(axis, args, dims, **params):
        moved = [bdim_at_front(x, d, axis.size) for x, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        if prim.multiple_results:
            return list(out), [0] * len(out)
        return out, 0
    rule.__name__ = f"{prim.name}_batch"
    return rule


def _cholesky_update(axis, args, dims):
    # One matrix and one vector (JAX's primitive does not batch at all): a sequential map over the batch.
    r, w = (bdim_at_front(x, d, axis.size) for x, d in zip(args, dims))
    return control_flow.map(lambda rw: dec.cholesky_update_p.bind(*rw), (r, w)), 0


for _prim in dec.family:
    register_batching(_prim, _cholesky_update if _prim is dec.cholesky_update_p else _rule(_prim))
