"""Lowering traced programs to StableHLO: the driver and one rule per primitive.

Importing this package registers every rule in ``toolkit/lowering/rules/``.
"""

from toolkit.lowering.lower import RuleContext, lower_program  # noqa: F401
from toolkit.lowering.registry import register_lowering  # noqa: F401
from toolkit.lowering import rules  # noqa: F401,E402
