"""``import toolkit`` loads its public names on first use (toolkit/__init__.py): what a fresh process loads, and that
every way in (``toolkit.<name>``, ``from toolkit import <name>``, importing a submodule first) ends where
``import toolkit`` used to, with the hooks the tracing modules install."""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys
import textwrap
import types

import pytest

import toolkit

ROOT = pathlib.Path(__file__).resolve().parents[1]
INIT = ROOT / "toolkit" / "__init__.py"


def _run(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line (what it found), parsed here."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


_LOADED = """
import json, sys
def packages():
    return sorted({name.split(".")[1] for name in sys.modules if name.startswith("toolkit.")})
"""


def test_import_toolkit_and_the_opt_tool_load_no_tracing_module():
    found = _run(_LOADED + """
import toolkit
first = packages()
import toolkit.tools.opt, toolkit.tools.run
print(json.dumps({"first": first, "tools": packages(), "loaded": toolkit._state == toolkit._LOADED}))
""")
    assert found["first"] == ["version"]
    assert set(found["tools"]) <= toolkit._WITHOUT_TRACING, found["tools"]
    assert not found["loaded"]


def test_a_tracing_module_imported_first_brings_what_import_toolkit_did():
    """The eager handlers (toolkit.stages) and the array methods (toolkit.numpy) are there, whichever comes first."""
    found = _run(_LOADED + """
import numpy as np
from toolkit.stages import jit
traced = jit(lambda x: (x + 1).sum())(np.ones(3, np.float32))
import toolkit.numpy as tnp
eager = tnp.ones(2) * 3
import toolkit
print(json.dumps({"traced": float(traced), "eager": np.asarray(eager).tolist(), "packages": packages(),
                  "loaded": toolkit._state == toolkit._LOADED,
                  "spec": type(sys.modules["toolkit.stages"].__spec__.loader).__name__}))
""")
    assert found["traced"] == 6.0 and found["eager"] == [3.0, 3.0]
    assert found["loaded"] and {"numpy", "lax", "ad", "batching", "random"} <= set(found["packages"])
    assert "nn" not in found["packages"] and "scipy" not in found["packages"]  # on their own first use
    assert found["spec"] == "SourceFileLoader"  # the real loader, not the one that loaded the names first


def test_eager_numpy_imported_first():
    found = _run("""
import json
import toolkit.numpy as tnp
print(json.dumps({"value": float((tnp.arange(4) + 1).sum())}))
""")
    assert found["value"] == 10.0


def test_import_star_finds_every_public_name():
    found = _run("""
import json
from toolkit import *
print(json.dumps(sorted(name for name in dir() if not name.startswith("_"))))
""")
    assert {"jit", "grad", "vmap", "numpy", "lax", "nn", "scipy", "load_module", "Array"} <= set(found)


def test_functions_named_like_their_submodule_stay_functions():
    """``toolkit.shard_map`` and ``toolkit.compute_on`` are functions, even when their module is imported first."""
    found = _run("""
import json, types
from toolkit.shard_map import shard_map
import toolkit.compute_on
import toolkit
print(json.dumps({"shard_map": toolkit.shard_map is shard_map,
                  "compute_on": isinstance(toolkit.compute_on, types.FunctionType)}))
""")
    assert found == {"shard_map": True, "compute_on": True}


def test_every_name_of_dir_is_importable_and_the_same_object():
    names = [name for name in dir(toolkit) if not name.startswith("_")]
    assert set(toolkit._PUBLIC) <= set(names)
    assert {"jit", "nn", "numpy", "load_module", "host_count", "__version__"} <= set(dir(toolkit))
    for name in names:
        namespace: dict = {}
        exec(f"from toolkit import {name}", namespace)  # noqa: S102  (the statement users write)
        assert namespace[name] is getattr(toolkit, name), name
    assert isinstance(toolkit.nn, types.ModuleType) and callable(toolkit.nn.relu)


def test_toolkit_config_knows_every_flag_right_after_import(tmp_path):
    # As jax.config after `import jax`: flags defined by modules that trace (the persistent cache's, debug_nans)
    # are there at the first toolkit.config, however it is reached.
    for reach in ("import toolkit\nconfig = toolkit.config", "from toolkit import config"):
        found = _run(f"""
import json
{reach}
config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
config.update("jax_debug_nans", True)
config.update("jax_persistent_cache_min_compile_time_secs", 0)
print(json.dumps([config.jax_compilation_cache_dir, config.jax_debug_nans]))
""")
        assert found == [str(tmp_path), True]


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        toolkit.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="__wrapped__"):
        toolkit.__wrapped__  # noqa: B018
    with pytest.raises(ImportError, match="no_such_name"):
        exec("from toolkit import no_such_name", {})  # noqa: S102


def _type_checking_imports() -> dict[str, str]:
    tree = ast.parse(INIT.read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "_typing.TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                for alias in statement.names:
                    target = (f"toolkit.{alias.name}" if statement.module == "toolkit"
                              else f"{statement.module}:{alias.name}")
                    found[alias.asname or alias.name] = target
    return found


def test_the_table_of_public_names_matches_the_type_checking_imports():
    """toolkit/__init__.py names each public name twice: in _PUBLIC (run) and under TYPE_CHECKING (type checkers)."""
    assert _type_checking_imports() == toolkit._PUBLIC


def _module_level_toolkit_imports(path: pathlib.Path, module: str) -> list[str]:
    targets = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
                visit(getattr(node, "finalbody", []))
            elif isinstance(node, ast.Import):
                targets.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                targets.extend([f"{base}.{alias.name}" for alias in node.names] if base == "toolkit" else [base])

    visit(ast.parse(path.read_text()).body)
    return [target for target in targets if target.startswith("toolkit.")]


def test_the_packages_without_tracing_import_only_each_other():
    """What lets toolkit-opt start without the tracer: importing one of them loads none of the others' hooks, and
    the first tracing module imported finds none of them half-initialized. ``tools``, which nothing imports, may
    import anything."""
    light = toolkit._WITHOUT_TRACING - {"tools"}
    wrong = []
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) < 2 or parts[1] not in light:
            continue
        module = ".".join(parts)
        wrong += [f"{module} -> {target}" for target in _module_level_toolkit_imports(path, module)
                  if target.split(".")[1] not in light]
    assert wrong == []
