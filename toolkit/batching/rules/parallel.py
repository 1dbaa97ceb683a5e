"""Batching rules for the collectives of ``toolkit.lax.parallel`` (``shard_map`` itself: ``shard_map.py``).

A batched value inside a ``shard_map`` body is a stack of independent
per-device values, so a collective over a *mesh* axis acts on every batch
element alike: reductions (``psum``, ``pmax``, ``pmin``, ``psum_invariant``),
``pvary`` and ``ppermute`` keep the batch dimension where it is;
``all_gather`` (and ``all_gather_invariant``), ``psum_scatter`` and
``all_to_all`` put it first and shift their axis parameters (JAX's rules do the same for mesh axes).

Collectives over the *vmapped* axis itself (``vmap(..., axis_name=name)``)
act across the batch, as JAX's rules do: ``psum``/``pmax``/``pmin`` reduce
over the batch dimension (the result is the same for every element:
unbatched), ``axis_index`` is an ``iota`` over the batch, ``all_gather``
moves the batch dimension to the gathered axis (unbatched result),
``psum_scatter`` sums the batch and gives element ``i`` block ``i``,
``ppermute`` gathers batch elements by the permutation (zeros where nothing
is sent) and ``all_to_all`` exchanges blocks between elements. A reduction
over the vmapped axis *and* mesh axes reduces the batch, then runs the
collective over the mesh axes; the other collectives over a mix raise
``NotImplementedError``.

``axis_index_groups`` (the equation parameter, present only when given) is
kept by the rules over mesh axes; over the vmapped axis every collective
refuses it with ``NotImplementedError``, and ``all_to_all`` refuses it under
any vmap, as JAX's rules do.
"""

from __future__ import annotations

import numpy as np

from toolkit.batching.interpret import (
    bdim_at_front,
    broadcast_batched,
    moveaxis,
)
from toolkit.batching.registry import register_batching
from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise, parallel, reductions, structural
from toolkit import numpy as tnp


def _same_dim(prim):
    def rule(batch_axis, args, dims, **params):
        return prim.bind(args[0], **params), dims[0]
    rule.__name__ = f"{prim.name}_batch"
    return rule


#: What JAX's batching rules say when a collective over the vmapped axis has ``axis_index_groups``.
_NO_GROUPS_OVER_BATCH = "axis_index_groups not supported in vmap collectives. Please open a feature request!"


def _over_batch(mesh_rule, batch_rule, no_groups_message=_NO_GROUPS_OVER_BATCH):
    """``batch_rule`` when the collective names this vmap's axis, else ``mesh_rule`` (mesh axes, outer vmaps)."""
    def rule(batch_axis, args, dims, **params):
        if batch_axis.name is not None and batch_axis.name in parallel.vmapped_axes(params):
            if params.get("axis_index_groups") is not None:
                raise NotImplementedError(no_groups_message)
            return batch_rule(batch_axis, args, dims, **params)
        return mesh_rule(batch_axis, args, dims, **params)
    rule.__name__ = getattr(batch_rule, "__name__", "rule")
    return rule


def _mesh_part(batch_axis, params: dict) -> tuple[tuple, parallel.AxisEnv]:
    """The collective's axes other than the vmapped one, and the environment without it."""
    rest = tuple(a for a in params["axes"] if a != batch_axis.name)
    return rest, params["env"].without(batch_axis.name)


def _only_batch(batch_axis, params: dict, api: str) -> None:
    rest, _ = _mesh_part(batch_axis, params)
    if rest:
        raise NotImplementedError(f"toolkit.vmap: {api} over the vmapped axis {batch_axis.name!r} together with "
                                  f"the axes {rest} is not supported; call it once per axis")


def _reduce_over_batch(prim, reduce, unbatched):
    """psum / pmax / pmin over the vmapped axis: reduce the batch dimension, then the mesh axes if any."""
    def rule(batch_axis, args, dims, **params):
        (x,), (d,) = args, dims
        out = unbatched(x, batch_axis.size) if d is None else reduce(x, (d,))
        rest, env = _mesh_part(batch_axis, params)
        if rest:
            out = prim.bind(out, **dict(params, axes=rest, env=env))
        return out, None
    rule.__name__ = f"{prim.name}_over_vmapped_axis"
    return rule


def _times_size(x, size):
    return elementwise.mul(x, parallel._full_like(x, size))


def _same_value(x, size):
    return x


for _p, _reduce, _unbatched in ((parallel.psum_p, reductions.reduce_sum, _times_size),
                                (parallel.psum_invariant_p, reductions.reduce_sum, _times_size),
                                (parallel.pmax_p, reductions.reduce_max, _same_value),
                                (parallel.pmin_p, reductions.reduce_min, _same_value)):
    register_batching(_p, _over_batch(_same_dim(_p), _reduce_over_batch(_p, _reduce, _unbatched)))


def _pvary_over_batch(batch_axis, args, dims, **params):
    rest, env = _mesh_part(batch_axis, params)  # varying over the batch: what every batched value is
    out = parallel.pvary_p.bind(args[0], **dict(params, axes=rest, env=env)) if rest else args[0]
    return out, dims[0]


register_batching(parallel.pvary_p, _over_batch(_same_dim(parallel.pvary_p), _pvary_over_batch))


def _ppermute_over_batch(batch_axis, args, dims, *, axes, env, perm):
    """Element ``t`` receives element ``s`` for each ``(s, t)`` of ``perm``; the others receive zeros."""
    _only_batch(batch_axis, {"axes": axes, "env": env}, "ppermute")
    size = batch_axis.size
    x = bdim_at_front(args[0], dims[0], size)
    sources, received = np.zeros(size, np.int32), np.zeros(size, bool)
    for source, target in perm:
        sources[target], received[target] = source, True
    moved = tnp.take(x, sources, axis=0)
    mask = received.reshape((size,) + (1,) * (len(aval_of(moved).shape) - 1))
    return tnp.where(mask, moved, tnp.zeros_like(moved)), 0


register_batching(parallel.ppermute_p, _over_batch(_same_dim(parallel.ppermute_p), _ppermute_over_batch))


def _gather_over_mesh(prim):
    """``all_gather`` / ``all_gather_invariant`` over mesh axes: every batch element gathered alike."""
    def rule(batch_axis, args, dims, **params):
        x = moveaxis(args[0], dims[0], 0)
        return prim.bind(x, **dict(params, axis=params["axis"] + 1)), 0
    rule.__name__ = f"{prim.name}_batch"
    return rule


def _psum_scatter(batch_axis, args, dims, **params):
    x = moveaxis(args[0], dims[0], 0)
    return parallel.psum_scatter_p.bind(x, **dict(params, scatter_dimension=params["scatter_dimension"] + 1)), 0


def _all_to_all(batch_axis, args, dims, **params):
    if params.get("axis_index_groups") is not None:  # JAX's all_to_all rule refuses groups under any vmap
        raise NotImplementedError("all_to_all with axis_index_groups is not supported under vmap (as in JAX: "
                                  "'Please open a feature request!')")
    x = moveaxis(args[0], dims[0], 0)
    return parallel.all_to_all_p.bind(x, **dict(params, split_axis=params["split_axis"] + 1,
                                           concat_axis=params["concat_axis"] + 1)), 0


def _axis_index(batch_axis, args, dims, **params):  # no operands: never batched
    return parallel.axis_index_p.bind(**params), None


def _all_gather_over_batch(batch_axis, args, dims, **params):
    """Every element's value, stacked (or concatenated) along ``axis``: the batch itself, for everyone."""
    _only_batch(batch_axis, params, "all_gather")
    (x,), (d,) = args, dims
    where, size = params["axis"], batch_axis.size
    stacked = broadcast_batched(x, size, where) if d is None else moveaxis(x, d, where)
    if params["tiled"]:
        shape = list(aval_of(stacked).shape)
        stacked = structural.reshape(stacked, tuple(shape[:where] + [shape[where] * shape[where + 1]]
                                                    + shape[where + 2:]))
    return stacked, None


def _psum_scatter_over_batch(batch_axis, args, dims, **params):
    """The batch's sum, of which element ``i`` keeps block ``i`` of ``scatter_dimension``."""
    _only_batch(batch_axis, params, "psum_scatter")
    (x,), (d,) = args, dims
    size, where = batch_axis.size, params["scatter_dimension"]
    total = _times_size(x, size) if d is None else reductions.reduce_sum(x, (d,))
    if params["tiled"]:
        shape = list(aval_of(total).shape)
        total = structural.reshape(total, tuple(shape[:where] + [size, shape[where] // size] + shape[where + 1:]))
    return moveaxis(total, where, 0), 0


def _all_to_all_over_batch(batch_axis, args, dims, *, axes, env, split_axis, concat_axis):
    """Element ``b`` receives block ``b`` of ``split_axis`` from every element, concatenated along
    ``concat_axis`` in element order (the tiled form, as the primitive)."""
    _only_batch(batch_axis, {"axes": axes, "env": env}, "all_to_all")
    size = batch_axis.size
    x = bdim_at_front(args[0], dims[0], size)  # (sources, *shape)
    shape = list(aval_of(x).shape[1:])
    split, concat = split_axis, concat_axis
    # Split `split` into (block, within): dims of x become (source, ..., block, within, ...).
    x = structural.reshape(x, tuple([size] + shape[:split] + [size, shape[split] // size] + shape[split + 1:]))

    def position(i: int) -> int:  # where unbatched dim i (its within-block part for `split`) is now
        return i + 1 if i < split else i + 2
    permutation = [split + 1]  # the block index becomes the batch dimension
    for i in range(len(shape)):
        if i == concat:
            permutation.append(0)  # the sources, just before the dimension they are concatenated along
        permutation.append(position(i))
    x = structural.transpose(x, tuple(permutation))
    t = list(aval_of(x).shape)
    q = permutation.index(0)
    return structural.reshape(x, tuple(t[:q] + [t[q] * t[q + 1]] + t[q + 2:])), 0


def _axis_index_over_batch(batch_axis, args, dims, *, axes, env):
    _only_batch(batch_axis, {"axes": axes, "env": env}, "axis_index")
    return structural.iota(dtypes.int32, batch_axis.size), 0


register_batching(parallel.all_gather_p, _over_batch(_gather_over_mesh(parallel.all_gather_p), _all_gather_over_batch,
                                                     "axis_index_groups not supported in vmap"))
# Over the vmapped axis JAX's rule is the varying gather's; toolkit.lax.all_gather refuses to bind it there (as JAX
# fails to), but an equation that names the axis is still batched as JAX's rule would.
register_batching(parallel.all_gather_invariant_p, _over_batch(_gather_over_mesh(parallel.all_gather_invariant_p),
                                                               _all_gather_over_batch))
register_batching(parallel.psum_scatter_p, _over_batch(_psum_scatter, _psum_scatter_over_batch,
                                                       "axis_index_groups not supported in vmap"))
register_batching(parallel.all_to_all_p, _over_batch(_all_to_all, _all_to_all_over_batch,
                                                     "all_to_all with axis_index_groups is not supported under vmap "
                                                     "(as in JAX: 'Please open a feature request!')"))
register_batching(parallel.axis_index_p, _over_batch(_axis_index, _axis_index_over_batch))
