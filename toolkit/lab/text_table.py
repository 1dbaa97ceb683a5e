"""``toolkit lab``'s readable output: the rows of :mod:`toolkit.lab.measurement` as a text table.

:func:`format_table` prints one line per program (status, op count, flops,
bytes accessed, XLA's kernels, compile time and run time before → after, numerics), then the
ops the pipeline changed most per program, then every failure and numerics
difference with what reproduces it. :func:`human` and :func:`change` format
numbers the same way for the HTML page (``toolkit.lab.html_report``).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.lab.measurement import Cost, LabRow, RunTimes

#: How many changed op names each program lists under the table.
TOP_OP_CHANGES = 6


def human(value: float | None, unit: str = "") -> str:
    """``value`` with an SI prefix and three significant digits (``1.23G``, ``45.6k``); ``-`` for None."""
    if value is None:
        return "-"
    magnitude = abs(value)
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= factor:
            return f"{value / factor:.3g}{prefix}{unit}"
    if magnitude and magnitude < 1:
        for factor, prefix in ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n")):
            if magnitude >= factor:
                return f"{value / factor:.3g}{prefix}{unit}"
    return f"{value:.3g}{unit}"


def change(before: float | None, after: float | None) -> str:
    """The relative change from ``before`` to ``after`` (``-12.5%``, ``+0%``); empty when unknown."""
    if before is None or after is None:
        return ""
    if before == 0:
        return "" if after == 0 else "new"
    percent = (after - before) / before * 100
    if percent and abs(percent) < 0.1:  # say how small, rather than a signed zero
        return f"{percent:+.1g}%"
    return f"{percent:+.1f}%"


def _pair(before: float | None, after: float | None, unit: str = "") -> str:
    if before is None and after is None:
        return "-"
    text = f"{human(before, unit)} → {human(after, unit)}"
    delta = change(before, after)
    return f"{text} ({delta})" if delta else text


def cost_of(row: LabRow, side: str) -> Cost | None:
    """The row's cost ``"before"`` or ``"after"``: of the unoptimized module, else of the optimized executable."""
    cost = getattr(row, f"cost_{side}")
    return cost if cost is not None else getattr(row, f"optimized_cost_{side}")


def run_text(times: RunTimes | None) -> str:
    """A run-time summary: ``median [min–max]`` in seconds with SI prefixes."""
    if times is None:
        return "-"
    return f"{human(times.median, 's')} [{human(times.min, 's')}–{human(times.max, 's')}]"


def numerics_text(row: LabRow) -> str:
    """``equal``, ``differ at <pass>``, or ``-`` when not checked."""
    if row.numerics is None:
        return "-"
    if row.numerics.equal:
        return "equal"
    return f"differ at {row.numerics.first_divergent_pass or '?'}"


def op_changes(row: LabRow, limit: int = TOP_OP_CHANGES) -> list[tuple[str, int, int]]:
    """``(op name, before, after)`` for the ops whose count changed most (largest absolute change first)."""
    if row.ops_before is None or row.ops_after is None:
        return []
    before, after = row.ops_before.ops, row.ops_after.ops
    names = set(before) | set(after)
    changed = [(name, before.get(name, 0), after.get(name, 0)) for name in names
               if before.get(name, 0) != after.get(name, 0)]
    changed.sort(key=lambda item: (-abs(item[2] - item[1]), item[0]))
    return changed[:limit]


def table_cells(row: LabRow) -> list[str]:
    """The cells of one table line (see :data:`COLUMNS`)."""
    ops_before = row.ops_before.total if row.ops_before else None
    ops_after = row.ops_after.total if row.ops_after else None
    cost_before, cost_after = cost_of(row, "before"), cost_of(row, "after")
    return [
        row.program,
        row.status,
        _pair(ops_before, ops_after),
        _pair(cost_before.flops if cost_before else None, cost_after.flops if cost_after else None),
        _pair(cost_before.bytes_accessed if cost_before else None,
              cost_after.bytes_accessed if cost_after else None, "B"),
        _pair(row.xla_before.kernels if row.xla_before else None, row.xla_after.kernels if row.xla_after else None),
        _pair(row.compile_seconds_before, row.compile_seconds_after, "s"),
        f"{run_text(row.run_before)} → {run_text(row.run_after)}",
        numerics_text(row),
    ]


#: The table's columns.
COLUMNS = ("program", "status", "ops", "flops", "bytes accessed", "XLA kernels", "compile", "run (median [min–max])",
           "numerics")


def format_table(rows: Sequence[LabRow], *, pipeline: str | None = None) -> str:
    """The rows as a readable table, then op changes, failures and numerics differences (text, ends with a newline)."""
    lines: list[str] = []
    if pipeline is None and rows:
        pipeline = rows[0].pipeline
    if pipeline:
        lines.append(f"pipeline: {pipeline}")
    cells = [list(COLUMNS)] + [table_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    for number, line in enumerate(cells):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
        if number == 0:
            lines.append("  ".join("-" * width for width in widths))
    ok = sum(1 for row in rows if row.ok)
    lines.append(f"{ok} of {len(rows)} programs ok")
    changed = [(row, op_changes(row)) for row in rows]
    if any(ops for _, ops in changed):
        lines += ["", "ops changed most:"]
        for row, ops in changed:
            if ops:
                lines.append(f"  {row.program}: " + ", ".join(f"{name} {b} → {a}" for name, b, a in ops))
    problems = [row for row in rows if not row.ok]
    if problems:
        lines += ["", "problems:"]
    for row in problems:
        if row.failure is not None:
            failure = row.failure
            where = f" in pass '{failure.pass_name}'" if failure.pass_name else ""
            lines.append(f"  {row.program}: {failure.stage} failed{where}:")
            lines += [f"    {text}" for text in failure.message.splitlines()[:12]]
            if failure.reproducer:
                lines.append(f"    reproducer: {failure.reproducer} (toolkit-opt --run-reproducer {failure.reproducer})")
            elif failure.stage == "pipeline":
                lines.append(f"    pipeline: {row.pipeline}")
        elif row.numerics is not None:
            lines.append(f"  {row.program}: numerics differ:")
            lines += [f"    {text}" for text in row.numerics.summary.splitlines()]
    return "\n".join(lines) + "\n"
