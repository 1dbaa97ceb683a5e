"""``NamedSharding``: a mesh plus a ``PartitionSpec``, and its HLO form.

Lowering to ``HloSharding`` (JAX's convention, so the strings match JAX's):
mesh axes of size 1 are dropped; each array dimension is split by the product
of the axes its spec entry names; axes the spec does not use become one
trailing "replicate" tile dimension. The tile assignment is the mesh's device
positions transposed so that the used axes come in spec order (major first),
followed by the unused axes in mesh order. For example, on a ``(2, 4)`` mesh
``("x", "y")``, ``P("x")`` is ``{devices=[2,1,4]<=[8] last_tile_dim_replicate}``
and ``P(None, "y")`` is ``{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}``.

Example::

    >>> s = NamedSharding(mesh, PartitionSpec("x", "y"))
    >>> str(s._to_xla_hlo_sharding(2))
    '{devices=[2,4]<=[8]}'
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from toolkit.runtime.shardings import HloSharding, OpSharding
from toolkit.shard import hlo as hlo_util
from toolkit.shard.mesh import AbstractMesh, AxisType, Mesh
from toolkit.shard.partition_spec import UNCONSTRAINED, PartitionSpec
from toolkit.shard.sharding import Sharding, check_memory_kind


class DuplicateSpecError(Exception):
    """A spec that maps a mesh axis to more than one dimension (JAX's ``DuplicateSpecError``, an ``Exception``
    that is not a ``ValueError``). ``message``, ``mesh`` and ``pspec`` are JAX's attributes."""

    def __init__(self, message: str, mesh: Any, pspec: Any):
        super().__init__(message)
        self.message, self.mesh, self.pspec = message, mesh, pspec


def check_unique_axes(spec: PartitionSpec, what: str, mesh: Any = None) -> None:
    """:class:`DuplicateSpecError` (JAX's words) if ``spec`` uses a mesh axis in more than one place; ``what``
    names the spec in it (``"NamedSharding spec"``)."""
    names = spec.axis_names_used()
    twice = {n for n in names if names.count(n) > 1}
    if twice:
        shown = ", ".join(sorted(f"`{a}`" for a in twice))
        raise DuplicateSpecError(f"A single {what} specification can map every mesh axis to at most one positional "
                                 f"dimension, but {spec} has duplicate entries for {shown}", mesh, spec)


def check_spec(mesh: Mesh | AbstractMesh, spec: PartitionSpec) -> None:
    """As JAX checks a ``NamedSharding``: :class:`DuplicateSpecError` if ``spec`` uses an axis twice, then
    ``ValueError`` if it names an axis ``mesh`` lacks (JAX's words for both)."""
    check_unique_axes(spec, "NamedSharding spec", mesh)
    for name in spec.axis_names_used():
        if name not in mesh.axis_names:
            raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: {tuple(mesh.axis_names)}.")


def check_rank(spec: PartitionSpec, ndim: int, what: Any) -> None:
    if len(spec) > ndim:
        hint = " For scalars use PartitionSpec()." if ndim == 0 else ""
        raise ValueError(
            f"{what} has {len(spec)} entries but is applied to an array of rank {ndim}; "
            f"dimensions {list(range(ndim, len(spec)))} do not exist.{hint}")


def _entry_axes(entry: Any) -> tuple:
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


class NamedSharding(Sharding):
    """Shard an array over ``mesh`` as ``spec`` says (JAX's ``NamedSharding``).

    Example::

        >>> mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
        >>> s = NamedSharding(mesh, PartitionSpec("x", None))
        >>> s.shard_shape((8, 8))
        (4, 8)
    """

    def __init__(self, mesh: Mesh | AbstractMesh, spec: PartitionSpec | Sequence[Any] = PartitionSpec(), *,
                 memory_kind: str | None = None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding needs a Mesh or AbstractMesh, got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            if spec is None:
                spec = PartitionSpec()
            elif isinstance(spec, (tuple, list)):
                spec = PartitionSpec(*spec)
            else:
                raise TypeError(f"NamedSharding needs a PartitionSpec, got {spec!r}")
        check_spec(mesh, spec)
        if isinstance(mesh, Mesh):  # an abstract mesh has no devices: its kind stays as given (JAX)
            memory_kind = check_memory_kind(mesh._flat_devices_tuple, memory_kind)
        self.mesh = mesh
        self.spec = spec
        self._memory_kind = memory_kind
        self._hlo_cache: dict[int, HloSharding] = {}

    def __repr__(self) -> str:
        memory = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec}{memory})"

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (isinstance(other, NamedSharding) and self.spec == other.spec
                and self._memory_kind == other._memory_kind and self.mesh == other.mesh)

    def __hash__(self) -> int:
        return hash((NamedSharding, self.mesh, self.spec, self._memory_kind))

    # -- devices -----------------------------------------------------------
    def _concrete_mesh(self, what: str) -> Mesh:
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError(f"{what} is not available for a NamedSharding over an AbstractMesh")
        return self.mesh

    @property
    def device_set(self) -> set:
        """The set of the mesh's devices (``ValueError`` on an abstract mesh)."""
        return set(self._concrete_mesh("device_set")._flat_devices_tuple)

    @property
    def _device_assignment(self) -> tuple:
        return self._concrete_mesh("_device_assignment")._flat_devices_tuple

    @property
    def num_devices(self) -> int:
        """The number of devices of the mesh."""
        return self.mesh.size

    @property
    def replicated_axes(self) -> frozenset:
        """The mesh axes the spec does not shard over (the array is replicated along them), as JAX's."""
        return frozenset(self.mesh.axis_names) - frozenset(self.spec.axis_names_used())

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process owns every device of the mesh (``ValueError`` on an abstract mesh)."""
        self._concrete_mesh("is_fully_addressable")
        return super().is_fully_addressable

    @property
    def addressable_devices(self) -> set:
        """The mesh's devices this process owns; an abstract mesh has none (``ValueError``)."""
        self._concrete_mesh("addressable_devices")
        return super().addressable_devices

    def with_memory_kind(self, kind: str) -> "NamedSharding":
        """The same sharding in memory ``kind`` (``"device"``, ``"pinned_host"``, ...)."""
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def update(self, **changes: Any) -> "NamedSharding":
        """A copy with ``mesh``, ``spec`` or ``memory_kind`` replaced."""
        return NamedSharding(changes.pop("mesh", self.mesh), changes.pop("spec", self.spec),
                             memory_kind=changes.pop("memory_kind", self._memory_kind))

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array (the spec splits over no mesh axis of size > 1)."""
        if self.mesh.size == 1:
            return True
        ways = 1
        for entry in self.spec:
            for name in _entry_axes(entry):
                ways *= self.mesh.shape[name]
        return ways == 1

    def check_compatible_aval(self, shape: Sequence[int]) -> None:
        """Raise ``ValueError`` unless the spec fits an array of ``shape``'s rank."""
        check_rank(self.spec, len(shape), f"NamedSharding spec {self.spec}")

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether ``other`` lays out an array of rank ``ndim`` on the same devices in the same way."""
        return super().is_equivalent_to(other, ndim)

    # -- HLO -----------------------------------------------------------------
    def _to_xla_hlo_sharding(self, num_dimensions: int) -> HloSharding:
        cached = self._hlo_cache.get(num_dimensions)
        if cached is None:
            check_rank(self.spec, num_dimensions, f"NamedSharding spec {self.spec}")
            cached = self._hlo_cache[num_dimensions] = _named_to_hlo(self.mesh, self.spec, num_dimensions)
        return cached


def _named_to_hlo(mesh: Mesh | AbstractMesh, spec: PartitionSpec, ndim: int) -> HloSharding:
    # Size-1 axes split nothing; dropping them gives JAX's canonical strings.
    kept = [(name, size, kind) for name, size, kind in zip(mesh.axis_names, mesh.axis_sizes, mesh.axis_types)
            if size != 1]
    position = {name: i for i, (name, _, _) in enumerate(kept)}
    sizes = {name: size for name, size, _ in kept}
    tile_dims = [1] * ndim
    permutation: list[int] = []
    used: set = set()
    for dim, entry in enumerate(spec):
        for name in _entry_axes(entry):
            used.add(name)
            if name in position:
                tile_dims[dim] *= sizes[name]
                permutation.append(position[name])
    if not permutation and not any(kind is AxisType.Manual for _, _, kind in kept):
        return HloSharding.replicate()
    subgroup_types = []
    by_type: dict[Any, list[int]] = {}
    for name, size, kind in kept:
        if name in used:
            continue
        group = OpSharding.Type.MANUAL if kind is AxisType.Manual else OpSharding.Type.REPLICATED
        by_type.setdefault(group, []).append(position[name])
    for group, axes in sorted(by_type.items(), key=lambda item: int(item[0].value)):
        subgroup_types.append(group)
        tile_dims.append(int(np.prod([kept[a][1] for a in axes])))
        permutation.extend(axes)
    return HloSharding.iota_tile(dims=tile_dims, reshape_dims=[s for _, s, _ in kept],
                                 transpose_perm=permutation, subgroup_types=subgroup_types)


def named_sharding_from_hlo(hlo: HloSharding | OpSharding, mesh: Mesh | AbstractMesh, ndim: int,
                            *, memory_kind: str | None = None) -> NamedSharding:
    """The ``NamedSharding`` over ``mesh`` whose HLO form is ``hlo`` (for a rank-``ndim`` array).

    Device positions in ``hlo`` are positions in ``mesh.devices.flat``.
    Raises ``ValueError`` when no ``PartitionSpec`` over ``mesh`` gives ``hlo``
    (HLO shardings are more general than specs).

    Example::

        >>> named_sharding_from_hlo(hlo_sharding_from_text("{devices=[2,4]<=[8]}"), mesh, 2).spec
        PartitionSpec('x', 'y')
    """
    hlo = hlo_util.to_hlo_sharding(hlo)
    if hlo_util.is_replicated(hlo):
        return NamedSharding(mesh, PartitionSpec(), memory_kind=memory_kind)
    partitions, replicas = hlo_util.tile_counts(hlo, ndim)
    axes = [(name, size) for name, size in zip(mesh.axis_names, mesh.axis_sizes) if size != 1]
    if len(axes) > 7:
        raise ValueError(f"cannot search specs over a mesh with {len(axes)} non-trivial axes")
    for order in itertools.permutations(axes):
        spec = _group_axes(order, partitions)
        if spec is None:
            continue
        candidate = NamedSharding(mesh, spec, memory_kind=memory_kind)
        if hlo_util.hlo_equal(candidate._to_xla_hlo_sharding(ndim), hlo):
            return candidate
    raise ValueError(f"HLO sharding {hlo} cannot be written as a PartitionSpec over mesh {dict(mesh.shape)}")


def _group_axes(order: Sequence[tuple[Any, int]], partitions: Sequence[int]) -> PartitionSpec | None:
    entries: list[Any] = []
    remaining = list(order)
    for ways in partitions:
        names, product = [], 1
        while product < ways and remaining:
            name, size = remaining.pop(0)
            names.append(name)
            product *= size
        if product != ways:
            return None
        entries.append(tuple(names) if len(names) > 1 else (names[0] if names else None))
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)
