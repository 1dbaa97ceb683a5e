"""Batching rules of ``toolkit/lax/autodiff.py``: ``stop_gradient`` keeps the batch dimension where it is."""

from toolkit.batching.registry import register_batching
from toolkit.lax import autodiff


def _stop_gradient(axis, args, dims):
    return autodiff.stop_gradient_p.bind(args[0]), dims[0]


register_batching(autodiff.stop_gradient_p, _stop_gradient)
