"""Primitives: the operations a traced program is made of.

A primitive is data: its name, its *shape rule* (abstract evaluation), the
family it belongs to and the traits it was declared with. The core knows no
transformation: every interpretation of a primitive is a rule in a
``RuleTable`` keyed by it, filled by the rule module named after its family
(``toolkit/core/families.py`` says how they are found).

Example — a new primitive in a few lines (family files use ``Family.primitive``)::

    cube_p = Primitive("cube", shape_rule=lambda x: x)

    def cube(x):
        return cube_p.bind(x)

and, in ``toolkit/lowering``, ``@register_lowering(cube_p)`` its StableHLO.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Callable

from toolkit.core import sharding_types, tracing
from toolkit.core.avals import ShapedArray

#: Every primitive by name; names are unique.
PRIMITIVES: dict[str, "Primitive"] = {}


class Primitive:
    """A named operation with a shape rule.

    ``shape_rule(*in_avals, **params)`` returns the output ``ShapedArray`` (or a
    list of them when ``multiple_results``). It raises ``TypeError`` or
    ``ValueError`` naming the bad operand when the operands do not fit.
    """

    __slots__ = ("name", "shape_rule", "multiple_results", "effectful", "family", "traits", "__weakref__")

    def __init__(self, name: str, *, shape_rule: Callable[..., Any], multiple_results: bool = False,
                 effectful: bool = False, family: str = "", traits: Mapping[str, Any] | None = None):
        if name in PRIMITIVES:
            raise ValueError(f"a primitive named {name!r} is already registered")
        self.name = name
        self.shape_rule = shape_rule
        self.multiple_results = multiple_results
        self.effectful = effectful
        #: the family whose rule modules hold this primitive's rules ("" for a primitive made outside a family)
        self.family = family
        #: data the family declared it with, for interpretations that derive rules (read-only)
        self.traits: Mapping[str, Any] = MappingProxyType(dict(traits or {}))
        PRIMITIVES[name] = self

    def abstract_eval(self, *avals: ShapedArray, **params: Any) -> list[ShapedArray]:
        out = self.shape_rule(*avals, **params)
        outs = list(out) if self.multiple_results else [out]
        # Explicit shardings (sharding in types): only when an input carries one, or out_sharding= asks.
        for a in avals:
            if getattr(a, "sharding", None) is not None:
                return sharding_types.apply_sharding_rules(self, avals, outs, params)
        if sharding_types._overrides and sharding_types.needs_rules(avals, self):
            return sharding_types.apply_sharding_rules(self, avals, outs, params)
        return outs

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive: staged into the program being traced, or run eagerly."""
        return tracing.bind(self, args, params)

    def __repr__(self) -> str:
        return self.name
