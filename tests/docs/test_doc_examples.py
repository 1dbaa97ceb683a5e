"""The docs' code blocks are tests (conftest.py at the repository root; docs/doc-examples.md).

These check the collector itself: that the test command collects every page, that each convention does what
docs/doc-examples.md says (a wrong output, a failing shell block, a Python error all fail), and that every
Python or shell block of the docs either runs or carries a reason.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
import unittest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _root_conftest():
    """The repository's conftest.py as a module (pytest loaded it under another name)."""
    pytest.importorskip("sybil")
    spec = importlib.util.spec_from_file_location("doc_examples_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_page(tmp_path: Path, text: str) -> list[tuple[str, BaseException | None]]:
    """Parse ``text`` as a page and evaluate its examples in order, as pytest would; (kind, error) per example."""
    from sybil import Document
    from sybil.example import SybilFailure

    conftest = _root_conftest()
    page = tmp_path / "page.md"
    page.write_text(text)
    document = Document.parse(str(page), conftest.MarkdownExamples())
    namespace = document.namespace
    conftest._setup_page(namespace)
    outcomes: list[tuple[str, BaseException | None]] = []
    try:
        for example in document.examples():
            try:
                example.evaluate()
                outcomes.append(("ok", None))
            except unittest.SkipTest as skip:
                outcomes.append(("skipped", skip))
            except (SybilFailure, Exception) as error:  # noqa: BLE001 - the outcome is what is tested
                outcomes.append(("failed", error))
    finally:
        conftest._teardown_page(namespace)
    return outcomes


def test_sybil_is_installed():
    """Without sybil the docs' blocks would silently not run: it is in the test extra and must be there."""
    import sybil  # noqa: F401


def test_every_page_is_collected():
    """README.md and every docs/*.md page are collected by the root conftest (and docs/api/ is not)."""
    conftest = _root_conftest()
    assert callable(conftest.pytest_collect_file)
    collector = conftest._OneFile(parsers=[], patterns=["*.md"])
    for page in PAGES:
        assert collector.should_parse(page), page
    assert not collector.should_parse(ROOT / "docs" / "api" / "toolkit.md")
    assert not collector.should_parse(ROOT / "toolkit" / "lab" / "zoo" / "README.md")


def test_python_blocks_share_a_namespace_and_outputs_are_checked(tmp_path):
    outcomes = _run_page(tmp_path, "```python\nx = 21\n```\n\n```python\nprint(x * 2)\n```\n\n"
                                   "<!-- output -->\n```\n42\n```\n")
    assert [kind for kind, _ in outcomes] == ["ok", "ok", "ok"]


def test_a_wrong_output_fails(tmp_path):
    outcomes = _run_page(tmp_path, "```python\nprint(41)\n```\n\n<!-- output -->\n```\n42\n```\n")
    assert outcomes[1][0] == "failed" and "the output differs" in str(outcomes[1][1])


def test_a_python_error_fails_with_the_page_line(tmp_path):
    outcomes = _run_page(tmp_path, "# title\n\n```python\n\nundefined_name\n```\n")
    kind, error = outcomes[0]
    assert kind == "failed" and isinstance(error, NameError)
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename.endswith("page.md")]
    assert lines == [5]  # the traceback names the page's line


def test_doctests_are_checked(tmp_path):
    good = _run_page(tmp_path, "```python\n>>> 1 + 1\n2\n>>> [1, 2,\n...  3]\n[1, 2, 3]\n```\n")
    assert [kind for kind, _ in good] == ["ok", "ok"]
    bad = _run_page(tmp_path, "```python\n>>> 1 + 1\n3\n```\n")
    assert bad[0][0] == "failed"


def test_file_blocks_are_written_and_importable(tmp_path):
    page = ("```python\n# my_module_for_doc_test.py\nVALUE = 1\n```\n\n"
            "```python\n# my_module_for_doc_test.py, continued\nOTHER = 2\n```\n\n"
            "```python\nimport my_module_for_doc_test as m\nprint(m.VALUE + m.OTHER)\n```\n\n"
            "<!-- output -->\n```\n3\n```\n")
    outcomes = _run_page(tmp_path, page)
    assert [kind for kind, _ in outcomes] == ["ok", "ok", "ok", "ok"], outcomes
    assert "my_module_for_doc_test" not in sys.modules  # forgotten with the page


def test_continued_without_a_file_fails(tmp_path):
    outcomes = _run_page(tmp_path, "```python\n# nothing_yet.py, continued\nX = 1\n```\n")
    assert outcomes[0][0] == "failed" and "no block wrote nothing_yet.py" in str(outcomes[0][1])


def test_shell_blocks_run_and_fail_on_error(tmp_path):
    outcomes = _run_page(tmp_path, "```sh\necho made > f.txt\ncat f.txt\n```\n\n<!-- output -->\n```\nmade\n```\n\n"
                                   "```bash\nfalse\necho not reached\n```\n")
    assert [kind for kind, _ in outcomes] == ["ok", "ok", "failed"]
    assert "exited 1" in str(outcomes[2][1])


def test_shell_blocks_find_the_tools():
    """The shell blocks' PATH starts with this Python's bin directory (toolkit-opt, lit, ...)."""
    assert (Path(sys.executable).parent / "toolkit-opt").exists() or os.name == "nt"


def test_not_run_needs_a_reason_and_is_reported_skipped(tmp_path):
    outcomes = _run_page(tmp_path, "<!-- not run: needs 8 hosts -->\n```python\nraise SystemExit\n```\n")
    assert outcomes[0][0] == "skipped" and "needs 8 hosts" in str(outcomes[0][1])
    with pytest.raises(ValueError, match="needs a reason"):
        _run_page(tmp_path, "<!-- not run -->\n```python\nx = 1\n```\n")


def test_pages_run_in_their_own_directory(tmp_path):
    before = os.getcwd()
    outcomes = _run_page(tmp_path, "```python\nimport os\nprint(os.getcwd())\n```\n")
    assert outcomes[0][0] == "ok"
    assert os.getcwd() == before


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_markers_before_blocks_are_well_formed(page):
    """A comment right before a python/sh/bash block is `<!-- output -->` or `<!-- not run: reason -->`: a
    misspelt marker (`<!-- skip -->`, `<!-- not-run -->`) would leave the block running with no one noticing."""
    lines = page.read_text().split("\n")
    inside = False
    for number, line in enumerate(lines, 1):
        fence = re.match(r"^\s*```(\S*)", line)
        if fence is None:
            continue
        if inside:
            inside = False
            continue
        inside = True
        if fence.group(1) in ("python", "sh", "bash"):
            before = next((text for text in reversed(lines[: number - 1]) if text.strip()), "")
            if "<!--" in before:
                assert re.search(r"<!--\s*(output|not run:\s*\S.*?)\s*-->", before), (page.name, number, before)
