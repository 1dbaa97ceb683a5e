"""Layering: ops (``toolkit/lax``) and ``toolkit/core`` never import ``toolkit.stages``.

Eager execution reaches ``stages`` through the hooks it installs in ``toolkit.core.tracing``
(``set_eager_handler`` for one primitive, ``set_eager_call_handler`` for a whole function). Every import is
checked, function-local ones included.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "toolkit"
LOWER_LAYERS = ("lax", "core")
FORBIDDEN = "toolkit.stages"


def _imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every module (or module attribute) ``source`` imports, anywhere in it."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return out


def _files() -> list[pathlib.Path]:
    return sorted(p for layer in LOWER_LAYERS for p in (ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_lower_layers_do_not_import_stages(path):
    package = ".".join(path.relative_to(ROOT.parent).parts[:-1])
    bad = [f"line {line}: {name}" for line, name in _imported_modules(path.read_text(), package)
           if name == FORBIDDEN or name.startswith(FORBIDDEN + ".")]
    assert not bad, f"{path.relative_to(ROOT.parent)} imports {FORBIDDEN} ({', '.join(bad)}); use the eager hooks " \
                    "of toolkit.core.tracing instead"


def test_the_check_sees_function_local_and_relative_imports():
    source = "def f():\n    from toolkit import stages\n    from ..stages import jit\n    import toolkit.stages\n"
    names = [name for _, name in _imported_modules(source, "toolkit.lax")]
    assert names.count("toolkit.stages") == 3 and "toolkit.stages.jit" in names
