"""Primitive families, and the one way every interpretation finds its rules.

A *family* is the list of primitives one file defines (``toolkit/lax/elementwise.py`` builds the
``elementwise`` family, ``toolkit/shard_map.py`` the ``shard_map`` family, ...). The family file
creates its primitives with :meth:`Family.primitive` — name, shape rule and *traits*, plain data that
interpretations may derive rules from — and records its user functions with :meth:`Family.function`.

Every interpretation of a primitive (lowering, JVP/transpose/VJP, batching, sharding types) is a
:class:`RuleTable` keyed by primitive. A table knows one *rules package*; the rules of family ``F``
are in the module ``<rules package>.F``, imported the first time a rule of that family is looked up
(:meth:`RuleTable.lookup`) or when everything is asked for (:meth:`RuleTable.load_all`, used by the
rule-coverage test). That is the only discovery mechanism: no import lists, no scans of module
globals, no import order to respect::

    toolkit/lax/<family>.py                 the primitives, their shape rules, the user functions
    toolkit/lowering/rules/<family>.py      LOWERINGS          (toolkit/lowering/registry.py)
    toolkit/ad/rules/<family>.py            JVP_RULES, TRANSPOSE_RULES, VJP_RULES (toolkit/ad/registry.py)
    toolkit/batching/rules/<family>.py      BATCHING_RULES     (toolkit/batching/registry.py)
    toolkit/sharding_rules/<family>.py      SHARDING_RULES     (toolkit/core/sharding_types.py)

A rule module may loop over its family (``for p in elementwise.family``) or register a *deriver*
(:meth:`Family.derive`), called for every member present and future, so a primitive added to a family
later — by a test, or by a researcher's plugin — gets every derived rule without touching the rule
files.

Example — a unary op whose every interpretation is derived from its traits::

    toy_neg_p = elementwise.unary("toy_neg", elementwise.NUMBER, hlo="stablehlo.negate",
                                  derivative=lambda x: -1)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from toolkit.core.primitive import PRIMITIVES, Primitive
from toolkit.core.registries import FAMILIES, RULE_TABLES, RuleTable

__all__ = ["FAMILIES", "Family", "RULE_TABLES", "RuleTable"]

F = TypeVar("F", bound=Callable[..., Any])


class Family:
    """The primitives one file defines, their user functions, and the derivers interpretations attach."""

    def __init__(self, name: str):
        if name in FAMILIES:
            raise ValueError(f"a primitive family named {name!r} already exists")
        self.name = name
        self.primitives: list[Primitive] = []
        #: user-level function name -> function (what the family's public module exports)
        self.functions: dict[str, Callable[..., Any]] = {}
        #: primitive -> names of the user functions that bind it
        self.functions_of: dict[Primitive, list[str]] = {}
        self._derivers: list[Callable[[Primitive], None]] = []
        FAMILIES[name] = self

    def primitive(self, name: str, *, shape_rule: Callable[..., Any], multiple_results: bool = False,
                  effectful: bool = False, **traits: Any) -> Primitive:
        """A new primitive of this family; ``traits`` are data interpretations may derive rules from."""
        prim = Primitive(name, shape_rule=shape_rule, multiple_results=multiple_results, effectful=effectful,
                         family=self.name, traits=traits)
        self.primitives.append(prim)
        for derive in self._derivers:
            derive(prim)
        return prim

    def function(self, fn: F | None = None, *, name: str | None = None, binds: tuple[Primitive, ...] = ()) -> Any:
        """Record ``fn`` as a user function of this family (exported by the family's public module).

        ``binds``: the primitives it is the user-level function of (the coverage test checks every
        primitive has one, or a written reason). Usable as ``@family.function`` or ``family.function(fn, ...)``.
        """
        def record(f: F) -> F:
            exported = name or f.__name__
            self.functions[exported] = f
            for p in binds:
                self.functions_of.setdefault(p, []).append(exported)
            return f
        return record if fn is None else record(fn)

    def derive(self, deriver: Callable[[Primitive], None]) -> Callable[[Primitive], None]:
        """Call ``deriver(prim)`` for every primitive of the family, now and whenever one is added."""
        self._derivers.append(deriver)
        for prim in list(self.primitives):
            deriver(prim)
        return deriver

    def remove(self, prim: Primitive) -> None:
        """Forget ``prim`` (tests that add a throwaway primitive); its rules are dropped by the tables."""
        self.primitives.remove(prim)
        for name in self.functions_of.pop(prim, []):
            self.functions.pop(name, None)
        PRIMITIVES.pop(prim.name, None)
        for table in RULE_TABLES:
            table.pop(prim, None)

    def __iter__(self) -> Iterator[Primitive]:
        return iter(self.primitives)

    def __len__(self) -> int:
        return len(self.primitives)

    def __repr__(self) -> str:
        return f"Family({self.name!r}, {len(self.primitives)} primitives)"
