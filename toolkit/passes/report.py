"""The pipeline report: one self-contained HTML page per compilation.

``TOOLKIT_REPORT=dir`` (for ``jit``) and ``toolkit-opt --report=out.html``
render a :class:`toolkit.passes.dump.Timeline` with :func:`render_report`:

* ``#summary`` — every stage with its wall time, op count and change;
* ``#stages`` — the IR after every stage, folded when unchanged, with a
  unified diff (difflib) against the previous stage of the same kind and the
  op-kind deltas;
* ``#patterns`` — which rewrite patterns of the Python pattern passes fired
  how often (counted by the pattern driver, ``PassRecord.statistics``); C++
  passes and module passes show op-kind deltas instead;
* ``#sharding`` — ``toolkit-sharding-report``'s rows for the compiled module;
* ``#xla`` — XLA's passes (from its own dump) down to the optimized HLO.

CSS and JavaScript are inline, nothing is fetched; every piece of IR text is
HTML-escaped.
"""

from __future__ import annotations

import difflib
import html
import time
from collections import Counter
from typing import Any, Iterable

#: Diffs of texts longer than this (lines, either side) are not computed.
MAX_DIFF_LINES = 6000

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7fb}
header{background:#23304a;color:#fff;padding:14px 22px}
header h1{margin:0;font-size:20px} header p{margin:4px 0 0;color:#c9d3ea}
nav{padding:8px 22px;background:#e4e8f2;position:sticky;top:0;z-index:2}
nav a{margin-right:14px;color:#23304a;font-weight:600;text-decoration:none}
nav button{margin-left:6px}
section{margin:16px 22px;padding:12px 16px;background:#fff;border:1px solid #d7dcea;border-radius:6px}
h2{margin:0 0 10px;font-size:17px}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #e3e6ef;padding:3px 10px;text-align:left;vertical-align:top}
th{background:#f0f2f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.up{color:#a33}.down{color:#276b2f}.same{color:#888}
details.stage{border:1px solid #d7dcea;border-radius:4px;margin:6px 0;background:#fcfcfe}
details.stage>summary{padding:5px 10px;cursor:pointer;font-weight:600}
details.stage.unchanged>summary{color:#888;font-weight:400}
details.stage .body{padding:4px 12px 10px}
pre{background:#f4f5f9;padding:8px;overflow:auto;max-height:480px;font:12px/1.35 ui-monospace,monospace;margin:4px 0}
pre.diff .add{background:#e3f6e5;display:block} pre.diff .del{background:#fbe4e4;display:block}
pre.diff .hunk{color:#6a5acd;display:block}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:#e4e8f2;margin-left:6px}
.tag.pass{background:#dbe9ff}.tag.xla{background:#ffe9c7}.tag.optimized{background:#d7f5dc}
.note{color:#a33}
"""

_JS = """
function setAll(open){document.querySelectorAll('details.stage').forEach(function(d){d.open=open;});}
function filterStages(text){text=text.toLowerCase();
 document.querySelectorAll('details.stage').forEach(function(d){
  d.style.display=(d.getAttribute('data-label').toLowerCase().indexOf(text)>=0)?'':'none';});}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _delta(now: int, before: int | None) -> str:
    if before is None:
        return ""
    d = now - before
    cls = "up" if d > 0 else "down" if d < 0 else "same"
    return f'<span class="{cls}">{d:+d}</span>'


def _diff_html(before: str, after: str, before_name: str, after_name: str) -> str:
    a, b = before.splitlines(), after.splitlines()
    if max(len(a), len(b)) > MAX_DIFF_LINES:
        return f"<p>(diff not computed: more than {MAX_DIFF_LINES} lines)</p>"
    lines = list(difflib.unified_diff(a, b, before_name, after_name, n=2, lineterm=""))
    if not lines:
        return "<p>(no change)</p>"
    out = []
    for line in lines:
        cls = ("hunk" if line.startswith("@@") else "add" if line.startswith("+")
               else "del" if line.startswith("-") else "")
        out.append(f'<span class="{cls}">{_e(line)}</span>' if cls else _e(line) + "\n")
    return '<pre class="diff">' + "".join(out) + "</pre>"


def _op_delta_table(now: Counter | None, before: Counter | None) -> str:
    if now is None or before is None:
        return ""
    names = sorted(set(now) | set(before))
    rows = [(n, before.get(n, 0), now.get(n, 0)) for n in names if now.get(n, 0) != before.get(n, 0)]
    if not rows:
        return ""
    body = "".join(f"<tr><td>{_e(n)}</td><td class=num>{b}</td><td class=num>{a}</td>"
                   f"<td class=num>{_delta(a, b)}</td></tr>" for n, b, a in rows)
    return ("<table class=opdelta><tr><th>op</th><th>before</th><th>after</th><th>change</th></tr>"
            f"{body}</table>")


def _statistics_table(statistics: dict[str, int]) -> str:
    if not statistics:
        return ""
    body = "".join(f"<tr><td>{_e(k)}</td><td class=num>{v}</td></tr>" for k, v in sorted(statistics.items()))
    return f"<table class=patterns><tr><th>pattern fired</th><th>times</th></tr>{body}</table>"


def _previous_by_kind(stages: list[Any]) -> list[Any]:
    """For each stage, the stage it is diffed against: the previous MLIR stage, or the previous XLA stage."""
    previous: list[Any] = []
    last_mlir = last_hlo = None
    for stage in stages:
        hlo = stage.kind in ("xla", "optimized")
        if stage.kind == "traced":
            previous.append(None)
            continue
        previous.append(last_hlo if hlo else last_mlir)
        if hlo:
            last_hlo = stage
        else:
            last_mlir = stage
    return previous


def _stage_block(stage: Any, before: Any, open_if_changed: bool = True) -> str:
    unchanged = stage.changed is False or (before is not None and stage.changed is None
                                           and before.text == stage.text)
    total = sum(stage.op_counts.values()) if stage.op_counts is not None else None
    facts = []
    if stage.seconds is not None:
        facts.append(f"{stage.seconds * 1000:.2f} ms")
    if total is not None:
        facts.append(f"{total} ops")
    if unchanged:
        facts.append("unchanged")
    fired = sum(stage.statistics.values())
    if fired:
        facts.append(f"{fired} rewrites")
    parts = [f'<details class="stage{" unchanged" if unchanged else ""}" id="stage-{stage.number}" '
             f'data-label="{_e(stage.label)}"{"" if unchanged or not open_if_changed else " open"}>',
             f"<summary>{stage.number:03d} {_e(stage.label)}<span class='tag {_e(stage.kind)}'>{_e(stage.kind)}"
             f"</span> <small>{_e(' · '.join(facts))}</small></summary><div class=body>"]
    if stage.path:
        parts.append(f"<p>file: <code>{_e(stage.path)}</code></p>")
    parts.append(_statistics_table(stage.statistics))
    parts.append(_op_delta_table(stage.op_counts, before.op_counts if before is not None else None))
    if before is not None and not unchanged:
        parts.append(f"<h4>diff against {before.number:03d} {_e(before.label)}</h4>")
        parts.append(_diff_html(before.text, stage.text, f"{before.number:03d}-{before.name}",
                                f"{stage.number:03d}-{stage.name}"))
    parts.append(f"<details><summary>{'IR' if stage.ext == 'mlir' else 'text'} "
                 f"({len(stage.text.splitlines())} lines)</summary><pre class=ir>{_e(stage.text)}</pre></details>")
    parts.append("</div></details>")
    return "".join(parts)


def _summary_table(stages: list[Any], previous: list[Any]) -> str:
    rows = []
    for stage, before in zip(stages, previous):
        total = sum(stage.op_counts.values()) if stage.op_counts is not None else None
        before_total = (sum(before.op_counts.values()) if before is not None and before.op_counts is not None
                        else None)
        changed = ("no" if stage.changed is False else "yes" if stage.changed else
                   "" if before is None else "no" if before.text == stage.text else "yes")
        rows.append(
            f"<tr><td class=num>{stage.number:03d}</td><td><a href='#stage-{stage.number}'>{_e(stage.label)}</a></td>"
            f"<td>{_e(stage.kind)}</td>"
            f"<td class=num>{'' if stage.seconds is None else f'{stage.seconds * 1000:.2f}'}</td>"
            f"<td class=num>{'' if total is None else total}</td>"
            f"<td class=num>{_delta(total, before_total) if total is not None else ''}</td>"
            f"<td>{changed}</td><td class=num>{sum(stage.statistics.values()) or ''}</td></tr>")
    return ("<table><tr><th>#</th><th>stage</th><th>kind</th><th>wall ms</th><th>ops</th><th>Δ ops</th>"
            "<th>changed</th><th>rewrites</th></tr>" + "".join(rows) + "</table>")


def _patterns_section(stages: Iterable[Any]) -> str:
    rows = []
    totals: Counter = Counter()
    for stage in stages:
        for key, count in sorted(stage.statistics.items()):
            rows.append(f"<tr><td>{_e(stage.label)}</td><td>{_e(key)}</td><td class=num>{count}</td></tr>")
            totals[key] += count
    if not rows:
        return ("<p>No rewrite pattern fired. Pattern counts come from toolkit's Python pattern passes; "
                "for C++ passes and module passes see the op-kind changes per stage.</p>")
    return ("<p>Counted by toolkit's pattern driver (Python pattern passes and <code>record_statistic</code>); "
            "C++ passes show op-kind changes per stage instead.</p>"
            "<table><tr><th>pass</th><th>pattern</th><th>times</th></tr>" + "".join(rows) + "</table>")


def _sharding_section(rows: list[Any] | None) -> str:
    if rows is None:
        return "<p>(no module to report on)</p>"
    if not rows:
        return "<p>No sharded values: the module carries no sharding annotations.</p>"
    body = "".join(f"<tr><td>{_e(r.value)}</td><td>{_e(r.type)}</td><td>{_e(r.sharding)}</td>"
                   f"<td>{_e(r.shard_shape)}</td><td>{_e(r.devices)}</td></tr>" for r in rows)
    return ("<table><tr><th>value</th><th>type</th><th>sharding</th><th>shard shape</th><th>devices</th></tr>"
            + body + "</table>")


def render_report(timeline: Any) -> str:
    """The HTML page of a :class:`toolkit.passes.dump.Timeline` (a complete, self-contained document)."""
    stages = timeline.stages
    previous = _previous_by_kind(stages)
    toolkit_stages = [(s, p) for s, p in zip(stages, previous) if s.kind not in ("xla", "optimized")]
    xla_stages = [(s, p) for s, p in zip(stages, previous) if s.kind in ("xla", "optimized")]
    pass_seconds = sum(s.seconds or 0.0 for s in stages if s.kind == "pass")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timeline.started))
    n_pass = sum(1 for s in stages if s.kind == "pass")
    notes = "".join(f"<p class=note>{_e(n)}</p>" for n in timeline.notes)
    pipeline = (f"<p>pipeline: <code>{_e(timeline.pipeline_text)}</code></p>"
                if getattr(timeline, "pipeline_text", None) else "")
    xla_body = ("".join(_stage_block(s, p, s.kind == "optimized") for s, p in xla_stages) if xla_stages
                else "<p>XLA did not compile this module here (no XLA stages).</p>")
    return "".join([
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>toolkit pipeline report: {_e(timeline.name)}</title>",
        f"<style>{_CSS}</style><script>{_JS}</script></head><body>",
        f"<header><h1>Pipeline report: {_e(timeline.name)}</h1>",
        f"<p>{len(stages)} stages · {n_pass} toolkit passes ({pass_seconds * 1000:.1f} ms) · "
        f"{len(xla_stages)} XLA stages · {_e(when)}</p></header>",
        "<nav><a href='#summary'>Summary</a><a href='#stages'>Toolkit stages</a><a href='#patterns'>Patterns</a>"
        "<a href='#sharding'>Sharding</a><a href='#xla'>XLA</a>"
        "<button onclick='setAll(true)'>expand all</button><button onclick='setAll(false)'>collapse all</button>"
        "<input placeholder='filter stages' oninput='filterStages(this.value)'></nav>",
        f"<section id=summary><h2>Summary</h2>{pipeline}{notes}{_summary_table(stages, previous)}</section>",
        "<section id=stages><h2>Toolkit stages</h2>",
        "".join(_stage_block(s, p) for s, p in toolkit_stages),
        "</section>",
        f"<section id=patterns><h2>Rewrite patterns</h2>{_patterns_section(stages)}</section>",
        f"<section id=sharding><h2>Sharding</h2>{_sharding_section(timeline.sharding_rows)}</section>",
        f"<section id=xla><h2>XLA passes</h2>{xla_body}</section>",
        "</body></html>\n",
    ])


def write_report(timeline: Any, path: str) -> str:
    """Write :func:`render_report` of ``timeline`` to ``path``; return the path."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_report(timeline))
    return path
