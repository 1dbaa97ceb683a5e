"""Batching rules for ``toolkit/lax/decompositions.py``: every primitive takes leading batch dimensions.

The LAPACK custom calls loop over leading batch dimensions themselves (``num_batch_dims``), so a
vmapped decomposition is the same primitive with the batch dimension moved to the front;
an unbatched operand of a two-operand primitive (triangular solve, ...) is broadcast first.
A tridiagonal solve whose diagonals are unbatched solves the batch as extra right-hand sides (JAX's rule).
"""

from __future__ import annotations

from toolkit.batching.interpret import bdim_at_front, moveaxis
from toolkit.batching.registry import register_batching
from toolkit.core.avals import aval_of
from toolkit.lax import control_flow, decompositions as dec, structural


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


def _tridiagonal_solve(axis, args, dims, *, perturb_singular):
    dl, d, du, b = args
    if dims[0] is None and dims[1] is None and dims[2] is None:
        # One matrix for the whole batch: the batch members become more columns of b ([..., m, B * n]),
        # one factorization instead of B (and JAX's custom call, shapes and all).
        b = moveaxis(b, dims[3], -2)
        shape = tuple(aval_of(b).shape)
        columns = structural.reshape(b, shape[:-2] + (shape[-2] * shape[-1],))
        out = dec.tridiagonal_solve_p.bind(dl, d, du, columns, perturb_singular=perturb_singular)
        return structural.reshape(out, shape), len(shape) - 2
    moved = [bdim_at_front(x, dim, axis.size) for x, dim in zip(args, dims)]
    return dec.tridiagonal_solve_p.bind(*moved, perturb_singular=perturb_singular), 0


for _prim in dec.family:
    if _prim not in (dec.cholesky_update_p, dec.tridiagonal_solve_p):
        register_batching(_prim, _rule(_prim))
register_batching(dec.cholesky_update_p, _cholesky_update)
register_batching(dec.tridiagonal_solve_p, _tridiagonal_solve)
