"""Batching rules for ``sort`` (all operands share the batch dimension) and ``top_k`` (last axis kept last)."""

from __future__ import annotations

from toolkit.batching.interpret import moveaxis, ndim_of
from toolkit.batching.registry import register_batching
from toolkit.batching.rules.elementwise import align
from toolkit.lax import sorting


def _sort(axis, args, dims, *, dimension, is_stable, num_keys):
    args, d = align(axis, args, dims)
    outs = sorting.sort_p.bind(*args, dimension=dimension + (dimension >= d), is_stable=is_stable, num_keys=num_keys)
    return list(outs), [d] * len(outs)


def _top_k(axis, args, dims, *, k):
    (x,), (d,) = args, dims
    if d == ndim_of(x) - 1:
        x, d = moveaxis(x, d, 0), 0
    outs = sorting.top_k_p.bind(x, k=k)
    return list(outs), [d, d]


register_batching(sorting.sort_p, _sort)
register_batching(sorting.top_k_p, _top_k)
