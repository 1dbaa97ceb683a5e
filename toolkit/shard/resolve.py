"""One place that turns what users pass as a sharding into a ``Sharding``.

Under ``toolkit.set_mesh(mesh)`` a bare ``PartitionSpec`` means
``NamedSharding(mesh, spec)`` wherever a sharding is accepted
(``device_put``, ``with_sharding_constraint``, ``reshard``, ``jit``'s
``in_shardings``/``out_shardings``); under ``use_abstract_mesh(abstract)`` alone
(no concrete mesh) it means ``NamedSharding(abstract, spec)``, a type to trace
with, as in JAX; outside any mesh it is an error naming ``set_mesh``, as in JAX.

Example::

    >>> with set_mesh(mesh):
    ...     resolve_sharding(P("x"), "device_put")
    NamedSharding(mesh=Mesh('x': 2, 'y': 4, ...), spec=PartitionSpec('x',))
"""

from __future__ import annotations

from typing import Any, Literal

from toolkit.core import pytrees
from toolkit.shard.mesh import AbstractMesh, AxisType, Mesh, get_abstract_mesh, get_mesh
from toolkit.shard.named_sharding import NamedSharding
from toolkit.shard.partition_spec import PartitionSpec
from toolkit.shard.sharding import Sharding


def is_sharding_leaf(x: Any) -> bool:
    """Leaves of a pytree of shardings: None, a ``Sharding`` or a ``PartitionSpec``."""
    return x is None or isinstance(x, (Sharding, PartitionSpec))


#: Which abstract mesh of ``use_abstract_mesh`` a bare ``PartitionSpec`` may mean when no concrete mesh is set:
#: ``"any"`` non-empty one (JAX's ``canonicalize_sharding``, ``with_sharding_constraint``, ``reshard``),
#: ``"explicit"`` one with an Explicit axis (JAX's ``get_ctx_mesh``, which jit's shardings read), ``"never"``
#: (JAX's ``device_put``, which needs devices: ``get_concrete_mesh``).
AbstractUse = Literal["any", "explicit", "never"]


def abstract_context(abstract_use: AbstractUse) -> AbstractMesh | None:
    """The abstract mesh of ``use_abstract_mesh`` that ``abstract_use`` lets a spec mean, or None."""
    if abstract_use == "never":
        return None
    abstract = get_abstract_mesh()
    if abstract.empty or (abstract_use == "explicit" and AxisType.Explicit not in abstract.axis_types):
        return None
    return abstract


def abstract_only_context() -> AbstractMesh | None:
    """The abstract mesh of ``use_abstract_mesh`` when it is the only mesh in context and has an Explicit axis
    (JAX's ``get_ctx_mesh``: only then does jit run over it, and eager ops are refused; an all-Auto one is
    ignored), else None."""
    return None if get_mesh() is not None else abstract_context("explicit")


def spec_context_mesh(abstract_use: AbstractUse = "any") -> Mesh | AbstractMesh | None:
    """The mesh a bare ``PartitionSpec`` is over: the concrete mesh of ``set_mesh``, else the abstract mesh of
    ``use_abstract_mesh`` as ``abstract_use`` allows (see :data:`AbstractUse`), else None.

    A concrete mesh wins even when ``use_abstract_mesh`` changed the abstract one inside it: toolkit's
    shardings name devices, which only the concrete mesh has.
    """
    mesh = get_mesh()
    if mesh is not None and not mesh.empty:
        return mesh
    return abstract_context(abstract_use)


def resolve_sharding(spec_or_sharding: Any, what: str, no_mesh_error: type[Exception] = RuntimeError,
                     abstract_use: AbstractUse = "any") -> Any:
    """``spec_or_sharding`` as a ``Sharding`` (None stays None).

    A ``PartitionSpec`` becomes a ``NamedSharding`` over the current mesh (:func:`spec_context_mesh`: the
    concrete one, else the abstract one of ``use_abstract_mesh`` as ``abstract_use`` allows); a
    ``NamedSharding`` over an ``AbstractMesh`` gets the current concrete mesh's devices, and stays abstract when
    only an abstract mesh ``abstract_use`` allows is in context (JAX types a trace over it; lowering it then
    needs ``platforms``). ``what`` names the caller in errors (``"device_put"``, ``"in_shardings"``...). A bare
    ``PartitionSpec`` without a mesh raises ``no_mesh_error``: JAX's type for the caller (``RuntimeError`` for
    jit's shardings and ``with_sharding_constraint``, ``ValueError`` for ``device_put``, ``reshard`` and
    ``out_sharding=``).
    """
    if spec_or_sharding is None:
        return None
    if isinstance(spec_or_sharding, PartitionSpec):
        context = spec_context_mesh(abstract_use)
        if context is None:
            raise no_mesh_error(
                f"{what} was given the PartitionSpec {spec_or_sharding}, which needs a mesh in context: set one with "
                "`with toolkit.set_mesh(mesh):` (or pass a NamedSharding instead of a bare PartitionSpec)")
        return NamedSharding(context, spec_or_sharding)
    if isinstance(spec_or_sharding, NamedSharding) and isinstance(spec_or_sharding.mesh, AbstractMesh):
        mesh = get_mesh()
        if mesh is None and abstract_context(abstract_use) is not None:
            return spec_or_sharding  # only an abstract mesh in context: the sharding is a type, as in JAX
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
    """:func:`resolve_sharding` on every leaf of a pytree of jit's shardings/specs (None stays None).

    As JAX's jit, an abstract mesh alone gives specs a meaning only when it has an Explicit axis.
    """
    if is_sharding_leaf(tree):
        return resolve_sharding(tree, what, abstract_use="explicit")
    return pytrees.tree_map(lambda s: resolve_sharding(s, what, abstract_use="explicit"), tree,
                            is_leaf=is_sharding_leaf)
