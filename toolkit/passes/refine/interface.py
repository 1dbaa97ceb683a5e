"""What ``toolkit-refine-shapes``' per-op retyping offers the per-form rewrites.

The rewrites of dynamic ops and custom calls (:mod:`.dynamic_ops`,
:mod:`.custom_calls`) live beside the retyping (:class:`.retyping.OpRetyping`),
not in it; they see the running refinement only through this protocol, so
each can be read alone.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from jaxlib.mlir import ir


class Refinement(Protocol):
    """The running refinement of one module, as the rewrites see it."""

    #: True for ``mode=jax`` (dynamic forms become static ops), False for ``mode=stablehlo``.
    jax_mode: bool

    def constant(self, value: ir.Value) -> np.ndarray | None:
        """The value of ``value`` if it is an integer constant (numpy), else None."""

    def refine_value(self, value: ir.Value, shape: list[int], op: ir.Operation) -> bool:
        """Give ``value`` the sizes in ``shape`` (-1 = keep); True if its type changed.

        Fails the pass, naming ``op``, when ``shape`` contradicts the current type.
        """

    def set_type(self, value: ir.Value, new_type: ir.Type) -> bool:
        """Refine ``value``'s type with the sizes known in ``new_type``; True if it changed."""

    def function(self, name: str) -> ir.Operation | None:
        """The module's ``func.func`` called ``name``, if any (erased at the end if private and unused)."""
