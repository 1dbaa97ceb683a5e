"""``PositionalSharding``: an array of devices shaped like the array's tiling.

JAX's older API (removed from JAX itself, kept here as its docs described it):
``PositionalSharding(devices)`` starts as a 1-d array of devices; reshape it to
the array's rank so that dimension ``i`` of the device array says how many
ways array dimension ``i`` is split; ``replicate(axis)`` folds a dimension into
replication (every device along it holds the same piece).

Example::

    >>> s = PositionalSharding(devices()[:8]).reshape(4, 2)
    >>> s.shard_shape((8, 8))
    (2, 4)
    >>> s.replicate(0).shape
    (1, 2)
    >>> s.replicate(0).shard_shape((8, 8))
    (8, 4)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.runtime.shardings import HloSharding, OpSharding
from toolkit.shard import hlo as hlo_util
from toolkit.shard.gspmd import _check_platforms
from toolkit.shard.sharding import Sharding, check_memory_kind


class PositionalSharding(Sharding):
    """Devices arranged in an n-d array; see the module docstring."""

    def __init__(self, devices: Sequence[Any] | np.ndarray, *, memory_kind: str | None = None):
        array = np.array(devices, dtype=object) if not isinstance(devices, np.ndarray) else devices
        if array.size == 0:
            raise ValueError("PositionalSharding needs at least one device")
        self._devices = tuple(array.flat)
        _check_platforms(self._devices, "PositionalSharding")
        self._memory_kind = check_memory_kind(self._devices, memory_kind)
        ids = np.empty(array.shape, dtype=object)
        for position, index in enumerate(np.ndindex(array.shape)):
            ids[index] = frozenset({position})
        self._ids: np.ndarray = ids

    @classmethod
    def _remake(cls, devices: tuple, ids: np.ndarray, memory_kind: str | None) -> "PositionalSharding":
        made = cls.__new__(cls)
        made._devices, made._ids, made._memory_kind = devices, ids, memory_kind
        return made

    # -- the device-array view ------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the device grid."""
        return tuple(self._ids.shape)

    @property
    def ndim(self) -> int:
        """The rank of the device grid."""
        return self._ids.ndim

    def __len__(self) -> int:
        return self.shape[0]

    def reshape(self, *shape: Any) -> "PositionalSharding":
        """The same devices viewed with a new shape (numpy ``reshape`` rules)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self._remake(self._devices, self._ids.reshape(shape), self._memory_kind)

    def transpose(self, *axes: Any) -> "PositionalSharding":
        """Permute the device array's dimensions (numpy ``transpose`` rules)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return self._remake(self._devices, self._ids.transpose(axes or None), self._memory_kind)

    @property
    def T(self) -> "PositionalSharding":
        """The transposed sharding (``transpose()``)."""
        return self.transpose()

    def replicate(self, axis: int | None = None, keepdims: bool = True) -> "PositionalSharding":
        """Merge the devices along ``axis`` (every axis if None) into replica groups.

        The merged dimension has size 1 (dropped with ``keepdims=False``);
        each cell then names every device that holds that piece.
        """
        ids = self._ids
        axes = list(range(ids.ndim)) if axis is None else [axis % ids.ndim]
        for a in axes:
            merged_shape = ids.shape[:a] + (1,) + ids.shape[a + 1:]
            merged = np.empty(merged_shape, dtype=object)
            for index in np.ndindex(*merged_shape):
                cells = [ids[index[:a] + (k,) + index[a + 1:]] for k in range(ids.shape[a])]
                merged[index] = frozenset().union(*cells)
            ids = merged
        if not keepdims:
            ids = ids.squeeze(tuple(axes))
        return self._remake(self._devices, ids, self._memory_kind)

    # -- Sharding ---------------------------------------------------------------
    def __repr__(self) -> str:
        return f"PositionalSharding(shape={self.shape}, devices={[d.id for d in self._devices]})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PositionalSharding) and self._devices == other._devices
                and self._memory_kind == other._memory_kind and self.shape == other.shape
                and all(a == b for a, b in zip(self._ids.flat, other._ids.flat)))

    def __hash__(self) -> int:
        return hash((PositionalSharding, self._devices, self.shape, tuple(self._ids.flat)))

    @property
    def _device_assignment(self) -> tuple:
        return self._devices

    def with_memory_kind(self, kind: str) -> "PositionalSharding":
        """The same sharding in memory ``kind``."""
        return self._remake(self._devices, self._ids, check_memory_kind(self._devices, kind))

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array (one device position)."""
        return self._ids.size == 1

    def check_compatible_aval(self, shape: Sequence[int]) -> None:
        """Raise ``ValueError`` unless the sharding's rank matches ``shape``'s (or it is replicated)."""
        if len(shape) != self.ndim and not self.is_fully_replicated:
            raise ValueError(f"PositionalSharding of shape {self.shape} (rank {self.ndim}) cannot shard an "
                             f"array of rank {len(shape)}; reshape it to rank {len(shape)} first")

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> HloSharding:
        if self.is_fully_replicated:
            return HloSharding.replicate()
        self.check_compatible_aval((0,) * num_dimensions)
        group_sizes = {len(cell) for cell in self._ids.flat}
        if len(group_sizes) != 1:
            raise ValueError(f"PositionalSharding replica groups have unequal sizes {sorted(group_sizes)}")
        group = group_sizes.pop()
        tiles = np.array([sorted(cell) for cell in self._ids.flat], dtype=np.int64)
        if group == 1:
            return HloSharding.subgroup_with_device_ordering(tiles.reshape(self.shape), subgroup_types=[])
        return HloSharding.subgroup_with_device_ordering(tiles.reshape(self.shape + (group,)),
                                                         subgroup_types=[OpSharding.Type.REPLICATED])


def positional_sharding_from_hlo(hlo: HloSharding | OpSharding, devices: Sequence[Any], ndim: int,
                                 *, memory_kind: str | None = None) -> PositionalSharding:
    """The ``PositionalSharding`` over ``devices`` with HLO form ``hlo`` for a rank-``ndim`` array."""
    hlo = hlo_util.to_hlo_sharding(hlo)
    base = PositionalSharding(devices, memory_kind=memory_kind)
    if hlo_util.is_replicated(hlo):
        return base.reshape((len(base._devices),) + (1,) * max(ndim - 1, 0)).replicate()
    partitions, replicas = hlo_util.tile_counts(hlo, ndim)
    positions = np.asarray(hlo.tile_assignment_devices(), dtype=np.int64).reshape(list(partitions) + [replicas])
    ids = np.empty(tuple(partitions), dtype=object)
    for index in np.ndindex(*partitions):
        ids[index] = frozenset(int(p) for p in positions[index])
    return PositionalSharding._remake(base._devices, ids, base._memory_kind)
