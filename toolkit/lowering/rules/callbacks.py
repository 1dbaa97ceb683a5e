"""StableHLO for ``toolkit/lax/callbacks.py``: the custom call JAX 0.10.2 emits for host callbacks on CPU.

Each callback becomes, as in JAX::

    stablehlo.custom_call @xla_ffi_python_cpu_callback(%x) {backend_config = "", has_side_effect = true,
        mhlo.backend_config = {index = 3 : ui64}, operand_layouts = [...], result_layouts = [...]}

``index`` is the callback's number in the process's table
(``toolkit/core/host_callbacks.py``), which the runtime gives jaxlib when it
compiles; ``toolkit.host_callback = "<session>:<index>"`` says which process
numbered it (a module lowered by JAX or another process is refused, not run
against this process's callbacks). ``pure_callback`` has no side effect; ``io_callback`` and
``debug_callback`` have one. An ordered callback takes a ``!stablehlo.token``
first and returns one first: the tokens of one block (a function body or a
region) are chained in program order, starting from ``stablehlo.create_token``;
after lowering, ``toolkit/lowering/tokens.py`` joins the blocks' chains into one
through nested functions, branches and loops, so XLA keeps every ordered
callback of the module in program order (JAX also threads its token through
``@main``'s signature: see docs/debugging.md).

With Shardy on several devices, a callback outside ``shard_map`` runs once, on
device 0 (JAX's ``maximal`` sharding); inside ``shard_map`` it runs on every
device with its block.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core.host_callbacks import CALLBACK_TARGET, MARK_ATTRIBUTE, HostCallback, index_of, mark_of
from toolkit.lax.callbacks import debug_callback_p, io_callback_p, pure_callback_p
from toolkit.lowering.registry import register_lowering

#: The device-0 mesh a callback outside ``shard_map`` runs on, as JAX declares it (``maximal_mesh_0``).
_MAXIMAL_MESH = "<[], device_ids=[0]>"


def _layout(ndim: int) -> ir.Attribute:
    # Row-major (minor-to-major n-1, ..., 0), as JAX writes for callbacks; a token has none.
    return ir.DenseIntElementsAttr.get(np.arange(ndim - 1, -1, -1, dtype=np.int64),
                                       type=ir.RankedTensorType.get([ndim], ir.IndexType.get()))


def _value_layout(t: ir.Type) -> ir.Attribute:
    return _layout(t.rank if isinstance(t, ir.RankedTensorType) else 0)


def _inside_manual_computation(block: ir.Block) -> bool:
    """Whether ``block`` sits inside an ``sdy.manual_computation`` (a ``shard_map`` body)."""
    op: Any = block.owner
    while op is not None:
        view = op.operation if hasattr(op, "operation") else op
        if view.name == "sdy.manual_computation":
            return True
        if view.name in ("func.func", "builtin.module"):
            return False
        op = view.parent
    return False


def _token_for(ctx: Any, block: ir.Block) -> ir.Value:
    """The last ordered callback's token in ``block``, or a new ``stablehlo.create_token``."""
    tokens = _tokens(ctx)
    token = tokens.get(block)
    return token if token is not None else stablehlo.CreateTokenOp().result


def _tokens(ctx: Any) -> dict:
    mctx = ctx.module_context
    tokens = getattr(mctx, "_callback_tokens", None)
    if tokens is None:
        tokens = {}
        # A private attribute on this lowering's ModuleContext: the chain is per module, per block.
        mctx._callback_tokens = tokens
    return tokens


def _emit(ctx: Any, operands: list, callback: HostCallback, *, has_side_effect: bool, ordered: bool) -> list:
    if ctx.platform != "cpu":
        raise NotImplementedError(f"host callbacks are implemented for the CPU platform only, not "
                                  f"{ctx.platform!r} (toolkit emits jaxlib's xla_ffi_python_cpu_callback)")
    block = ir.InsertionPoint.current.block
    result_types = list(ctx.out_types)
    operands = list(operands)
    token_type = stablehlo.TokenType.get()
    if ordered:
        operands = [_token_for(ctx, block), *operands]
        result_types = [token_type, *result_types]
    index = index_of(callback)
    op = stablehlo.CustomCallOp(
        result_types, operands, CALLBACK_TARGET, has_side_effect=has_side_effect,
        backend_config=ir.StringAttr.get(""),
        # api_version 1 with the dictionary in mhlo.backend_config: what JAX's custom_call writes for FFI targets.
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        operand_layouts=ir.ArrayAttr.get([_value_layout(v.type) for v in operands]),
        result_layouts=ir.ArrayAttr.get([_value_layout(t) for t in result_types]))
    op.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)})
    # Which process numbered it: the runtime compiles only its own process's callback calls.
    op.attributes[MARK_ATTRIBUTE] = ir.StringAttr.get(mark_of(index))
    mctx = ctx.module_context
    if mctx.partitioner == "shardy" and not _inside_manual_computation(block):
        mesh = mctx.shardy_meshes.name_for_text(_MAXIMAL_MESH)
        per_value = ", ".join([f"<@{mesh}, []>"] * max(1, len(result_types)))
        op.attributes["sdy.sharding"] = ir.Attribute.parse(f"#sdy.sharding_per_value<[{per_value}]>")
    results = list(op.results)
    if ordered:
        _tokens(ctx)[block] = results[0]
        results = results[1:]
    return results


@register_lowering(pure_callback_p)
def _pure_callback(ctx, *operands, callback, result_avals, vmap_method):
    return _emit(ctx, list(operands), callback, has_side_effect=False, ordered=False)


@register_lowering(io_callback_p)
def _io_callback(ctx, *operands, callback, result_avals, ordered):
    return _emit(ctx, list(operands), callback, has_side_effect=True, ordered=ordered)


@register_lowering(debug_callback_p)
def _debug_callback(ctx, *operands, callback, ordered):
    return _emit(ctx, list(operands), callback, has_side_effect=True, ordered=ordered)
