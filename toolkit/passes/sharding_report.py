"""``toolkit-sharding-report``: a table of every sharded value and its per-device shard shape.

IR contract: reads only; the IR is unchanged. Looks at the arguments and
results of every ``func.func`` and at sharding ops inside them
(``stablehlo.custom_call @Sharding`` with ``mhlo.sharding``, and
``sdy.sharding_constraint``), in both GSPMD (``mhlo.sharding``) and Shardy
(``sdy.sharding`` + ``sdy.mesh``) forms, and at manual regions (``shard_map``):
every operand and result of an ``sdy.manual_computation`` with its manual
axes and the per-device shape its body sees, or GSPMD's
``@SPMDFullToShardShape``/``@SPMDShardToFullShape`` pair. Prints to stderr, or to
``output=path``::

    value            type              sharding                                          shard shape  devices
    @main arg 0      tensor<8x8xf32>   {devices=[2,1,4]<=[8] last_tile_dim_replicate}    4x8          8

Example::

    toolkit-opt --pass-pipeline='builtin.module(toolkit-sharding-report)' sharded.mlir
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import ClassVar

from jaxlib.mlir import ir

from toolkit.passes.pass_base import ModulePass
from toolkit.passes.registry import register_pass
from toolkit.shard import hlo_sharding_from_text, parse_shardy_mesh, parse_shardy_sharding
from toolkit.shard.hlo import shard_shape_of


@dataclasses.dataclass
class ShardedValue:
    """One row of the report."""

    value: str
    type: str
    sharding: str
    shard_shape: str
    devices: str


def _shape_text(shape: tuple) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


def _gspmd_row(value: str, tensor_type: ir.Type, text: str) -> ShardedValue:
    shape = tuple(tensor_type.shape) if isinstance(tensor_type, ir.RankedTensorType) else ()
    if text.strip() == "{manual}":  # inside a manual region the value already is the per-device piece
        return ShardedValue(value, str(tensor_type), text, _shape_text(shape), "manual")
    try:
        hlo = hlo_sharding_from_text(text)
        shard = _shape_text(shard_shape_of(hlo, shape))
        devices = str(hlo.num_devices()) if not hlo.is_replicated() else "all"
    except (ValueError, NotImplementedError) as error:
        shard, devices = f"error: {error}", "?"
    return ShardedValue(value, str(tensor_type), text, shard, devices)


def _shardy_row(value: str, tensor_type: ir.Type, text: str, meshes: dict[str, list]) -> ShardedValue:
    shape = tuple(tensor_type.shape) if isinstance(tensor_type, ir.RankedTensorType) else ()
    try:
        mesh_name, dims = parse_shardy_sharding(text)
        axes = dict(meshes.get(mesh_name, []))
        if mesh_name not in meshes:
            raise ValueError(f"no sdy.mesh @{mesh_name}")
        shard = []
        for dim, (size, names) in enumerate(zip(shape, dims)):
            ways = math.prod(axes[n] for n in names)
            if size % ways:
                raise ValueError(f"dimension {dim} (size {size}) does not split {ways} ways")
            shard.append(size // ways)
        shard_text, devices = _shape_text(tuple(shard) + shape[len(shard):]), str(math.prod(axes.values()) or 1)
    except (ValueError, KeyError) as error:
        shard_text, devices = f"error: {error}", "?"
    return ShardedValue(value, str(tensor_type), text, shard_text, devices)


def collect_sharded_values(module_op: ir.Operation) -> list[ShardedValue]:
    """Every annotated argument, result and sharding op in the module, in IR order."""
    meshes: dict[str, list] = {}
    body = module_op.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "sdy.mesh":
            meshes[ir.StringAttr(op.attributes["sym_name"]).value] = parse_shardy_mesh(str(op.attributes["mesh"]))
    rows: list[ShardedValue] = []

    def row(value: str, tensor_type: ir.Type, attrs: ir.DictAttr) -> None:
        if "mhlo.sharding" in attrs:
            rows.append(_gspmd_row(value, tensor_type, ir.StringAttr(attrs["mhlo.sharding"]).value))
        if "sdy.sharding" in attrs:
            rows.append(_shardy_row(value, tensor_type, str(attrs["sdy.sharding"]), meshes))

    for op in body.operations:
        if op.operation.name != "func.func":
            continue
        func = op.operation
        name = ir.StringAttr(func.attributes["sym_name"]).value
        function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        def values(which: str, types: list, label: str) -> None:
            if which in func.attributes:
                for i, (attrs, t) in enumerate(zip(ir.ArrayAttr(func.attributes[which]), types)):
                    row(f"@{name} {label} {i}", t, ir.DictAttr(attrs))

        def visit(inner: ir.Operation) -> ir.WalkResult:
            kind = inner.name
            if kind == "stablehlo.custom_call" and "mhlo.sharding" in inner.attributes:
                target = ir.StringAttr(inner.attributes["call_target_name"]).value
                if target == "Sharding":
                    rows.append(_gspmd_row(f"@{name} {_loc(inner)} constraint", inner.results[0].type,
                                           ir.StringAttr(inner.attributes["mhlo.sharding"]).value))
                elif target in _MANUAL_TARGETS:
                    rows.append(_manual_custom_call_row(f"@{name} {_loc(inner)} {_MANUAL_TARGETS[target]}", inner))
            elif kind == "sdy.sharding_constraint":
                rows.append(_shardy_row(f"@{name} {_loc(inner)} constraint", inner.results[0].type,
                                        str(inner.attributes["sharding"]), meshes))
            elif kind == "sdy.manual_computation":
                rows.extend(_manual_computation_rows(f"@{name} {_loc(inner)}", inner, meshes))
            return ir.WalkResult.ADVANCE

        # IR order: arguments, sharding ops in the body, results.
        values("arg_attrs", function_type.inputs, "arg")
        func.walk(visit)
        values("res_attrs", function_type.results, "result")
    return rows


#: GSPMD's form of a manual region (``shard_map`` under GSPMD): the custom calls entering and leaving it.
_MANUAL_TARGETS = {"SPMDFullToShardShape": "manual in", "SPMDShardToFullShape": "manual out"}


def _manual_custom_call_row(value: str, op: ir.Operation) -> ShardedValue:
    """``@SPMDFullToShardShape`` (global -> per-device, ``{manual}``) or ``@SPMDShardToFullShape`` (back)."""
    text = ir.StringAttr(op.attributes["mhlo.sharding"]).value
    operand, result = op.operands[0].type, op.results[0].type
    local, full = (result, operand) if value.endswith("manual in") else (operand, result)
    devices = "manual" if value.endswith("manual in") else _gspmd_row(value, full, text).devices
    return ShardedValue(value, f"{full} -> {local}", text, _shape_text(tuple(ir.RankedTensorType(local).shape)),
                        devices)


def _manual_computation_rows(where: str, op: ir.Operation, meshes: dict[str, list]) -> list[ShardedValue]:
    """One row per operand and result of an ``sdy.manual_computation``: its sharding, manual axes, local shape.

    The shard shape is the body's own type (the block argument, or the
    ``sdy.return`` operand): what each device holds inside the region.
    """
    manual_text = str(op.attributes["manual_axes"]) if "manual_axes" in op.attributes else ""
    manual = "{" + manual_text[manual_text.find("{") + 1:manual_text.rfind("}")] + "}" if "{" in manual_text else "{}"
    block = op.regions[0].blocks[0]
    returned = list(block.operations)[-1].operands
    rows = []
    for kind, shardings, values, locals_ in (("in", "in_shardings", op.operands, block.arguments),
                                             ("out", "out_shardings", op.results, returned)):
        texts = _per_value_texts(op.attributes[shardings]) if shardings in op.attributes else []
        for i, (value, local) in enumerate(zip(values, locals_)):
            text = texts[i] if i < len(texts) else "?"
            mesh_name = text.split(",", 1)[0].lstrip("<@").strip()
            devices = str(math.prod(size for _, size in meshes[mesh_name])) if mesh_name in meshes else "?"
            rows.append(ShardedValue(f"{where} manual {kind} {i}", str(value.type), f"{text} manual_axes={manual}",
                                     _shape_text(tuple(ir.RankedTensorType(local.type).shape)), devices))
    return rows


def _per_value_texts(attr: ir.Attribute) -> list[str]:
    """``["<@mesh, [{"x"}, {}]>", ...]`` from ``#sdy.sharding_per_value<[<...>, <...>]>``."""
    text = str(attr)
    body = text[text.index("[") + 1:text.rindex("]")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += ch in "<[{"
        depth -= ch in ">]}"
        if ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    if body.strip():
        parts.append(body[start:].strip())
    return parts


def _loc(op: ir.Operation) -> str:
    return op.results[0].get_name() if len(op.results) else op.name


def format_report(rows: list[ShardedValue]) -> str:
    """The aligned text table."""
    header = ShardedValue("value", "type", "sharding", "shard shape", "devices")
    table = [header] + rows
    fields = [f.name for f in dataclasses.fields(ShardedValue)]
    widths = {f: max(len(getattr(r, f)) for r in table) for f in fields}
    lines = ["  ".join(getattr(r, f).ljust(widths[f]) for f in fields).rstrip() for r in table]
    lines.insert(1, "-" * len(lines[0]))
    if not rows:
        lines.append("(no sharded values)")
    return "\n".join(lines) + "\n"


@register_pass
@dataclasses.dataclass(frozen=True)
class ShardingReportPass(ModulePass):
    """Print every annotated value with its sharding and per-device shard shape (read-only)."""

    name: ClassVar[str] = "toolkit-sharding-report"
    description: ClassVar[str] = "Print a table of every sharded value (mhlo.sharding or sdy.sharding) and its shard shape."

    output: str = "-"

    def apply(self, op: ir.Operation) -> None:
        text = format_report(collect_sharded_values(op.operation))
        if self.output == "-":
            sys.stderr.write(text)
            sys.stderr.flush()
        else:
            with open(self.output, "w") as f:
                f.write(text)
