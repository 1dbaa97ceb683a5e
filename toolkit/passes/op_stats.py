"""``toolkit-op-stats``: count operations per op name and per dialect.

IR contract: reads only; the IR is unchanged. Prints to stderr (or
``output=path``) a table or, with ``format=json``, one JSON object
``{"ops": {name: count}, "dialects": {dialect: count}, "total": n}``.

Example::

    toolkit-opt --pass-pipeline='builtin.module(toolkit-op-stats{format=json})' f.mlir
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from typing import ClassVar, Literal

from jaxlib.mlir import ir

from toolkit.passes.pass_base import ModulePass
from toolkit.passes.registry import register_pass


def count_ops(op: ir.Operation) -> Counter:
    """``{op name: count}`` over every op nested in ``op`` (``op`` excluded)."""
    counts: Counter = Counter()
    root = op.operation

    def visit(child: ir.Operation) -> ir.WalkResult:
        counts[child.name] += 1
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    counts[root.name] -= 1
    if counts[root.name] == 0:
        del counts[root.name]
    return counts


def format_stats(counts: Counter, output_format: str) -> str:
    """The report text for ``counts`` as ``table`` or ``json``."""
    dialects: Counter = Counter()
    for name, count in counts.items():
        dialects[name.split(".", 1)[0]] += count
    if output_format == "json":
        return json.dumps({"ops": dict(sorted(counts.items())), "dialects": dict(sorted(dialects.items())),
                           "total": sum(counts.values())}, indent=2) + "\n"
    width = max([len(n) for n in counts] + [len("Operation")])
    lines = [f"{'Operation':<{width}}  Count", "-" * (width + 7)]
    lines += [f"{name:<{width}}  {count:5d}" for name, count in sorted(counts.items())]
    lines += ["", f"{'Dialect':<{width}}  Count", "-" * (width + 7)]
    lines += [f"{name:<{width}}  {count:5d}" for name, count in sorted(dialects.items())]
    lines += ["", f"{'Total':<{width}}  {sum(counts.values()):5d}"]
    return "\n".join(lines) + "\n"


@register_pass
@dataclasses.dataclass(frozen=True)
class OpStatsPass(ModulePass):
    """Count ops per name and dialect (read-only)."""

    name: ClassVar[str] = "toolkit-op-stats"
    description: ClassVar[str] = "Count operations per op name and per dialect; print a table or JSON."
    modifies_ir: ClassVar[bool] = False

    format: Literal["table", "json"] = "table"
    output: str = "-"

    def apply(self, op: ir.Operation) -> None:
        text = format_stats(count_ops(op), self.format)
        if self.output == "-":
            sys.stderr.write(text)
            sys.stderr.flush()
        else:
            with open(self.output, "w") as f:
                f.write(text)
