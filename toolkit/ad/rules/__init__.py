"""Differentiation rules, one module per ``toolkit/lax`` family; importing a module attaches its rules
(``prim.jvp``, ``prim.transpose``, ``toolkit.ad.vjp.VJP_RULES``) to that family's primitives."""

from toolkit.ad.rules import (  # noqa: F401
    control_flow, convolution, custom_call, elementwise, indexing, linalg, parallel, reductions, sharding, sorting,
    structural, windowed,
)
