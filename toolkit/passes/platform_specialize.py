"""``toolkit-platform-specialize``: fold a multi-platform module's platform index for one known platform.

IR contract: before — a module whose ``@main`` may take a leading
``tensor<i32>`` argument marked ``jax.global_constant = "_platform_index"``
(multi-platform exports, see ``toolkit.export.calling_convention``); after —
``@main`` without that argument, its uses replaced by the constant index of
``platform`` in ``platforms``, and every ``stablehlo.case`` whose index
derives from it (directly, or through the small index-mapping cases the
lowering emits) replaced by the ops of the branch it selects. Other
``case`` ops are left alone. A module without a platform index is unchanged.

Options: ``platform`` (the platform compiled for), ``platforms`` (the
export's platform list, in order, e.g. ``platforms=cpu,cuda``), or
``index`` (the index itself, instead of ``platforms``); ``quiet=true``
silences the report. For each dispatch it keeps, the pass prints to stderr
``toolkit-platform-specialize: platform 'cpu' (index 0): kept branch 0 of 2 at <loc>``
and records the statistics ``cases-folded`` and ``branch-<k>-kept``.

Example::

    toolkit-opt --pass-pipeline='builtin.module(toolkit-platform-specialize{platform=cpu platforms=cpu,cuda})' m.mlir
"""

from __future__ import annotations

import dataclasses
import sys
from typing import ClassVar

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.passes.pass_base import ModulePass, PassFailure, record_statistic
from toolkit.passes.registry import register_pass

PLATFORM_INDEX_NAME = "_platform_index"


def _main(module_op: ir.Operation) -> ir.Operation | None:
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            return op.operation
    return None


def _arg_attr_dicts(main: ir.Operation) -> list[dict[str, ir.Attribute]]:
    count = len(main.regions[0].blocks[0].arguments)
    if "arg_attrs" not in main.attributes:
        return [{} for _ in range(count)]
    return [{named.name: named.attr for named in ir.DictAttr(a)} for a in ir.ArrayAttr(main.attributes["arg_attrs"])]


def platform_index_position(module_op: ir.Operation) -> int | None:
    """Which argument of ``@main`` is the platform index (None when there is none)."""
    main = _main(module_op)
    if main is None:
        return None
    for i, attrs in enumerate(_arg_attr_dicts(main)):
        constant = attrs.get("jax.global_constant")
        if isinstance(constant, ir.StringAttr) and constant.value == PLATFORM_INDEX_NAME:
            return i
    return None


def _constant_int(value: ir.Value) -> int | None:
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation) or owner.name != "stablehlo.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.DenseIntElementsAttr) and attr.is_splat:
        return int(ir.IntegerAttr(attr.get_splat_value()).value)
    return None


@dataclasses.dataclass(frozen=True)
class KeptBranch:
    """One folded dispatch: the branch kept, of how many, and where."""

    branch: int
    num_branches: int
    location: str


def specialize_platform(module_op: ir.Operation, index: int) -> list[KeptBranch]:
    """Fold the platform index of ``module_op`` to ``index``; returns the dispatches folded.

    Raises ``ValueError`` when ``@main`` has no platform index argument.
    """
    main = _main(module_op)
    position = platform_index_position(module_op)
    if main is None or position is None:
        raise ValueError("@main has no platform index argument (jax.global_constant = \"_platform_index\")")
    block = main.regions[0].blocks[0]
    argument = block.arguments[position]
    kept: list[KeptBranch] = []
    with module_op.context, ir.Location.unknown():
        scalar_i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        first = block.operations[0]
        with ir.InsertionPoint(first):
            constant = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(
                scalar_i32, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), index)))
        argument.replace_all_uses_with(constant.result)
        # Values known to equal a platform-derived constant; cases indexed by one fold.
        derived = [constant.result]
        while derived:
            value = derived.pop()
            for use in list(value.uses):
                user = use.owner
                user = user.operation if hasattr(user, "operation") else user
                if user.name != "stablehlo.case" or use.operand_number != 0:
                    continue
                derived.extend(_fold_case(user, _constant_int(value), kept))
        # Drop the argument from @main's signature, its attributes and its block.
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        inputs = [t for i, t in enumerate(ftype.inputs) if i != position]
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
        attrs = [a for i, a in enumerate(_arg_attr_dicts(main)) if i != position]
        main.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])
        block.erase_argument(position)
        if not list(constant.result.uses):
            constant.operation.erase()
    return kept


def _fold_case(case: ir.Operation, index: int | None, kept: list[KeptBranch]) -> list[ir.Value]:
    """Replace ``case`` by its selected branch; returns results that became platform-derived constants."""
    if index is None:
        return []
    regions = case.regions
    count = len(regions)
    chosen = index if 0 <= index < count else count - 1  # StableHLO: out of range selects the last branch
    kept.append(KeptBranch(chosen, count, str(case.location)))
    branch_block = regions[chosen].blocks[0]
    ops = list(branch_block.operations)
    terminator = ops[-1]
    returned = list(terminator.operands)
    for op in ops[:-1]:
        op.operation.move_before(case)
    derived = []
    for result, value in zip(case.results, returned):
        result.replace_all_uses_with(value)
        if _constant_int(value) is not None:
            derived.append(value)
    case.erase()
    return derived


@register_pass
@dataclasses.dataclass(frozen=True)
class PlatformSpecializePass(ModulePass):
    """Fold the platform index of a multi-platform module for ``platform``."""

    name: ClassVar[str] = "toolkit-platform-specialize"
    description: ClassVar[str] = ("Fold @main's platform index for one platform, keep only that platform's "
                                  "stablehlo.case branches, drop the argument; report the kept branches.")

    platform: str = dataclasses.field(default="cpu", metadata={"help": "the platform compiled for"})
    platforms: tuple[str, ...] = dataclasses.field(
        default=(), metadata={"help": "the export's platforms in order (the index is platform's position)"})
    index: int = dataclasses.field(default=-1, metadata={"help": "the platform index itself (overrides platforms)"})
    quiet: bool = dataclasses.field(default=False, metadata={"help": "do not print the kept branches"})

    def apply(self, op: ir.Operation) -> None:
        if platform_index_position(op) is None:
            return
        index = self.index
        if index < 0:
            platforms = tuple(self.platforms)
            if not platforms:
                raise PassFailure("the module takes a platform index: give the export's platform list "
                                  "(platforms=cpu,cuda) or index=N")
            if self.platform not in platforms:
                raise PassFailure(f"platform {self.platform!r} is not among the module's platforms {platforms}")
            index = platforms.index(self.platform)
        kept = specialize_platform(op, index)
        record_statistic("cases-folded", len(kept))
        for k in kept:
            record_statistic(f"branch-{k.branch}-kept")
            if not self.quiet:
                sys.stderr.write(f"toolkit-platform-specialize: platform {self.platform!r} (index {index}): kept "
                                 f"branch {k.branch} of {k.num_branches} at {k.location}\n")
        if not kept and not self.quiet:
            sys.stderr.write(f"toolkit-platform-specialize: platform {self.platform!r} (index {index}): "
                             "no platform-dependent code\n")
