"""Batching rules for host callbacks (``toolkit/lax/callbacks.py``), JAX 0.10.2's.

* ``pure_callback`` follows its ``vmap_method``: ``"sequential"`` and
  ``"sequential_unrolled"`` call it once per element in a loop;
  ``"expand_dims"`` calls it once with the batch first and a size-1 axis on
  the unbatched operands; ``"broadcast_all"`` broadcasts those to the batch;
  ``"legacy_vectorized"`` passes the operands as they are (batch first); None
  refuses (``NotImplementedError``, JAX's message).
* ``io_callback``: an unordered one loops over the batch; an ordered one
  cannot be batched (``ValueError``).
* ``debug_callback`` (``debug.print``/``debug.callback``): called once per
  element, in order, with that element's values (JAX unrolls the batch too).
"""

from __future__ import annotations

from toolkit.batching.interpret import loop_apply, moveaxis
from toolkit.batching.registry import register_batching
from toolkit.core.avals import aval_of
from toolkit.core.host_callbacks import HostCallback
from toolkit.lax import structural
from toolkit.lax.callbacks import debug_callback_p, io_callback_p, pure_callback_p


def _pure_callback(axis, args, dims, *, callback, result_avals, vmap_method):
    params = dict(callback=callback, result_avals=result_avals, vmap_method=vmap_method)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return loop_apply(pure_callback_p, axis, args, dims, params)
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            f"vmap is only supported for the {pure_callback_p.name} primitive when vmap_method "
            "is one of 'sequential', 'sequential_unrolled', 'expand_dims', "
            f"'broadcast_all', or 'legacy_vectorized'. Got {vmap_method=}.")
    size = axis.size
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims)]
    if vmap_method != "legacy_vectorized":
        lead = size if vmap_method == "broadcast_all" else 1
        moved = [structural.broadcast(x, (lead,)) if d is None else x for x, d in zip(moved, dims)]
    batched_avals = tuple(a.update(shape=(size,) + tuple(a.shape)) for a in result_avals)
    # The host function now returns the whole batch: a callback declaring the batched results.
    batched = HostCallback(callback.function, batched_avals, kind=callback.kind, ordered=callback.ordered)
    outs = pure_callback_p.bind(*moved, callback=batched, result_avals=batched_avals, vmap_method=vmap_method)
    return list(outs), [0] * len(outs)


def _io_callback(axis, args, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return loop_apply(io_callback_p, axis, args, dims, dict(callback=callback, result_avals=result_avals,
                                                             ordered=ordered))


def _debug_callback(axis, args, dims, *, callback, ordered):
    size = next(aval_of(x).shape[d] for x, d in zip(args, dims) if d is not None)
    for i in range(size):
        element = [x if d is None else structural.index_in_dim(x, i, d, keepdims=False) for x, d in zip(args, dims)]
        debug_callback_p.bind(*element, callback=callback, ordered=ordered)
    return [], []


register_batching(pure_callback_p, _pure_callback)
register_batching(io_callback_p, _io_callback)
register_batching(debug_callback_p, _debug_callback)
