"""Batching rule for ``sharding_constraint``: the batch dimension is unconstrained, or sharded over
``spmd_axis_name`` when the ``vmap`` names one (as ``jax.vmap(..., spmd_axis_name=...)``)."""

from __future__ import annotations

from toolkit.batching.interpret import ndim_of
from toolkit.batching.registry import register_batching
from toolkit.lax import sharding as lax_sharding
from toolkit.shard import PartitionSpec
from toolkit.shard import NamedSharding


def batched_spec(spec, ndim: int, d: int, spmd_axis_name):
    """``spec`` (for an ``ndim``-dimensional value) with an entry for a batch dimension inserted at ``d``."""
    entries = list(spec) + [None] * (ndim - len(spec))
    entries.insert(d, spmd_axis_name)
    return PartitionSpec(*entries)


def _constraint(axis, args, dims, *, sharding):
    (x,), (d,) = args, dims
    if not isinstance(sharding, NamedSharding):
        raise NotImplementedError(f"toolkit.vmap: a sharding constraint with a {type(sharding).__name__} cannot be "
                                  "batched (only NamedSharding says where a new dimension goes)")
    spec = batched_spec(sharding.spec, ndim_of(x) - 1, d, axis.spmd_axis_name)
    new = NamedSharding(sharding.mesh, spec, memory_kind=getattr(sharding, "_memory_kind", None))
    return lax_sharding.sharding_constraint_p.bind(x, sharding=new), d


register_batching(lax_sharding.sharding_constraint_p, _constraint)


def _device_put(axis, args, dims, *, device):
    (x,), (d,) = args, dims
    if isinstance(device, NamedSharding):
        spec = batched_spec(device.spec, ndim_of(x) - 1, d, axis.spmd_axis_name)
        device = NamedSharding(device.mesh, spec, memory_kind=getattr(device, "_memory_kind", None))
    elif not isinstance(device, lax_sharding.Sharding) or device.is_fully_replicated:
        return lax_sharding.device_put_p.bind(x, device=device), d  # a device, or every device holding it all
    else:
        raise NotImplementedError(f"toolkit.vmap: a device_put to a {type(device).__name__} cannot be batched "
                                  "(only NamedSharding says where a new dimension goes)")
    return lax_sharding.device_put_p.bind(x, device=device), d


register_batching(lax_sharding.device_put_p, _device_put)
