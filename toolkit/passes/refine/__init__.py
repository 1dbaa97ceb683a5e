"""Helpers of ``toolkit-refine-shapes`` (the driver is :mod:`toolkit.passes.refine_shapes`).

* :mod:`.folding` — numpy evaluation of integer "dimension arithmetic" ops
  whose operands are all constants.
* :mod:`.rules` — result shapes of StableHLO/CHLO ops from their operand
  types, attributes and constant operands.
* :mod:`.types` — static checks and merging a known shape into a type.
* :mod:`.dynamic_ops` — StableHLO's dynamic ops to their static forms (mode=jax).
* :mod:`.custom_calls` — custom calls: shape operands, JAX's ``stablehlo.dynamic_*`` targets.
* :mod:`.diagnostics` — failure messages naming the op, its location and operand values.
* :mod:`.interface` — what the driver offers the rewrites (:class:`.interface.Refinement`).
"""
