"""StableHLO for the collectives of ``toolkit.lax.parallel`` (``shard_map`` itself: ``shard_map.py``).

Collectives use device positions in the mesh (``AxisEnv.groups``), a
``channel_handle`` (handle 1, device-to-device) and ``use_global_device_ids``
where JAX sets it; ``axis_index`` is ``partition_id / stride % size``.

With ``axis_index_groups`` the replica groups are JAX's ``_replica_groups``
(``AxisEnv.index_groups``): every mesh group split by the index groups.
Unequal groups are padded with ``-1`` as JAX pads them; only ``all_reduce``
accepts that (on CPU/GPU: JAX refuses them for TPU), so ``all_gather``,
``reduce_scatter`` and ``all_to_all`` raise ``ValueError`` for them.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray
from toolkit.lax import parallel
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import tensor_type
from toolkit.shard.shardy import _quote

_CHANNEL_ID = 1
_DEVICE_TO_DEVICE = 1


def _channel() -> ir.Attribute:
    return stablehlo.ChannelHandle.get(_CHANNEL_ID, _DEVICE_TO_DEVICE)


def _groups_attr(groups: list[list[int]]) -> ir.DenseElementsAttr:
    """The ``replica_groups`` attribute; shorter groups are padded with ``-1`` (as JAX's ``_replica_groups_hlo``)."""
    width = max((len(g) for g in groups), default=0)
    array = np.asarray([list(g) + [-1] * (width - len(g)) for g in groups], dtype=np.int64).reshape(len(groups), width)
    return ir.DenseElementsAttr.get(array, type=ir.IntegerType.get_signless(64), shape=list(array.shape))


def _replica_groups(env, axes, axis_index_groups, api: str, equal: bool = False) -> list[list[int]]:
    """The device groups of a collective over ``axes`` (within ``axis_index_groups`` when given); ``equal``
    refuses groups of different sizes, which the collective's op cannot express."""
    groups = env.index_groups(axes, axis_index_groups)
    if equal and axis_index_groups is not None and len({len(g) for g in axis_index_groups}) > 1:
        raise ValueError(f"{api}: axis_index_groups must all be the same size (replica groups must be equally "
                         f"sized), got sizes {[len(g) for g in axis_index_groups]}")
    return groups


def mesh_symbol(mctx, mesh) -> str:
    """The name of ``mesh``'s ``sdy.mesh`` symbol in the module being lowered."""
    table = getattr(mctx, "shardy_meshes", None)
    return table.name_for(mesh) if table is not None else mctx.shardy_mesh_name


# --- collectives ------------------------------------------------------------------------------


def _reducer_region(op, aval: ShapedArray, combine) -> None:
    scalar = tensor_type(ShapedArray((), aval.dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        stablehlo.ReturnOp([combine(*block.arguments).result])


def _all_reduce(ctx, x, axes, env, combine, axis_index_groups=None):
    aval = ctx.avals_in[0]
    if (axis_index_groups is not None and "tpu" in ctx.module_context.platforms
            and len({len(g) for g in axis_index_groups}) > 1):
        raise ValueError("axis_index_groups must all be the same size for TPU lowering")
    groups = _replica_groups(env, axes, axis_index_groups, "psum")
    op = stablehlo.AllReduceOp([tensor_type(aval)], [x], _groups_attr(groups), channel_handle=_channel(),
                               use_global_device_ids=True)
    _reducer_region(op, aval, combine)
    return op.results[0]


def _combine_max(a, b):
    return stablehlo.MaxOp(a, b)


def _combine_min(a, b):
    return stablehlo.MinOp(a, b)


def _combine_add(a, b):
    return stablehlo.AddOp(a, b)


def _or_for_bool(aval, combine):
    if aval.dtype == dtypes.bool_:
        return stablehlo.OrOp if combine is _combine_max else stablehlo.AndOp
    return combine


@register_lowering(parallel.psum_p)
@register_lowering(parallel.psum_invariant_p)
def _psum(ctx, x, *, axes, env, axis_index_groups=None):
    return _all_reduce(ctx, x, axes, env, _or_for_bool(ctx.avals_in[0], _combine_add), axis_index_groups)


@register_lowering(parallel.pmax_p)
def _pmax(ctx, x, *, axes, env, axis_index_groups=None):
    return _all_reduce(ctx, x, axes, env, _or_for_bool(ctx.avals_in[0], _combine_max), axis_index_groups)


@register_lowering(parallel.pmin_p)
def _pmin(ctx, x, *, axes, env, axis_index_groups=None):
    return _all_reduce(ctx, x, axes, env, _or_for_bool(ctx.avals_in[0], _combine_min), axis_index_groups)


@register_lowering(parallel.pvary_p)
def _pvary(ctx, x, *, axes, env):
    return x


@register_lowering(parallel.all_gather_p)
@register_lowering(parallel.all_gather_invariant_p)  # the same op as JAX's: only its type and transpose differ
def _all_gather(ctx, x, *, axes, env, axis, tiled, axis_index_groups=None):
    aval = ctx.avals_in[0]
    groups = _replica_groups(env, axes, axis_index_groups, "all_gather", equal=True)
    if not tiled:  # as JAX: insert the new axis with size 1, then gather along it
        shape = list(aval.shape)
        shape.insert(axis, 1)
        expanded = aval.update(shape=tuple(shape))
        x = stablehlo.BroadcastInDimOp(tensor_type(expanded), x,
                                       [i for i in range(len(shape)) if i != axis]).result
    op = stablehlo.AllGatherOp([ctx.out_type], [x], axis, _groups_attr(groups), channel_handle=_channel(),
                               use_global_device_ids=True)
    return op.results[0]


@register_lowering(parallel.psum_scatter_p)
def _psum_scatter(ctx, x, *, axes, env, scatter_dimension, tiled, axis_index_groups=None):
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    groups = _replica_groups(env, axes, axis_index_groups, "psum_scatter", equal=True)
    scattered = out
    if not tiled:
        shape = list(out.shape)
        shape.insert(scatter_dimension, 1)
        scattered = out.update(shape=tuple(shape))
    op = stablehlo.ReduceScatterOp(tensor_type(scattered), x, scatter_dimension, _groups_attr(groups),
                                   channel_handle=_channel(), use_global_device_ids=True)
    _reducer_region(op, aval, _or_for_bool(aval, _combine_add))
    result = op.result
    if not tiled:
        result = stablehlo.ReshapeOp(ctx.out_type, result).result
    return result


@register_lowering(parallel.ppermute_p)
def _ppermute(ctx, x, *, axes, env, perm):
    groups = env.groups(axes)
    pairs = []
    for group in groups:
        group = sorted(group)
        pairs.extend([group[s], group[d]] for s, d in perm)
    array = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    attr = ir.DenseElementsAttr.get(array, type=ir.IntegerType.get_signless(64), shape=list(array.shape))
    return stablehlo.CollectivePermuteOp(x, attr, channel_handle=_channel()).result


@register_lowering(parallel.all_to_all_p)
def _all_to_all(ctx, x, *, axes, env, split_axis, concat_axis, axis_index_groups=None):
    groups = _replica_groups(env, axes, axis_index_groups, "all_to_all")
    if len(groups[0]) == 1:  # nothing to exchange (JAX returns the operand before checking the group sizes)
        return x
    if len({len(g) for g in groups}) > 1:
        raise ValueError(f"all_to_all: replica groups must be equally sized, got axis_index_groups of sizes "
                         f"{[len(g) for g in axis_index_groups or ()]}")
    op = stablehlo.AllToAllOp([x], split_axis, concat_axis, len(groups[0]), _groups_attr(groups),
                              channel_handle=_channel())
    return op.results[0]


@register_lowering(parallel.axis_index_p)
def _axis_index(ctx, *, axes, env):
    mctx = ctx.module_context
    if tuple(env.manual) != tuple(env.names) and mctx.partitioner == "shardy":
        # Partially manual: as JAX, compute it inside a manual_computation over the remaining axes.
        from toolkit.shard import AbstractMesh
        name = mesh_symbol(mctx, AbstractMesh(env.sizes, env.names))
        rest = [a for a in env.names if a not in env.manual]
        op = sdy.ManualComputationOp(
            [ctx.out_type], [], ir.Attribute.parse("#sdy.sharding_per_value<[]>"),
            ir.Attribute.parse(f"#sdy.sharding_per_value<[<@{name}, []>]>"),
            ir.Attribute.parse("#sdy<manual_axes{" + ", ".join(_quote(a) for a in rest) + "}>"))
        block = op.body.blocks.append()
        with ir.InsertionPoint(block):
            sdy.ReturnOp([_partition_arithmetic(ctx, axes, env)])
        return op.results[0]
    return _partition_arithmetic(ctx, axes, env)


def _partition_arithmetic(ctx, axes, env):
    (name,) = axes
    position = env.names.index(name)
    stride = int(np.prod(env.sizes[position + 1:], dtype=np.int64))
    u32 = ShapedArray((), np.uint32)
    stride_c = ctx.constant(np.uint32(stride), u32)
    size_c = ctx.constant(np.uint32(env.sizes[position]), u32)
    pid = stablehlo.PartitionIdOp().result
    index = stablehlo.RemOp(stablehlo.DivOp(pid, stride_c).result, size_c).result
    return stablehlo.ConvertOp(ctx.out_type, index).result
