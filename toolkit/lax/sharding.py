"""``with_sharding_constraint``: fix the layout of an intermediate value under SPMD.

The same primitive serves ``toolkit.reshard``: on a mesh with Explicit axes
its result's type is the constraint's sharding (see ``toolkit.shard.explicit``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import sharding_types, pytrees
from toolkit.core.avals import ShapedArray, is_static_shape
from toolkit.core.families import Family
from toolkit.shard.mesh import AxisType, get_abstract_mesh
from toolkit.shard.named_sharding import NamedSharding
from toolkit.shard.partition_spec import UNCONSTRAINED, PartitionSpec
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
    outside ``jit`` it is a ``device_put``. As in JAX, when the context mesh
    (``use_abstract_mesh``'s, else ``set_mesh``'s) has only Explicit axes a
    ``NamedSharding`` only asserts the value's type (``AssertionError`` when
    it differs; the value comes back as is): use ``toolkit.reshard`` to change
    it. Otherwise a ``NamedSharding``'s spec may name only Auto axes
    (``ValueError``); the value keeps its type, its Explicit axes laid out
    with the Auto ones the spec names.
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
    """JAX's checks of one leaf, then the constraint: on an all-Explicit context mesh a ``NamedSharding`` only
    asserts the value's type (``assert_shardings_equal``: ``x`` comes back unchanged), otherwise a
    ``NamedSharding`` may name Auto axes only (``check_shardings_are_auto``)."""
    aval: Any = getattr(x, "aval", None)  # a ShapedArray whenever it has a sharding
    current = getattr(aval, "sharding", None)
    ndim = len(aval.shape) if aval is not None else np.ndim(x)
    context = get_abstract_mesh()  # use_abstract_mesh's, else set_mesh's (JAX's get_abstract_mesh)
    if (isinstance(sharding, NamedSharding) and not context.empty
            and all(t is AxisType.Explicit for t in context.axis_types)):
        _assert_type_matches(current, sharding, ndim)
        return x
    if isinstance(sharding, NamedSharding):
        _check_names_auto_axes(sharding)
        sharding = _with_type_axes(sharding, current, ndim)
    return sharding_constraint_p.bind(x, sharding=sharding)


def constrain_to_jit_sharding(x: Any, sharding: Sharding) -> Any:
    """``x`` (one array) constrained to ``sharding`` as a nested ``jit``'s ``in_shardings``/``out_shardings`` are.

    JAX keeps those as the inner call's shardings, not as ``with_sharding_constraint``, so its Auto-axes rule does
    not apply: an explicitly typed value is only asserted to have a sharding over an all-Explicit mesh's type (an
    ``AssertionError`` otherwise); any other value is constrained, its type becoming the sharding's.
    """
    aval: Any = getattr(x, "aval", None)
    current = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    if current is not None and mesh is not None and all(t is AxisType.Explicit for t in mesh.axis_types):
        wanted = sharding_types.type_sharding(sharding, len(aval.shape))
        if wanted != current:
            raise AssertionError(
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The "
                f"array sharding: {current.spec!r} did not match the sharding provided: "
                f"{None if wanted is None else wanted.spec!r}. Please use `toolkit.reshard` to shard your "
                "input to the sharding you want.")
    return sharding_constraint_p.bind(x, sharding=sharding)


def _padded(spec: Any, ndim: int) -> tuple:
    """``spec``'s entries for a value of rank ``ndim`` (JAX's ``_normalized_spec_for_aval``: padded with None)."""
    return tuple(spec)[:ndim] + (None,) * (ndim - len(spec))


def _assert_type_matches(current: Any, sharding: NamedSharding, ndim: int) -> None:
    """JAX's ``assert_shardings_equal``: every constrained dimension of ``sharding`` is the value's type's (an
    untyped value's type is unsharded); ``UNCONSTRAINED`` dimensions match anything. Meshes are not compared."""
    have = _padded(current.spec, ndim) if current is not None else (None,) * ndim
    want = _padded(sharding.spec, ndim)
    if any(w is not UNCONSTRAINED and h != w for h, w in zip(have, want)):
        raise AssertionError(
            "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The array "
            f"sharding: {PartitionSpec(*have)!r} did not match the sharding provided: {PartitionSpec(*want)!r}. "
            "Please use `toolkit.reshard` to shard your input to the sharding you want.")


def _check_names_auto_axes(sharding: NamedSharding) -> None:
    """JAX's ``check_shardings_are_auto``: outside an all-Explicit context the spec may name Auto axes only (an
    Explicit axis is the value's type, which only ``reshard`` changes)."""
    types = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types))
    if any(types.get(name) is not AxisType.Auto for name in sharding.spec.axis_names_used()):
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of the mesh. "
            f"Got spec={sharding.spec!r} and mesh={sharding.mesh.abstract_mesh}. You probably meant to "
            "use `reshard` API?")


def _with_type_axes(sharding: NamedSharding, current: Any, ndim: int) -> NamedSharding:
    """``sharding`` with the value's type's (Explicit) axes put in front of each dimension's Auto axes, so that the
    constraint keeps the type (``_constraint_rule``) and lays the value out over both, as JAX's lowering of the
    constraint merges them; a dimension the type shards and the spec leaves None or UNCONSTRAINED gets the type's."""
    if current is None or not any(e is not None for e in current.spec):
        return sharding
    if not set(current.spec.axis_names_used()) <= set(sharding.mesh.axis_names):
        return sharding  # a type over another mesh: nothing to merge into this one
    merged: list[Any] = []
    for user, typed in zip(_padded(sharding.spec, ndim), _padded(current.spec, ndim)):
        if typed is None:
            merged.append(user)
            continue
        typed_names = typed if isinstance(typed, tuple) else (typed,)
        user_names = () if user is None or user is UNCONSTRAINED else (
            user if isinstance(user, tuple) else (user,))
        names = typed_names + user_names
        merged.append(names[0] if len(names) == 1 else names)
    return NamedSharding(sharding.mesh, PartitionSpec(*merged), memory_kind=sharding.memory_kind)
