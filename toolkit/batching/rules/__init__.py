"""Batching rules, one module per primitive family (``toolkit/lax/<family>.py`` -> ``<family>.py`` here).

``BATCHING_RULES.lookup`` imports a family's module the first time one of its primitives is batched
(``toolkit/core/families.py``); nothing here imports them.
"""
