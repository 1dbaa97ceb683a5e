"""``with_sharding_constraint``: fix the layout of an intermediate value under SPMD.

The same primitive serves ``toolkit.reshard``: on a mesh with Explicit axes
its result's type is the constraint's sharding (see ``toolkit.shard.explicit``).
"""

from __future__ import annotations

from typing import Any

from toolkit.core import sharding_types, pytrees
from toolkit.core.avals import ShapedArray, is_static_shape
from toolkit.core.families import Family
from toolkit.shard.resolve import is_sharding_leaf, resolve_sharding
from toolkit.shard.sharding import Sharding

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("sharding")


def _constraint_rule(x: ShapedArray, *, sharding: Any) -> ShapedArray:
    sharding.shard_shape(x.shape)  # raises a ValueError naming the dimension that does not fit
    typed = sharding_types.type_sharding(sharding, len(x.shape))
    if typed is None and x.sharding is None:
        return x
    return x.update(sharding=typed)


sharding_constraint_p = family.primitive("sharding_constraint", shape_rule=_constraint_rule)


def _device_put_rule(x: ShapedArray, *, device: Any) -> ShapedArray:
    if not isinstance(device, Sharding):
        return x  # a device: the value's type says nothing of devices
    if is_static_shape(x.shape):
        device.shard_shape(x.shape)  # JAX's check that the sharding divides the shape (a ValueError)
    typed = sharding_types.type_sharding(device, len(x.shape))
    return x if typed is None else x.update(sharding=typed)


#: ``toolkit.device_put`` of a traced value (JAX's ``device_put_p`` inside ``jit``): the value itself — it lowers
#: to nothing, as JAX's does on CPU — but a sharding's devices join the computation's device assignment
#: (``toolkit/sharding_plan.py``), on an Explicit mesh its sharding becomes the value's type, and a memory kind
#: (a sharding's, or a ``toolkit.memory.Space`` as ``device``) is the memory the results made from it are in.
device_put_p = family.primitive("device_put", shape_rule=_device_put_rule)


@family.function(binds=(sharding_constraint_p,))
def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (a pytree of arrays) constrained to ``shardings`` (one sharding or a matching pytree).

    Shardings may be bare ``PartitionSpec``s under ``toolkit.set_mesh``. Inside
    ``jit`` this becomes a ``custom_call @Sharding`` carrying ``mhlo.sharding``
    (or ``sdy.sharding_constraint``), which XLA's partitioner must respect;
    outside ``jit`` it is a ``device_put``. On a value whose type is
    explicitly sharded over an all-Explicit mesh it only asserts the sharding
    (as in JAX): use ``toolkit.reshard`` to change it.
    """
    leaves, tree = pytrees.tree_flatten(x)
    if is_sharding_leaf(shardings) and shardings is not None:
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf, sharding_tree = pytrees.tree_flatten(shardings, is_leaf=is_sharding_leaf)
        if sharding_tree != tree:
            raise ValueError(f"with_sharding_constraint: the shardings' structure {sharding_tree} does not match "
                             f"the value's {tree}")
    per_leaf = [resolve_sharding(s, "with_sharding_constraint") for s in per_leaf]
    for s in per_leaf:
        if not isinstance(s, Sharding):
            raise TypeError(f"with_sharding_constraint expects toolkit.shard shardings, got {type(s).__name__}")
    return pytrees.tree_unflatten(tree, [_constrain(leaf, s) for leaf, s in zip(leaves, per_leaf)])


def _constrain(x: Any, sharding: Any) -> Any:
    aval: Any = getattr(x, "aval", None)  # a ShapedArray whenever it has a sharding
    current = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    if current is not None and mesh is not None and all(t.name == "Explicit" for t in mesh.axis_types):
        wanted = sharding_types.type_sharding(sharding, len(aval.shape))
        if wanted != current:
            raise AssertionError(
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The "
                f"array sharding: {current.spec} did not match the sharding provided: "
                f"{None if wanted is None else wanted.spec}. Please use `toolkit.reshard` to shard your input to "
                "the sharding you want.")
    return sharding_constraint_p.bind(x, sharding=sharding)

