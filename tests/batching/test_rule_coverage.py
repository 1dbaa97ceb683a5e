"""Every primitive has a batching rule, or a written reason why it cannot be batched."""

import toolkit
import toolkit.export
import toolkit.shard_map  # noqa: F401
from toolkit.batching import BATCHING_RULES, UNBATCHABLE
from toolkit.core.primitive import PRIMITIVES


def test_every_primitive_has_a_batching_rule_or_a_reason():
    missing = sorted(name for name, prim in PRIMITIVES.items() if prim not in BATCHING_RULES)
    assert not missing, f"primitives without a batching rule (add one in toolkit/batching/rules/): {missing}"


def test_unbatchable_primitives_have_reasons():
    for prim, reason in UNBATCHABLE.items():
        assert isinstance(reason, str) and len(reason) > 20, prim
        assert prim.name in PRIMITIVES


def test_rules_are_keyed_by_registered_primitives():
    for prim in BATCHING_RULES:
        assert PRIMITIVES.get(prim.name) is prim
