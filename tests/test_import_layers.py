"""Layering: what the import-linter contracts (``pyproject.toml``) cannot say, read from the source with ``ast``.

* no import cycle among module-level imports;
* counting the imports inside functions too, no cycle of more than 5 modules;
* at most 150 function-level ``toolkit`` import statements, each commented (on its line or the line above) with
  why it is there (the cycle it breaks, or why it is lazy);
* only ``toolkit.runtime`` imports jaxlib's private modules (``jaxlib._jax``, ``xla_client``): a jaxlib upgrade
  touches that package only (import-linter sees external packages by their top-level name, ``jaxlib``, only);
* ops (``toolkit/lax``) and ``toolkit/core`` never import ``toolkit.stages``: outside a trace they run through the
  eager hooks of ``toolkit.core.tracing``;
* the import-linter contracts themselves hold (what ``scripts/test.sh`` runs as ``lint-imports``).

Every import is read, function-level and relative ones included; imports under ``if TYPE_CHECKING:`` are not
imports at run time and are skipped.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import io
import pathlib
import subprocess
import sys
import tokenize
from collections import defaultdict
from collections.abc import Iterable

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "toolkit"

MAX_CYCLE = 5
MAX_FUNCTION_LEVEL_IMPORTS = 150
#: jaxlib's private modules; only toolkit.runtime may import them.
JAXLIB_PRIVATE = ("jaxlib._jax", "jaxlib.xla_client", "jaxlib.xla_extension")


@dataclasses.dataclass(frozen=True)
class Import:
    """One imported name of one import statement: ``module`` (file ``path``, line ``line``) imports ``target``."""

    module: str
    path: pathlib.Path
    line: int
    end_line: int
    target: str  # the dotted name as written, made absolute (``toolkit.shard.Mesh``, ``jaxlib._jax``)
    function_level: bool


def _module_files(root: pathlib.Path = ROOT) -> dict[str, pathlib.Path]:
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports_in(source: str, module: str, path: pathlib.Path) -> list[Import]:
    """Every name ``source`` imports (module ``module``), with where and whether inside a function."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def walk(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            function = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            checking = type_checking or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            if isinstance(child, (ast.Import, ast.ImportFrom)) and not checking:
                if isinstance(child, ast.Import):
                    targets = [alias.name for alias in child.names]
                else:
                    base = child.module or ""
                    if child.level:
                        parent = package.split(".")[: len(package.split(".")) - child.level + 1]
                        base = ".".join(parent + ([base] if base else []))
                    targets = [f"{base}.{alias.name}" for alias in child.names]
                found.extend(Import(module, path, child.lineno, child.end_lineno or child.lineno, t, function)
                             for t in targets)
            walk(child, function, checking)

    walk(ast.parse(source), False, False)
    return found


@functools.lru_cache(maxsize=1)
def _all_imports() -> tuple[dict[str, pathlib.Path], list[Import]]:
    modules = _module_files()
    imports = [i for name, path in modules.items() for i in _imports_in(path.read_text(), name, path)]
    return modules, imports


def _resolve(target: str, modules: Iterable[str]) -> str | None:
    """The toolkit module ``target`` names (``toolkit.shard.Mesh`` -> ``toolkit.shard``), or None outside toolkit."""
    known = set(modules)
    name = target
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _edges(modules: dict[str, pathlib.Path], imports: list[Import], *,
           function_level: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        if imp.function_level and not function_level:
            continue
        target = _resolve(imp.target, modules)
        if target is not None and target != imp.module:
            edges[imp.module].add(target)
    return edges


def _cycles(nodes: Iterable[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return sorted(components, key=len, reverse=True)


def _function_level_statements(modules: dict[str, pathlib.Path], imports: list[Import]) -> list[Import]:
    """One entry per function-level import statement importing something of toolkit."""
    seen: dict[tuple[pathlib.Path, int], Import] = {}
    for imp in imports:
        if imp.function_level and _resolve(imp.target, modules) is not None:
            seen.setdefault((imp.path, imp.line), imp)
    return sorted(seen.values(), key=lambda i: (str(i.path), i.line))


def _comment_lines(source: str) -> set[int]:
    """The lines holding a comment (``tokenize``: a ``#`` inside a string is no comment)."""
    return {token.start[0] for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT}


def _uncommented(modules: dict[str, pathlib.Path], imports: list[Import]) -> list[Import]:
    """The function-level toolkit import statements with no comment on their lines or the line above."""
    statements = _function_level_statements(modules, imports)
    comments = {path: _comment_lines(path.read_text()) for path in {imp.path for imp in statements}}
    return [imp for imp in statements if not comments[imp.path] & set(range(imp.line - 1, imp.end_line + 1))]


def _where(imp: Import) -> str:
    return f"{imp.path.relative_to(ROOT.parent)}:{imp.line}"


# --- the criteria ----------------------------------------------------------------------------------------------


def test_no_cycle_among_module_level_imports():
    modules, imports = _all_imports()
    cycles = _cycles(modules, _edges(modules, imports, function_level=False))
    assert not cycles, f"module-level import cycles: {cycles}"


def test_no_cycle_longer_than_five_modules_counting_function_level_imports():
    modules, imports = _all_imports()
    cycles = _cycles(modules, _edges(modules, imports, function_level=True))
    too_long = [c for c in cycles if len(c) > MAX_CYCLE]
    assert not too_long, (f"import cycles (imports inside functions counted) of more than {MAX_CYCLE} modules: "
                          f"sizes {[len(c) for c in too_long]}: {too_long}")


def test_at_most_150_function_level_toolkit_imports():
    modules, imports = _all_imports()
    statements = _function_level_statements(modules, imports)
    assert len(statements) <= MAX_FUNCTION_LEVEL_IMPORTS, (
        f"{len(statements)} function-level toolkit import statements (at most {MAX_FUNCTION_LEVEL_IMPORTS}); "
        "import at module level unless the import breaks a cycle")


def test_every_function_level_toolkit_import_says_why():
    silent = [_where(imp) for imp in _uncommented(*_all_imports())]
    assert not silent, (f"{len(silent)} function-level toolkit imports without a comment saying why (the cycle "
                        f"they break, or why they are lazy) on their line or the line above: {silent}")


def test_only_the_runtime_imports_jaxlibs_private_modules():
    _, imports = _all_imports()
    private = [f"{_where(imp)} ({imp.target})" for imp in imports
               if not imp.module.startswith("toolkit.runtime")
               and any(imp.target == name or imp.target.startswith(name + ".") for name in JAXLIB_PRIVATE)]
    assert not private, f"jaxlib's private modules imported outside toolkit/runtime: {private}"


@pytest.mark.parametrize("layer", ["lax", "core"])
def test_ops_and_core_do_not_import_stages(layer):
    _, imports = _all_imports()
    bad = [f"{_where(imp)} ({imp.target})" for imp in imports
           if imp.module.startswith(f"toolkit.{layer}")
           and (imp.target == "toolkit.stages" or imp.target.startswith("toolkit.stages."))]
    assert not bad, f"toolkit/{layer} imports toolkit.stages ({bad}); use the eager hooks of toolkit.core.tracing"


def test_the_import_linter_contracts_hold():
    # In a process of its own: lint-imports configures logging (which would silence this session's loggers).
    command = pathlib.Path(sys.executable).with_name("lint-imports")
    if not command.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    result = subprocess.run([str(command), "--no-cache", "--no-logo"], cwd=ROOT.parent, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, f"an import breaks a contract of pyproject.toml [tool.importlinter]:\n" \
                                   f"{result.stdout}{result.stderr}"


# --- the checks themselves -------------------------------------------------------------------------------------


def test_the_reader_sees_function_level_relative_and_type_checking_imports(tmp_path):
    source = ("import toolkit.core\n"
              "from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from toolkit import stages\n"
              "def f():\n    from ..stages import jit  # function-level: why\n    import jaxlib._jax\n")
    found = _imports_in(source, "toolkit.lax.sorting", tmp_path / "sorting.py")
    assert [(i.target, i.function_level) for i in found] == [
        ("toolkit.core", False), ("typing.TYPE_CHECKING", False), ("toolkit.stages.jit", True),
        ("jaxlib._jax", True)]
    assert _comment_lines(source) == {6}
    assert _resolve("toolkit.stages.jit", ["toolkit", "toolkit.stages"]) == "toolkit.stages"
    assert _resolve("numpy.ones", ["toolkit"]) is None


def test_the_cycle_finder():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert _cycles("abcdef", edges) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles("ab", {"a": {"b"}}) == []


if __name__ == "__main__":  # the numbers, for the record: python tests/test_import_layers.py
    modules, imports = _all_imports()
    statements = _function_level_statements(modules, imports)
    silent = _uncommented(modules, imports)
    print("function-level toolkit import statements:", len(statements), f"({len(silent)} without a comment)")
    print("module-level cycles:", _cycles(modules, _edges(modules, imports, function_level=False)))
    print("cycles counting function-level imports:",
          [len(c) for c in _cycles(modules, _edges(modules, imports, function_level=True))])
    if "-v" in sys.argv:
        for cycle in _cycles(modules, _edges(modules, imports, function_level=True)):
            print("  ", cycle)
        for imp in silent:
            print("  no comment:", _where(imp))
