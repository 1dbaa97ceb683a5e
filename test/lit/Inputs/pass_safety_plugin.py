"""Misbehaving and chatty passes for the pass-safety and diagnostics lit tests.

lit-erase-used          ModulePass: op.erase() on every stablehlo.add, used or not
lit-erase-used-pattern  PatternPass: rewriter.erase_op on every stablehlo.add
lit-divide              ModulePass: 1 / 0 in a helper
lit-divide-pattern      PatternPass: 1 / 0 while matching stablehlo.multiply
lit-chatty              ModulePass: a warning at every add, a remark at every multiply
"""

import dataclasses
from typing import ClassVar

from toolkit.ir.walk import ops_named
from toolkit.passes import ModulePass, PatternPass, emit_remark, emit_warning, pattern, register_pass


@register_pass
@dataclasses.dataclass(frozen=True)
class EraseUsedPass(ModulePass):
    name: ClassVar[str] = "lit-erase-used"
    description: ClassVar[str] = "Erase every stablehlo.add with op.erase(), used or not (a bug)."

    def apply(self, op):
        for add in ops_named(op, "stablehlo.add"):
            add.erase()


@pattern("stablehlo.add")
def erase_add(op, rewriter):
    rewriter.erase_op(op)
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class EraseUsedPatternPass(PatternPass):
    name: ClassVar[str] = "lit-erase-used-pattern"
    description: ClassVar[str] = "Erase every stablehlo.add through the rewriter (refused while used)."

    def patterns(self):
        return [erase_add]


def reciprocal_of_zero():
    return 1 / 0  # LINE-DIVIDE-HELPER


@register_pass
@dataclasses.dataclass(frozen=True)
class DividePass(ModulePass):
    name: ClassVar[str] = "lit-divide"
    description: ClassVar[str] = "Raise ZeroDivisionError."

    def apply(self, op):
        reciprocal_of_zero()


@pattern("stablehlo.multiply")
def divide(op, rewriter):
    return 1 / 0  # LINE-DIVIDE-PATTERN


@register_pass
@dataclasses.dataclass(frozen=True)
class DividePatternPass(PatternPass):
    name: ClassVar[str] = "lit-divide-pattern"
    description: ClassVar[str] = "Raise ZeroDivisionError while matching stablehlo.multiply."

    def patterns(self):
        return [divide]


@register_pass
@dataclasses.dataclass(frozen=True)
class ChattyPass(ModulePass):
    name: ClassVar[str] = "lit-chatty"
    description: ClassVar[str] = "Warn at every stablehlo.add, remark at every stablehlo.multiply."
    modifies_ir: ClassVar[bool] = False

    def apply(self, op):
        for add in ops_named(op, "stablehlo.add"):
            emit_warning(add, "this add could be a multiply")
        for multiply in ops_named(op, "stablehlo.multiply"):
            emit_remark(multiply, f"multiply with {len(multiply.operands)} operands")
