"""Fitting a callee module's Shardy (``sdy``) parts to the caller's partitioner.

JAX 0.10.2 exports in Shardy form: ``sdy.mesh @mesh``, ``sdy.sharding``
attributes, ``sdy.sharding_constraint`` and — for ``jax.shard_map`` —
``sdy.manual_computation`` regions whose bodies work on per-device blocks and
use collectives. XLA partitions one module with one partitioner, so when
``Exported.call`` inlines such a module into a toolkit computation:

* **Shardy caller** (``TOOLKIT_PARTITIONER=shardy``): the callee's ``sdy`` ops
  stay; its mesh becomes the caller's ``@mesh`` (:func:`share_meshes`), so
  the caller's own annotations and the callee's refer to one mesh.
* **GSPMD caller** (the default): the ``sdy`` ops are rewritten to their
  GSPMD equivalents (:func:`shardy_to_gspmd`), the form JAX lowered
  ``shard_map`` to before Shardy: a ``manual_computation`` becomes
  ``@Sharding`` → ``@SPMDFullToShardShape`` (``{manual}``) → the body →
  ``@Sharding({manual})`` → ``@SPMDShardToFullShape``; a
  ``sharding_constraint`` becomes ``custom_call @Sharding``; ``sdy.sharding``
  hints on functions and ops are dropped (the caller's shardings decide).

(JAX itself refuses to call a Shardy export with Shardy disabled.)
"""

from __future__ import annotations

import math
import re

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.export.shardings import ExportedAbstractMesh, ExportedNamedSharding
from toolkit.shard.shardy import ShardyMeshSymbols, parse_shardy_mesh

_SHARDING_RE = re.compile(r'<\s*@(?P<mesh>[\w.$-]+)\s*,\s*\[(?P<dims>[^\]]*)\](?P<rest>[^>]*)>')
_NAME_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def has_shardy(module: ir.Module) -> bool:
    """Whether the module has Shardy meshes (and so possibly other ``sdy`` parts)."""
    return any(op.operation.name == "sdy.mesh" for op in module.body.operations)


def _meshes(module: ir.Module) -> dict[str, ExportedAbstractMesh]:
    meshes = {}
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            axes = parse_shardy_mesh(str(op.attributes["mesh"]))
            meshes[ir.StringAttr(op.attributes["sym_name"]).value] = ExportedAbstractMesh(
                tuple(s for _, s in axes), tuple(n for n, _ in axes))
    return meshes


def share_meshes(caller: ir.Module, callee: ir.Module, symbols: ShardyMeshSymbols) -> set[str]:
    """Shardy caller: give the callee's meshes the caller's symbols (``symbols``, the lowering's table).

    A non-empty callee mesh takes the symbol the caller's table gives its
    mesh (naming it if new); when the caller already declares that symbol
    the callee's declaration is erased, otherwise it is kept under that name
    (and ``annotate_shardings`` later finds it declared). Empty meshes stay
    private to the callee, inlined under a fresh name like its functions.
    Returns the callee symbols that must keep their names when inlined.
    """
    declared = {ir.StringAttr(op.attributes["sym_name"]).value
                for op in caller.body.operations if op.operation.name == "sdy.mesh"}
    table = ir.SymbolTable(callee.operation)
    meshes = [op for op in callee.body.operations if op.operation.name == "sdy.mesh"
              and parse_shardy_mesh(str(op.attributes["mesh"]))]  # empty ones are inlined under fresh names
    # First out of the way (a callee's @mesh_0 may be the caller's @mesh), then to the caller's names.
    for i, op in enumerate(meshes):
        name = ir.StringAttr(op.attributes["sym_name"]).value
        table.replace_all_symbol_uses(name, f"__toolkit_callee_mesh_{i}", callee.operation)
        table.set_symbol_name(op, f"__toolkit_callee_mesh_{i}")
    keep: set[str] = set()
    for i, op in enumerate(meshes):
        name = f"__toolkit_callee_mesh_{i}"
        target = symbols.name_for_text(str(op.attributes["mesh"]).replace("#sdy.mesh", "", 1))
        table.replace_all_symbol_uses(name, target, callee.operation)
        if target in declared or target in keep:
            op.operation.erase()
        else:
            table.set_symbol_name(op, target)
            keep.add(target)
    return keep


def _parse_sharding(text: str, meshes: dict[str, ExportedAbstractMesh]) -> tuple[ExportedAbstractMesh, list]:
    match = _SHARDING_RE.search(text)
    if match is None:
        raise NotImplementedError(f"cannot read the Shardy sharding {text!r}")
    if ":(" in match.group("dims"):
        raise NotImplementedError(f"Shardy sub-axes ({text}) in an export called from a GSPMD computation are not "
                                  "supported; call it with TOOLKIT_PARTITIONER=shardy")
    mesh_name = match.group("mesh")
    if mesh_name not in meshes:
        raise ValueError(f"the Shardy sharding {text!r} names the mesh @{mesh_name}, which the module does not declare")
    dims = re.findall(r"\{([^}]*)\}", match.group("dims"))
    return meshes[mesh_name], [tuple(_NAME_RE.findall(d)) for d in dims]


def _hlo_text(text: str, meshes: dict[str, ExportedAbstractMesh], ndim: int) -> str:
    """The ``mhlo.sharding`` text of one Shardy sharding (JAX's NamedSharding → HloSharding rules)."""
    mesh, dims = _parse_sharding(text, meshes)
    return str(ExportedNamedSharding(mesh, tuple(dims)).to_hlo_sharding(ndim))


def _manual_text(mesh: ExportedAbstractMesh, manual_axes: set[str], ndim: int) -> str:
    """JAX's ``manual_proto``: manual over ``manual_axes``, replicated over the other axes."""
    manual = [i for i, a in enumerate(mesh.axis_names) if a in manual_axes]
    free = [i for i, a in enumerate(mesh.axis_names) if a not in manual_axes]
    replicated_size = math.prod(mesh.axis_sizes[i] for i in free)
    if replicated_size == 1:
        return "{manual}"
    manual_size = math.prod(mesh.axis_sizes[i] for i in manual)
    dims = ",".join(["1"] * ndim + [str(replicated_size), str(manual_size)])
    perm = free + manual
    reshape = ",".join(str(s) for s in mesh.axis_sizes)
    transpose = "" if perm == list(range(len(perm))) else "T(" + ",".join(str(p) for p in perm) + ")"
    return f"{{devices=[{dims}]<=[{reshape}]{transpose} last_tile_dims={{replicated, manual}}}}"


def _custom_call(target: str, value: ir.Value, result_type: ir.Type, sharding: str,
                 unspecified_dims: list[int] | None = None) -> ir.Value:
    op = stablehlo.CustomCallOp([result_type], [value], target)
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(sharding)
    if unspecified_dims:
        op.attributes["backend_config"] = ir.StringAttr.get(f"unspecified_dims=[{','.join(map(str, unspecified_dims))}]")
    return op.result


def _rank(value: ir.Value) -> int:
    return ir.RankedTensorType(value.type).rank


def _lower_manual_computation(op: ir.Operation, meshes: dict[str, ExportedAbstractMesh]) -> None:
    """Replace one ``sdy.manual_computation`` by GSPMD's full→shard / body / shard→full form, in place."""
    in_shardings = [m.group(0) for m in _SHARDING_RE.finditer(str(op.attributes["in_shardings"]))]
    out_shardings = [m.group(0) for m in _SHARDING_RE.finditer(str(op.attributes["out_shardings"]))]
    if len(in_shardings) != len(op.operands) or len(out_shardings) != len(op.results):
        raise NotImplementedError(f"cannot read the shardings of {op.name}: {op.attributes['in_shardings']} / "
                                  f"{op.attributes['out_shardings']}")
    manual_axes = set(_NAME_RE.findall(str(op.attributes["manual_axes"])))
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        locals_ = []
        for value, sharding, arg in zip(op.operands, in_shardings, block.arguments):
            ndim = _rank(value)
            mesh = _parse_sharding(sharding, meshes)[0]
            # Axes left to the partitioner (not manual): JAX marks every dimension unspecified then.
            unspecified = list(range(ndim)) if set(mesh.axis_names) - manual_axes else None
            full = _custom_call("Sharding", value, value.type, _hlo_text(sharding, meshes, ndim), unspecified)
            manual = _manual_text(mesh, manual_axes, ndim)
            locals_.append(_custom_call("SPMDFullToShardShape", full, arg.type, manual, unspecified))
        for arg, local in zip(block.arguments, locals_):
            arg.replace_all_uses_with(local)
        body = list(block.operations)
        terminator = body[-1]
        for inner in body[:-1]:
            inner.move_before(op)
        returned = list(terminator.operands)
        results = []
        for value, sharding, result in zip(returned, out_shardings, op.results):
            ndim = _rank(result)
            result_mesh = _parse_sharding(sharding, meshes)[0]
            unspecified = list(range(ndim)) if set(result_mesh.axis_names) - manual_axes else None
            manual = _custom_call("Sharding", value, value.type, _manual_text(result_mesh, manual_axes, ndim),
                                  unspecified)
            results.append(_custom_call("SPMDShardToFullShape", manual, result.type,
                                        _hlo_text(sharding, meshes, ndim), unspecified))
    for result, new in zip(op.results, results):
        result.replace_all_uses_with(new)
    op.erase()


def _drop_sdy_attributes(op: ir.Operation) -> None:
    if op.name == "func.func":
        for which in ("arg_attrs", "res_attrs"):
            if which in op.attributes:
                op.attributes[which] = ir.ArrayAttr.get([
                    ir.DictAttr.get({n.name: n.attr for n in ir.DictAttr(a) if not n.name.startswith("sdy.")})
                    for a in ir.ArrayAttr(op.attributes[which])])
    elif "sdy.sharding" in op.attributes:
        del op.attributes["sdy.sharding"]


def shardy_to_gspmd(module: ir.Module) -> None:
    """Rewrite the module's ``sdy`` parts in GSPMD form, in place (see the module docstring).

    Raises ``NotImplementedError`` naming an ``sdy`` op that has no GSPMD
    form here (e.g. explicit collectives such as ``sdy.all_gather``).
    """
    meshes = _meshes(module)
    manual: list[ir.Operation] = []
    constraints: list[ir.Operation] = []
    doomed: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name == "sdy.manual_computation":
            manual.append(op)
        elif name in ("sdy.sharding_constraint", "sdy.reshard"):
            constraints.append(op)
        elif name == "sdy.mesh":
            doomed.append(op)
        elif name.startswith("sdy.") and name != "sdy.return":
            raise NotImplementedError(f"calling an export that uses {name} inside a GSPMD computation is not "
                                      "supported; call it with TOOLKIT_PARTITIONER=shardy")
        _drop_sdy_attributes(op)
        return ir.WalkResult.ADVANCE

    with module.context:
        module.operation.walk(visit)  # post-order: inner manual computations come first
        for op in manual:
            _lower_manual_computation(op, meshes)
        for op in constraints:
            with ir.InsertionPoint(op), op.location:
                text = str(op.attributes["sharding"])
                value = op.operands[0]
                new = _custom_call("Sharding", value, value.type, _hlo_text(text, meshes, _rank(value)))
            op.results[0].replace_all_uses_with(new)
            op.erase()
    for op in doomed:
        op.erase()
