"""Differentiation rules, one module per ``toolkit/lax`` family; importing a module attaches its rules
to that family's primitives in the tables of ``toolkit/ad/registry.py`` (``JVP_RULES``,
``TRANSPOSE_RULES``, ``VJP_RULES``), always by assigning ``TABLE[prim] = rule`` (or the ``defjvp`` /
``deflinear`` / ``zero_tangent_jvp`` helpers of ``ad/jvp.py``, which do the same)."""

from toolkit.ad.rules import (  # noqa: F401
    autodiff, calls, control_flow, convolution, custom_call, elementwise, indexing, linalg, parallel, random_bits, reductions,
    sharding, sorting, structural, windowed,
)
