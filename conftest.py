"""The code blocks of README.md and docs/*.md run as tests (Sybil collects them; see docs/doc-examples.md).

Conventions, all visible in the Markdown source:

* A ```python block runs; the blocks of one page share a namespace, in order. A block starting with ``>>>`` is a
  doctest (``...`` matches anything, whitespace runs compare equal).
* A block whose first line names a file (``# my_passes.py``, ``// f.mlir``) is written (without that line) to that
  file instead;
  ``# my_passes.py, continued`` appends to it.
* A ```sh / ```bash block runs in bash (``set -eo pipefail``) with this Python's bin directory first on PATH.
* Every page runs in a fresh temporary working directory (files it makes stay there; the page's directory is on
  ``sys.path`` so ``import my_passes`` finds the file a block wrote).
* ``<!-- output -->`` right before a block: the block is the standard output of the block before it.
* ``<!-- not run: REASON -->`` right before a block: the block is reported as skipped with REASON.
* Other blocks (mlir, text, untyped) not marked are illustrations and are not run.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# The pages that need several devices say so in a visible block; the test process has eight (as tests/conftest.py).
os.environ.setdefault("TOOLKIT_NUM_CPU_DEVICES", "8")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
# Every program the tests compile (toolkit's, JAX's oracle's, and those of the processes the tests start, which inherit
# the environment) is compiled by XLA CPU with its cheapest code generation: LLVM at optimization level 0 (default 2)
# and XLA's classic elemental emitters instead of its fusion emitters (--xla_cpu_use_fusion_emitters=false). XLA
# compiling thousands of small programs is most of the suite's CPU (issue 25; `TOOLKIT_TEST_PROFILE`, docs/testing.md:
# 74-79% of tests/numpy's and tests/lax's), and the tests check what toolkit gives XLA and what comes back, not XLA's
# code generation. Measured on 16 typical small programs (sort, fft, scan, random normal, percentile, grad, ...): 1.9 s
# of CPU to compile at level 1 (the same at 2), 1.5 s at level 0, 1.3 s with the classic emitters at level 1, 0.5-0.7 s
# with both. Both keep the semantics (no fast math; XLA's HLO passes are the same) and both sides of a comparison with
# JAX are compiled alike; the rounding of some reductions and complex products differs in the last bit from XLA's
# default, so the tests of values stored by a run at XLA's defaults run theirs at REFERENCE_XLA_FLAGS (what XLA_FLAGS
# was before, plus level 1, the suite's setting until issue 25: tests/tools/test_stablehlo_testdata.py).
# (--xla_cpu_parallel_codegen_split_count=1, the classic emitters' LLVM module compiled in one piece, was ~15% less
# CPU per small program but changed the rounding of a program of JAX's gamma sampler under vmap, which
# tests/random/test_gamma_samplers.py checks bit for bit against toolkit's: not used.)
# An XLA_FLAGS that names one of these flags keeps it: XLA_FLAGS="--xla_backend_optimization_level=2
# --xla_cpu_use_fusion_emitters=true" runs the tests at XLA's default (test/lit/lit.cfg.py sets the same flags for lit).
REFERENCE_XLA_FLAGS = os.environ.get("TOOLKIT_TEST_REFERENCE_XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))
if "xla_backend_optimization_level" not in REFERENCE_XLA_FLAGS:
    REFERENCE_XLA_FLAGS = (REFERENCE_XLA_FLAGS + " --xla_backend_optimization_level=1").strip()
os.environ["TOOLKIT_TEST_REFERENCE_XLA_FLAGS"] = REFERENCE_XLA_FLAGS  # the same in every process the suite starts
for _flag, _value in (("xla_backend_optimization_level", "0"), ("xla_cpu_use_fusion_emitters", "false")):
    if _flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + f" --{_flag}={_value}").strip()

ROOT = Path(__file__).resolve().parent
# Under pytest-xdist (scripts/test.sh) the blocks of one page, like the tests that share state, stay on one worker.
pytest_plugins = ["tests.xdist_groups", "tests.compile_profile"]  # the second: TOOLKIT_TEST_PROFILE (docs/testing.md)

try:
    from sybil import Document, Example, Region, Sybil
    from sybil.parsers.abstract.doctest import DocTestStringParser
    from sybil.evaluators.doctest import DocTestEvaluator
    from sybil.parsers.markdown.lexers import FencedCodeBlockLexer
except ImportError:  # sybil is in the `test` extra; tests/docs/test_doc_examples.py fails without it
    Sybil = None  # type: ignore[assignment,misc]

# `<!-- output -->` or `<!-- not run: reason -->` on the last non-blank line before a fence.
_MARKER = re.compile(r"<!--\s*(?P<kind>output|not run)\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$")
# A first line naming the file the block is: `# my_passes.py`, `// f.mlir`.
# `# my_passes.py, continued` appends to the file an earlier block wrote.
_FILE_HEADER = re.compile(r"^(?:#|//)\s*(?P<name>[\w./-]+\.(?:py|mlir|json|txt))(?P<continued>,\s*continued)?\s*$")
_OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_LAST_OUTPUT = "__doc_example_output__"


def _source_of(example: Any) -> str:
    return str(example.parsed)


def _write_file(name: str, append: bool):
    def evaluate(example: Example) -> None:
        path = Path.cwd() / name
        if append and not path.exists():
            raise AssertionError(f"{example.path}:{example.line}: '{name}, continued' but no block wrote {name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        body = _source_of(example).lstrip().split("\n", 1)[1] if "\n" in _source_of(example).strip() else ""
        with path.open("a" if append else "w") as out:  # the file is what follows the line naming it
            out.write(("\n\n" if append else "") + body)
        sys.modules.pop(path.stem, None)  # a page that rewrites a module imports the new text

    return evaluate


class _Tee(io.StringIO):
    """Keeps what a block prints (for a following `<!-- output -->` block) and still shows it."""

    def __init__(self, shown: Any) -> None:
        super().__init__()
        self._shown = shown

    def write(self, text: str) -> int:
        self._shown.write(text)
        return super().write(text)


def _run_python(example: Example) -> None:
    source = _source_of(example)
    # Line numbers in tracebacks are the Markdown file's (the source starts on the line after the fence).
    code = compile("\n" * (example.line + example.parsed.line_offset) + source, example.path, "exec")
    captured = _Tee(sys.stdout)
    with contextlib.redirect_stdout(captured):
        exec(code, example.namespace)
    example.namespace[_LAST_OUTPUT] = captured.getvalue()


def _run_shell(example: Example) -> str | None:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.getcwd() + os.pathsep + env.get("PYTHONPATH", "")
    try:
        done = subprocess.run(["bash", "-c", "set -eo pipefail\n" + _source_of(example)], capture_output=True,
                              text=True, timeout=180, env=env)
    except subprocess.TimeoutExpired:
        return f"{example.path}:{example.line}: the shell block did not finish in 180 s"
    example.namespace[_LAST_OUTPUT] = done.stdout
    if done.returncode != 0:
        return (f"{example.path}:{example.line}: the shell block exited {done.returncode}\n"
                f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return None


def _check_output(example: Example) -> str | None:
    if _LAST_OUTPUT not in example.namespace:
        return f"{example.path}:{example.line}: an <!-- output --> block follows no block that ran"
    got = example.namespace.pop(_LAST_OUTPUT)
    want = _source_of(example)
    if doctest.OutputChecker().check_output(want, got, _OPTIONS):
        return None
    return f"{example.path}:{example.line}: the output differs\nexpected:\n{want}\ngot:\n{got}"


def _not_run(reason: str):
    def evaluate(example: Example) -> None:
        raise unittest.SkipTest(f"not run: {reason}")

    return evaluate


def _marker_before(document: Document, start: int) -> re.Match[str] | None:
    before = document.text[:start].rstrip().rsplit("\n", 1)[-1]
    return _MARKER.search(before)


class MarkdownExamples:
    """A Sybil parser: every fenced block of a page, read by the conventions in this module's docstring."""

    def __init__(self) -> None:
        self._fences = FencedCodeBlockLexer(language=r"[^\n]*")
        self._doctests = DocTestStringParser(DocTestEvaluator(_OPTIONS))

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self._fences(document):
            language = region.lexemes["language"].strip().split(" ")[0]
            source = region.lexemes["source"]
            marker = _marker_before(document, region.start)
            if marker is not None and marker.group("kind") == "not run":
                if not (marker.group("reason") or "").strip():
                    raise ValueError(f"{document.path}: <!-- not run --> needs a reason (<!-- not run: why -->)")
                yield Region(region.start, region.end, source, _not_run(marker.group("reason")))
                continue
            if marker is not None and marker.group("kind") == "output":
                yield Region(region.start, region.end, source, _check_output)
                continue
            first = source.lstrip().split("\n", 1)[0]
            header = _FILE_HEADER.match(first)
            if header is not None and language in ("python", "mlir", "json", "text", ""):
                yield Region(region.start, region.end, source, _write_file(header.group("name"), header.group("continued") is not None))
            elif language == "python" and source.lstrip().startswith(">>>"):
                for doctest_region in self._doctests(source, document.path):
                    doctest_region.adjust(region, source)
                    yield doctest_region
            elif language == "python":
                yield Region(region.start, region.end, source, _run_python)
            elif language in ("sh", "bash"):
                yield Region(region.start, region.end, source, _run_shell)


_PAGE_STATE = "__doc_example_page__"


def _setup_page(namespace: dict[str, Any]) -> None:
    workdir = tempfile.mkdtemp(prefix="toolkit-doc-")
    namespace[_PAGE_STATE] = (os.getcwd(), workdir, set(sys.modules), _jit_pipeline())
    os.chdir(workdir)
    sys.path.insert(0, workdir)


def _teardown_page(namespace: dict[str, Any]) -> None:
    cwd, workdir, modules, pipeline = namespace.pop(_PAGE_STATE)
    os.chdir(cwd)
    sys.path.remove(workdir)
    # Modules a page imported from its directory (my_passes) are forgotten: another page may write its own.
    for name in set(sys.modules) - modules:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(workdir):
            del sys.modules[name]
    now = _jit_pipeline()
    if now is not None and now != (pipeline or ""):  # a page that extended jit's pipeline: put it back
        sys.modules["toolkit.passes.default_pipeline"].set_jit_pipeline(pipeline or "")
    shutil.rmtree(workdir, ignore_errors=True)


def _jit_pipeline() -> str | None:
    """jit's pipeline text, or None while no page has imported toolkit (never imported here)."""
    pipeline = sys.modules.get("toolkit.passes.default_pipeline")
    return None if pipeline is None else pipeline.JIT_PIPELINE


class _OneFile(Sybil if Sybil is not None else object):  # type: ignore[misc]
    """A Sybil for the files named, relative to the repository: README.md, docs/*.md (not docs/api/)."""

    def should_parse(self, path: Path) -> bool:
        try:
            relative = path.resolve().relative_to(ROOT)
        except ValueError:
            return False
        parts = relative.parts
        return parts == ("README.md",) or (len(parts) == 2 and parts[0] == "docs" and parts[1].endswith(".md"))


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """A page's blocks share a namespace and run in order: under pytest-xdist (``--dist loadgroup``, as
    scripts/test.sh runs) each page is one group, so one worker runs all its blocks, in order."""
    import pytest  # only while pytest collects (conftest.py is imported by pytest alone)

    for item in items:
        if type(item).__name__ == "SybilItem":
            item.add_marker(pytest.mark.xdist_group(f"doc-page:{Path(str(item.path)).name}"))


if Sybil is not None:
    pytest_collect_file = _OneFile(parsers=[MarkdownExamples()], patterns=["*.md"], setup=_setup_page,
                                   teardown=_teardown_page).pytest()
