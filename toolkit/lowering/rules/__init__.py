"""Lowering rules, one module per primitive family (``toolkit/lax/<family>.py`` -> ``<family>.py`` here).

``LOWERINGS.lookup`` imports a family's module the first time one of its primitives is lowered
(``toolkit/core/families.py``); nothing here imports them.
"""
