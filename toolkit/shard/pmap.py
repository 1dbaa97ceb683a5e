"""``PmapSharding``: one slice along a stacked dimension per device (``pmap``'s layout).

``PmapSharding.default(shape, sharded_dim=0, devices=None)`` splits dimension
``sharded_dim`` (whose size must equal the device count) so that device ``i``
holds index ``i`` of it, with that dimension squeezed away: the shard shape
drops it. ``sharded_dim=None`` replicates over the devices.

Example::

    >>> s = PmapSharding.default((8, 3))
    >>> s.shard_shape((8, 3))
    (3,)
    >>> s.devices_indices_map((8, 3))[devices()[1]]
    (1, slice(None, None, None))
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

from toolkit.runtime.client import devices as all_devices
from toolkit.runtime.shardings import HloSharding
from toolkit.shard.gspmd import _check_platforms
from toolkit.shard.sharding import Sharding, check_memory_kind


@dataclasses.dataclass(frozen=True)
class NoSharding:
    """This array dimension is not split."""


@dataclasses.dataclass(frozen=True)
class Unstacked:
    """This array dimension (of ``size``) is split into ``size`` squeezed pieces."""

    size: int


@dataclasses.dataclass(frozen=True)
class ShardedAxis:
    """Mesh dimension ``axis`` enumerates the ``axis``-th split array dimension."""

    axis: int


@dataclasses.dataclass(frozen=True)
class Replicated:
    """Mesh dimension of ``replicas`` devices that all hold the same data."""

    replicas: int


@dataclasses.dataclass(frozen=True)
class ShardingSpec:
    """pmap's layout description: per array dimension, and per mesh dimension."""

    sharding: tuple
    mesh_mapping: tuple


class PmapSharding(Sharding):
    """Devices plus a ``ShardingSpec`` with at most one ``Unstacked`` dimension."""

    def __init__(self, devices: Sequence[Any] | np.ndarray, sharding_spec: ShardingSpec, *,
                 memory_kind: str | None = None):
        self.devices = np.array(devices, dtype=object).reshape(-1)
        flat = tuple(self.devices.flat)
        if not flat:
            raise ValueError("PmapSharding needs at least one device")
        _check_platforms(flat, "PmapSharding")
        memory_kind = check_memory_kind(flat, memory_kind)
        unstacked = [i for i, s in enumerate(sharding_spec.sharding) if isinstance(s, Unstacked)]
        if len(unstacked) > 1:
            raise ValueError(f"PmapSharding supports one Unstacked dimension, got {sharding_spec}")
        self.sharding_spec = sharding_spec
        self._memory_kind = memory_kind
        self._sharded_dim = unstacked[0] if unstacked else None

    @classmethod
    def default(cls, shape: Sequence[int], sharded_dim: int | None = 0,
                devices: Sequence[Any] | None = None) -> "PmapSharding":
        """Split dimension ``sharded_dim`` of ``shape`` over ``devices`` (default: the first
        ``shape[sharded_dim]`` devices); ``sharded_dim=None`` replicates over ``devices``."""
        shape = tuple(shape)
        if sharded_dim is None:
            if devices is None:
                raise ValueError("PmapSharding.default with sharded_dim=None needs devices")
            devices = list(devices)
            spec = ShardingSpec(tuple(NoSharding() for _ in shape), (Replicated(len(devices)),))
            return cls(devices, spec)
        if not -len(shape) <= sharded_dim < len(shape):
            raise ValueError(f"sharded_dim {sharded_dim} is out of range for shape {shape}")
        sharded_dim %= len(shape)
        count = shape[sharded_dim]
        if devices is None:
            available = all_devices()
            if count > len(available):
                raise ValueError(f"dimension {sharded_dim} of shape {shape} has size {count} but only "
                                 f"{len(available)} devices exist")
            devices = available[:count]
        devices = list(devices)
        if len(devices) != count:
            raise ValueError(f"dimension {sharded_dim} of shape {shape} has size {count} but {len(devices)} "
                             f"devices were given; pmap needs one device per index")
        sharding = tuple(Unstacked(count) if i == sharded_dim else NoSharding() for i in range(len(shape)))
        return cls(devices, ShardingSpec(sharding, (ShardedAxis(0),)))

    def __repr__(self) -> str:
        return f"PmapSharding(sharding_spec={self.sharding_spec}, device_ids={[d.id for d in self.devices.flat]})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PmapSharding) and self.sharding_spec == other.sharding_spec
                and tuple(self.devices.flat) == tuple(other.devices.flat) and self._memory_kind == other._memory_kind)

    def __hash__(self) -> int:
        return hash((PmapSharding, self.sharding_spec, tuple(self.devices.flat), self._memory_kind))

    @property
    def device_set(self) -> set:
        """The set of the devices."""
        return set(self.devices.flat)

    @property
    def _device_assignment(self) -> tuple:
        return tuple(self.devices.flat)

    def with_memory_kind(self, kind: str) -> "PmapSharding":
        """The same sharding in memory ``kind``."""
        return PmapSharding(self.devices, self.sharding_spec, memory_kind=kind)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether no dimension is split (every device holds the whole array)."""
        return self._sharded_dim is None

    def check_compatible_aval(self, shape: Sequence[int]) -> None:
        """Raise ``ValueError`` unless ``shape`` has the spec's rank and its split dimension has one entry per
        device.
        """
        if len(shape) != len(self.sharding_spec.sharding):
            raise ValueError(f"PmapSharding describes rank-{len(self.sharding_spec.sharding)} arrays, "
                             f"got an array of rank {len(shape)}")
        if self._sharded_dim is not None and shape[self._sharded_dim] != self.num_devices:
            raise ValueError(f"PmapSharding splits dimension {self._sharded_dim} over {self.num_devices} devices "
                             f"but that dimension has size {shape[self._sharded_dim]} in shape {tuple(shape)}")

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of one device's piece: ``global_shape`` without the split dimension."""
        shape = tuple(global_shape)
        self.check_compatible_aval(shape)
        if self._sharded_dim is None:
            return shape
        return shape[:self._sharded_dim] + shape[self._sharded_dim + 1:]

    def devices_indices_map(self, global_shape: Sequence[int]) -> Mapping[Any, tuple]:
        """Each device's index into an array of ``global_shape``: an int on the split dimension."""
        shape = tuple(global_shape)
        self.check_compatible_aval(shape)
        full = [slice(None)] * len(shape)
        result = {}
        for i, device in enumerate(self.devices.flat):
            index: list[slice | int] = list(full)
            if self._sharded_dim is not None:
                index[self._sharded_dim] = i
            result[device] = tuple(index)
        return result

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> HloSharding:
        if self._sharded_dim is None:
            return HloSharding.replicate()
        dims = [1] * num_dimensions
        dims[self._sharded_dim] = self.num_devices
        return HloSharding.iota_tile(dims)
