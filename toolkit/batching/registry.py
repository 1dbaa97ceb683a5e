"""The batching rules: one table keyed by primitive, filled by ``toolkit/batching/rules/<family>.py``
(imported the first time a primitive of that family is batched; ``toolkit/core/families.py``).

A batching rule says how to apply a primitive to operands that carry an
extra *batch dimension*::

    rule(axis, args, dims, **params) -> (out, out_dim)          # one result
    rule(axis, args, dims, **params) -> (outs, out_dims)        # multiple_results

``axis`` is the ``AxisData`` of the ``vmap`` (``axis.size``,
``axis.spmd_axis_name``); ``dims[i]`` is the position of the batch dimension
in ``args[i]``, or ``None`` when that operand is not batched (the same for
every batch element). A rule runs only when at least one ``dims[i]`` is not
``None``; it binds primitives (so it traces or runs eagerly like user code)
and returns the results with *their* batch dimensions (``None`` allowed).

A primitive that cannot be batched gets a rule that raises
``NotImplementedError`` with the reason, registered with
``register_unbatchable(prim, reason)``, which also writes the reason into
``UNBATCHABLE``: the coverage test (``tests/test_rule_coverage.py``)
fails for a primitive of ``toolkit.core.primitive.PRIMITIVES`` that has no
rule, and lists the written reasons.

Example (an elementwise primitive: the batch dimension passes through)::

    def _cube_batch(axis, args, dims):
        (x,), (d,) = args, dims
        return cube_p.bind(x), d

    register_batching(cube_p, _cube_batch)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolkit.core.registries import RuleTable
from toolkit.core.primitive import Primitive

if TYPE_CHECKING:
    from toolkit.batching.interpret import AxisData


class BatchingRule(Protocol):
    """``rule(axis, args, dims, **params) -> (out, out_dim)``, or ``(outs, out_dims)`` for multiple results."""

    def __call__(self, axis: AxisData, operands: Sequence[Any], dims: Sequence[int | None], /,
                 *rest: Any, **params: Any) -> tuple[Any, Any]: ...

#: ``prim -> rule(axis, args, dims, **params) -> (outs, out_dims)``.
BATCHING_RULES: RuleTable[BatchingRule] = RuleTable("batching", "toolkit.batching.rules")

#: ``prim -> reason``: primitives whose rule only raises ``NotImplementedError`` (the reason is its message).
UNBATCHABLE: dict[Primitive, str] = {}


def register_batching(primitive: Primitive, rule: BatchingRule) -> BatchingRule:
    """Put ``rule`` in the table for ``primitive`` (replacing any earlier one); returns ``rule``."""
    BATCHING_RULES[primitive] = rule
    UNBATCHABLE.pop(primitive, None)
    return rule


def register_unbatchable(primitive: Primitive, reason: str) -> None:
    """``primitive`` cannot be batched: its rule raises ``NotImplementedError(reason)``."""
    def rule(axis: Any, args: Any, dims: Any, **params: Any) -> Any:
        raise NotImplementedError(f"toolkit.vmap: the primitive `{primitive.name}` cannot be batched: {reason}")
    rule.__name__ = f"{primitive.name}_unbatchable"
    BATCHING_RULES[primitive] = rule
    UNBATCHABLE[primitive] = reason


def batching_rule(primitive: Primitive) -> BatchingRule:
    """The rule of ``primitive``; ``NotImplementedError`` naming it when there is none."""
    rule = BATCHING_RULES.lookup(primitive)
    if rule is None:
        raise NotImplementedError(f"toolkit.vmap: the primitive `{primitive.name}` has no batching rule "
                                  "(add one in toolkit/batching/rules/)")
    return rule
