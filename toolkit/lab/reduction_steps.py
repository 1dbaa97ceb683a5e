"""The edits the reducer tries: each makes a module smaller and may break it.

Every edit changes a freshly parsed module in place and returns whether it
changed anything; the caller (:mod:`toolkit.lab.reduction`) verifies the
result and keeps it only when it still verifies and is still interesting.
Edits never leave a use of an erased value behind (that would crash the
printer); everything else the verifier judges.

* :func:`remove_ops` — ops replaced by an operand, a function argument or a
  zero constant of the same type (or just erased when unused);
* :func:`drop_function` — a function and every call to it (the calls'
  results replaced the same way);
* :func:`inline_case_branch`, :func:`inline_while_body` — a ``stablehlo.case``
  replaced by one of its branches, a ``stablehlo.while`` by one run of its body;
* :func:`splat_constant_value` — a non-splat dense constant made a splat zero;
* :func:`drop_attribute` — a discardable attribute removed;
* :func:`shrink_dimension` — every ``tensor<...>`` dimension of one size made smaller, textually.

Ops are named by their index in :func:`reducible_ops` (pre-order), so an
edit found on one parse applies to another parse of the same text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from jaxlib.mlir import ir

from toolkit.ir.builders import insert_before, splat_constant
from toolkit.ir.rewriting import erase_op
from toolkit.ir.symbols import functions, symbol_name
from toolkit.ir.walk import walk_ops

#: How a result is replaced: an operand, an argument of the enclosing function, a zero constant.
Replacement = Literal["operand", "argument", "zero"]
#: The order tried when the caller does not care.
DEFAULT_REPLACEMENTS: tuple[Replacement, ...] = ("operand", "argument", "zero")

#: Ops never removed: structure the module needs.
_STRUCTURAL = {"builtin.module", "func.func"}


def count_ops(module: ir.Module) -> int:
    """Every op in ``module`` except the module itself (functions and terminators count)."""
    return len(walk_ops(module)) - 1


def _is_terminator(op: ir.Operation) -> bool:
    return bool(op.has_trait(ir.IsTerminatorTrait))


def reducible_ops(module: ir.Module) -> list[ir.Operation]:
    """The ops an edit may remove, in pre-order: everything but the module, functions and terminators."""
    return [op for op in walk_ops(module)[1:] if op.name not in _STRUCTURAL and not _is_terminator(op)]


def _enclosing_function(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    while parent is not None:
        parent = parent.operation
        if parent.name == "func.func":
            return parent
        parent = parent.parent
    return None


def _zero(op: ir.Operation, kind: ir.Type) -> ir.Value | None:
    """A zero constant of ``kind`` right before ``op``, or None for types without one (tokens, tuples, dynamic)."""
    if not isinstance(kind, ir.RankedTensorType) or not kind.has_static_shape:
        return None
    if not isinstance(kind.element_type, (ir.IntegerType, ir.FloatType)):
        return None
    with insert_before(op):
        try:
            return splat_constant(0, kind)
        except (TypeError, ValueError):
            return None


def replacement_value(op: ir.Operation, index: int, how: Replacement) -> ir.Value | None:
    """A value that may stand for result ``index`` of ``op`` (same type, dominating every use), or None.

    ``operand``: the operand at the same position when its type matches (a
    while loop's init value), else the first operand of the result's type;
    ``argument``: the first argument of the enclosing function of that type;
    ``zero``: a new zero constant (built before ``op``).
    """
    result = op.results[index]
    kind = result.type
    if how == "operand":
        operands = list(op.operands)
        if index < len(operands) and operands[index].type == kind:
            return operands[index]
        return next((value for value in operands if value.type == kind), None)
    if how == "argument":
        function = _enclosing_function(op)
        if function is None:
            return None
        entry = function.regions[0].blocks[0]
        return next((value for value in entry.arguments if value.type == kind), None)
    return _zero(op, kind)


def remove_op(op: ir.Operation, order: Sequence[Replacement] = DEFAULT_REPLACEMENTS) -> bool:
    """Replace every used result of ``op`` (the first way of ``order`` that has a value), then erase it.

    Returns False (and changes nothing but perhaps an unused constant) when a
    used result has no replacement.
    """
    values: list[ir.Value | None] = []
    for index, result in enumerate(op.results):
        if not list(result.uses):
            values.append(None)
            continue
        value = None
        for how in order:
            value = replacement_value(op, index, how)
            if value is not None:
                break
        if value is None:
            return False
        values.append(value)
    for result, value in zip(op.results, values):
        if value is not None:
            result.replace_all_uses_with(value)
    erase_op(op)
    return True


def remove_ops(module: ir.Module, indices: Sequence[int],
               order: Sequence[Replacement] = DEFAULT_REPLACEMENTS) -> bool:
    """Remove the :func:`reducible_ops` at ``indices`` (see :func:`remove_op`); True when any was removed.

    Later ops go first, so an op's users (and nested ops) are gone or
    rewired before the op itself.
    """
    ops = reducible_ops(module)
    changed = False
    for index in sorted(set(indices), reverse=True):
        changed |= remove_op(ops[index], order)
    return changed


def _producers(op: ir.Operation) -> list[ir.Operation]:
    """The ops defining ``op``'s operands (block arguments have none)."""
    found = []
    for value in op.operands:
        owner = value.owner
        if not isinstance(owner, ir.Block):
            found.append(owner.operation)
    return found


def prune_dead_ops(module: ir.Module, candidates: Sequence[ir.Operation]) -> None:
    """Erase those of ``candidates`` whose results are all unused (and have results), then their dead producers."""
    work = list(candidates)
    while work:
        op = work.pop()
        try:
            results = list(op.results)
        except RuntimeError:  # the bindings invalidated this handle: the op was erased already
            continue
        if not results or any(list(r.uses) for r in results):
            continue
        if op.name.startswith("func.") or _is_terminator(op):
            continue
        producers = _producers(op)
        erase_op(op)
        work.extend(producers)


def replace_op_by(module: ir.Module, index: int, how: Replacement) -> bool:
    """Replace reducible op ``index`` by one kind of value and erase producers left dead."""
    op = reducible_ops(module)[index]
    if not any(list(r.uses) for r in op.results):
        return False
    producers = _producers(op)
    if not remove_op(op, (how,)):
        return False
    prune_dead_ops(module, producers)
    return True


# --- functions and calls ------------------------------------------------------------------


def function_names(module: ir.Module) -> list[str]:
    """The names of ``module``'s functions, in order."""
    return [symbol_name(f) or "" for f in functions(module)]


def drop_function(module: ir.Module, name: str) -> bool:
    """Erase function ``name`` and every ``func.call`` of it (their results replaced); False if impossible."""
    target = next((f for f in functions(module) if symbol_name(f) == name), None)
    if target is None:
        return False
    for op in walk_ops(module):
        if op.name == "func.call" and "callee" in op.attributes \
                and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == name:
            if not remove_op(op):
                return False
    target.erase()  # a symbol still used elsewhere (a composite's decomposition) fails verification
    return True


def drop_unused_arguments(module: ir.Module, name: str) -> bool:
    """Remove the unused arguments of function ``name`` (its type and argument attributes follow).

    Only for a function nothing calls (``@main``, an unused helper): a call
    would need its operands changed too. False when nothing was removed.
    """
    target = next((f for f in functions(module) if symbol_name(f) == name), None)
    if target is None or not target.regions[0].blocks:
        return False
    if any(op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == name
           for op in walk_ops(module)):
        return False
    entry = target.regions[0].blocks[0]
    unused = [i for i, argument in enumerate(entry.arguments) if not list(argument.uses)]
    if not unused:
        return False
    kind = ir.FunctionType(ir.TypeAttr(target.attributes["function_type"]).value)
    inputs = [t for i, t in enumerate(kind.inputs) if i not in unused]
    with target.context:
        target.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(kind.results)))
        if "arg_attrs" in target.attributes:
            attrs = ir.ArrayAttr(target.attributes["arg_attrs"])
            target.attributes["arg_attrs"] = ir.ArrayAttr.get([a for i, a in enumerate(attrs) if i not in unused])
    for index in reversed(unused):
        entry.erase_argument(index)
    return True


# --- regions ---------------------------------------------------------------------------------


def _inline_block(op: ir.Operation, block: ir.Block, arguments: Sequence[ir.Value]) -> None:
    """Move ``block``'s ops before ``op`` (arguments replaced), replace ``op``'s results by what it returns."""
    for argument, value in zip(block.arguments, arguments):
        argument.replace_all_uses_with(value)
    body = list(block.operations)
    terminator, moved = body[-1], body[:-1]
    for inner in moved:
        inner.move_before(op)
    for result, value in zip(op.results, terminator.operands):
        result.replace_all_uses_with(value)
    erase_op(op)


def region_ops(module: ir.Module) -> list[tuple[int, int]]:
    """(index in :func:`reducible_ops`, region count) of every ``stablehlo.case`` and ``stablehlo.while``."""
    return [(i, len(op.regions)) for i, op in enumerate(reducible_ops(module))
            if op.name in ("stablehlo.case", "stablehlo.while")]


def inline_case_branch(module: ir.Module, index: int, branch: int) -> bool:
    """Replace the ``stablehlo.case`` at ``index`` by its branch ``branch``."""
    op = reducible_ops(module)[index]
    if op.name != "stablehlo.case" or branch >= len(op.regions):
        return False
    _inline_block(op, op.regions[branch].blocks[0], [])
    return True


def inline_while_body(module: ir.Module, index: int) -> bool:
    """Replace the ``stablehlo.while`` at ``index`` by one run of its body on the init values."""
    op = reducible_ops(module)[index]
    if op.name != "stablehlo.while":
        return False
    _inline_block(op, op.regions[1].blocks[0], list(op.operands))
    return True


# --- constants and attributes -----------------------------------------------------------------


def dense_constants(module: ir.Module) -> list[int]:
    """Indices (in :func:`reducible_ops`) of ``stablehlo.constant`` ops with a non-splat dense value."""
    found = []
    for i, op in enumerate(reducible_ops(module)):
        if op.name == "stablehlo.constant":
            value = op.attributes["value"]
            if isinstance(value, ir.DenseElementsAttr) and not value.is_splat:
                found.append(i)
    return found


def splat_constant_value(module: ir.Module, index: int) -> bool:
    """Make the dense constant at ``index`` a splat zero of the same type."""
    op = reducible_ops(module)[index]
    kind = op.results[0].type
    zero = _zero(op, kind)
    if zero is None:
        return False
    op.results[0].replace_all_uses_with(zero)
    erase_op(op)
    return True


def _discardable(name: str) -> bool:
    # Dialect-prefixed names (mhlo.sharding, jax.result_info, mhlo.frontend_attributes) are
    # discardable; a function's argument and result attributes are optional.
    return "." in name or name in ("arg_attrs", "res_attrs")


def attribute_sites(module: ir.Module) -> list[tuple[int, str]]:
    """(index in the pre-order walk, attribute name) of every discardable attribute, the module's included."""
    sites = []
    for i, op in enumerate(walk_ops(module)):
        for name in op.attributes.keys():
            if _discardable(name):
                sites.append((i, name))
    return sites


def drop_attributes(module: ir.Module, sites: Sequence[tuple[int, str]]) -> bool:
    """Remove the attributes at ``sites`` (from :func:`attribute_sites`)."""
    ops = walk_ops(module)
    changed = False
    for index, name in sites:
        attributes = ops[index].attributes
        if name in attributes:
            del attributes[name]
            changed = True
    return changed


# --- tensor dimensions (text) -----------------------------------------------------------------

_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)+)")


def dimension_sizes(text: str) -> list[int]:
    """Every static dimension size > 1 in ``text``'s ``tensor<...>`` types, largest first."""
    sizes: set[int] = set()
    for match in _TENSOR.finditer(text):
        sizes.update(int(d) for d in match.group(1).split("x")[:-1] if d.isdigit() and int(d) > 1)
    return sorted(sizes, reverse=True)


def tensor_volume(text: str) -> int:
    """The sum of the element counts of every static ``tensor<...>`` type written in ``text``."""
    total = 0
    for match in _TENSOR.finditer(text):
        volume = 1
        for d in match.group(1).split("x")[:-1]:
            volume *= int(d) if d.isdigit() else 1
        total += volume
    return total


def shrink_dimension(text: str, size: int, new_size: int) -> str:
    """``text`` with every ``size`` dimension of a ``tensor<...>`` type made ``new_size``."""
    def replace(match: re.Match) -> str:
        dims = match.group(1).split("x")[:-1]
        return "tensor<" + "".join(f"{new_size if d == str(size) else d}x" for d in dims)

    return _TENSOR.sub(replace, text)
