"""``jax.tree``: the pytree functions under short names (``toolkit.tree.map``, ``toolkit.tree.leaves``, ...).

Each is the ``toolkit.tree_util`` function of the longer name (``map`` is
``tree_util.tree_map``); ``static`` declares a dataclass field that
``tree_util.register_dataclass`` keeps out of the leaves.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from toolkit.tree_util import (
    tree_all as all,  # noqa: A004  (jax.tree's names shadow builtins on purpose)
    tree_broadcast as broadcast,
    tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    tree_map as map,  # noqa: A004
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_reduce_associative as reduce_associative,
    tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path",
           "reduce", "reduce_associative", "static", "structure", "transpose", "unflatten"]


def static(**kwargs: Any) -> Any:
    """A ``dataclasses.field`` marked static: ``register_dataclass`` puts it in the treedef, not the leaves.

    Takes ``dataclasses.field``'s arguments; ``metadata`` is kept and ``static=True`` added.
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
