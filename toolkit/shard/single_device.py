"""``SingleDeviceSharding``: the whole array on one device.

Example::

    >>> s = SingleDeviceSharding(devices()[0])
    >>> s.shard_shape((3, 4)), s.is_fully_replicated
    ((3, 4), True)
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from toolkit.runtime.client import Device
from toolkit.runtime.shardings import HloSharding
from toolkit.shard.sharding import Sharding, is_local_device, check_memory_kind


class SingleDeviceSharding(Sharding):
    """All data on ``device`` (JAX's ``SingleDeviceSharding``)."""

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        if not hasattr(device, "id") or not hasattr(device, "platform"):
            raise TypeError(f"SingleDeviceSharding needs a device, got {device!r}")
        self._device = device
        self._memory_kind = check_memory_kind((device,), memory_kind)

    def __repr__(self) -> str:
        memory = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"SingleDeviceSharding(device={self._device!r}{memory})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SingleDeviceSharding) and self._device == other._device
                and self._memory_kind == other._memory_kind)

    def __hash__(self) -> int:
        return hash((SingleDeviceSharding, self._device, self._memory_kind))

    @property
    def device_set(self) -> set:
        """The one device, as a set."""
        return {self._device}

    @property
    def _device_assignment(self) -> tuple:
        return (self._device,)

    def with_memory_kind(self, kind: str) -> "SingleDeviceSharding":
        """The same sharding in memory ``kind``."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

    @property
    def is_fully_replicated(self) -> bool:
        """Always True: the one device holds the whole array."""
        return True

    @property
    def is_fully_addressable(self) -> bool:
        """Whether the device is this process's."""
        return is_local_device(self._device)

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """``global_shape``: the device holds the whole array."""
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: Sequence[int]) -> Mapping[Any, tuple]:
        """The device and the whole-array index for ``global_shape``."""
        return {self._device: (slice(None),) * len(tuple(global_shape))}

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> HloSharding:
        return HloSharding.replicate()


def make_single_device_sharding(device: Device, *, memory_kind: str | None = None) -> SingleDeviceSharding:
    """``SingleDeviceSharding(device, memory_kind=...)`` (JAX's helper of that name)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)
