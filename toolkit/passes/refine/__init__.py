"""Helpers of ``toolkit-refine-shapes``: constant folding and per-op shape rules.

* :mod:`toolkit.passes.refine.folding` — numpy evaluation of integer
  "dimension arithmetic" ops whose operands are all constants.
* :mod:`toolkit.passes.refine.rules` — result shapes of StableHLO/CHLO ops from
  their operand types, attributes and constant operands.
"""
