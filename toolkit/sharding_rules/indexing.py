"""Sharding rules of ``toolkit.lax.indexing`` (JAX's ``_gather_spec_computation`` / ``_scatter_spec_computation``): the
operand's unsliced (or fully sliced) dimensions keep their spec, batching dimensions resolve between operand,
indices and updates, the indices' query dimensions and index vector must be unsharded.
"""

from __future__ import annotations

from typing import Any

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import indexing


def _gather_spec(operand, indices, ospec: tuple, indices_spec: tuple, dn, slice_sizes) -> tuple | None:
    """The gather's output spec, or None when it is ambiguous (or would need collectives on the inputs).

    Operand dimensions indexed into (``start_index_map``) must be fully sliced or unsharded; paired batching
    dimensions must agree (or one side be unsharded); the indices' other dimensions (their queries and the
    index vector) must be unsharded. Offset dimensions then take the operand's spec, the others the indices'.
    """
    ispec = list(indices_spec)
    out_rank = len(dn.offset_dims) + len(indices.shape) - 1
    if all(e is None for e in ospec) and all(e is None for e in ispec):
        return (None,) * out_rank
    full_or_replicated = all(slice_sizes[i] == operand.shape[i] or ospec[i] is None for i in dn.start_index_map)
    batching_resolves = all(ispec[i] == ospec[o] or ospec[o] is None or ispec[i] is None
                            for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    non_batch_replicated = all(e is None for i, e in enumerate(ispec) if i not in dn.start_indices_batching_dims)
    if not (full_or_replicated and batching_resolves and non_batch_replicated):
        return None
    for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        ispec[i] = ispec[i] or ospec[o]
    slices = iter(i for i in range(len(slice_sizes))
                  if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims)
    queries = iter(ispec)
    return tuple(ospec[next(slices)] if d in dn.offset_dims else next(queries) for d in range(out_rank))


@register_sharding_rule(indexing.gather_p)
def _gather_rule(specs_in, avals_in, avals_out, *, dimension_numbers, slice_sizes, **params):
    operand, indices = avals_in
    spec = _gather_spec(operand, indices, tuple(specs_in[0]), tuple(specs_in[1]), dimension_numbers, slice_sizes)
    if spec is None:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as out "
            "sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}")
    return [spec]


def _resolvable(*entries: Any) -> bool:
    return len({e for e in entries if e is not None}) <= 1


def _updates_batching_dims(indices_batching_dims, update_window_dims, index_vector_dim: int) -> tuple:
    scatter_dim_in_updates: list[int | None] = list(range(index_vector_dim))
    for i in update_window_dims:
        scatter_dim_in_updates.insert(i, None)
    return tuple(scatter_dim_in_updates.index(i) for i in indices_batching_dims)


def _scatter_spec(operand, indices, updates, ospec: tuple, ispec: tuple, uspec: tuple, dn) -> tuple | None:
    """The scatter's output spec, or None when it is ambiguous (or would need collectives on the inputs).

    Batching dimensions must resolve between operand, indices and updates; window dimensions of operand and
    updates must be both unsharded, or full and sharded alike; inserted window dimensions of the operand, the
    unbatched query dimensions of indices and updates, and the index vector must be unsharded.
    """
    if all(e is None for e in ospec + ispec + uspec):
        return (None,) * len(operand.shape)
    index_vector_dim = len(indices.shape) - 1
    ubd = _updates_batching_dims(dn.scatter_indices_batching_dims, dn.update_window_dims, index_vector_dim)
    window = [i for i in range(len(operand.shape))
              if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
    ok = (all(_resolvable(ospec[o], ispec[i], uspec[u])
              for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, ubd))
          and all((updates.shape[u] == operand.shape[o] and uspec[u] == ospec[o])
                  or (uspec[u] is None and ospec[o] is None) for u, o in zip(dn.update_window_dims, window))
          and all(e is None for i, e in enumerate(ospec) if i in dn.inserted_window_dims)
          and all(e is None for i, e in enumerate(uspec) if i not in ubd and i not in dn.update_window_dims)
          and all(e is None for i, e in enumerate(ispec[:index_vector_dim])
                  if i not in dn.scatter_indices_batching_dims)
          and ispec[index_vector_dim] is None)
    if not ok:
        return None
    out = list(ospec)
    for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, ubd):
        if out[o] is None:
            out[o] = ispec[i] or uspec[u]
    for u, o in zip(dn.update_window_dims, window):
        if out[o] is None:
            out[o] = uspec[u]
    return tuple(out)


@register_sharding_rule(indexing.scatter_p, indexing.scatter_add_p, indexing.scatter_mul_p, indexing.scatter_min_p,
                        indexing.scatter_max_p)
def _scatter_rule(specs_in, avals_in, avals_out, *, dimension_numbers, **params):
    operand, indices, updates = avals_in
    spec = _scatter_spec(operand, indices, updates, *(tuple(s) for s in specs_in), dimension_numbers)
    if spec is None:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter update "
            "as out sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}, updates={updates!r}")
    return [spec]
