"""Batching of ``approx_top_k`` (JAX's rule): the batch dimension stays where it is, the reduction
dimension is renumbered around it."""

from __future__ import annotations

from toolkit.batching.registry import register_batching
from toolkit.core.avals import aval_of
from toolkit.lax import approximate_top_k


def _approx_top_k(axis, args, dims, *, reduction_dimension, **params):
    (x,), (d,) = args, dims
    ndim = aval_of(x).ndim
    dim_map = [i for i in range(ndim) if i != d]
    outs = approximate_top_k.approx_top_k_p.bind(x, reduction_dimension=dim_map[reduction_dimension], **params)
    return list(outs), [d, d]


register_batching(approximate_top_k.approx_top_k_p, _approx_top_k)
