"""The ``Sharding`` base class: how an array is laid out across devices.

A subclass says which devices hold data (``_device_assignment``, in HLO
device-position order) and how the array is tiled over them
(``_to_xla_hlo_sharding(ndim)``); everything else — shard shapes, the
device → index map, equivalence — is derived here with JAX's semantics.
``_runtime_sharding(ndim)`` is the jaxlib object device_put and executables
consume.

Example::

    >>> s = NamedSharding(mesh, PartitionSpec("x"))
    >>> s.shard_shape((8, 8))
    (4, 8)
    >>> sorted(d.id for d in s.device_set)
    [0, 1, 2, 3, 4, 5, 6, 7]
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from toolkit.runtime.client import Device
from toolkit.runtime.shardings import HloSharding, RuntimeSharding, runtime_sharding
from toolkit.shard import hlo as hlo_util

Shape = tuple[int, ...]
Index = tuple


def check_memory_kind(devices: Sequence[Any], kind: str | None) -> str | None:
    """The canonical memory kind: ``kind``, or for None the first device's default memory (``"device"``
    on CPU), as JAX canonicalizes it; ``ValueError`` if the device does not offer ``kind``."""
    if not devices:
        return kind
    if kind is None:
        default_memory = getattr(devices[0], "default_memory", None)
        return None if default_memory is None else default_memory().kind
    if not isinstance(kind, str):
        raise TypeError(f"memory_kind must be a string or None, got {kind!r}")
    memories = getattr(devices[0], "addressable_memories", None)
    if memories is None:
        return kind
    kinds = sorted(m.kind for m in memories())
    if kind not in kinds:
        raise ValueError(f"memory kind {kind!r} is not offered by {devices[0]}; available kinds: {kinds}")
    return kind


class Sharding:
    """Abstract base of every sharding kind (JAX's ``jax.sharding.Sharding``)."""

    _memory_kind: str | None  # set by every subclass; read by ``memory_kind``

    # -- what subclasses provide ---------------------------------------------
    @property
    def device_set(self) -> set[Device]:
        """Every device that holds part of the array."""
        return set(self._device_assignment)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        """The devices in HLO device-position order."""
        raise NotImplementedError

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> HloSharding:
        """The XLA ``HloSharding`` for an array of rank ``num_dimensions``."""
        raise NotImplementedError

    @property
    def memory_kind(self) -> str | None:
        """The memory the data lives in (``None``: the device's default)."""
        return self._memory_kind  # every kind stores it under this name

    def with_memory_kind(self, kind: str) -> "Sharding":
        """The same layout in memory ``kind``."""
        raise NotImplementedError

    # -- derived ---------------------------------------------------------------
    @property
    def num_devices(self) -> int:
        """How many devices the sharding spans."""
        return len(self._device_assignment)

    @property
    def is_fully_replicated(self) -> bool:
        """True if every device holds the whole array."""
        raise NotImplementedError

    @property
    def is_fully_addressable(self) -> bool:
        """True if this process can address every device (always, with one process)."""
        return all(is_local_device(d) for d in self._device_assignment)

    @property
    def has_addressable_devices(self) -> bool:
        """Whether this process addresses at least one of the devices."""
        return any(is_local_device(d) for d in self._device_assignment)

    @property
    def addressable_devices(self) -> set[Device]:
        """The devices of :attr:`device_set` this process can address."""
        return {d for d in self.device_set if is_local_device(d)}

    def check_compatible_aval(self, shape: Sequence[int]) -> None:
        """``ValueError`` if the sharding cannot describe an array of ``shape``."""

    def shard_shape(self, global_shape: Sequence[int]) -> Shape:
        """The shape of the piece each device holds.

        Raises ``ValueError`` naming the dimension when a dimension does not
        split evenly (JAX requires even splits).
        """
        shape = tuple(global_shape)
        self.check_compatible_aval(shape)
        return hlo_util.shard_shape_of(self._to_xla_hlo_sharding(len(shape)), shape, self)

    def devices_indices_map(self, global_shape: Sequence[int]) -> Mapping[Device, Index]:
        """Device -> the tuple of slices of the global array it holds."""
        shape = tuple(global_shape)
        self.shard_shape(shape)  # the clear error for uneven splits
        devices = self._device_assignment
        indices = hlo_util.indices_by_position(self._to_xla_hlo_sharding(len(shape)), shape, len(devices))
        return dict(zip(devices, indices))

    def addressable_devices_indices_map(self, global_shape: Sequence[int]) -> Mapping[Device, Index]:
        """:meth:`devices_indices_map` restricted to :attr:`addressable_devices`."""
        full = self.devices_indices_map(global_shape)
        if self.is_fully_addressable:
            return full
        return {d: i for d, i in full.items() if is_local_device(d)}

    def is_equivalent_to(self, other: "Sharding", ndim: int) -> bool:
        """True if both put the same pieces of a rank-``ndim`` array on the same devices
        (same device order, same tiling, same memory kind)."""
        if not isinstance(other, Sharding):
            return False
        try:
            same_devices = _device_ids(self._device_assignment) == _device_ids(other._device_assignment)
        except ValueError:  # an abstract mesh on either side: compare the layout only
            same_devices = True
        return (same_devices and self.memory_kind == other.memory_kind
                and hlo_util.hlo_equal(self._to_xla_hlo_sharding(ndim), other._to_xla_hlo_sharding(ndim)))

    def _runtime_sharding(self, ndim: int) -> RuntimeSharding:
        """The cached jaxlib sharding object for an array of rank ``ndim``."""
        cache = self.__dict__.setdefault("_runtime_cache", {})
        result = cache.get(ndim)
        if result is None:
            result = cache[ndim] = runtime_sharding(
                tuple(self._device_assignment), self._to_xla_hlo_sharding(ndim), self.memory_kind)
        return result


def is_local_device(device: Any) -> bool:
    """Whether this process addresses ``device`` (a device without a client, a test's stand-in, counts as local)."""
    client = getattr(device, "client", None)
    if client is None:
        return True
    return device.process_index == client.process_index()


def _device_ids(devices: Sequence[Any]) -> tuple:
    return tuple((d.platform, d.id) for d in devices)
