"""Every primitive has every rule — shape, lowering, JVP, batching, sharding — or a written reason why not.

One table per interpretation, keyed by primitive (docs/architecture.md, "Adding a primitive"):
``toolkit.lowering.registry.LOWERINGS``, ``toolkit.ad.registry.JVP_RULES`` (reasons: ``NO_JVP``),
``toolkit.batching.BATCHING_RULES`` (reasons: ``UNBATCHABLE``) and
``toolkit.core.sharding_rules.SHARDING_RULES`` (reasons: ``NO_SHARDING_RULE``). Transpose rules
are only for primitives linear in some operand, and reverse mode of everything else goes through
the JVP, so ``TRANSPOSE_RULES``/``VJP_RULES`` are checked to hold registered primitives only.
"""

import json
import subprocess
import sys

import pytest

import toolkit
import toolkit.export  # noqa: F401  (registers call_exported)
import toolkit.shard_map  # noqa: F401
from toolkit.ad.registry import JVP_RULES, NO_JVP, TRANSPOSE_RULES, VJP_RULES
from toolkit.batching import BATCHING_RULES, UNBATCHABLE
from toolkit.core.primitive import PRIMITIVES
from toolkit.core.sharding_rules import NO_SHARDING_RULE, SHARDING_RULES
from toolkit.lowering.registry import LOWERINGS

TABLES = {
    "lowering": (LOWERINGS, {}),
    "jvp": (JVP_RULES, NO_JVP),
    "batching": (BATCHING_RULES, UNBATCHABLE),
    "sharding": (SHARDING_RULES, NO_SHARDING_RULE),
}


@pytest.fixture(scope="module")
def toolkit_primitives():
    """toolkit's own primitives: those a fresh interpreter has after importing toolkit (tests register more)."""
    script = ("import json, toolkit, toolkit.export, toolkit.shard_map\n"
              "from toolkit.core.primitive import PRIMITIVES\n"
              "print(json.dumps(sorted(PRIMITIVES)))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {name: PRIMITIVES[name] for name in json.loads(done.stdout)}


@pytest.mark.parametrize("interpretation", sorted(TABLES))
def test_every_primitive_has_a_rule_or_a_reason(interpretation, toolkit_primitives):
    rules, reasons = TABLES[interpretation]
    unexplained = sorted(name for name, prim in toolkit_primitives.items()
                         if prim not in rules and prim not in reasons)
    assert not unexplained, f"primitives without a {interpretation} rule and without a written reason: {unexplained}"


@pytest.mark.parametrize("interpretation", sorted(TABLES))
def test_reasons_are_written_and_not_stale(interpretation):
    rules, reasons = TABLES[interpretation]
    for prim, reason in reasons.items():
        assert isinstance(reason, str) and len(reason) > 20, (prim, reason)
        assert prim not in rules, f"{prim} has a {interpretation} rule: drop its reason"


def test_every_primitive_has_a_shape_rule():
    assert all(callable(prim.shape_rule) for prim in PRIMITIVES.values())


def test_tables_hold_registered_primitives_only():
    for table in (LOWERINGS, JVP_RULES, TRANSPOSE_RULES, VJP_RULES, BATCHING_RULES, SHARDING_RULES, NO_JVP,
                  UNBATCHABLE, NO_SHARDING_RULE):
        for prim in table:
            assert PRIMITIVES.get(prim.name) is prim, prim


def test_every_primitive_lowers_and_batches(toolkit_primitives):
    # What the rule-coverage paragraph of docs/architecture.md says.
    assert all(prim in LOWERINGS and prim in BATCHING_RULES for prim in toolkit_primitives.values())
