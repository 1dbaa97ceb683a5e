"""Lowering traced programs to StableHLO: the driver and one rule per primitive.

A primitive's rule is in ``toolkit/lowering/rules/<its family>.py``, imported when first needed.
"""

from toolkit.lowering.lower import RuleContext, lower_program  # noqa: F401
from toolkit.lowering.registry import register_lowering  # noqa: F401
