"""Write docs/api/: one Markdown page per public toolkit module, each listing the module's public names.

The pages are generated, never edited by hand: each is a mkdocstrings directive (``::: toolkit.export``) with the
module's public names as its members, so MkDocs renders every public name with its signature and docstring.
A module's public names are its ``__all__``, or else every name not starting with ``_`` that is not a module
(names re-exported from toolkit's own submodules count: ``toolkit.numpy.sum`` is defined in
``toolkit/numpy/reductions.py``). scripts/docs.sh runs it before each build: docs/api/ is not committed.

    python scripts/generate_api_pages.py           # rewrite docs/api/
    python scripts/generate_api_pages.py --check   # exit 1 if docs/api/ is not what this would write
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
API_DIR = ROOT / "docs" / "api"

# The public modules, in the order of the reference's index, each with one line saying what it is.
PUBLIC_MODULES: dict[str, str] = {
    "toolkit": "jit, grad, vmap, devices, arrays, configuration: the entry points (as `jax`).",
    "toolkit.numpy": "NumPy's API on toolkit arrays, traced and lowered to StableHLO (as `jax.numpy`).",
    "toolkit.numpy.linalg": "Linear algebra (as `jax.numpy.linalg`).",
    "toolkit.numpy.fft": "Discrete Fourier transforms (as `jax.numpy.fft`).",
    "toolkit.lax": "The primitives, one per StableHLO operation family (as `jax.lax`).",
    "toolkit.random": "Counter-based random numbers, bitwise equal to `jax.random`.",
    "toolkit.nn": "Activations and friends (as `jax.nn`).",
    "toolkit.nn.initializers": "Parameter initializers (as `jax.nn.initializers`).",
    "toolkit.scipy": "SciPy's API (as `jax.scipy`).",
    "toolkit.tree": "Pytree functions with short names (as `jax.tree`).",
    "toolkit.tree_util": "Pytree registration and traversal (as `jax.tree_util`).",
    "toolkit.flatten_util": "`ravel_pytree` (as `jax.flatten_util`).",
    "toolkit.stages": "Traced, Lowered, Compiled: the stages of `jit` (as `jax.stages`).",
    "toolkit.export": "Export, serialize and call programs; JAX's wire format (as `jax.export`).",
    "toolkit.shard": "Meshes, partition specs and shardings (as `jax.sharding`).",
    "toolkit.passes": "Python MLIR passes: writing, registering and running pipelines.",
    "toolkit.ir": "Parsing and building MLIR in toolkit's context; helpers for passes.",
    "toolkit.lab": "The pass lab: measure a pipeline on the zoo or any program; the reducer.",
    "toolkit.checkpointing": "Sharded checkpoints with tensorstore.",
    "toolkit.distributed": "Several processes: the coordination service (as `jax.distributed`).",
    "toolkit.multihost": "Collectives between processes (as `jax.experimental.multihost_utils`).",
    "toolkit.compilation_cache": "The persistent compilation cache on disk.",
    "toolkit.testing": "Assertions for tests.",
    "toolkit.debug": "Printing and host callbacks from inside traced code (as `jax.debug`).",
    "toolkit.image": "Image resizing (as `jax.image`).",
    "toolkit.profiler": "XLA's profiler: traces and annotations (as `jax.profiler`).",
    "toolkit.errors": "The exception classes of tracing and dtype promotion (as `jax.errors`).",
    "toolkit.dtypes": "Dtype canonicalization, promotion, `float0` and machine limits (as `jax.dtypes`).",
    "toolkit.typing": "`ArrayLike` and `DTypeLike` for annotations (as `jax.typing`).",
    "toolkit.custom_derivatives": "`custom_jvp`, `custom_vjp` and their helpers (as `jax.custom_derivatives`).",
    "toolkit.dlpack": "Arrays from other libraries through DLPack (as `jax.dlpack`).",
    "toolkit.ops": "Segment reductions (as `jax.ops`).",
    "toolkit.sharding": "JAX's `jax.sharding` names: toolkit.shard's objects and the resharding functions.",
    "toolkit.monitoring": "Named events and their listeners; jit's compile-time events (as `jax.monitoring`).",
    "toolkit.ffi": "Calling C++ through XLA's typed foreign-function interface (as `jax.ffi`).",
    "toolkit.refs": "Mutable array references: `new_ref`, `Ref`, `freeze`, discharged by `jit` (as `jax.new_ref`).",
    "toolkit.ref": "JAX's `jax.ref` names: `Ref`, `get`, `set`, `swap`, `addupdate`, ... (see `toolkit.refs`).",
    "toolkit.memory": "The memory-space enum `Space` and its memory kinds (as `jax.memory`).",
    "toolkit.custom_batching": "`custom_vmap` and `sequential_vmap`: functions with their own vmap rule (as `jax.custom_batching`).",
}


# Packages whose API lives in their submodules (toolkit.ir.builders, toolkit.lab.measurement, ...): their page has a
# section per public submodule (a file not starting with ``_``).
PACKAGES_BY_SUBMODULE = ("toolkit.ir", "toolkit.lab", "toolkit.scipy")


def page_name(module: str) -> str:
    """The file name of ``module``'s page: ``toolkit.export`` -> ``toolkit.export.md``."""
    return f"{module}.md"


def public_names(module: ModuleType) -> list[str]:
    """``module.__all__``, or its names not starting with ``_`` that are not modules, sorted; only toolkit's own
    functions and classes (and values)."""
    names = getattr(module, "__all__", None)
    if names is None:
        # dir(), not vars(): toolkit's names load on first use (toolkit/__init__.py's __dir__ loads them all)
        names = [name for name in dir(module)
                 if not name.startswith("_") and not inspect.ismodule(getattr(module, name)) and name != "annotations"]
    # Other libraries' functions and classes a module imports or re-exports (numpy's dtypes, jaxlib's HloSharding,
    # typing's names) are documented by those libraries, not here.
    return sorted({name for name in names if _defined_in_toolkit_or_value(getattr(module, name))})


def _defined_in_toolkit_or_value(value: object) -> bool:
    if inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value):
        owner = getattr(value, "__module__", "") or ""
        return owner == "toolkit" or owner.startswith("toolkit.")
    return not callable(value) or type(value).__module__.startswith("toolkit")


@functools.lru_cache(maxsize=None)
def _is_submodule(package: str, name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):  # package is a plain module: no submodules
        return False


@functools.lru_cache(maxsize=None)
def _imported_names(module_name: str) -> dict[str, tuple[str, str]]:
    """``{name: (source module, name there)}`` for the ``from X import name`` statements of a toolkit module."""
    module = importlib.import_module(module_name)
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return {}
    package = module_name if hasattr(module, "__path__") else module_name.rpartition(".")[0]
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                parts = package.split(".")
                source = ".".join(parts[: len(parts) - node.level + 1] + ([source] if source else []))
            for alias in node.names:
                found[alias.asname or alias.name] = (source, alias.name)
    return found


@functools.lru_cache(maxsize=None)
def shadowed_by_submodule(module_name: str, name: str) -> bool:
    """Whether reading the source (as mkdocstrings does) finds a submodule where Python finds ``name``.

    ``toolkit.shard_map`` is a function at run time (``toolkit/__init__.py`` imports it over the submodule of the
    same name), and ``toolkit.vjp`` comes ``from toolkit.ad import vjp``, where ``toolkit/ad/vjp.py`` is a
    module too; static analysis resolves both to the module. Such names get a directive of their own, by the
    path where they are defined (:func:`render_page`).
    """
    module = importlib.import_module(module_name)
    if not (inspect.isfunction(getattr(module, name, None)) or inspect.isclass(getattr(module, name, None))):
        return False  # a submodule or a value is what the source says it is
    if _is_submodule(module_name, name):
        return True
    source, original = _imported_names(module_name).get(name, ("", ""))
    return source.startswith("toolkit") and source != module_name and shadowed_by_submodule(source, original)


def _directive(module_name: str, heading_level: int) -> str:
    module = importlib.import_module(module_name)
    names = [name for name in public_names(module) if not shadowed_by_submodule(module_name, name)]
    members = "".join(f"        - {name}\n" for name in names) if names else ""
    text = (f"::: {module_name}\n"
            f"    options:\n"
            f"      heading_level: {heading_level}\n"
            f"      show_root_heading: {'true' if heading_level > 1 else 'false'}\n"
            + (f"      members:\n{members}" if names else "      members: false\n"))
    for name in public_names(module):
        if shadowed_by_submodule(module_name, name):
            value = getattr(module, name)
            text += (f"\n::: {value.__module__}.{value.__qualname__}\n"
                     f"    options:\n"
                     f"      heading_level: {heading_level + 1}\n"
                     f"      show_root_full_path: false\n")
    return text


def public_submodules(package_name: str) -> list[str]:
    """The modules of a package directory not starting with ``_`` (subpackages included), sorted."""
    package = importlib.import_module(package_name)
    directory = Path(package.__file__).parent
    names = [path.stem for path in directory.glob("*.py") if not path.stem.startswith("_")]
    names += [path.name for path in directory.iterdir()
              if path.is_dir() and (path / "__init__.py").exists() and not path.name.startswith("_")]
    return [f"{package_name}.{name}" for name in sorted(names)]


def render_page(module_name: str, summary: str) -> str:
    """The Markdown of one module's page."""
    text = (f"<!-- Generated by scripts/generate_api_pages.py; do not edit. -->\n"
            f"# `{module_name}`\n\n{summary}\n\n" + _directive(module_name, 2))
    if module_name in PACKAGES_BY_SUBMODULE:
        for submodule in public_submodules(module_name):
            text += "\n" + _directive(submodule, 2)
    return text


def render_index() -> str:
    """The reference's index page: every module with its line."""
    rows = "\n".join(f"| [`{name}`]({page_name(name)}) | {summary} |" for name, summary in PUBLIC_MODULES.items())
    return ("<!-- Generated by scripts/generate_api_pages.py; do not edit. -->\n"
            "# API reference\n\n"
            "One page per public module, generated from the docstrings: every public name with its signature.\n\n"
            "| module | what it is |\n| --- | --- |\n" + rows + "\n")


def expected_pages() -> dict[str, str]:
    """File name -> content of every page of docs/api/."""
    pages = {"index.md": render_index()}
    for name, summary in PUBLIC_MODULES.items():
        pages[page_name(name)] = render_page(name, summary)
    return pages


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) docs/api/; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api/ differs from what would be written")
    args = parser.parse_args(argv)
    pages = expected_pages()
    present = {path.name: path.read_text() for path in API_DIR.glob("*.md")} if API_DIR.exists() else {}
    if args.check:
        stale = sorted(name for name in set(pages) | set(present) if pages.get(name) != present.get(name))
        if stale:
            print(f"docs/api/ is stale ({', '.join(stale)}): run python scripts/generate_api_pages.py",
                  file=sys.stderr)
            return 1
        return 0
    API_DIR.mkdir(parents=True, exist_ok=True)
    for name in set(present) - set(pages):
        (API_DIR / name).unlink()
    for name, text in pages.items():
        (API_DIR / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
