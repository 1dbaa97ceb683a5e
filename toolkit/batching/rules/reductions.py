"""Batching rules for ``toolkit.lax.reductions``: reduce around the batch dimension."""

from __future__ import annotations

from toolkit.batching.registry import register_batching
from toolkit.lax import reductions


def _shift(axes, d):
    return tuple(a + (a >= d) for a in axes)


def _reduction(prim):
    def rule(axis, args, dims, *, axes):
        (x,), (d,) = args, dims
        new_axes = _shift(axes, d)
        return prim.bind(x, axes=new_axes), d - sum(a < d for a in new_axes)
    rule.__name__ = f"{prim.name}_batch"
    return rule


def _arg(prim):
    def rule(batch_axis, args, dims, **params):  # ``axis`` is the primitive's parameter here
        (x,), (d,) = args, dims
        a = params["axis"] + (params["axis"] >= d)
        return prim.bind(x, axis=a, index_dtype=params["index_dtype"]), d - (a < d)
    rule.__name__ = f"{prim.name}_batch"
    return rule


for _p in (reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p, reductions.reduce_min_p, reductions.reduce_and_p, reductions.reduce_or_p,
           reductions.reduce_xor_p):
    register_batching(_p, _reduction(_p))
for _p in (reductions.argmax_p, reductions.argmin_p):
    register_batching(_p, _arg(_p))
