"""One place that turns what users pass as a sharding into a ``Sharding``.

Under ``toolkit.set_mesh(mesh)`` a bare ``PartitionSpec`` means
``NamedSharding(mesh, spec)`` wherever a sharding is accepted
(``device_put``, ``with_sharding_constraint``, ``reshard``, ``jit``'s
``in_shardings``/``out_shardings``); outside a mesh it is an error naming
``set_mesh``, as in JAX.

Example::

    >>> with set_mesh(mesh):
    ...     resolve_sharding(P("x"), "device_put")
    NamedSharding(mesh=Mesh('x': 2, 'y': 4, ...), spec=PartitionSpec('x',))
"""

from __future__ import annotations

from typing import Any

from toolkit.core import pytrees
from toolkit.shard.mesh import AbstractMesh, get_mesh
from toolkit.shard.named_sharding import NamedSharding
from toolkit.shard.partition_spec import PartitionSpec
from toolkit.shard.sharding import Sharding


def is_sharding_leaf(x: Any) -> bool:
    """Leaves of a pytree of shardings: None, a ``Sharding`` or a ``PartitionSpec``."""
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def resolve_sharding(spec_or_sharding: Any, what: str, no_mesh_error: type[Exception] = RuntimeError) -> Any:
    """``spec_or_sharding`` as a ``Sharding`` (None stays None).

    A ``PartitionSpec`` becomes a ``NamedSharding`` over the current mesh; a
    ``NamedSharding`` over an ``AbstractMesh`` gets the current mesh's devices.
    ``what`` names the caller in errors (``"device_put"``, ``"in_shardings"``...). A bare
    ``PartitionSpec`` without a mesh raises ``no_mesh_error``: JAX's type for the caller (``RuntimeError``
    for jit's shardings and ``with_sharding_constraint``, ``ValueError`` for ``device_put``, ``reshard``
    and ``out_sharding=``).
    """
    if spec_or_sharding is None:
        return None
    if isinstance(spec_or_sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh is None or mesh.empty:
            raise no_mesh_error(
                f"{what} was given the PartitionSpec {spec_or_sharding}, which needs a mesh in context: set one with "
                "`with toolkit.set_mesh(mesh):` (or pass a NamedSharding instead of a bare PartitionSpec)")
        return NamedSharding(mesh, spec_or_sharding)
    if isinstance(spec_or_sharding, NamedSharding) and isinstance(spec_or_sharding.mesh, AbstractMesh):
        mesh = get_mesh()
        if mesh is None or mesh.abstract_mesh != spec_or_sharding.mesh:
            raise RuntimeError(
                f"{what} was given a NamedSharding over the abstract mesh {spec_or_sharding.mesh}; it needs the "
                f"matching concrete mesh in context via toolkit.set_mesh (current mesh: {mesh})")
        return NamedSharding(mesh, spec_or_sharding.spec, memory_kind=spec_or_sharding.memory_kind)
    if isinstance(spec_or_sharding, Sharding):
        return spec_or_sharding
    raise TypeError(f"{what} expects toolkit.shard shardings (a Sharding, or a PartitionSpec under set_mesh), "
                    f"got {spec_or_sharding!r}")


def resolve_tree(tree: Any, what: str) -> Any:
    """:func:`resolve_sharding` on every leaf of a pytree of shardings/specs (None stays None)."""
    if is_sharding_leaf(tree):
        return resolve_sharding(tree, what)
    return pytrees.tree_map(lambda s: resolve_sharding(s, what), tree, is_leaf=is_sharding_leaf)
