"""The table of lowering rules: one per primitive (optionally per platform), filled by
``toolkit/lowering/rules/<family>.py`` (imported the first time a primitive of that family is
lowered; ``toolkit/core/families.py``).

A rule is ``rule(ctx, *operands, **params) -> ir.Value | Sequence[ir.Value]``
where ``operands`` are MLIR values and ``ctx`` is a ``RuleContext`` giving the
abstract values in and out, the result types and the platform.

Example::

    @register_lowering(lax.add_p)
    def _add(ctx, x, y):
        return stablehlo.add(x, y)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

from toolkit.core.registries import RuleTable

if TYPE_CHECKING:
    from jaxlib.mlir import ir

    from toolkit.lowering.lower import RuleContext


class LoweringRule(Protocol):
    """``rule(ctx, *operands, **params) -> value or values``: MLIR values in, MLIR values out."""

    def __call__(self, ctx: RuleContext, /, *operands: ir.Value, **params: Any) -> ir.Value | Sequence[ir.Value]: ...


#: primitive -> {platform or None (any platform): rule}
LOWERINGS: RuleTable[dict[str | None, LoweringRule]] = RuleTable("lowering", "toolkit.lowering.rules")


def register_lowering(primitive: Any, platforms: Iterable[str] | None = None) -> Callable[[LoweringRule], LoweringRule]:
    """Register ``rule`` as ``primitive``'s lowering, for ``platforms`` or for all of them."""
    def decorator(rule: LoweringRule) -> LoweringRule:
        table = LOWERINGS.setdefault(primitive, {})
        targets: Iterable[str | None] = platforms or [None]  # None: every platform
        for platform in targets:
            table[platform] = rule
        return rule
    return decorator


def lowering_rules(primitive: Any) -> dict[str | None, LoweringRule]:
    rules = LOWERINGS.lookup(primitive)
    if not rules:
        raise NotImplementedError(f"primitive `{primitive.name}` has no lowering rule")
    return rules
