"""A newcomer's pass, outside toolkit: neg(neg(x)) -> x. Loaded as a plugin."""

import dataclasses
from typing import ClassVar

from toolkit.passes import PatternPass, pattern, register_pass


@pattern("stablehlo.negate")
def negate_negate(op, rewriter):
    # -(-x) -> x
    inner = op.operands[0].owner
    if getattr(inner, "name", None) != "stablehlo.negate":
        return False
    rewriter.replace_op(op, [inner.operands[0]])
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class NegateTwicePass(PatternPass):
    name: ClassVar[str] = "test-negate-twice"
    description: ClassVar[str] = "Remove double negation (test plugin)."

    def patterns(self):
        return [negate_negate]
