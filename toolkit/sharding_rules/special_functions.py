"""Sharding rules of ``toolkit.lax.special_functions``: elementwise, so operands' specs agree dimension by
dimension and the result takes them (as ``toolkit/sharding_rules/elementwise.py``)."""

from __future__ import annotations

from typing import Any

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import special_functions as sf
from toolkit.sharding_rules import spec_algebra


def _elementwise_rule(prim: Any):
    def rule(specs_in, avals_in, avals_out, **params):
        spec = spec_algebra.broadcasting(prim.name, specs_in, avals_in)
        return [spec + (None,) * (len(a.shape) - len(spec)) for a in avals_out]
    return rule


@sf.family.derive
def _derive(prim: Any) -> None:
    register_sharding_rule(prim)(_elementwise_rule(prim))
