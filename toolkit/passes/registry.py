"""The pass registry: pipeline name -> pass class, loaded lazily.

Built-in Python passes are listed in :data:`_LAZY_PASSES` as
``name -> ("module:Class", description)`` so that ``toolkit-opt`` starts
without importing them; a module is imported the first time one of its passes
is needed. Passes defined elsewhere (a test file, a plugin) register with the
:func:`register_pass` decorator. The C++ passes jaxlib registers are listed in
:data:`CXX_PASSES` with their descriptions; any other name that jaxlib's
pipeline parser accepts is also allowed.

Example::

    from toolkit.passes import register_pass, ModulePass

    @register_pass
    @dataclass(frozen=True)
    class MyPass(ModulePass):
        name: ClassVar[str] = "my-pass"
        description: ClassVar[str] = "Does nothing yet."
        def apply(self, op): ...
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar, overload

from jaxlib.mlir import passmanager

from toolkit.ir.context import shared_context
from toolkit.passes.pass_base import Pass, parse_options

P = TypeVar("P", bound=type[Pass])

#: Built-in Python passes: name -> ("module:ClassName", description).
#: Other helpers add their pass here (one line) to keep startup lazy.
_LAZY_PASSES: dict[str, tuple[str, str]] = {
    "toolkit-op-stats": ("toolkit.passes.op_stats:OpStatsPass",
                         "Count operations per op name and per dialect; print a table or JSON."),
    "toolkit-checks-to-results": ("toolkit.passes.checks_to_results:ChecksToResultsPass",
                                  "Turn check.expect_* custom calls in @main into extra (actual, expected) results."),
    "toolkit-inputs-to-arguments": ("toolkit.passes.checks_to_results:InputsToArgumentsPass",
                                    "Replace `call @inputs()` in @main by arguments of @main (runtime parameters)."),
    "toolkit-simplify": ("toolkit.passes.simplify:SimplifyPass",
                         "Algebraic StableHLO cleanups: x+0, x*1, x-0, transpose/reshape chains, no-op convert/broadcast."),
    "toolkit-sharding-annotate": ("toolkit.passes.sharding_annotate:ShardingAnnotatePass",
                                  "Write argument/result shardings onto @main (mode=gspmd: mhlo.sharding; mode=shardy: sdy)."),
    "toolkit-refine-shapes": ("toolkit.passes.refine_shapes:RefineShapesPass",
                              "Make a shape-polymorphic module static: refine types, fold dimension arithmetic, "
                              "specialize callees, check shape assertions."),
    "toolkit-bind-shapes": ("toolkit.passes.bind_shapes:BindShapesPass",
                            "Set concrete argument types on @main (types=... like stablehlo-refine-arguments)."),
    "toolkit-sharding-report": ("toolkit.passes.sharding_report:ShardingReportPass",
                                "Print a table of every sharded value and its per-device shard shape."),
    "toolkit-platform-specialize": ("toolkit.passes.platform_specialize:PlatformSpecializePass",
                                    "Fold @main's platform index for one platform and keep only its case branches."),
}

#: C++ passes jaxlib 0.10.2 registers (verified to parse by tests).
CXX_PASSES: dict[str, str] = {
    "canonicalize": "Canonicalize operations (folding and canonicalization patterns).",
    "cse": "Eliminate common sub-expressions.",
    "inline": "Inline function calls (no-op for func.call in jaxlib's bindings).",
    "symbol-dce": "Eliminate dead symbols.",
    "sccp": "Sparse conditional constant propagation.",
    "loop-invariant-code-motion": "Hoist loop invariant instructions outside of the loop.",
    "print-op-stats": "Print statistics of operations (C++).",
    "strip-debuginfo": "Strip debug info from all operations.",
    "stablehlo-refine-arguments": "Refine the argument types of @main (option types=...).",
    "stablehlo-refine-shapes": "Refine shapes across a StableHLO program.",
    "stablehlo-legalize-to-vhlo": "Legalize StableHLO to VHLO.",
    "vhlo-to-version": "Convert VHLO to a target version (option target=...).",
    "vhlo-legalize-to-stablehlo": "Legalize VHLO to StableHLO.",
    "stablehlo-compatibility-expander": "Expand new StableHLO ops for older targets.",
    "stablehlo-wrap-in-composite": "Wrap non-composite StableHLO ops in composites.",
    "stablehlo-convert-to-signless": "Convert unsigned integer types to signless.",
    "stablehlo-legalize-to-linalg": "Legalize StableHLO to Linalg.",
    "sdy-propagation-pipeline": "Shardy sharding propagation.",
    "sdy-close-shardings": "Close Shardy tensor shardings and drop replicated axes.",
    "sdy-lift-inlined-meshes": "Lift inlined Shardy meshes to symbols.",
}

_registered: dict[str, type[Pass]] = {}
_lock = threading.Lock()
_plugins_loaded = False
# Bumped whenever a name starts meaning a different class, so compiled code
# that ran the old one is not reused (see default_pipeline.jit_pipeline_generation).
_generation = 0


class UnknownPassError(ValueError):
    """A pipeline names a pass nobody registered."""


class DuplicatePassError(ValueError):
    """A pass was registered under a name another pass (Python or C++) already has."""


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _source_file(cls: type) -> str | None:
    """The real path of the file that defines ``cls``, or None (a class made in a notebook or ``exec``)."""
    filename = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return os.path.realpath(filename) if isinstance(filename, str) else None


def _same_file_alias(existing: type, cls: type) -> bool:
    """True if ``existing`` and ``cls`` are one class of one file imported under two module names.

    ``TOOLKIT_PASS_PLUGINS=my_passes.py`` imports the file as
    ``toolkit_pass_plugin_my_passes``; a script that also says
    ``import my_passes`` runs the same file again as ``my_passes``.
    """
    if existing.__qualname__ != cls.__qualname__:
        return False
    source = _source_file(cls)
    return source is not None and source == _source_file(existing)


def _current_owner(name: str, cls: type[Pass]) -> str | None:
    """Who else holds ``name`` (a description), or None if ``cls`` may take it.

    The same class path (module and qualified name) is the same pass:
    re-importing a module, reloading a plugin or re-running a notebook cell
    registers it again without complaint. So is the same class of the same
    file imported under another module name (a plugin file also imported by
    the script).
    """
    existing = _registered.get(name)
    if existing is not None:
        if _class_path(existing) == _class_path(cls) or _same_file_alias(existing, cls):
            return None
        return f"the Python pass {_class_path(existing)}"
    lazy = _LAZY_PASSES.get(name)
    if lazy is not None:
        return None if lazy[0] == _class_path(cls) else f"the built-in Python pass {lazy[0]}"
    if is_cxx_pass(name):
        return f"the C++ pass '{name}'"
    return None


@overload
def register_pass(cls: P, *, override: bool = False) -> P: ...
@overload
def register_pass(cls: None = None, *, override: bool = False) -> Callable[[P], P]: ...


def register_pass(cls: P | None = None, *, override: bool = False) -> P | Callable[[P], P]:
    """Class decorator: make ``cls`` available under ``cls.name`` in pipelines.

    Use it bare (``@register_pass``) or with options
    (``@register_pass(override=True)``). A name another pass already has —
    a Python pass of another class, or a C++ pass such as ``cse`` — raises
    :class:`DuplicatePassError` unless ``override=True``, which makes the name
    mean ``cls`` from now on. Registering the same class again (same module
    and qualified name: a re-imported module, a re-run notebook cell) just
    replaces it; the same class of the same file under another module name
    (a plugin file the script also imports) is a no-op. The name must be a non-empty pipeline word.
    """
    if cls is None:
        return lambda decorated: register_pass(decorated, override=override)
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name or any(c in name for c in " {}(),"):
        raise ValueError(f"pass class {getattr(cls, '__name__', cls)} needs a pipeline name, got {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Pass)):
        raise TypeError(f"{cls!r} is not a pass class (derive from ModulePass or PatternPass)")
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"pass class {cls.__name__} must be a @dataclass(frozen=True)")
    global _generation
    owner = _current_owner(name, cls)
    if owner is not None and not override:
        raise DuplicatePassError(
            f"cannot register {_class_path(cls)} as pass '{name}': the name is taken by {owner}; "
            "choose another name, or use @register_pass(override=True) to replace it")
    with _lock:
        existing = _registered.get(name)
        if existing is not None and existing is not cls and owner is None \
                and _class_path(existing) != _class_path(cls) and _same_file_alias(existing, cls):
            # The same file under a second module name: the pass is registered already (a no-op,
            # so jit's compiled code stays valid).
            return cls
        # A first registration (a lazy pass imported on first use included)
        # changes no pipeline's meaning; replacing a class does.
        if owner is not None or (existing is not None and existing is not cls):
            _generation += 1
        _registered[name] = cls
    return cls


def registry_generation() -> int:
    """A number that changes whenever a registered name starts meaning another pass class."""
    return _generation


def register_lazy_pass(name: str, target: str, description: str) -> None:
    """Register ``"package.module:ClassName"`` under ``name`` without importing it."""
    with _lock:
        _LAZY_PASSES[name] = (target, description)


def _load_plugins_from_env() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in filter(None, os.environ.get("TOOLKIT_PASS_PLUGINS", "").split(os.pathsep)):
        load_pass_plugin(entry)


def load_pass_plugin(path_or_module: str) -> None:
    """Import a ``.py`` file or a module so that its ``@register_pass`` runs."""
    if path_or_module.endswith(".py"):
        if not os.path.exists(path_or_module):
            raise FileNotFoundError(f"pass plugin not found: {path_or_module}")
        module_name = "toolkit_pass_plugin_" + os.path.splitext(os.path.basename(path_or_module))[0]
        spec = importlib.util.spec_from_file_location(module_name, path_or_module)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        # dataclasses (and typing) look the module up by name while it runs.
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
    else:
        importlib.import_module(path_or_module)


def python_pass_names() -> list[str]:
    """Names of every Python pass, registered or lazily known."""
    _load_plugins_from_env()
    return sorted(set(_registered) | set(_LAZY_PASSES))


def lookup_python_pass(name: str) -> type[Pass] | None:
    """The pass class for ``name``, importing its module if needed; None if not Python."""
    _load_plugins_from_env()
    cls = _registered.get(name)
    if cls is not None:
        return cls
    lazy = _LAZY_PASSES.get(name)
    if lazy is None:
        return None
    module_name, _, class_name = lazy[0].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    with _lock:
        _registered.setdefault(name, cls)
    return _registered[name]


def is_cxx_pass(name: str) -> bool:
    """True if jaxlib's pipeline parser knows ``name`` as a pass or pipeline."""
    if name in CXX_PASSES:
        return True
    return _cxx_parses(name)


_cxx_known: dict[str, bool] = {}


def _cxx_parses(element: str) -> bool:
    cached = _cxx_known.get(element)
    if cached is not None:
        return cached
    with shared_context():
        try:
            passmanager.PassManager.parse(f"builtin.module({element})")
            ok = True
        except ValueError:
            try:
                passmanager.PassManager.parse(f"builtin.module(func.func({element}))")
                ok = True
            except ValueError:
                ok = False
    _cxx_known[element] = ok
    return ok


def _cxx_options(name: str) -> tuple[tuple[str, str, str, str], ...]:
    """Options of a C++ pass with their defaults, read from jaxlib's own printout."""
    with shared_context():
        for text in (f"builtin.module({name})", f"builtin.module(func.func({name}))"):
            try:
                printed = str(passmanager.PassManager.parse(text))
                break
            except ValueError:
                continue
        else:
            return ()
    prefix = f"{name}{{"
    start = printed.find(prefix)
    if start < 0:  # no options, or a pipeline that prints as its passes
        return ()
    depth, end = 0, start + len(prefix) - 1
    for end in range(start + len(prefix) - 1, len(printed)):
        depth += {"{": 1, "}": -1}.get(printed[end], 0)
        if depth == 0:
            break
    options = parse_options(printed[start + len(prefix):end], name)
    return tuple((key, "", value, "") for key, value in options.items())


def unknown_pass_error(name: str) -> UnknownPassError:
    """The error for an unknown name, listing the registered names close to it."""
    candidates = python_pass_names() + list(CXX_PASSES)
    close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.5)
    message = f"unknown pass '{name}'"
    if close:
        message += "; did you mean: " + ", ".join(close) + "?"
    message += " (toolkit-opt --list-passes shows every pass)"
    return UnknownPassError(message)


@dataclasses.dataclass(frozen=True)
class PassInfo:
    """One row of :func:`list_passes`."""

    name: str
    description: str
    kind: str  # "python" or "c++"
    options: tuple[tuple[str, str, str, str], ...] = ()  # (name, type, default, help)


def list_passes(*, load: bool = True) -> list[PassInfo]:
    """Every pass usable in a pipeline, Python and C++, sorted by name.

    With ``load=True`` Python passes are imported to list their options.

    Example::

        >>> [p.name for p in list_passes() if p.kind == "python"][:1]
        ['toolkit-op-stats']
    """
    rows = []
    for name in python_pass_names():
        try:
            cls = lookup_python_pass(name) if load else _registered.get(name)
        except Exception as error:  # a broken pass module must not hide the others
            rows.append(PassInfo(name, f"{_LAZY_PASSES[name][1]} (cannot load: {type(error).__name__}: {error})",
                                 "python"))
            continue
        if cls is not None:
            rows.append(PassInfo(name, cls.description or (cls.__doc__ or "").strip().split("\n")[0],
                                 "python", tuple(cls.option_help())))
        else:
            rows.append(PassInfo(name, _LAZY_PASSES[name][1], "python"))
    rows += [PassInfo(name, text, "c++", _cxx_options(name) if load else ()) for name, text in CXX_PASSES.items()]
    return sorted(rows, key=lambda row: row.name)
