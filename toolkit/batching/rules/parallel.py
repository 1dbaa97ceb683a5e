"""Batching rules for the collectives of ``toolkit.lax.parallel`` and for ``shard_map``.

A batched value inside a ``shard_map`` body is a stack of independent
per-device values, so a collective over a *mesh* axis acts on every batch
element alike: reductions (``psum``, ``pmax``, ``pmin``, ``psum_invariant``),
``pvary`` and ``ppermute`` keep the batch dimension where it is;
``all_gather``, ``psum_scatter`` and ``all_to_all`` put it first and shift
their axis parameters (JAX's rules do the same for mesh axes). Collectives
over the *vmapped* axis itself (``vmap(..., axis_name=...)``) are not
supported, as ``toolkit.vmap`` has no named axes.

``shard_map``: batched operands get the batch dimension first, with
``spmd_axis_name`` (when it is one of the map's manual axes) or ``None``
inserted at the front of their specs; the body is batched with the
per-device batch size.
"""

from __future__ import annotations

from toolkit.batching.interpret import (
    AxisData,
    batch_subprogram,
    batched_outputs,
    bdim_at_front,
    moveaxis,
    staged,
)
from toolkit.batching.registry import register_batching
from toolkit.lax import parallel


def _same_dim(prim):
    def rule(batch_axis, args, dims, **params):
        return prim.bind(args[0], **params), dims[0]
    rule.__name__ = f"{prim.name}_batch"
    return rule


for _p in (parallel.psum_p, parallel.psum_invariant_p, parallel.pmax_p, parallel.pmin_p, parallel.pvary_p, parallel.ppermute_p):
    register_batching(_p, _same_dim(_p))


def _all_gather(batch_axis, args, dims, **params):
    x = moveaxis(args[0], dims[0], 0)
    return parallel.all_gather_p.bind(x, **dict(params, axis=params["axis"] + 1)), 0


def _psum_scatter(batch_axis, args, dims, **params):
    x = moveaxis(args[0], dims[0], 0)
    return parallel.psum_scatter_p.bind(x, **dict(params, scatter_dimension=params["scatter_dimension"] + 1)), 0


def _all_to_all(batch_axis, args, dims, **params):
    x = moveaxis(args[0], dims[0], 0)
    return parallel.all_to_all_p.bind(x, **dict(params, split_axis=params["split_axis"] + 1,
                                           concat_axis=params["concat_axis"] + 1)), 0


def _axis_index(batch_axis, args, dims, **params):  # no operands: never batched
    return parallel.axis_index_p.bind(**params), None


register_batching(parallel.all_gather_p, _all_gather)
register_batching(parallel.psum_scatter_p, _psum_scatter)
register_batching(parallel.all_to_all_p, _all_to_all)
register_batching(parallel.axis_index_p, _axis_index)


def _shard_map(axis, args, dims, *, body, mesh, in_specs, out_specs, manual_axes, check_vma):
    from toolkit.shard import PartitionSpec
    from toolkit.shard_map import shard_map_p

    name = axis.spmd_axis_name
    names = name if isinstance(name, tuple) else (name,)
    use = name is not None and all(n in manual_axes for n in names)
    entry = name if use else None
    local = axis.size
    if use:
        for n in names:
            local = local // mesh.shape[n]
    in_b = [d is not None for d in dims]
    out_b = batched_outputs(body, in_b)

    def front(spec, batched):
        return PartitionSpec(entry, *spec) if batched else spec

    def run(*xs):
        xs = [bdim_at_front(x, d, axis.size) if b else x for x, d, b in zip(xs, dims, in_b)]
        program, captured = batch_subprogram(body, in_b, AxisData(local, None), out_b)
        if captured:
            raise NotImplementedError("toolkit.vmap of shard_map: the batched body captured outer values")
        return list(shard_map_p.bind(*xs, body=program, mesh=mesh,
                                     in_specs=tuple(front(s, b) for s, b in zip(in_specs, in_b)),
                                     out_specs=tuple(front(s, b) for s, b in zip(out_specs, out_b)),
                                     manual_axes=manual_axes, check_vma=check_vma))

    outs = staged(run, *args)
    return outs, [0 if b else None for b in out_b]


def _register_shard_map() -> None:
    from toolkit.shard_map import shard_map_p
    register_batching(shard_map_p, _shard_map)


_register_shard_map()
