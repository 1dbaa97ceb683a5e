"""Every primitive has every rule — shape, lowering, JVP, batching, sharding — or a written reason why not.

The map of what exists. One ``RuleTable`` per interpretation, keyed by primitive, filled by the rule module
named after the primitive's family (``toolkit/core/families.py``): ``LOWERINGS``
(``toolkit/lowering/rules/<family>.py``), ``JVP_RULES`` (``toolkit/ad/rules/<family>.py``; reasons:
``NO_JVP``), ``BATCHING_RULES`` (``toolkit/batching/rules/<family>.py``; reasons: ``UNBATCHABLE``) and
``SHARDING_RULES`` (``toolkit/sharding_rules/<family>.py``; reasons: ``NO_SHARDING_RULE``). Transpose rules
are only for primitives linear in some operand, and reverse mode of everything else goes through the JVP,
so ``TRANSPOSE_RULES``/``VJP_RULES`` are checked to hold registered primitives only.

``python tests/test_rule_coverage.py [NAME...]`` prints where everything for a primitive is (its family
file and the file::function of each rule); ``--write`` regenerates ``docs/rule-index.md`` from these tables,
and ``test_the_rule_index_is_current`` fails when it is stale.
"""

from __future__ import annotations

import inspect
import json
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import toolkit
import toolkit.export  # noqa: F401  (defines the call_exported family)
import toolkit.shard_map  # noqa: F401  (defines the shard_map family)
from toolkit import lax
from toolkit.ad.registry import JVP_RULES, NO_JVP, TRANSPOSE_RULES, VJP_RULES
from toolkit.batching import BATCHING_RULES, UNBATCHABLE
from toolkit.core.families import FAMILIES, RULE_TABLES
from toolkit.core.primitive import PRIMITIVES
from toolkit.core.sharding_types import NO_SHARDING_RULE, SHARDING_RULES
from toolkit.lowering.registry import LOWERINGS

ROOT = pathlib.Path(__file__).resolve().parents[1]
INDEX = ROOT / "docs" / "rule-index.md"

TABLES = {
    "lowering": (LOWERINGS, {}),
    "jvp": (JVP_RULES, NO_JVP),
    "batching": (BATCHING_RULES, UNBATCHABLE),
    "sharding": (SHARDING_RULES, NO_SHARDING_RULE),
}

#: Where each family's user functions are exported (``toolkit.lax`` unless said here).
PUBLIC_MODULES = {"shard_map": toolkit, "call_exported": toolkit.export, "decompositions": lax.linalg,
                  "callbacks": lax.callbacks}  # wrapped by toolkit.pure_callback, experimental, debug

#: Primitives with no user-level function in their family's module, and why.
NO_USER_FUNCTION = {
    "call_exported": "bound by Exported.call (a method of the export, not a function of the family)",
    "jit": "bound by toolkit.jit when a jitted function is called inside a trace (toolkit/stages.py)",
    "device_put": "bound by toolkit.device_put of a traced value (toolkit/array.py, above lax)",
    "checkpoint": "bound by toolkit.checkpoint / remat (toolkit/ad/remat.py)",
    "custom_jvp_call": "bound by calling a toolkit.custom_jvp function (toolkit/ad/custom_derivatives.py)",
    "custom_vjp_call": "bound by calling a toolkit.custom_vjp function (toolkit/ad/custom_derivatives.py)",
    "custom_vmap_call": "bound by calling a toolkit.custom_batching.custom_vmap function (toolkit/custom_batching.py)",
    "name": "bound by toolkit.ad.checkpoint_name (toolkit/ad/remat.py)",
    "dimension_size": "internal: a symbolic dimension used as a value (lax.dimension_as_value, numpy's shape "
                      "arithmetic under shape polymorphism); JAX has no public function for it either",
}


def _load_every_rule_module() -> None:
    for table in RULE_TABLES:
        table.load_all()


@pytest.fixture(scope="module")
def toolkit_primitives():
    """toolkit's own primitives: those a fresh interpreter has after importing toolkit (tests register more)."""
    script = ("import json, toolkit, toolkit.export, toolkit.shard_map\n"
              "from toolkit.core.primitive import PRIMITIVES\n"
              "print(json.dumps(sorted(PRIMITIVES)))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    _load_every_rule_module()
    return {name: PRIMITIVES[name] for name in json.loads(done.stdout)}


@pytest.mark.parametrize("interpretation", sorted(TABLES))
def test_every_primitive_has_a_rule_or_a_reason(interpretation, toolkit_primitives):
    rules, reasons = TABLES[interpretation]
    unexplained = sorted(name for name, prim in toolkit_primitives.items()
                         if prim not in rules and prim not in reasons)
    assert not unexplained, f"primitives without a {interpretation} rule and without a written reason: {unexplained}"


@pytest.mark.parametrize("interpretation", sorted(TABLES))
def test_reasons_are_written_and_not_stale(interpretation, toolkit_primitives):
    rules, reasons = TABLES[interpretation]
    for prim, reason in reasons.items():
        assert isinstance(reason, str) and len(reason) > 20, (prim, reason)
        assert prim not in rules, f"{prim} has a {interpretation} rule: drop its reason"


def test_every_primitive_has_a_shape_rule_and_a_family(toolkit_primitives):
    assert all(callable(prim.shape_rule) for prim in toolkit_primitives.values())
    for name, prim in toolkit_primitives.items():
        assert prim.family in FAMILIES and prim in FAMILIES[prim.family].primitives, name


def test_tables_hold_registered_primitives_only(toolkit_primitives):
    for table in (*RULE_TABLES, NO_JVP, UNBATCHABLE, NO_SHARDING_RULE):
        for prim in table:
            assert PRIMITIVES.get(prim.name) is prim, prim


def test_rule_modules_are_named_after_families():
    """A rule module whose name is no family would never be found: catch the typo."""
    helpers = {"__init__", "spec_algebra"}
    for table in RULE_TABLES:
        package = ROOT / table.package.replace(".", "/")
        for path in package.glob("*.py"):
            assert path.stem in FAMILIES or path.stem in helpers, f"{path.relative_to(ROOT)} names no family"


def test_every_primitive_lowers_and_batches(toolkit_primitives):
    # What the rule-coverage paragraph of docs/architecture.md says.
    assert all(prim in LOWERINGS and prim in BATCHING_RULES for prim in toolkit_primitives.values())


def test_every_user_function_is_exported(toolkit_primitives):
    for family in FAMILIES.values():
        public = PUBLIC_MODULES.get(family.name, lax)
        for name, fn in family.functions.items():
            assert getattr(public, name, None) is fn, f"{public.__name__}.{name} is not {family.name}'s user function"


def test_declared_families_export_exactly_their_user_functions(toolkit_primitives):
    from toolkit.lax import elementwise
    assert sorted(elementwise.__all__) == sorted(elementwise.family.functions)


def test_every_primitive_has_a_user_function_or_a_reason(toolkit_primitives):
    missing = [name for name, p in toolkit_primitives.items()
               if not FAMILIES[p.family].functions_of.get(p) and name not in NO_USER_FUNCTION]
    assert not missing, f"primitives without a user function (Family.function(binds=...)) or a reason: {missing}"
    stale = [name for name in NO_USER_FUNCTION if FAMILIES[PRIMITIVES[name].family].functions_of.get(PRIMITIVES[name])]
    assert not stale, f"primitives with a user function listed in NO_USER_FUNCTION: {stale}"


def test_a_new_elementwise_op_gets_every_interpretation():
    """One line in the family file is all: lowering, JVP, batching and sharding rules are derived from it."""
    from toolkit.lax import elementwise
    toy_p, toy = elementwise.unary("toy_negate", elementwise.NUMBER, hlo="stablehlo.negate",
                                   derivative=lambda x: -1.0)
    try:
        for table in (LOWERINGS, JVP_RULES, BATCHING_RULES, SHARDING_RULES):
            assert table.lookup(toy_p) is not None, table
        assert elementwise.family.functions["toy_negate"] is toy
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        assert "stablehlo.negate" in toolkit.jit(toy).lower(x).as_text()
        np.testing.assert_array_equal(toolkit.jit(toy)(x), -x)
        np.testing.assert_array_equal(toolkit.grad(lambda v: toy(v).sum())(x), -np.ones_like(x))
        np.testing.assert_array_equal(toolkit.vmap(toy, in_axes=1)(x), -x.T)
        mesh = toolkit.make_mesh((1,), ("x",), axis_types=(toolkit.AxisType.Explicit,))
        with toolkit.set_mesh(mesh):
            typed = toolkit.reshard(x, toolkit.shard.PartitionSpec("x"))
            assert toolkit.typeof(toy(typed)).sharding.spec == toolkit.shard.PartitionSpec("x", None)
    finally:
        elementwise.family.remove(toy_p)
    assert "toy_negate" not in PRIMITIVES and toy_p not in LOWERINGS


# -- the index: where everything for a primitive is ----------------------------------------------

def _where(fn: Any) -> str:
    """``file::function`` of a rule (no line numbers: the index must not go stale with every edit)."""
    fn = inspect.unwrap(fn)
    fn = getattr(fn, "func", fn)  # functools.partial
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        fn = type(fn)  # a callable object: its class
    try:
        path = pathlib.Path(inspect.getsourcefile(fn) or "?").resolve()
    except TypeError:
        return "?"
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    return f"{where}::{getattr(fn, '__qualname__', '?')}"


def _entry(table: Any, reasons: dict, prim: Any) -> str:
    rule = table.get(prim)
    if rule is None:
        return f"— ({reasons[prim]})" if prim in reasons else "—"
    if isinstance(rule, dict):  # lowering: per platform
        return ", ".join(f"{platform or 'any'}: `{_where(r)}`" for platform, r in rule.items())
    if isinstance(rule, tuple):  # VJP: (forward, backward)
        return f"`{_where(rule[0])}`"
    return f"`{_where(rule)}`"


def rule_index(names: list[str] | None = None) -> str:
    """The Markdown index: one section per family, one row per primitive, where each rule is."""
    _load_every_rule_module()
    lines = ["# Where everything is, per primitive", "",
             "Generated by `python tests/test_rule_coverage.py --write` from the rule tables "
             "(`toolkit/core/families.py`); `tests/test_rule_coverage.py` fails when it is stale.", ""]
    for family in FAMILIES.values():
        prims = [p for p in family if names is None or p.name in names]
        if not prims:
            continue
        defined = pathlib.Path(sys.modules[type(family).__module__].__file__ or "")
        first = inspect.getmodule(prims[0].shape_rule)
        src = pathlib.Path(first.__file__).resolve().relative_to(ROOT) if first and first.__file__ else defined
        lines += [f"## `{family.name}` — `{src}`", "",
                  "| primitive | user functions | lowering | JVP | transpose | VJP | batching | sharding |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for p in prims:
            fns = ", ".join(f"`{f}`" for f in family.functions_of.get(p, [])) or "—"
            cells = [_entry(LOWERINGS, {}, p), _entry(JVP_RULES, NO_JVP, p), _entry(TRANSPOSE_RULES, {}, p),
                     _entry(VJP_RULES, {}, p), _entry(BATCHING_RULES, UNBATCHABLE, p),
                     _entry(SHARDING_RULES, NO_SHARDING_RULE, p)]
            lines.append(f"| `{p.name}` | {fns} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def test_the_rule_index_is_current():
    script = f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r}); import test_rule_coverage as t; " \
             "print(t.rule_index(), end='')"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert INDEX.read_text() == done.stdout, "docs/rule-index.md is stale: python tests/test_rule_coverage.py --write"


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--write"]:
        INDEX.write_text(rule_index())
        print(f"wrote {INDEX.relative_to(ROOT)}")
    else:
        print(rule_index(args or None))
