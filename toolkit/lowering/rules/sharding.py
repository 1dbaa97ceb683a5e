"""StableHLO for ``toolkit.lax.sharding``: the GSPMD ``@Sharding`` custom call, or Shardy's
``sdy.sharding_constraint`` when the lowering partitions with Shardy (``TOOLKIT_PARTITIONER=shardy``)."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo

from toolkit.core.avals import is_static_shape
from toolkit.lax.sharding import device_put_p, sharding_constraint_p
from toolkit.lowering.registry import register_lowering
from toolkit.shard import shardy_mesh_for, shardy_sharding_text


@register_lowering(sharding_constraint_p)
def _sharding_constraint(ctx, x, *, sharding):
    if not is_static_shape(ctx.avals_in[0].shape):
        # JAX passes the shape as an extra operand (indices_of_shape_operands) that StableHLO's C++
        # canonicalization removes again; toolkit-refine-shapes would leave it, so refuse clearly.
        raise NotImplementedError(f"with_sharding_constraint on a symbolic shape ({ctx.avals_in[0].str_short()}) is "
                                  "not supported; constrain the shardings of the jit's inputs/outputs instead")
    ndim = ctx.avals_in[0].ndim
    mctx = ctx.module_context
    if mctx.partitioner == "shardy":
        # The mesh symbol is declared after lowering by annotate_shardings(mode="shardy"), from this table.
        mesh_name = mctx.shardy_meshes.name_for(shardy_mesh_for(sharding, ndim))
        attr = ir.Attribute.parse(shardy_sharding_text(sharding, ndim, mesh_name))
        return sdy.ShardingConstraintOp(x, attr).result
    op = stablehlo.CustomCallOp([ctx.out_type], [x], "Sharding")
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(str(sharding._to_xla_hlo_sharding(ndim)))
    return op.result


@register_lowering(device_put_p)
def _device_put(ctx, x, *, device):
    # As JAX's on CPU (_common_device_put_lowering): nothing in the module, whatever the memory. The devices are
    # the plan's, and a memory kind reaches @main's results (mhlo.memory_kind) through the plan's propagation
    # (toolkit/sharding_plan.py). JAX writes annotate_device_placement here only on TPU/GPU.
    return x
