"""Finding and replacing operations.

Example::

    for add in ops_named(module, "stablehlo.add"):
        ...
    replace_op_results(old_op, [new_value])   # uses of old results -> new values, old op erased
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jaxlib.mlir import ir

from toolkit.ir.rewriting import erase_op


def _as_operation(op_like: ir.Module | ir.Operation | ir.OpView) -> ir.Operation:
    return op_like.operation


def walk_ops(root: ir.Module | ir.Operation | ir.OpView, *, post_order: bool = False) -> list[ir.Operation]:
    """Every operation nested in ``root`` (``root`` included), pre-order by default.

    Returns a list (not a generator) so callers may change the IR while
    iterating without confusing the walk.
    """
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    order = ir.WalkOrder.POST_ORDER if post_order else ir.WalkOrder.PRE_ORDER
    _as_operation(root).walk(visit, order)
    return found


def ops_named(root: ir.Module | ir.Operation | ir.OpView, names: str | Iterable[str]) -> list[ir.Operation]:
    """Operations nested in ``root`` whose name is ``names`` (or one of them).

    Example: ``ops_named(module, {"stablehlo.add", "stablehlo.subtract"})``.
    """
    wanted = {names} if isinstance(names, str) else set(names)
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in wanted:
            found.append(op)
        return ir.WalkResult.ADVANCE

    _as_operation(root).walk(visit)
    return found


def replace_op_results(op: ir.Operation | ir.OpView, new_values: Sequence[ir.Value], *,
                       erase: bool = True) -> None:
    """Redirect every use of ``op``'s results to ``new_values``; erase ``op``.

    Outside a rewrite pattern only (inside one, use ``rewriter.replace_op``).
    Raises ValueError when the counts or types differ, and
    ``toolkit.ir.errors.OpInUseError`` if ``op`` is still used afterwards
    (a replacement value was one of its own results).
    """
    operation = _as_operation(op)
    results = list(operation.results)
    if len(results) != len(new_values):
        raise ValueError(f"{operation.name} has {len(results)} results, got {len(new_values)} replacements")
    for old, new in zip(results, new_values):
        if old.type != new.type:
            raise ValueError(f"replacement type {new.type} differs from result type {old.type}")
        if new == old:
            # MLIR's replace-all-uses of a value by itself never ends; the erase below refuses instead.
            continue
        old.replace_all_uses_with(new)
    if erase:
        erase_op(operation)


def users(value: ir.Value) -> list[ir.Operation]:
    """The operations that use ``value`` (each once)."""
    seen: list[ir.Operation] = []
    for use in value.uses:
        owner = use.owner
        owner = owner.operation if hasattr(owner, "operation") else owner
        if owner not in seen:
            seen.append(owner)
    return seen
