"""mlir-opt's ``--verify-diagnostics`` annotations: ``// expected-error @+1 {{message}}``.

Shared by ``toolkit-opt`` and the harnesses that judge upstream lit files.

Example::

    >>> [e.line for e in parse_expected_diagnostics("x\\n// expected-error @-1 {{bad}}")]
    [1]
"""

from __future__ import annotations

import dataclasses
import re

EXPECTED_DIAGNOSTIC = re.compile(
    r"expected-(error|warning|remark|note)\s*(?:@(above|below|[+-]\d+))?\s*\{\{(.*?)\}\}")


@dataclasses.dataclass
class ExpectedDiagnostic:
    """One annotation: a diagnostic of ``severity`` containing ``message`` is expected on ``line``."""

    severity: str
    line: int
    message: str
    source_line: int  # where the annotation itself stands
    seen: bool = False


def parse_expected_diagnostics(text: str) -> list[ExpectedDiagnostic]:
    """Every ``expected-<severity> [@above|@below|@+N|@-N] {{message}}`` in ``text`` (lines count from 1)."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        for match in EXPECTED_DIAGNOSTIC.finditer(line):
            severity, where, message = match.groups()
            target = number
            if where == "above":
                target = number - 1
            elif where == "below":
                target = number + 1
            elif where:
                target = number + int(where)
            found.append(ExpectedDiagnostic(severity, target, message, number))
    return found
