"""Every public function has a docstring: the names the API reference shows (scripts/generate_api_pages.py).

Public: the names of each public module's page (its ``__all__``, or its names not starting with ``_``; for
toolkit.ir, toolkit.lab and toolkit.scipy also their submodules'), when toolkit defines them; for each public class
defined in toolkit, its own public methods and properties (inherited ones are checked on the class defining them).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import generate_api_pages  # noqa: E402  (scripts/ is not a package)


def _public_modules() -> list[str]:
    modules = list(generate_api_pages.PUBLIC_MODULES)
    for package in generate_api_pages.PACKAGES_BY_SUBMODULE:
        modules += generate_api_pages.public_submodules(package)
    return modules


def _own(value: object) -> bool:
    if isinstance(value, property):
        value = value.fget
    return (getattr(value, "__module__", None) or "").startswith("toolkit")


def _has_doc(value: object) -> bool:
    doc = getattr(value, "__doc__", None)
    if inspect.isclass(value):
        doc = value.__dict__.get("__doc__")  # a class's own, not its base's
    return bool(doc and doc.strip())


def _members(cls: type) -> list[tuple[str, object]]:
    """The public methods and properties ``cls`` itself defines (dataclass fields and constants are not)."""
    out = []
    fields = getattr(cls, "__dataclass_fields__", {})
    for name, attribute in vars(cls).items():
        if name.startswith("_") or name in fields:
            continue
        if isinstance(attribute, property):
            out.append((name, attribute))  # its doc: the getter's, or property(..., doc=...)
        elif isinstance(attribute, (staticmethod, classmethod)):
            out.append((name, attribute.__func__))
        elif inspect.isfunction(attribute):
            out.append((name, attribute))
    return out


def undocumented() -> list[str]:
    """``module.name`` (``module.Class.method``) of every public function, class, method without a docstring."""
    missing: list[str] = []
    seen: set[int] = set()
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in generate_api_pages.public_names(module):
            value = getattr(module, name)
            if not (inspect.isfunction(value) or inspect.isclass(value)) or not _own(value) or id(value) in seen:
                continue
            seen.add(id(value))
            if not _has_doc(value):
                missing.append(f"{module_name}.{name}")
            if inspect.isclass(value):
                for member, function in _members(value):
                    if function is not None and _own(function) and id(function) not in seen:
                        seen.add(id(function))
                        if not _has_doc(function):
                            missing.append(f"{module_name}.{name}.{member}")
    return sorted(missing)


def test_every_public_function_has_a_docstring():
    missing = undocumented()
    assert not missing, (f"{len(missing)} public functions/classes/methods without a docstring (say what it does "
                         f"and its contract):\n  " + "\n  ".join(missing))


def test_the_check_sees_what_it_should():
    """The check would catch a missing docstring: it walks functions, classes and their methods."""
    modules = _public_modules()
    assert "toolkit.numpy" in modules and "toolkit.lab.measurement" in modules
    import toolkit.export

    members = dict(_members(toolkit.export.Exported))
    assert "serialize" in members and "call" in members
    assert _has_doc(toolkit.export.Exported.serialize)

    class Bare:
        def method(self):
            pass

    assert not _has_doc(Bare) and not _has_doc(Bare.method)


@pytest.mark.parametrize("name", ["toolkit.jit", "toolkit.numpy.sum", "toolkit.lax.slice", "toolkit.export.export"])
def test_key_entry_points_say_what_they_do(name):
    module, _, attribute = name.rpartition(".")
    doc = inspect.getdoc(getattr(importlib.import_module(module), attribute))
    assert doc and len(doc) > 20, name
