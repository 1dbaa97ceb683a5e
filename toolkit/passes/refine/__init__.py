"""The parts of ``toolkit-refine-shapes`` (the driver is :mod:`toolkit.passes.refine_shapes`).

* :mod:`.retyping` — each op's result types from its operands; the special forms.
* :mod:`.constants` — which values are integer constants; folding ops into them.
* :mod:`.specialization` — calls and composites refine their callees per key.
* :mod:`.dead_code` — erasing unused pure ops and unreferenced private functions.
* :mod:`.static_check` — ``validate-static-shapes``: nothing dynamic left.

And what they use:

* :mod:`.folding` — numpy evaluation of integer "dimension arithmetic" ops
  whose operands are all constants.
* :mod:`.rules` — result shapes of StableHLO/CHLO ops from their operand
  types, attributes and constant operands.
* :mod:`.types` — static checks and merging a known shape into a type.
* :mod:`.dynamic_ops` — StableHLO's dynamic ops to their static forms (mode=jax).
* :mod:`.custom_calls` — custom calls: shape operands, JAX's ``stablehlo.dynamic_*`` targets.
* :mod:`.traversal` — reading a body's ops cheaply; the functions an op names.
* :mod:`.diagnostics` — failure messages naming the op, its location and operand values.
* :mod:`.interface` — what the retyping offers the rewrites (:class:`.interface.Refinement`).
"""
