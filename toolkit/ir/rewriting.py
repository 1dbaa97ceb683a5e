"""Changing IR without leaving uses of erased ops behind.

MLIR frees an erased op at once. If one of its results was still used, the
users keep pointers into freed memory and the next verify, print or pass
crashes the process (SIGSEGV, nothing printed). jaxlib's bindings do not
check, so toolkit does:

* :func:`erase_op` — erase an op, refusing (:class:`~toolkit.ir.errors.OpInUseError`,
  a ``PassFailure`` naming the users) while any result is used;
* :class:`CheckedRewriter` — what pattern functions get as ``rewriter``: the
  same checks on ``erase_op`` and ``replace_op``;
* :func:`dangling_operands` — after a pass, find operands whose value was
  erased (reading only live memory), so the runner can fail cleanly instead
  of crashing in MLIR's verifier;
* :func:`keep_alive_forever` — IR found in that state is never freed, since
  freeing it would write through the dangling pointers.

Example::

    from toolkit.ir.rewriting import erase_op
    for op in ops_named(module, "stablehlo.constant"):
        if not list(op.results[0].uses):
            erase_op(op)
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from jaxlib.mlir import ir

from toolkit.ir.diagnostics import format_location
from toolkit.ir.errors import OpInUseError, PassFailure

#: How many users an error message lists before "and N more".
_MAX_LISTED = 5


def _operation(op: ir.Operation | ir.OpView) -> ir.Operation:
    return op.operation


def describe_op(op: ir.Operation | ir.OpView) -> str:
    """``'stablehlo.add' at f.mlir:3:8`` (the location only when it has a file and line)."""
    operation = _operation(op)
    where = format_location(operation.location)
    if where.startswith("-:"):  # parsed from text without a file name (stdin, a string)
        where = "line " + where[2:]
    return f"'{operation.name}'" + (f" at {where}" if where else "")


def _is_inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None:
        parent = parent.operation
        if parent == ancestor:
            return True
        parent = parent.parent
    return False


def live_uses(op: ir.Operation | ir.OpView) -> list[tuple[int, ir.Operation]]:
    """``(result number, user)`` for every user of ``op``'s results outside ``op`` itself (each once).

    Uses nested inside ``op`` do not count: they are erased with it.
    """
    operation = _operation(op)
    found = []
    for number, result in enumerate(operation.results):
        # MLIR prepends to use lists: reversed, they are usually in program order.
        for use in reversed(list(result.uses)):
            user = use.owner.operation
            if user != operation and not _is_inside(user, operation) and (number, user) not in found:
                found.append((number, user))
    return found


def _in_use_error(operation: ir.Operation, uses: list[tuple[int, ir.Operation]], action: str) -> OpInUseError:
    listed = [f"{describe_op(user)} (result {number})" for number, user in uses[:_MAX_LISTED]]
    more = f" and {len(uses) - _MAX_LISTED} more" if len(uses) > _MAX_LISTED else ""
    return OpInUseError(
        f"cannot {action} {describe_op(operation)}: its results are still used by {', '.join(listed)}{more}; "
        "replace those uses first (rewriter.replace_op, Value.replace_all_uses_with)", operation)


def erase_op(op: ir.Operation | ir.OpView) -> None:
    """Erase ``op``; raise :class:`~toolkit.ir.errors.OpInUseError` if its results are still used.

    The way to erase from a ``ModulePass`` (``op.erase()`` on a used op
    crashes the process later). Inside a pattern use ``rewriter.erase_op``,
    which checks the same.
    """
    operation = _operation(op)
    uses = live_uses(operation)
    if uses:
        raise _in_use_error(operation, uses, "erase")
    operation.erase()


def check_replacement(op: ir.Operation | ir.OpView, new: ir.Operation | ir.OpView | Sequence[ir.Value]) -> None:
    """Raise ``PassFailure`` unless replacing ``op`` by ``new`` (an op or values) leaves no use behind.

    The count must match (MLIR would silently skip the extra results and
    then erase an op that is still used), and ``new`` must not be ``op``'s
    own results.
    """
    operation = _operation(op)
    if isinstance(new, (ir.Operation, ir.OpView)):
        new_operation = _operation(new)
        if new_operation == operation:
            raise PassFailure(f"cannot replace {describe_op(operation)} by itself", operation)
        values = list(new_operation.results)
    else:
        values = list(new)
    if len(values) != len(operation.results):
        raise PassFailure(f"cannot replace {describe_op(operation)}: it has {len(operation.results)} results, "
                          f"got {len(values)} replacement values", operation)
    for value in values:
        owner = value.owner
        if isinstance(owner, (ir.Operation, ir.OpView)) and owner.operation == operation:
            raise PassFailure(f"cannot replace {describe_op(operation)} by its own results", operation)


class CheckedRewriter:
    """jaxlib's ``PatternRewriter`` with erase and replace refusing to leave uses of erased ops.

    Pattern functions receive one as ``rewriter``; everything else is passed
    through to the wrapped rewriter.
    """

    __slots__ = ("_rewriter",)

    def __init__(self, rewriter: Any):
        self._rewriter = rewriter

    @property
    def ip(self) -> ir.InsertionPoint:
        """The rewriter's insertion point (before the matched op)."""
        return self._rewriter.ip

    def erase_op(self, op: ir.Operation | ir.OpView) -> None:
        """Erase ``op``; raises ``OpInUseError`` while its results are used."""
        uses = live_uses(op)
        if uses:
            raise _in_use_error(_operation(op), uses, "erase")
        self._rewriter.erase_op(op)

    def replace_op(self, op: ir.Operation | ir.OpView,
                   new: ir.Operation | ir.OpView | Sequence[ir.Value]) -> None:
        """Replace every use of ``op``'s results by ``new`` (an op or values), then erase ``op``."""
        check_replacement(op, new)
        self._rewriter.replace_op(op, new)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rewriter, name)


def dangling_operands(root: ir.Operation | ir.OpView | ir.Module) -> list[tuple[ir.Operation, tuple[int, ...]]]:
    """Ops under ``root`` with operands whose value no longer exists, and those operand numbers.

    Such operands are left behind when an op is erased while its results are
    used (or its uses are dropped). Reading them crashes, so this never does:
    it counts each op's operands and finds them again through the use lists
    of the live values (results and block arguments) under ``root``; an
    operand found in no live use list is dangling. ``root`` should be
    isolated from above (a module, a function). Costs about two op walks.
    """
    root_operation = root.operation
    totals = [0, 0]  # operands, uses found from live values

    def count(op: ir.Operation) -> ir.WalkResult:
        totals[0] += len(op.operands)
        uses = 0
        for result in op.results:
            for _ in result.uses:
                uses += 1
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    for _ in argument.uses:
                        uses += 1
        totals[1] += uses
        return ir.WalkResult.ADVANCE

    root_operation.walk(count)
    if totals[0] == totals[1]:
        return []
    # Some operand is unaccounted for (or an op outside root uses a value in
    # it): find which ops' operands the live use lists do not reach.
    reached: dict[ir.Operation, set[int]] = {}

    def collect(value: ir.Value) -> None:
        for use in value.uses:
            reached.setdefault(use.owner.operation, set()).add(use.operand_number)

    def gather(op: ir.Operation) -> ir.WalkResult:
        for result in op.results:
            collect(result)
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    collect(argument)
        return ir.WalkResult.ADVANCE

    root_operation.walk(gather)
    found: list[tuple[ir.Operation, tuple[int, ...]]] = []

    def check(op: ir.Operation) -> ir.WalkResult:
        count = len(op.operands)
        if count:
            seen = reached.get(op, ())
            if len(seen) != count:
                found.append((op, tuple(i for i in range(count) if i not in seen)))
        return ir.WalkResult.ADVANCE

    root_operation.walk(check)
    return found


_kept_alive: list[Any] = []


def keep_alive_forever(obj: Any) -> None:
    """Never free ``obj`` (an ``ir.Module`` or ``ir.Operation`` with dangling operands).

    Destroying such IR writes through the dangling pointers into freed
    memory, which can corrupt the heap and crash later — even at interpreter
    exit, when module globals are cleared. So the object gets an extra
    reference no one releases.
    """
    _kept_alive.append(obj)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
