"""Batching rule for ``toolkit/shard_map.py``.

Batched operands get the batch dimension first, with ``spmd_axis_name`` (when it is one of the map's
manual axes) or ``None`` inserted at the front of their specs; the body is batched with the per-device
batch size.
"""

from __future__ import annotations

from toolkit.batching.interpret import AxisData, batch_subprogram, batched_outputs, bdim_at_front, staged
from toolkit.batching.registry import register_batching
from toolkit.shard import PartitionSpec
from toolkit.shard_map import shard_map_p


def _shard_map(axis, args, dims, *, body, mesh, in_specs, out_specs, manual_axes, check_vma):

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


register_batching(shard_map_p, _shard_map)
