"""The package's modules say what they hold, and stay small enough to read (issue 24's criteria).

* no module is named after nothing (``extras``, ``more_*``, ``convenience``, ``common``, ``utils``,
  ``helpers``, ``misc``);
* at most three hand-written modules exceed 800 lines, and each says in its docstring why it is one
  module ("Why one module ..."); generated code (flatc's ``toolkit/export/schema/``) does not count.
"""

from __future__ import annotations

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1] / "toolkit"
GENERATED = ROOT / "export" / "schema"
CATCH_ALL = re.compile(r"^(extras|more_.*|convenience|common|utils?|helpers?|misc)$")
MAX_LINES, MAX_LARGE = 800, 3


def _modules() -> list[pathlib.Path]:
    return sorted(p for p in ROOT.rglob("*.py") if GENERATED not in p.parents)


def test_no_module_is_named_after_nothing():
    bad = [str(p.relative_to(ROOT.parent)) for p in _modules() if CATCH_ALL.match(p.stem)]
    bad += [str(p.relative_to(ROOT.parent)) for p in ROOT.rglob("*") if p.is_dir() and CATCH_ALL.match(p.name)]
    assert not bad, f"modules named after nothing: {bad}; name them after what they hold"


def test_large_modules_are_few_and_say_why():
    large = {p: len(p.read_text().splitlines()) for p in _modules()}
    large = {p: n for p, n in large.items() if n > MAX_LINES}
    assert len(large) <= MAX_LARGE, f"more than {MAX_LARGE} modules over {MAX_LINES} lines: " \
                                    f"{ {str(p.relative_to(ROOT.parent)): n for p, n in large.items()} }"
    for path in large:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert "Why one module" in doc, f"{path.relative_to(ROOT.parent)} is over {MAX_LINES} lines and its " \
                                        "docstring does not say why it is one module"
