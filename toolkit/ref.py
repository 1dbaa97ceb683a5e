"""JAX's ``jax.ref`` namespace: mutable array references (see :mod:`toolkit.refs`)."""

from toolkit.refs import (  # noqa: F401  (the public names of jax.ref)
    AbstractRef, Ref, addupdate, empty_ref, free_ref, freeze, get, new_ref, set, swap)

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "set", "swap"]
