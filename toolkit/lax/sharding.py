"""``with_sharding_constraint``: fix the layout of an intermediate value under SPMD."""

from __future__ import annotations

from typing import Any

from toolkit.core import tree_util
from toolkit.core.avals import ShapedArray
from toolkit.core.primitive import Primitive


def _constraint_rule(x: ShapedArray, *, sharding: Any) -> ShapedArray:
    sharding.shard_shape(x.shape)  # raises a ValueError naming the dimension that does not fit
    return x


sharding_constraint_p = Primitive("sharding_constraint", shape_rule=_constraint_rule)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (a pytree of arrays) constrained to ``shardings`` (one sharding or a matching pytree).

    Inside ``jit`` this becomes a ``custom_call @Sharding`` carrying ``mhlo.sharding``, which XLA's
    partitioner must respect; outside ``jit`` it is a ``device_put``.
    """
    from toolkit.shard import Sharding
    leaves, tree = tree_util.tree_flatten(x)
    if isinstance(shardings, Sharding):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf, sharding_tree = tree_util.tree_flatten(shardings, is_leaf=lambda s: isinstance(s, Sharding))
        if sharding_tree != tree:
            raise ValueError(f"with_sharding_constraint: the shardings' structure {sharding_tree} does not match "
                             f"the value's {tree}")
    for s in per_leaf:
        if not isinstance(s, Sharding):
            raise TypeError(f"with_sharding_constraint expects toolkit.shard shardings, got {type(s).__name__}")
    return tree_util.tree_unflatten(tree, [sharding_constraint_p.bind(leaf, sharding=s)
                                           for leaf, s in zip(leaves, per_leaf)])
