"""``toolkit lab --report out.html``: the lab's rows as one self-contained HTML page.

:func:`render_lab_report` renders

* ``#summary`` — the table ``toolkit lab`` prints (status, ops, flops, bytes
  accessed, compile and run time before → after, numerics), one row per
  program, linking to its chart;
* ``#programs`` — per program a chart, inline SVG bars of op count, flops,
  compile time and median run time before vs after (each pair scaled to its
  larger value, the run time with a min–max whisker), the ops whose counts
  changed, and its failure or numerics difference with the reproducer.

CSS is inline, no script and nothing fetched; every program name, message and
op name is HTML-escaped.
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from typing import Any

from toolkit.lab.measurement import LabRow
from toolkit.lab.text_table import COLUMNS, change, cost_of, human, op_changes, table_cells

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7fb}
header{background:#23304a;color:#fff;padding:14px 22px}
header h1{margin:0;font-size:20px} header p{margin:4px 0 0;color:#c9d3ea}
section{margin:16px 22px;padding:12px 16px;background:#fff;border:1px solid #d7dcea;border-radius:6px}
h2{margin:0 0 10px;font-size:17px} h3{margin:4px 0 8px;font-size:15px}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #e3e6ef;padding:3px 10px;text-align:left;vertical-align:top}
th{background:#f0f2f8}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.bad td{background:#fdf0f0}
.status-ok{color:#276b2f;font-weight:600}.status-bad{color:#a33;font-weight:600}
.programs{display:grid;grid-template-columns:repeat(auto-fill,minmax(640px,1fr));gap:0 24px}
.program{border-top:1px solid #e3e6ef;padding:10px 0;min-width:0}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
pre{background:#f4f5f9;padding:8px;overflow:auto;max-height:320px;font:12px/1.35 ui-monospace,monospace;
white-space:pre-wrap;overflow-wrap:anywhere}
#summary{overflow-x:auto}
"""

_BEFORE, _AFTER = "#7f8fb0", "#e0892b"
#: The chart's geometry (pixels): bar area, label and value columns, height of one metric.
_BAR_WIDTH, _LABEL_WIDTH, _VALUE_WIDTH, _ROW_HEIGHT = 300, 120, 170, 34


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _anchor(index: int) -> str:
    return f"program-{index}"


def _metrics(row: LabRow) -> list[tuple[str, float | None, float | None, str]]:
    cost_before, cost_after = cost_of(row, "before"), cost_of(row, "after")
    return [
        ("op count", row.ops_before.total if row.ops_before else None,
         row.ops_after.total if row.ops_after else None, ""),
        ("flops", cost_before.flops if cost_before else None, cost_after.flops if cost_after else None, ""),
        ("compile time", row.compile_seconds_before, row.compile_seconds_after, "s"),
        ("run time (median)", row.run_before.median if row.run_before else None,
         row.run_after.median if row.run_after else None, "s"),
    ]


def chart_svg(row: LabRow) -> str:
    """The per-program chart: for each metric, a before bar and an after bar on one scale (inline SVG)."""
    metrics = _metrics(row)
    width = _LABEL_WIDTH + _BAR_WIDTH + _VALUE_WIDTH
    height = _ROW_HEIGHT * len(metrics) + 6
    parts = [f'<svg class=chart xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(row.program)}: before vs after">']
    whiskers = {"run time (median)": (row.run_before, row.run_after)}
    for number, (label, before, after, unit) in enumerate(metrics):
        top = number * _ROW_HEIGHT + 3
        scale = max(v for v in (before, after, 0.0) if v is not None) or 1.0
        times = whiskers.get(label)
        if times is not None:  # the whisker reaches the slowest run: scale to it
            scale = max([scale] + [t.max for t in times if t is not None])
        parts.append(f'<text x="0" y="{top + 19}" font-size="12">{_e(label)}</text>')
        for side, (value, colour) in enumerate(((before, _BEFORE), (after, _AFTER))):
            y = top + side * 14
            kind = "before" if side == 0 else "after"
            if value is None:
                parts.append(f'<text x="{_LABEL_WIDTH}" y="{y + 11}" font-size="11" fill="#888">'
                             f'{kind}: not measured</text>')
                continue
            length = max(1.0, _BAR_WIDTH * value / scale)
            parts.append(f'<rect class="bar {kind}" x="{_LABEL_WIDTH}" y="{y}" width="{length:.1f}" height="12" '
                         f'fill="{colour}"><title>{_e(label)} {kind}: {_e(human(value, unit))}</title></rect>')
            spread = times[side] if times is not None else None
            if spread is not None:
                low = _LABEL_WIDTH + _BAR_WIDTH * spread.min / scale
                high = _LABEL_WIDTH + _BAR_WIDTH * spread.max / scale
                parts.append(f'<line x1="{low:.1f}" x2="{high:.1f}" y1="{y + 6}" y2="{y + 6}" stroke="#23304a" '
                             'stroke-width="1.5"/>')
            parts.append(f'<text x="{_LABEL_WIDTH + _BAR_WIDTH + 6}" y="{y + 11}" font-size="11">'
                         f'{kind}: {_e(human(value, unit))}</text>')
        delta = change(before, after)
        if delta:
            parts.append(f'<text x="{width - 4}" y="{top + 19}" font-size="11" text-anchor="end" '
                         f'fill="#555">{_e(delta)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _summary_table(rows: Sequence[LabRow]) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in COLUMNS)
    body = []
    for index, row in enumerate(rows):
        cells = table_cells(row)
        status_class = "status-ok" if row.ok else "status-bad"
        tds = [f"<td><a href='#{_anchor(index)}'>{_e(cells[0])}</a></td>",
               f"<td class={status_class}>{_e(cells[1])}</td>"]
        tds += [f"<td class=num>{_e(c)}</td>" for c in cells[2:-1]]
        tds.append(f"<td>{_e(cells[-1])}</td>")
        body.append(f"<tr{'' if row.ok else ' class=bad'}>{''.join(tds)}</tr>")
    return f"<table id=lab-table><tr>{head}</tr>{''.join(body)}</table>"


def _program_block(row: LabRow, index: int) -> str:
    parts = [f'<div class=program id="{_anchor(index)}"><h3>{_e(row.program)} '
             f'<small class={"status-ok" if row.ok else "status-bad"}>{_e(row.status)}</small></h3>']
    if row.origin:
        parts.append(f"<p>from <code>{_e(row.origin)}</code></p>")
    parts.append(chart_svg(row))
    changes = op_changes(row, limit=20)
    if changes:
        body = "".join(f"<tr><td>{_e(name)}</td><td class=num>{b}</td><td class=num>{a}</td>"
                       f"<td class=num>{a - b:+d}</td></tr>" for name, b, a in changes)
        parts.append("<table class=ops><tr><th>op</th><th>before</th><th>after</th><th>change</th></tr>"
                     f"{body}</table>")
    elif row.ops_after is not None:
        parts.append("<p>No op count changed.</p>")
    if row.failure is not None:
        failure = row.failure
        where = f" in pass <code>{_e(failure.pass_name)}</code>" if failure.pass_name else ""
        parts.append(f"<p class=status-bad>{_e(failure.stage)} failed{where}</p><pre>{_e(failure.message)}</pre>")
        if failure.reproducer:
            parts.append(f"<p>reproducer: <code>{_e(failure.reproducer)}</code> "
                         f"(<code>toolkit-opt --run-reproducer {_e(failure.reproducer)}</code>)</p>")
    if row.numerics is not None and not row.numerics.equal:
        parts.append(f"<p class=status-bad>numerics differ</p><pre>{_e(row.numerics.summary)}</pre>")
    parts.append("</div>")
    return "".join(parts)


def render_lab_report(rows: Sequence[LabRow], *, pipeline: str | None = None, seconds: float | None = None) -> str:
    """The HTML page of ``toolkit lab``'s rows (a complete, self-contained document)."""
    if pipeline is None:
        pipeline = rows[0].pipeline if rows else ""
    ok = sum(1 for row in rows if row.ok)
    when = time.strftime("%Y-%m-%d %H:%M:%S")
    took = f" · measured in {seconds:.1f} s" if seconds is not None else ""
    legend = (f"<p class=legend>bars:<span style='background:{_BEFORE}'></span>before"
              f"<span style='background:{_AFTER}'></span>after the pipeline; the line on a run-time bar "
              "spans the fastest to the slowest run</p>")
    return "".join([
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>toolkit lab: {_e(pipeline)}</title><style>{_CSS}</style></head><body>",
        f"<header><h1>Pass lab: <code>{_e(pipeline)}</code></h1>",
        f"<p>{len(rows)} programs · {ok} ok · {len(rows) - ok} not ok{_e(took)} · {_e(when)}</p></header>",
        f"<section id=summary><h2>Summary</h2>{_summary_table(rows)}</section>",
        f"<section id=programs><h2>Per program</h2>{legend}<div class=programs>",
        "".join(_program_block(row, index) for index, row in enumerate(rows)),
        "</div></section></body></html>\n",
    ])
