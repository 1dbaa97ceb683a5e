"""The HTML pipeline report (TOOLKIT_REPORT, toolkit-opt --report), rendered in headless Chromium."""

from __future__ import annotations

import html
import os
import re
import struct
import zlib

import numpy as np
import pytest

import toolkit
from toolkit import passes
from toolkit.examples.reference_programs import PROGRAMS
from toolkit.passes import dump
from toolkit.tools import opt
from tests._headless_chromium import run_chromium

PIPELINE = "toolkit-simplify, func.func(cse, canonicalize), symbol-dce"
SECTIONS = ("summary", "stages", "patterns", "sharding", "xla")


def _png(path) -> tuple[int, int, bytes]:
    """(width, height, decompressed scanlines) of a PNG, with the standard library only."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    assert len(raw) == height * (1 + width * channels * depth // 8)
    return width, height, raw


@pytest.fixture(scope="module")
def transformer_report(tmp_path_factory):
    """One jit compilation of the transformer reference program with TOOLKIT_REPORT and TOOLKIT_DUMP_IR_TO set."""
    root = tmp_path_factory.mktemp("report")
    saved = {k: os.environ.get(k) for k in (dump.DUMP_ENV, dump.REPORT_ENV)}
    before = passes.default_pipeline.JIT_PIPELINE
    os.environ[dump.REPORT_ENV] = str(root / "reports")
    os.environ[dump.DUMP_ENV] = str(root / "dumps")
    passes.set_jit_pipeline(PIPELINE)
    try:
        program = PROGRAMS["transformer"]
        args = program.make_inputs(np.random.default_rng(0))
        compiled = toolkit.jit(program.build(toolkit)).lower(*args).compile()
    finally:
        passes.set_jit_pipeline(before)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert os.listdir(root / "reports") == ["jit_block.html"]
    return root / "reports" / "jit_block.html", root / "dumps" / "jit_block", compiled


def test_report_holds_every_stage_of_the_dump(transformer_report) -> None:
    page, folder, compiled = transformer_report
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    # Self-contained: nothing fetched.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert "<link" not in text and "@import" not in text
    for section in SECTIONS:
        assert f"id={section}>" in text
    stages = sorted(n for n in os.listdir(folder) if re.match(r"\d{3}-", n))
    for number in range(len(stages)):
        assert f'id="stage-{number}"' in text
    for label in ("toolkit-simplify", "func.func(cse)", "func.func(canonicalize)", "symbol-dce",
                  "XLA: before optimizations", "XLA: optimized HLO"):
        assert html.escape(label) in text
    patterns = text[text.index("id=patterns>"):text.index("id=sharding>")]
    assert "<td>toolkit-simplify</td><td>transpose_of_transpose</td><td class=num>1</td>" in patterns
    assert html.escape(compiled.as_text().splitlines()[0]) in text


def test_report_renders_in_headless_chromium(transformer_report, tmp_path) -> None:
    page, folder, _ = transformer_report
    url = page.as_uri()
    dom = run_chromium(tmp_path, "--dump-dom", url=url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for section in SECTIONS:
        assert f'id="{section}"' in dom.stdout
    n_stages = len([n for n in os.listdir(folder) if re.match(r"\d{3}-", n)])
    assert len(re.findall(r'<details class="stage[^"]*" id="stage-\d+"', dom.stdout)) == n_stages
    for label in ("toolkit-simplify", "func.func(cse)", "func.func(canonicalize)", "symbol-dce",
                  "XLA: optimized HLO", "Pipeline report: jit_block"):
        assert label in dom.stdout

    shot = tmp_path / "report.png"
    result = run_chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1400", url=url)
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    width, height, raw = _png(shot)
    assert (width, height) == (1200, 1400)
    # Not blank: a one-colour page decompresses to a handful of distinct bytes, mostly zeros.
    assert len(set(raw)) > 64
    assert sum(1 for b in raw[::97] if b) > len(raw[::97]) // 50


def test_ir_text_is_escaped(tmp_path) -> None:
    source = tmp_path / "evil.mlir"
    source.write_text('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> attributes '
                      '{note = "</pre><script>alert(1)</script><img src=x onerror=alert(2)>"} {\n'
                      '  %0 = "stablehlo.custom_call"(%x) {call_target_name = "<b>boom</b>"} '
                      ': (tensor<2xf32>) -> tensor<2xf32>\n'
                      '  return %0 : tensor<2xf32>\n}\n')
    out = tmp_path / "r.html"
    assert opt.main([str(source), "--cse", f"--report={out}", "-o", os.devnull]) == 0
    text = out.read_text()
    assert "<script>alert" not in text and "<img src=x" not in text and "<b>boom" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "&lt;b&gt;boom&lt;/b&gt;" in text
    assert text.count("<script>") == 1  # the report's own


def test_toolkit_opt_report_counts_patterns_and_reports_shardings(tmp_path) -> None:
    source = tmp_path / "sharded.mlir"
    source.write_text(
        'func.func public @main(%x: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<8x4xf32> {\n'
        "  %one = stablehlo.constant dense<1.0> : tensor<8x4xf32>\n"
        "  %0 = stablehlo.multiply %x, %one : tensor<8x4xf32>\n"
        "  %1 = stablehlo.add %0, %0 : tensor<8x4xf32>\n"
        "  return %1 : tensor<8x4xf32>\n}\n")
    out = tmp_path / "r.html"
    dumps = tmp_path / "d"
    assert opt.main([str(source), "--pass-pipeline=builtin.module(func.func(cse), toolkit-simplify)",
                     f"--report={out}", f"--dump-ir-to={dumps}", "-o", os.devnull]) == 0
    text = out.read_text()
    patterns = text[text.index("id=patterns>"):text.index("id=sharding>")]
    assert "multiply_one" in patterns and "toolkit-simplify" in patterns
    sharding = text[text.index("id=sharding>"):text.index("id=xla>")]
    assert "@main arg 0" in sharding and "4x4" in sharding
    assert "XLA did not compile" in text[text.index("id=xla>"):]
    # Unchanged stages are folded, changed ones open with a diff.
    assert re.search(r'<details class="stage unchanged" id="stage-1"', text)  # cse: nothing to merge
    assert re.search(r'<details class="stage" id="stage-2"[^>]* open>', text)
    assert '<span class="del">-  %1 = stablehlo.multiply' in text or "stablehlo.multiply" in text
    assert sorted(os.listdir(dumps)) == ["000-input.mlir", "001-after-func.func_cse.mlir",
                                         "002-after-toolkit-simplify.mlir"]
