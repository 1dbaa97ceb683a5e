"""Sharding rules of ``toolkit.lax.autodiff``: ``stop_gradient`` keeps its operand's spec.
"""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import autodiff
from toolkit.sharding_rules import spec_algebra


register_sharding_rule(autodiff.stop_gradient_p)(spec_algebra.same_as_operand)
