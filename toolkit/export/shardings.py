"""Shardings as an ``Exported`` records them: abstract meshes and partition specs.

An exported function remembers, for each flat argument and result, either
nothing (unspecified sharding) or a named sharding over an *abstract* mesh —
axis names, sizes and types, no devices. That is exactly what the wire format
stores (JAX serialization versions 6 and later), so these values are plain,
immutable and hashable, and independent of ``toolkit.shard``'s live objects:
the exporter hands in any named sharding (``as_exported_named_sharding``
normalises duck-typed ones), and ``Exported.in_shardings_jax(mesh)`` turns
them back into ``toolkit.shard.NamedSharding`` over a concrete mesh.

Example::

    >>> mesh = ExportedAbstractMesh((2, 4), ("x", "y"))
    >>> s = ExportedNamedSharding(mesh, ("x", None))
    >>> s.to_hlo_sharding(2)
    {devices=[2,1,4]<=[8] last_tile_dim_replicate}
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Iterable

from toolkit.runtime.shardings import HloSharding, OpSharding
from toolkit.shard import AbstractMesh, AxisType, NamedSharding, PartitionSpec

#: Axis types, as the wire format names them (JAX's ``AxisType`` member names).
AXIS_TYPES = ("Auto", "Explicit", "Manual")

PartitionEntry = Any  # None | str | tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class ExportedAbstractDevice:
    """The kind of device an abstract mesh was made for (JAX's ``AbstractDevice``)."""

    device_kind: str
    num_cores: int | None = None
    platform: str | None = None


@dataclasses.dataclass(frozen=True)
class ExportedAbstractMesh:
    """A device-free mesh: axis sizes, names and types.

    ``axis_types`` defaults to ``"Auto"`` for every axis. The empty mesh
    (no axes) stands for single-device placement.

    >>> ExportedAbstractMesh((8,), ("a",)).size
    8
    """

    axis_sizes: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[str, ...] | None = None
    abstract_device: ExportedAbstractDevice | None = None

    def __post_init__(self) -> None:
        sizes = tuple(int(s) for s in self.axis_sizes)
        names = tuple(str(n) for n in self.axis_names)
        types = ("Auto",) * len(sizes) if self.axis_types is None else tuple(
            _axis_type_name(t) for t in self.axis_types)
        if not (len(sizes) == len(names) == len(types)):
            raise ValueError(f"Mesh axis sizes {sizes}, names {names} and types {types} must have equal lengths.")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh axis names must be distinct, got {names}.")
        if any(s < 1 for s in sizes):
            raise ValueError(f"Mesh axis sizes must be positive, got {sizes}.")
        object.__setattr__(self, "axis_sizes", sizes)
        object.__setattr__(self, "axis_names", names)
        object.__setattr__(self, "axis_types", types)

    @property
    def size(self) -> int:
        """The number of devices: the product of the axis sizes."""
        n = 1
        for s in self.axis_sizes:
            n *= s
        return n

    @property
    def shape(self) -> dict[str, int]:
        """``{axis name: size}``, in the mesh's axis order."""
        return dict(zip(self.axis_names, self.axis_sizes))


def _axis_type_name(t: Any) -> str:
    name = t if isinstance(t, str) else getattr(t, "name", None)
    if name not in AXIS_TYPES:
        raise ValueError(f"Unknown mesh axis type {t!r}; expected one of {AXIS_TYPES}.")
    return name


@dataclasses.dataclass(frozen=True)
class ExportedNamedSharding:
    """A partition spec over an abstract mesh, plus an optional memory kind.

    ``partitions[i]`` says how array dimension ``i`` is split: ``None``
    (not split), one axis name, or a tuple of axis names (major to minor).
    Dimensions past ``len(partitions)`` are not split.
    """

    mesh: ExportedAbstractMesh
    partitions: tuple[PartitionEntry, ...] = ()
    reduced: frozenset[str] = frozenset()
    unreduced: frozenset[str] = frozenset()
    memory_kind: str | None = None

    def __post_init__(self) -> None:
        parts: list[PartitionEntry] = []
        for p in self.partitions:
            if p is None or isinstance(p, str):
                parts.append(p)
            elif isinstance(p, (tuple, list)) and all(isinstance(a, str) for a in p):
                parts.append(None if len(p) == 0 else p[0] if len(p) == 1 else tuple(p))
            else:
                raise ValueError(f"A partition spec entry must be None, an axis name or a tuple of names, got {p!r}.")
        object.__setattr__(self, "partitions", tuple(parts))
        object.__setattr__(self, "reduced", frozenset(self.reduced))
        object.__setattr__(self, "unreduced", frozenset(self.unreduced))
        used = [a for a in _flat_axes(parts)] + sorted(self.reduced) + sorted(self.unreduced)
        unknown = [a for a in used if a not in self.mesh.axis_names]
        if unknown:
            raise ValueError(f"Partition spec uses axes {unknown} not in the mesh axes {self.mesh.axis_names}.")
        if len(set(used)) != len(used):
            raise ValueError(f"Partition spec {self.partitions} uses a mesh axis more than once.")

    def to_hlo_sharding(self, ndim: int) -> Any:
        """The ``HloSharding`` this sharding means for an array of rank ``ndim``.

        Mesh axes of size 1 are ignored; axes the spec does not use replicate
        the array (a trailing replicated tile dimension); ``Manual`` axes and
        ``unreduced`` axes become MANUAL and UNREDUCED subgroups.
        """
        return named_to_hlo_sharding(self, ndim)


def _flat_axes(partitions: Iterable[PartitionEntry]) -> list[str]:
    out: list[str] = []
    for p in partitions:
        if p is None:
            continue
        out.extend((p,) if isinstance(p, str) else p)
    return out


def named_to_hlo_sharding(sharding: ExportedNamedSharding, ndim: int) -> Any:
    """See :meth:`ExportedNamedSharding.to_hlo_sharding`."""
    mesh = sharding.mesh
    if len(sharding.partitions) > ndim:
        raise ValueError(f"Partition spec {sharding.partitions} has more entries than the array rank {ndim}.")
    kept = [i for i, size in enumerate(mesh.axis_sizes) if size != 1]
    names = [mesh.axis_names[i] for i in kept]
    sizes = [mesh.axis_sizes[i] for i in kept]
    assert mesh.axis_types is not None  # ExportedAbstractMesh.__post_init__ fills it in
    types = [mesh.axis_types[i] for i in kept]
    position = {name: i for i, name in enumerate(names)}

    dim_of_axis: dict[str, int] = collections.OrderedDict()
    for dim, p in enumerate(sharding.partitions):
        for axis in _flat_axes([p]):
            if axis in position:
                dim_of_axis[axis] = dim

    special: dict[int, Any] = {}
    for i, t in enumerate(types):
        if t == "Manual":
            special[i] = OpSharding.Type.MANUAL
    for axis in sharding.unreduced:
        if axis in position:
            special[position[axis]] = OpSharding.Type.UNREDUCED

    unused = [(i, size) for i, (name, size) in enumerate(zip(names, sizes)) if name not in dim_of_axis]
    if len(unused) == len(names) and not special:
        return HloSharding.replicate()

    tile_dims = [1] * ndim
    permutation: list[int] = []
    for name, dim in sorted(dim_of_axis.items(), key=lambda item: item[1]):
        tile_dims[dim] *= sizes[position[name]]
        permutation.append(position[name])

    subgroup_types = []
    if unused:
        axes_by_type: dict[Any, list[int]] = collections.defaultdict(list)
        size_by_type: dict[Any, int] = collections.defaultdict(lambda: 1)
        for i, size in unused:
            kind = special.get(i, OpSharding.Type.REPLICATED)
            axes_by_type[kind].append(i)
            size_by_type[kind] *= size
        for kind, axes in sorted(axes_by_type.items(), key=lambda item: int(item[0].value)):
            subgroup_types.append(kind)
            tile_dims.append(size_by_type[kind])
            permutation.extend(axes)
    return HloSharding.iota_tile(dims=tile_dims, reshape_dims=sizes, transpose_perm=permutation,
                                 subgroup_types=subgroup_types)


def hlo_to_named_sharding(hlo: Any, ndim: int) -> ExportedNamedSharding:
    """An equivalent named sharding for a replicated or simply tiled ``HloSharding``.

    Tiled shardings get a mesh with one axis ``_axis_<dim>`` per split
    dimension (plus ``_axis_replicated`` for a trailing replicated tile
    dimension), devices in iota order. Raises ``ValueError`` for anything
    else (transposed or explicit device orders, manual, maximal, tuples).
    """
    if hlo.is_replicated():
        return ExportedNamedSharding(EMPTY_MESH, (None,) * ndim)
    if hlo.is_tiled() and not hlo.is_manual() and not hlo.tuple_elements():
        dims = list(hlo.tile_assignment_dimensions())
        devices = list(hlo.tile_assignment_devices())
        subgroups = list(hlo.subgroup_types())
        replicated_last = hlo.replicate_on_last_tile_dim()
        array_dims = len(dims) - (1 if replicated_last else len(subgroups))
        if devices == list(range(len(devices))) and array_dims == ndim and (
                replicated_last or not subgroups or subgroups == [_replicated_type()]):
            sizes: list[int] = []
            names: list[str] = []
            partitions: list[PartitionEntry] = []
            for dim, count in enumerate(dims[:ndim]):
                if count == 1:
                    partitions.append(None)
                else:
                    names.append(f"_axis_{dim}")
                    sizes.append(count)
                    partitions.append(names[-1])
            if len(dims) > ndim and dims[-1] != 1:
                names.append("_axis_replicated")
                sizes.append(dims[-1])
            return ExportedNamedSharding(ExportedAbstractMesh(tuple(sizes), tuple(names)), tuple(partitions))
    raise ValueError(f"HloSharding {hlo} has no named-sharding equivalent the wire format can carry; "
                     "give the Exported named shardings instead.")


def _replicated_type() -> Any:
    return OpSharding.Type.REPLICATED


EMPTY_MESH = ExportedAbstractMesh((), ())


def as_exported_named_sharding(s: Any) -> ExportedNamedSharding | None:
    """Normalise a named sharding (ours, or a duck-typed ``toolkit.shard`` one) to the recorded form.

    Accepts ``None`` (unspecified), an :class:`ExportedNamedSharding`, or any
    object with ``mesh`` (``axis_sizes``/``axis_names``/optional
    ``axis_types``, or an ``abstract_mesh`` that has them) and ``spec`` (an
    iterable of entries, optional ``reduced``/``unreduced``) and optional
    ``memory_kind``.
    """
    if s is None or isinstance(s, ExportedNamedSharding):
        return s
    mesh = getattr(s, "mesh", None)
    spec = getattr(s, "spec", None)
    if mesh is None or spec is None:
        raise TypeError(f"Expected a named sharding (with .mesh and .spec) or None, got {s!r}.")
    mesh = getattr(mesh, "abstract_mesh", mesh)
    sizes = getattr(mesh, "axis_sizes", None)
    if sizes is None:
        sizes = tuple(getattr(mesh, "shape").values())
    device = getattr(mesh, "abstract_device", None)
    if device is not None and not isinstance(device, ExportedAbstractDevice):
        device = ExportedAbstractDevice(device.device_kind, getattr(device, "num_cores", None),
                                        getattr(device, "platform", None))
    exported_mesh = ExportedAbstractMesh(tuple(sizes), tuple(mesh.axis_names),
                                         getattr(mesh, "axis_types", None), device)
    partitions = tuple(getattr(spec, "partitions", None) or tuple(spec))
    return ExportedNamedSharding(exported_mesh, partitions,
                                 frozenset(getattr(spec, "reduced", ()) or ()),
                                 frozenset(getattr(spec, "unreduced", ()) or ()),
                                 getattr(s, "memory_kind", None))


def to_toolkit_named_sharding(s: ExportedNamedSharding, mesh: Any) -> Any:
    """A ``toolkit.shard.NamedSharding`` of ``s`` over ``mesh`` (concrete or abstract).

    ``mesh`` must have the axis names, sizes and types the export used.
    ``mesh=None`` rebuilds the sharding over an abstract mesh equal to the
    exported one.
    """
    if mesh is None:
        mesh = AbstractMesh(s.mesh.axis_sizes, s.mesh.axis_names, _toolkit_axis_types(s.mesh))
    abstract = getattr(mesh, "abstract_mesh", mesh)
    sizes = tuple(getattr(abstract, "axis_sizes", None) or tuple(abstract.shape.values()))
    names = tuple(abstract.axis_names)
    types = getattr(abstract, "axis_types", None)
    types = None if types is None else tuple(_axis_type_name(t) for t in types)
    if sizes != s.mesh.axis_sizes or names != s.mesh.axis_names or (
            types is not None and types != s.mesh.axis_types):
        raise ValueError(
            f"The mesh {mesh} does not match the mesh used for export: axis names {s.mesh.axis_names}, "
            f"sizes {s.mesh.axis_sizes}, types {s.mesh.axis_types}.")
    if s.reduced or s.unreduced:
        raise NotImplementedError(
            f"toolkit.shard.PartitionSpec has no reduced/unreduced axes; this sharding has reduced="
            f"{sorted(s.reduced)}, unreduced={sorted(s.unreduced)}.")
    spec = PartitionSpec(*s.partitions)
    if s.memory_kind is not None:
        return NamedSharding(mesh, spec, memory_kind=s.memory_kind)
    return NamedSharding(mesh, spec)


def _toolkit_axis_types(mesh: ExportedAbstractMesh) -> Any:
    assert mesh.axis_types is not None  # ExportedAbstractMesh.__post_init__ fills it in
    return tuple(getattr(AxisType, t) for t in mesh.axis_types)
