"""Sharding rules ("sharding in types"), one module per primitive family.

``toolkit/sharding_rules/<family>.py`` fills ``toolkit.core.sharding_types.SHARDING_RULES`` for the
primitives of that family; the table imports it the first time a typed operand reaches one of them
(``toolkit/core/families.py``). Each rule maps the input specs (tuples, one entry per dimension: None, a
mesh axis name or a tuple of names; unsharded inputs are all None) to one spec per output, following
JAX 0.10's rules in ``jax/_src/lax/``; ``specs.py`` holds the spec algebra several families share.
"""
