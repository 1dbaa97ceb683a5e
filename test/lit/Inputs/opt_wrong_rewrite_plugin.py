"""A wrong rewrite for toolkit-opt's --verify-numerics lit test.

opt-subtract-to-add   PatternPass: x - y -> x + y (changes @main's results)
"""

import dataclasses
from typing import ClassVar

from toolkit.ir.builders import build, insert_before
from toolkit.passes import PatternPass, pattern, register_pass


@pattern("stablehlo.subtract")
def subtract_to_add(op, rewriter):
    with insert_before(op):
        new = build("stablehlo.add", list(op.operands), [op.results[0].type])
    rewriter.replace_op(op, new)
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class SubtractToAddPass(PatternPass):
    name: ClassVar[str] = "opt-subtract-to-add"
    description: ClassVar[str] = "Rewrite x - y as x + y (a wrong rewrite, for --verify-numerics tests)."

    def patterns(self):
        return [subtract_to_add]
