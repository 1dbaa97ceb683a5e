"""The bridge between toolkit's sharding objects and jaxlib's C++ sharding classes.

jaxlib's device_put, result handlers and executables want an instance of one
of its C++ sharding classes that also answers a handful of Python-side
questions. Every toolkit sharding converts to one ``RuntimeSharding`` (a
``GSPMDSharding`` subclass) built from its device assignment and HloSharding.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np
from jaxlib import _jax
# Imported (not assigned) so that mypy accepts them as types and in isinstance.
from jaxlib.xla_client import DeviceList, HloSharding, OpSharding


class RuntimeSharding(_jax.GSPMDSharding):
    """(devices, HloSharding) in the form jaxlib's C++ runtime consumes."""

    def __init__(self, devices: tuple, hlo_sharding: HloSharding, memory_kind: str | None = None):
        super().__init__(DeviceList(devices), hlo_sharding, memory_kind)
        self._hlo = hlo_sharding
        # `_devices` is a read-only property of the C++ base class.
        self._device_tuple = devices
        self._is_replicated = hlo_sharding.is_replicated() or len(devices) == 1

    def _to_xla_hlo_sharding(self, ndim: int) -> HloSharding:
        return self._hlo

    @property
    def _device_assignment(self) -> tuple:
        return self._device_tuple

    @property
    def device_set(self) -> set:
        return set(self._device_tuple)

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    is_fully_addressable = True

    @property
    def is_fully_replicated(self) -> bool:
        return self._is_replicated

    @property
    def num_devices(self) -> int:
        return len(self._device_tuple)

    def shard_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return shard_shape(self._hlo, tuple(shape))

    def devices_indices_map(self, shape: Sequence[int]) -> dict:
        return dict(zip(self._device_tuple, shard_indices(self._hlo, len(self._device_tuple), tuple(shape))))


@functools.lru_cache(maxsize=4096)
def runtime_sharding(devices: tuple, hlo_sharding: HloSharding, memory_kind: str | None = None) -> RuntimeSharding:
    return RuntimeSharding(devices, hlo_sharding, memory_kind)


def replicated(devices: tuple) -> RuntimeSharding:
    return runtime_sharding(devices, HloSharding.replicate())


def hlo_sharding_to_proto_bytes(hlo: HloSharding) -> bytes:
    """``hlo`` as the bytes of XLA's serialized ``OpSharding`` proto."""
    return hlo.to_proto().SerializeToString()


def hlo_sharding_from_proto_bytes(data: bytes) -> HloSharding:
    """The ``HloSharding`` of a serialized ``OpSharding`` proto (the protobuf or XLA error when malformed)."""
    proto = OpSharding()
    proto.ParseFromString(data)
    return HloSharding.from_proto(proto)


def _tiling(hlo: HloSharding, ndim: int) -> tuple[list[int], list[int]]:
    """Per-dimension tile counts and the flat tile assignment (device positions)."""
    if hlo.is_replicated() or hlo.is_maximal() or not hlo.is_tiled():
        return [1] * ndim, []
    dims = list(hlo.tile_assignment_dimensions())
    return dims, list(hlo.tile_assignment_devices())


def shard_shape(hlo: HloSharding, shape: tuple[int, ...]) -> tuple[int, ...]:
    counts, _ = _tiling(hlo, len(shape))
    return tuple(-(-d // c) for d, c in zip(shape, counts))


def shard_indices(hlo: HloSharding, num_devices: int, shape: tuple[int, ...]) -> list[tuple[slice, ...]]:
    """For each device position 0..n-1, the slice of the global array it holds."""
    ndim = len(shape)
    counts, assignment = _tiling(hlo, ndim)
    full = tuple(slice(None) for _ in range(ndim))
    if not assignment:
        return [full] * num_devices
    tiles = np.asarray(assignment).reshape(counts)
    result: list[Any] = [None] * num_devices
    for tile_index, position in np.ndenumerate(tiles):
        index = []
        for dim, (t, c) in enumerate(zip(tile_index[:ndim], counts[:ndim])):
            size = -(-shape[dim] // c)
            start, stop = t * size, min((t + 1) * size, shape[dim])
            index.append(full[dim] if c == 1 else slice(start, stop))
        result[int(position)] = tuple(index)
    return result
