"""``GSPMDSharding``: a device list plus a raw XLA ``HloSharding``.

This is what XLA reports back (``Compiled.input_shardings`` for arguments
whose layout XLA chose) and the most general kind: any tiling XLA can express.

Example::

    >>> s = GSPMDSharding(devices()[:2], hlo_sharding_from_text("{devices=[2,1]<=[2]}"))
    >>> s.shard_shape((4, 3))
    (2, 3)
"""

from __future__ import annotations

from typing import Any, Sequence

from toolkit.runtime.shardings import HloSharding, OpSharding
from toolkit.shard import hlo as hlo_util
from toolkit.shard.sharding import Sharding, check_memory_kind


def _check_platforms(devices: Sequence[Any], what: str) -> None:
    platforms = sorted({d.platform for d in devices})
    if len(platforms) > 1:
        raise ValueError(f"{what} devices must all be of one platform, got devices of platforms {platforms}")


class GSPMDSharding(Sharding):
    """``(devices, hlo_sharding)``; device positions in the HLO index ``devices``."""

    def __init__(self, devices: Sequence[Any], op_sharding: HloSharding | OpSharding, *,
                 memory_kind: str | None = None):
        self._devices = tuple(devices)
        if not self._devices:
            raise ValueError("GSPMDSharding needs at least one device")
        _check_platforms(self._devices, "GSPMDSharding")
        hlo = hlo_util.to_hlo_sharding(op_sharding)
        # XLA may hand back the V3 (named-axis) form; the tiling helpers read V2.
        self._hlo_sharding = HloSharding.v3_to_v2_sharding(hlo)
        if not hlo_util.is_replicated(self._hlo_sharding) and not self._hlo_sharding.is_maximal():
            if self._hlo_sharding.num_devices() != len(self._devices):
                raise ValueError(f"HLO sharding {self._hlo_sharding} spans {self._hlo_sharding.num_devices()} "
                                 f"devices but {len(self._devices)} devices were given")
        self._memory_kind = check_memory_kind(self._devices, memory_kind)

    @classmethod
    def get_replicated(cls, device_assignment: Sequence[Any], *, memory_kind: str | None = None) -> "GSPMDSharding":
        """Every device in ``device_assignment`` holds the whole array."""
        return cls(device_assignment, HloSharding.replicate(), memory_kind=memory_kind)

    def __repr__(self) -> str:
        memory = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"GSPMDSharding({self._hlo_sharding!r}{memory})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, GSPMDSharding) and self._devices == other._devices
                and self._memory_kind == other._memory_kind
                and hlo_util.hlo_equal(self._hlo_sharding, other._hlo_sharding))

    def __hash__(self) -> int:
        replicated = hlo_util.is_replicated(self._hlo_sharding)
        return hash((GSPMDSharding, self._devices, self._memory_kind,
                     "replicated" if replicated else hash(self._hlo_sharding)))

    @property
    def _device_assignment(self) -> tuple:
        return self._devices

    def with_memory_kind(self, kind: str) -> "GSPMDSharding":
        """The same sharding in memory ``kind``."""
        return GSPMDSharding(self._devices, self._hlo_sharding, memory_kind=kind)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return hlo_util.is_replicated(self._hlo_sharding)

    def check_compatible_aval(self, shape: Sequence[int]) -> None:
        """Raise ``ValueError`` unless the tiling fits an array of ``shape``'s rank."""
        if hlo_util.is_replicated(self._hlo_sharding) or not self._hlo_sharding.is_tiled():
            return
        partitions, _ = hlo_util.tile_counts(self._hlo_sharding, len(self._tiled_dims()))
        if len(shape) != len(partitions):
            raise ValueError(f"GSPMDSharding {self._hlo_sharding} tiles {len(partitions)} dimensions "
                             f"but the array has rank {len(shape)}")

    def _tiled_dims(self) -> list[int]:
        dims = list(self._hlo_sharding.tile_assignment_dimensions())
        if self._hlo_sharding.replicate_on_last_tile_dim() or self._hlo_sharding.subgroup_types():
            dims = dims[:-1]
        return dims

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> HloSharding:
        return self._hlo_sharding
