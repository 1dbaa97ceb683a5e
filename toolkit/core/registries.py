"""The registries of rules: every primitive family by name and every rule table.

``RuleTable`` is how every interpretation finds its rules (``toolkit/core/families.py`` tells the
story). It lives here, apart from ``Family``, because ``core.sharding_types`` — which
``Primitive.abstract_eval`` calls — holds a table too: this module imports nothing of toolkit.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from toolkit.core.families import Family
    from toolkit.core.primitive import Primitive

R = TypeVar("R")

#: Every family by name, in definition order (filled by ``Family``).
FAMILIES: dict[str, Family] = {}

#: Every rule table, in creation order (the coverage test and ``Family.remove`` walk them).
RULE_TABLES: list[RuleTable[Any]] = []


class RuleTable(dict["Primitive", R], Generic[R]):
    """One interpretation's rules keyed by primitive, filled by ``<package>.<family>`` modules on demand.

    A plain ``dict`` for reading and writing (``TABLE[prim] = rule``); :meth:`lookup` is the read that
    first imports the rule module of the primitive's family, so no import order matters.
    """

    def __init__(self, interpretation: str, package: str):
        super().__init__()
        self.interpretation = interpretation
        self.package = package
        self._loaded: set[str] = set()
        RULE_TABLES.append(self)

    def lookup(self, prim: Primitive) -> R | None:
        """The rule of ``prim``, importing its family's rule module the first time; None when it has none."""
        rule = self.get(prim)
        if rule is None and prim.family not in self._loaded:
            self.load(prim.family)
            rule = self.get(prim)
        return rule

    def load(self, family: str) -> None:
        """Import ``<package>.<family>`` (once); a family without a module here has no rules in this table."""
        if family in self._loaded or not family:
            return
        module = f"{self.package}.{family}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
        self._loaded.add(family)

    def load_all(self) -> None:
        """Import the rule modules of every family defined so far."""
        for family in list(FAMILIES):
            self.load(family)

    def __repr__(self) -> str:
        return f"RuleTable({self.interpretation!r}, {self.package!r}, {len(self)} rules)"
