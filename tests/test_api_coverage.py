"""toolkit's public names against JAX 0.10.2's, module by module (issue 23, item 5).

JAX's names come from the committed snapshot tests/data/jax_names.json (written by
scripts/snapshot_jax_names.py); this test never imports jax. Every JAX name toolkit lacks must have a written
reason in tests/data/absent_names.toml, so a gap is a decision: the test fails when a name is absent without a
reason, when a reason names something toolkit now has (delete the line), or when it names something JAX lacks.

``python tests/test_api_coverage.py`` prints the coverage table (so does ``pytest -s`` on this file).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pathlib
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from types import ModuleType

DATA = pathlib.Path(__file__).resolve().parent / "data"
SNAPSHOT = DATA / "jax_names.json"
REASONS = DATA / "absent_names.toml"

# JAX modules whose toolkit counterpart has another path; every other jax.X maps to toolkit.X.
MODULE_MAP = {
    "jax": "toolkit",
}

# "lax without primitives": jax.lax's functions, not its ``*_p`` primitive objects (toolkit's are data in
# toolkit/lax/<family>.py, compared by tests/test_rule_coverage.py).
PRIMITIVE_MODULES = ("jax.lax", "jax.lax.linalg")


@dataclass
class ModuleCoverage:
    """One JAX module's names split into the ones toolkit has and the ones it lacks."""

    jax_module: str
    toolkit_module: str
    present: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)

    @property
    def percent(self) -> float:
        total = len(self.present) + len(self.absent)
        return 100.0 * len(self.present) / total if total else 100.0


def load_snapshot() -> dict[str, dict[str, str]]:
    data = json.loads(SNAPSHOT.read_text())
    assert data["jax_version"] == "0.10.2", data["jax_version"]
    return data["modules"]


def load_reasons() -> dict[str, dict[str, str]]:
    """``{jax_module: {name: reason}}`` from the TOML, whose tables map a reason to the names it covers."""
    raw = tomllib.loads(REASONS.read_text())
    out: dict[str, dict[str, str]] = {}
    for module, by_reason in raw.items():
        assert isinstance(by_reason, dict), f"[{module!r}] must be a table of reason = [names]"
        names: dict[str, str] = {}
        for reason, listed in by_reason.items():
            assert reason.strip(), f"an empty reason in [{module!r}]"
            assert isinstance(listed, list), f"[{module!r}] {reason!r}: names must be a list"
            for name in listed:
                assert name not in names, f"{module}.{name} has two reasons: {names[name]!r} and {reason!r}"
                names[name] = reason
        out[module] = names
    return out


def _toolkit_module(path: str) -> ModuleType | None:
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as e:
        if e.name is not None and path.startswith(e.name):
            return None  # the module itself is absent
        raise


def _has(module: ModuleType | None, module_path: str, name: str, kind: str) -> bool:
    if module is None:
        return False
    if kind == "module":
        # A submodule is present when it can be imported (JAX's are attributes because jax imports them;
        # toolkit imports some lazily for start-up time).
        if hasattr(module, name) and isinstance(getattr(module, name), ModuleType):
            return True
        try:
            return importlib.util.find_spec(f"{module_path}.{name}") is not None
        except ModuleNotFoundError:
            return False
    return hasattr(module, name)


def coverage() -> list[ModuleCoverage]:
    """Compare every module of the snapshot with toolkit's counterpart."""
    result = []
    for jax_module, names in load_snapshot().items():
        path = MODULE_MAP.get(jax_module, "toolkit" + jax_module[len("jax"):])
        module = _toolkit_module(path)
        cov = ModuleCoverage(jax_module, path)
        for name, kind in sorted(names.items()):
            if jax_module in PRIMITIVE_MODULES and name.endswith("_p"):
                continue
            (cov.present if _has(module, path, name, kind) else cov.absent).append(name)
        result.append(cov)
    return result


def report(covs: list[ModuleCoverage]) -> str:
    """The coverage table: module, names toolkit has / JAX's names, percent."""
    lines = [f"{'JAX 0.10.2 module':<26} {'toolkit module':<30} {'names':>9} {'coverage':>8}"]
    for cov in covs:
        total = len(cov.present) + len(cov.absent)
        lines.append(f"{cov.jax_module:<26} {cov.toolkit_module:<30} {len(cov.present):>4}/{total:<4} "
                     f"{cov.percent:>7.1f}%")
    present = sum(len(c.present) for c in covs)
    total = sum(len(c.present) + len(c.absent) for c in covs)
    lines.append(f"{'all':<57} {present:>4}/{total:<4} {100.0 * present / total:>7.1f}%")
    return "\n".join(lines)


def test_every_absent_name_has_a_reason() -> None:
    reasons = load_reasons()
    missing = [f"{c.jax_module}.{n}" for c in coverage() for n in c.absent if n not in reasons.get(c.jax_module, {})]
    assert not missing, (f"{len(missing)} JAX names toolkit lacks have no reason in {REASONS.name} "
                         f"(add each under its module with why it is absent): {missing}")


def test_no_reason_for_a_name_toolkit_has() -> None:
    reasons = load_reasons()
    stale = [f"{c.jax_module}.{n}" for c in coverage() for n in c.present if n in reasons.get(c.jax_module, {})]
    assert not stale, f"toolkit now has these; delete their lines from {REASONS.name}: {stale}"


def test_reasons_name_only_jax_names() -> None:
    snapshot = load_snapshot()
    unknown = [f"{m}.{n}" for m, names in load_reasons().items() for n in names
               if m not in snapshot or n not in snapshot[m]
               or (m in PRIMITIVE_MODULES and n.endswith("_p"))]
    assert not unknown, f"{REASONS.name} names what JAX 0.10.2's snapshot does not list (or a primitive): {unknown}"


def test_reasons_file_rejects_a_name_listed_twice(tmp_path: pathlib.Path, monkeypatch) -> None:
    bad = tmp_path / "absent.toml"
    bad.write_text('["jax"]\n"one" = ["pmap"]\n"two" = ["pmap"]\n')
    monkeypatch.setattr(sys.modules[__name__], "REASONS", bad)
    try:
        load_reasons()
    except AssertionError as e:
        assert "two reasons" in str(e)
    else:
        raise AssertionError("a name with two reasons was accepted")


def test_snapshot_covers_the_issue_modules() -> None:
    snapshot = load_snapshot()
    for module in ("jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.random", "jax.nn",
                   "jax.nn.initializers", "jax.tree", "jax.tree_util", "jax.scipy.special"):
        assert module in snapshot and snapshot[module], module


def test_coverage_is_computed_without_jax() -> None:
    # In a fresh interpreter: computing coverage imports toolkit's modules but never jax.
    code = ("import sys; sys.path.insert(0, %r); import test_api_coverage as t; t.coverage(); "
            "assert 'jax' not in sys.modules, 'jax was imported'; print('ok')") % str(pathlib.Path(__file__).parent)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]


def test_print_coverage() -> None:
    print("\n" + report(coverage()))


if __name__ == "__main__":
    print(report(coverage()))
