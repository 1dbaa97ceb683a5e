"""StableHLO for ``toolkit.shard_map``.

``shard_map`` lowers, as JAX 0.10 does, to Shardy's ``sdy.manual_computation``
(operands and results in global shapes, ``in_shardings``/``out_shardings``
over the module's ``sdy.mesh``, ``manual_axes``; the body's block arguments
have the per-device shapes). Under GSPMD (``TOOLKIT_PARTITIONER=gspmd``) it is
JAX's pre-Shardy form: ``@Sharding`` + ``@SPMDFullToShardShape`` per operand,
the body inline, ``@Sharding`` + ``@SPMDShardToFullShape`` per result.
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo

from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.parallel import mesh_symbol
from toolkit.lowering.types import tensor_type
from toolkit.shard import NamedSharding
from toolkit.shard.shardy import _dimension_text, _quote
from toolkit.shard_map import shard_map_p


def _value_sharding(mesh_name: str, spec, ndim: int, open_dims: bool = False) -> str:
    """``<@mesh, [{"x"}, {}]>``; partially manual (``open_dims``): ``<@mesh, [{"x", ?}, {?}]>``, as JAX,
    leaving the other axes to the partitioner."""
    dims = [_dimension_text(entry) for entry in tuple(spec) + (None,) * (ndim - len(spec))]
    if open_dims:
        dims = ["{?}" if d == "{}" else d[:-1] + ", ?}" for d in dims]
    return f"<@{mesh_name}, [" + ", ".join(dims) + "]>"


@register_lowering(shard_map_p)
def _shard_map(ctx, *operands, body, mesh, in_specs, out_specs, manual_axes, check_vma):
    mctx = ctx.module_context
    local_in = [tensor_type(a) for a in body.in_avals]
    if mctx.partitioner == "shardy":
        name = mesh_symbol(mctx, mesh)
        partial = tuple(manual_axes) != tuple(mesh.axis_names)
        ins = [_value_sharding(name, s, a.ndim, partial) for s, a in zip(in_specs, ctx.avals_in)]
        outs = [_value_sharding(name, s, a.ndim, partial) for s, a in zip(out_specs, ctx.avals_out)]
        op = sdy.ManualComputationOp(
            ctx.out_types, list(operands),
            ir.Attribute.parse("#sdy.sharding_per_value<[" + ", ".join(ins) + "]>"),
            ir.Attribute.parse("#sdy.sharding_per_value<[" + ", ".join(outs) + "]>"),
            ir.Attribute.parse("#sdy<manual_axes{" + ", ".join(_quote(a) for a in manual_axes) + "}>"))
        block = op.body.blocks.append(*local_in)
        with ir.InsertionPoint(block):
            sdy.ReturnOp(ctx.lower_program(body, list(block.arguments)))
        return list(op.results)
    if tuple(manual_axes) != tuple(mesh.axis_names):
        raise NotImplementedError("shard_map with axis_names a strict subset of the mesh axes (partially manual) "
                                  "lowers only with Shardy; set TOOLKIT_PARTITIONER=shardy")
    manual = ir.StringAttr.get("{manual}")
    shards = []
    for x, spec, aval, local in zip(operands, in_specs, ctx.avals_in, local_in):
        text = str(NamedSharding(mesh, spec)._to_xla_hlo_sharding(aval.ndim))
        sharded = stablehlo.CustomCallOp([tensor_type(aval)], [x], "Sharding")
        sharded.attributes["mhlo.sharding"] = ir.StringAttr.get(text)
        full_to_shard = stablehlo.CustomCallOp([local], [sharded.result], "SPMDFullToShardShape")
        full_to_shard.attributes["mhlo.sharding"] = manual
        shards.append(full_to_shard.result)
    results = ctx.lower_program(body, shards)
    outs = []
    for y, spec, aval, out_type in zip(results, out_specs, ctx.avals_out, ctx.out_types):
        inner = stablehlo.CustomCallOp([y.type], [y], "Sharding")
        inner.attributes["mhlo.sharding"] = manual
        full = stablehlo.CustomCallOp([out_type], [inner.result], "SPMDShardToFullShape")
        full.attributes["mhlo.sharding"] = ir.StringAttr.get(
            str(NamedSharding(mesh, spec)._to_xla_hlo_sharding(aval.ndim)))
        outs.append(full.result)
    return outs
