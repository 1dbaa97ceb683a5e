"""Every primitive has every rule — shape, lowering, JVP, batching, sharding — or a written reason why not.

One table per interpretation, keyed by primitive (docs/architecture.md, "Adding a primitive"):
``toolkit.lowering.registry.LOWERINGS``, ``toolkit.ad.registry.JVP_RULES`` (reasons: ``NO_JVP``),
``toolkit.batching.BATCHING_RULES`` (reasons: ``UNBATCHABLE``) and
``toolkit.core.sharding_rules.SHARDING_RULES`` (reasons: ``NO_SHARDING_RULE``). Transpose rules
are only for primitives linear in some operand, and reverse mode of everything else goes through
the JVP, so ``TRANSPOSE_RULES``/``VJP_RULES`` are checked to hold registered primitives only.
"""

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


@pytest.mark.parametrize("interpretation", sorted(TABLES))
def test_every_primitive_has_a_rule_or_a_reason(interpretation):
    rules, reasons = TABLES[interpretation]
    unexplained = sorted(name for name, prim in PRIMITIVES.items() if prim not in rules and prim not in reasons)
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


def test_coverage_summary():
    # The numbers the rule-coverage section of docs/architecture.md quotes.
    counts = {name: sum(prim in rules for prim in PRIMITIVES.values()) for name, (rules, _) in TABLES.items()}
    assert counts["lowering"] == len(PRIMITIVES) and counts["batching"] == len(PRIMITIVES)
