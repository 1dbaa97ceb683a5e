"""``toolkit lab --report``: the HTML page of the lab's rows, checked as text and rendered in headless Chromium."""

from __future__ import annotations

import re
import struct
import zlib

import numpy as np
import pytest

import toolkit
from toolkit import numpy as tnp
from toolkit.lab.html_report import chart_svg, render_lab_report
from toolkit.lab.measurement import Failure, LabProgram, LabRow, OpCounts, measure_pipeline
from tests._headless_chromium import run_chromium

X = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8)


def _png(path) -> tuple[int, int, bytes]:
    """(width, height, decompressed scanlines) of a PNG, with the standard library only."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page of a real run: a program the pipeline shrinks, and one a pass fails on."""
    def shrinks(x):
        return tnp.tanh(x @ x) * np.ones((8, 8), np.float32) + x @ x

    def plain(x):
        return x + 1.0

    rows = measure_pipeline("toolkit-simplify, cse", [LabProgram("shrinks", toolkit.jit(shrinks).lower(X), [X]),
                                                     LabProgram("plain", toolkit.jit(plain).lower(X), [X])], runs=2)
    rows.append(LabRow("broken", "test", rows[0].pipeline, ops_before=rows[0].ops_before,
                       failure=Failure("pipeline", "pass 'my-pass' failed: boom", "my-pass", "/tmp/r.mlir")))
    path = tmp_path_factory.mktemp("lab") / "lab.html"
    path.write_text(render_lab_report(rows, seconds=1.5))
    return path, rows


def test_page_is_self_contained_with_a_table_and_a_chart_per_program(page) -> None:
    path, rows = page
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert "<link" not in text and "@import" not in text and "<script" not in text
    assert "id=summary>" in text and "id=programs>" in text and "id=lab-table>" in text
    assert text.count("<svg class=chart") == len(rows)
    for index, row in enumerate(rows):
        assert f'id="program-{index}"' in text and f"href='#program-{index}'" in text
    # Every measured metric is a before bar and an after bar; the failed program's after side is "not measured".
    assert text.count('class="bar before"') == 4 + 4 + 1 and text.count('class="bar after"') == 4 + 4
    assert "after: not measured" in text
    assert "pass &#x27;my-pass&#x27; failed: boom" in text and "toolkit-opt --run-reproducer /tmp/r.mlir" in text
    assert "stablehlo.dot_general" in text  # the op-changes table of "shrinks"
    assert "3 programs · 2 ok · 1 not ok · measured in 1.5 s" in text


def test_page_renders_in_headless_chromium(page, tmp_path) -> None:
    path, rows = page
    dom = run_chromium(tmp_path, "--dump-dom", url=path.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'id="summary"' in dom.stdout and 'id="programs"' in dom.stdout
    assert len(re.findall(r'<svg class="chart"', dom.stdout)) == len(rows)
    for row in rows:
        assert row.program in dom.stdout
    assert "failed: pipeline" in dom.stdout
    shot = tmp_path / "lab.png"
    result = run_chromium(tmp_path, f"--screenshot={shot}", "--window-size=1300,1100", url=path.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    width, height, raw = _png(shot)
    assert (width, height) == (1300, 1100)
    # Not blank: bars and text give many distinct bytes, and far from all zero.
    assert len(set(raw)) > 64
    assert sum(1 for b in raw[::97] if b) > len(raw[::97]) // 50


def test_text_is_escaped() -> None:
    evil = "<script>alert(1)</script>"
    row = LabRow(evil, "<img src=x onerror=alert(2)>", "builtin.module(<b>cse</b>)",
                 ops_before=OpCounts(1, {"x": 1}, {"<b>op</b>": 1}), ops_after=OpCounts(0, {}, {}),
                 failure=Failure("compile after", "error: </pre><script>alert(3)</script>", None, None))
    text = render_lab_report([row])
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "&lt;b&gt;op&lt;/b&gt;" in text


def test_chart_of_an_unmeasured_row_says_so() -> None:
    svg = chart_svg(LabRow("empty", "", "builtin.module(cse)"))
    assert svg.count("not measured") == 8 and "<rect" not in svg
