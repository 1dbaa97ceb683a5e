"""Comparing two exports field by field, by dimension variables, by ``@main``'s signature and by module text.

What ``toolkit export diff`` reports, as data: :func:`compare_exports` gives
an :class:`ExportComparison`. Changes of locations only (the same program
traced from another file or line) are not differences unless
``locations=True``: the ``mlir_module_serialized`` field and the module text
then compare with their locations.

Example::

    comparison = compare_exports(deserialize(blob_a), deserialize(blob_b), blob_a, blob_b)
    if comparison.differences:
        print("\\n".join(comparison.module_text_diff()))
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

from jaxlib.mlir import ir

from toolkit.export.convert import read_module
from toolkit.export.exported import Exported
from toolkit.export.inspection import describe, dimension_variables, signature_lines

#: The ``describe`` row whose equality ignores locations unless they are compared.
MODULE_FIELD = "mlir_module_serialized"


@dataclasses.dataclass(frozen=True)
class FieldComparison:
    """One :func:`~toolkit.export.inspection.describe` row of both exports (None: the export has no such row)."""

    name: str
    a: str | None
    b: str | None
    same: bool


@dataclasses.dataclass(frozen=True)
class ExportComparison:
    """Two exports compared: every field, the dimension variables, ``@main``'s signature, the module text.

    ``module_text_a``/``module_text_b`` are lines, with locations when
    ``locations_compared``; ``locations_differ`` says that texts equal
    without locations differ in their locations (never set when locations
    are compared).
    """

    fields: list[FieldComparison]
    dimension_variables_a: list[dict[str, Any]]
    dimension_variables_b: list[dict[str, Any]]
    signature_a: list[str]
    signature_b: list[str]
    module_text_a: list[str]
    module_text_b: list[str]
    locations_compared: bool
    locations_differ: bool

    @property
    def dimension_variables_differ(self) -> bool:
        return self.dimension_variables_a != self.dimension_variables_b

    @property
    def signature_differs(self) -> bool:
        return self.signature_a != self.signature_b

    @property
    def module_text_differs(self) -> bool:
        return self.module_text_a != self.module_text_b

    def signature_diff(self) -> list[str]:
        """Unified diff (``A``/``B``, one line of context) of the signatures; empty when they are the same."""
        return list(difflib.unified_diff(self.signature_a, self.signature_b, "A", "B", lineterm="", n=1))

    def module_text_diff(self) -> list[str]:
        """Unified diff (``A``/``B``, one line of context) of the module texts; empty when they are the same."""
        return list(difflib.unified_diff(self.module_text_a, self.module_text_b, "A", "B", lineterm="", n=1))

    @property
    def differences(self) -> int:
        """How many of the fields, dimension variables, signature and module text differ (0: equivalent)."""
        return (sum(not f.same for f in self.fields) + self.dimension_variables_differ + self.signature_differs
                + self.module_text_differs)

    def as_dict(self) -> dict[str, Any]:
        """What ``toolkit export diff --json`` prints: only what differs, with the diffs as line lists."""
        return {
            "fields": {f.name.strip(): {"a": f.a, "b": f.b} for f in self.fields if not f.same},
            "dimension_variables": ({"a": self.dimension_variables_a, "b": self.dimension_variables_b}
                                    if self.dimension_variables_differ else None),
            "main_signature": self.signature_diff(),
            "module_text": self.module_text_diff(),
            "locations_compared": self.locations_compared,
            "differences": self.differences,
        }


class _ModuleTexts:
    """An export's module text with and without locations, parsed once and printed when first asked for."""

    def __init__(self, exp: Exported):
        self._exp = exp
        self._module: ir.Module | None = None
        self._texts: dict[bool, str] = {}

    def text(self, locations: bool) -> str:
        if locations not in self._texts:
            if self._module is None:
                self._module = read_module(self._exp)
            self._texts[locations] = self._module.operation.get_asm(enable_debug_info=locations)
        return self._texts[locations]


def compare_exports(a: Exported, b: Exported, blob_a: bytes | None = None, blob_b: bytes | None = None, *,
                    locations: bool = False) -> ExportComparison:
    """Compare ``a`` with ``b`` (their blobs, when given, add the stored serialization version to the fields).

    Fields are :func:`~toolkit.export.inspection.describe`'s rows in
    ``a``'s order, then ``b``'s extra ones. ``mlir_module_serialized`` is
    the same when the bytes are, or — without ``locations`` — when its
    description and the module texts without locations are.
    """
    rows_a, rows_b = dict(describe(a, blob_a)), dict(describe(b, blob_b))
    texts_a, texts_b = _ModuleTexts(a), _ModuleTexts(b)
    fields = []
    for name in dict.fromkeys(list(rows_a) + list(rows_b)):
        va, vb = rows_a.get(name), rows_b.get(name)
        if name == MODULE_FIELD:  # location-only changes count only with locations
            same = a.mlir_module_serialized == b.mlir_module_serialized or (
                not locations and va == vb and texts_a.text(False) == texts_b.text(False))
        else:
            same = va == vb
        fields.append(FieldComparison(name, va, vb, same))
    text_a, text_b = texts_a.text(locations).splitlines(), texts_b.text(locations).splitlines()
    locations_differ = not locations and text_a == text_b and texts_a.text(True) != texts_b.text(True)
    return ExportComparison(
        fields=fields,
        dimension_variables_a=dimension_variables(a), dimension_variables_b=dimension_variables(b),
        signature_a=signature_lines(a), signature_b=signature_lines(b),
        module_text_a=text_a, module_text_b=text_b,
        locations_compared=locations, locations_differ=locations_differ)
