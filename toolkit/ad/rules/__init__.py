"""Differentiation rules, one module per primitive family (``toolkit/lax/<family>.py`` -> ``<family>.py`` here).

A module attaches its family's rules in the tables of ``toolkit/ad/registry.py`` (``JVP_RULES``,
``TRANSPOSE_RULES``, ``VJP_RULES``), always by assigning ``TABLE[prim] = rule`` (or the ``defjvp`` /
``deflinear`` / ``zero_tangent_jvp`` helpers of ``ad/jvp.py``, which do the same). The tables import a
family's module the first time one of its primitives is differentiated (``toolkit/core/families.py``).
"""
