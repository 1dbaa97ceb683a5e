"""``toolkit-sharding-annotate``: write argument/result shardings onto ``@main``.

IR contract: before, ``@main`` exists and has ranked tensor arguments and
results. After, each annotated argument/result carries either

* GSPMD form (``mode=gspmd``): ``mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"``,
  and the module ``mhlo.num_partitions``/``mhlo.num_replicas`` attributes; or
* Shardy form (``mode=shardy``): an ``sdy.mesh @mesh = <[...]>`` symbol at the
  top of the module and ``sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>``.

Values without a sharding are left alone. Existing attributes of the same
name are replaced. Mesh symbols the module already declares (those of
``sdy.manual_computation`` ops from ``shard_map``) are reused for an equal
mesh; a different mesh gets the next free name (``@mesh_0``, ...). GSPMD form
refuses a module with ``sdy.manual_computation`` (only Shardy runs it). Shardings come from Python (:func:`annotate_shardings`,
what ``jit`` calls) or from the pass options: ``mesh="x=2,y=4"`` and
``in-specs``/``out-specs``, one spec per value separated by ``;`` — each
``[x,None]``, ``[(x,y)]``, ``P('x', None)`` or empty (no annotation).

Example::

    toolkit-opt --pass-pipeline='builtin.module(toolkit-sharding-annotate{mode=shardy mesh="x=2,y=4" in-specs="[x];[None,y]" out-specs="[x,y]"})' f.mlir
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar, Literal, Sequence

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from toolkit.passes.pass_base import ModulePass, PassFailure
from toolkit.passes.registry import register_pass
from toolkit.shard import (UNCONSTRAINED, AbstractMesh, NamedSharding, PartitionSpec, Sharding, shardy_mesh_for,
                           shardy_sharding_text)
from toolkit.shard.shardy import ShardyMeshSymbols


# -- option text -------------------------------------------------------------------

def parse_mesh_text(text: str) -> AbstractMesh:
    """``"x=2,y=4"`` -> ``AbstractMesh((2, 4), ("x", "y"))``; ``ValueError`` on bad text."""
    axes = []
    for part in filter(None, (p.strip() for p in re.split(r"[,;\s]+", text))):
        name, sep, size = part.partition("=")
        if not sep or not name or not size.isdigit():
            raise ValueError(f"bad mesh axis {part!r} in {text!r}; write name=size, e.g. mesh=\"x=2,y=4\"")
        axes.append((name.strip("'\""), int(size)))
    if not axes:
        raise ValueError(f"mesh text {text!r} names no axes")
    return AbstractMesh(tuple(s for _, s in axes), tuple(n for n, _ in axes))


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def _entry(text: str) -> Any:
    text = text.strip().strip("'\"")
    if text in ("", "None", "_", "{}"):
        return None
    if text in ("?", "UNCONSTRAINED", "{?}"):
        return UNCONSTRAINED
    if text[0] in "({" and text[-1] in ")}":
        names = [n.strip().strip("'\"") for n in text[1:-1].split(",") if n.strip()]
        return tuple(names)
    return text


def parse_spec_text(text: str) -> PartitionSpec:
    """``"[x, None]"``, ``"P('x', None)"``, ``"[(x,y)]"`` -> a ``PartitionSpec``."""
    body = text.strip()
    for prefix in ("PartitionSpec(", "P("):
        if body.startswith(prefix) and body.endswith(")"):
            body = body[len(prefix):-1]
            break
    else:
        if body.startswith("[") and body.endswith("]"):
            body = body[1:-1]
    if not body.strip():
        return PartitionSpec()
    return PartitionSpec(*[_entry(p) for p in _split_top_level(body)])


def parse_specs_option(text: str) -> list[PartitionSpec | None]:
    """``"[x];;[None,y]"`` -> ``[P('x'), None, P(None, 'y')]`` (empty: no annotation)."""
    if not text.strip():
        return []
    return [parse_spec_text(part) if part.strip() else None for part in text.split(";")]


# -- the rewrite --------------------------------------------------------------------

def _main_func(module_op: ir.Operation, name: str) -> ir.Operation:
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op.operation
    raise ValueError(f"the module has no function @{name} to annotate")


def _with_attribute(attrs: ir.Attribute | None, count: int, index: int, key: str,
                    value: ir.Attribute) -> list[ir.Attribute]:
    current = list(ir.ArrayAttr(attrs)) if attrs is not None else [ir.DictAttr.get({}) for _ in range(count)]
    entries = {named.name: named.attr for named in ir.DictAttr(current[index])}
    entries[key] = value
    current[index] = ir.DictAttr.get(entries)
    return current


def _set_value_attribute(func: ir.Operation, which: str, count: int, index: int, key: str,
                         value: ir.Attribute) -> None:
    attrs = func.attributes[which] if which in func.attributes else None
    func.attributes[which] = ir.ArrayAttr.get(_with_attribute(attrs, count, index, key, value))


def _ranks(types: Sequence[ir.Type], what: str) -> list[int]:
    ranks = []
    for i, t in enumerate(types):
        if not isinstance(t, ir.RankedTensorType):
            raise ValueError(f"{what} {i} has type {t}, not a ranked tensor; it cannot be sharded")
        ranks.append(t.rank)
    return ranks


def _ensure_mesh_symbol(module_op: ir.Operation, mesh_name: str, mesh_text: str) -> None:
    """Declare ``sdy.mesh @mesh_name = mesh_text`` after the leading mesh symbols, unless declared already."""
    body = module_op.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "sdy.mesh" and ir.StringAttr(op.attributes["sym_name"]).value == mesh_name:
            existing = str(op.attributes["mesh"])
            if existing.replace("#sdy.mesh", "") != mesh_text:
                raise ValueError(f"the module already has sdy.mesh @{mesh_name} = {existing}, which differs "
                                 f"from the mesh of the shardings ({mesh_text})")
            return
    after_meshes = next((op for op in body.operations if op.operation.name != "sdy.mesh"), None)
    ip = ir.InsertionPoint(after_meshes) if after_meshes is not None else ir.InsertionPoint(body)
    sdy.MeshOp(mesh_name, ir.Attribute.parse("#sdy.mesh" + mesh_text), ip=ip)


def _replicated(sharding: Sharding) -> bool:
    return bool(getattr(sharding, "is_fully_replicated", False))


def _replicated_text(rank: int, mesh_name: str) -> str:
    return f"#sdy.sharding<@{mesh_name}, [" + ", ".join(["{}"] * rank) + "]>"


def _declared_meshes(module_op: ir.Operation, first_name: str) -> ShardyMeshSymbols:
    """A symbol table holding the module's ``sdy.mesh`` declarations (e.g. those ``shard_map`` refers to)."""
    symbols = ShardyMeshSymbols(first_name)
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "sdy.mesh":
            symbols.adopt(ir.StringAttr(op.attributes["sym_name"]).value,
                          str(op.attributes["mesh"]).replace("#sdy.mesh", "", 1))
    return symbols


def _refuse_manual_computations(module_op: ir.Operation) -> None:
    """GSPMD form cannot describe Shardy's manual computations (``shard_map`` lowered for Shardy)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "sdy.manual_computation":
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    if found:
        raise ValueError(f"the module has an sdy.manual_computation (at {found[0].location}), which only the Shardy "
                         "partitioner runs; annotate it with mode=shardy (or lower shard_map with "
                         "TOOLKIT_PARTITIONER=gspmd, which writes GSPMD's manual custom calls instead)")


def name_shardy_meshes(shardings: Sequence[tuple[Sharding | None, int]],
                       symbols: ShardyMeshSymbols | None = None) -> ShardyMeshSymbols:
    """Name the meshes of ``(sharding, rank)`` pairs in order (``@mesh``, ``@mesh_0``, ...), as JAX does.

    Fully replicated shardings fit any mesh: they name a mesh only when no
    partitioned sharding does (then the first ``NamedSharding``'s, so a mesh
    the user made is preferred to one derived from a device list).
    """
    symbols = symbols if symbols is not None else ShardyMeshSymbols()
    given = [(s, rank) for s, rank in shardings if s is not None]
    for sharding, rank in given:
        if not _replicated(sharding):
            symbols.name_for(shardy_mesh_for(sharding, rank))
    if not len(symbols) and given:
        named = [s for s, _ in given if isinstance(s, NamedSharding)]
        sharding, rank = (named[0], 0) if named else given[0]
        symbols.name_for(shardy_mesh_for(sharding, rank))
    return symbols


def annotate_shardings(module: ir.Module | ir.Operation, in_shardings: Sequence[Sharding | None],
                       out_shardings: Sequence[Sharding | None] = (), *,
                       mode: Literal["gspmd", "shardy"] = "gspmd", func_name: str = "main",
                       mesh_name: str = "mesh", body_shardings: Sequence[tuple[Sharding, int]] = (),
                       mesh_symbols: ShardyMeshSymbols | None = None) -> None:
    """Write shardings onto the arguments and results of ``@func_name`` in place.

    ``in_shardings[i]`` / ``out_shardings[i]`` is a toolkit ``Sharding`` or None
    (leave the value unannotated); lists shorter than the arity leave the rest
    alone. Raises ``ValueError`` for too many shardings, a spec that does not
    fit the value's rank, or (Shardy) shardings over different meshes.

    Shardy form declares one ``sdy.mesh`` symbol per distinct mesh, named as
    JAX names them: ``@mesh_name`` for the first partitioned sharding's mesh,
    then ``@mesh_name_0``, ``@mesh_name_1``, ... (see :func:`name_shardy_meshes`).
    Fully replicated shardings fit any mesh and are written as ``[{}, ...]``
    on the first. ``body_shardings`` are ``(sharding, rank)`` pairs used inside
    the function (e.g. by ``sdy.sharding_constraint`` ops): their meshes are
    named and declared too. ``mesh_symbols`` is the table the lowering used
    (``ModuleContext.shardy_meshes``), so symbols named while lowering
    (constraints, ``shard_map``) are the ones declared.

    Example::

        annotate_shardings(module, [NamedSharding(mesh, P("x"))], [None], mode="shardy")
    """
    module_op = module.operation
    func = _main_func(module_op, func_name)
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    in_ranks = _ranks(function_type.inputs, "argument")
    out_ranks = _ranks(function_type.results, "result")
    for given, ranks, what in ((in_shardings, in_ranks, "in_shardings"), (out_shardings, out_ranks, "out_shardings")):
        if len(given) > len(ranks):
            raise ValueError(f"{what} has {len(given)} entries but @{func_name} has {len(ranks)} "
                             f"{'arguments' if what == 'in_shardings' else 'results'}")
    pairs = [("arg_attrs", len(in_ranks), i, s, in_ranks[i]) for i, s in enumerate(in_shardings) if s is not None]
    pairs += [("res_attrs", len(out_ranks), i, s, out_ranks[i]) for i, s in enumerate(out_shardings) if s is not None]
    if not pairs and not (mode == "shardy" and (body_shardings or mesh_symbols)):
        return
    with module_op.context, ir.Location.unknown():
        if mode == "gspmd":
            _refuse_manual_computations(module_op)
            num_partitions = {s.num_devices for *_, s, _ in pairs}
            for which, count, i, sharding, rank in pairs:
                text = str(sharding._to_xla_hlo_sharding(rank))
                _set_value_attribute(func, which, count, i, "mhlo.sharding", ir.StringAttr.get(text))
            i32 = ir.IntegerType.get_signless(32)
            module_op.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, max(num_partitions))
            module_op.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        elif mode == "shardy":
            every = [(s, rank) for *_, s, rank in pairs] + list(body_shardings)
            symbols = name_shardy_meshes(every, mesh_symbols if mesh_symbols is not None
                                         else _declared_meshes(module_op, mesh_name))
            for name, text in symbols.declarations():
                _ensure_mesh_symbol(module_op, name, text)
            for which, count, i, sharding, rank in pairs:
                if _replicated(sharding):
                    first = symbols.first()
                    assert first is not None  # `every` holds this sharding, so name_shardy_meshes named a mesh
                    attr = ir.Attribute.parse(_replicated_text(rank, first))
                else:
                    name = symbols.name_for(shardy_mesh_for(sharding, rank))
                    attr = ir.Attribute.parse(shardy_sharding_text(sharding, rank, name))
                _set_value_attribute(func, which, count, i, "sdy.sharding", attr)
            i32 = ir.IntegerType.get_signless(32)
            module_op.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, max(s.num_devices for s, _ in every))
            module_op.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        else:
            raise ValueError(f"mode must be 'gspmd' or 'shardy', got {mode!r}")


@register_pass
@dataclasses.dataclass(frozen=True)
class ShardingAnnotatePass(ModulePass):
    """Annotate ``@main``'s arguments and results with shardings (GSPMD or Shardy form)."""

    name: ClassVar[str] = "toolkit-sharding-annotate"
    description: ClassVar[str] = ("Write argument/result shardings onto @main as mhlo.sharding strings (mode=gspmd) "
                                  "or sdy.mesh + sdy.sharding (mode=shardy).")

    mode: Literal["gspmd", "shardy"] = "gspmd"
    mesh: str = ""
    in_specs: str = ""
    out_specs: str = ""
    func: str = "main"

    def apply(self, op: ir.Operation) -> None:
        try:
            if not self.mesh:
                if self.in_specs or self.out_specs:
                    raise ValueError("in-specs/out-specs need a mesh option, e.g. mesh=\"x=2,y=4\"")
                return
            mesh = parse_mesh_text(self.mesh)
            ins = [None if s is None else NamedSharding(mesh, s) for s in parse_specs_option(self.in_specs)]
            outs = [None if s is None else NamedSharding(mesh, s) for s in parse_specs_option(self.out_specs)]
            annotate_shardings(op, ins, outs, mode=self.mode, func_name=self.func)
        except (ValueError, TypeError) as error:
            raise PassFailure(str(error)) from None
