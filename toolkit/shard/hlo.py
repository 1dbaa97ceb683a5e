"""XLA's ``HloSharding`` seen from Python: tile counts, shard shapes, shard indices.

An ``HloSharding`` names devices by *position* in a device assignment (the
tuple ``sharding._device_assignment``); the helpers here work in positions
and the sharding classes map positions to devices.

Example::

    >>> hlo = hlo_sharding_from_text("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
    >>> tile_counts(hlo, 2)
    ([2, 1], 4)
    >>> shard_shape_of(hlo, (8, 8))
    (4, 8)
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from toolkit.runtime.shardings import HloSharding, OpSharding

Index = tuple  # tuple of slice (or int, for PmapSharding's squeezed dimension)


def to_hlo_sharding(value: HloSharding | OpSharding) -> HloSharding:
    """An ``HloSharding`` from an ``HloSharding`` or an ``OpSharding`` proto."""
    if isinstance(value, HloSharding):
        return value
    if isinstance(value, OpSharding):
        return HloSharding.from_proto(value)
    raise TypeError(f"expected an HloSharding or OpSharding, got {type(value).__name__}")


def hlo_sharding_from_text(text: str) -> HloSharding:
    """Parse the ``mhlo.sharding`` attribute form, e.g. ``{devices=[2,1]<=[2]}``.

    Raises ``ValueError`` on malformed text.
    """
    try:
        return HloSharding.from_string(text)
    except Exception as error:  # jaxlib raises its own runtime error type
        raise ValueError(f"not a valid HLO sharding: {text!r} ({str(error).strip().splitlines()[0]})") from None


def is_replicated(hlo: HloSharding) -> bool:
    """True if every device holds the whole array (one device counts as replicated)."""
    return hlo.is_replicated() or hlo.num_devices() == 1


def hlo_equal(a: HloSharding, b: HloSharding) -> bool:
    """Equality that treats every replicated form as the same (JAX's rule)."""
    if a is b:
        return True
    if is_replicated(a) and is_replicated(b):
        return True
    return a == b


def tile_counts(hlo: HloSharding, ndim: int) -> tuple[list[int], int]:
    """(how many ways each of the ``ndim`` dimensions is split, replication factor)."""
    if hlo.is_replicated() or hlo.is_maximal() or not hlo.is_tiled():
        if hlo.is_manual():
            raise NotImplementedError(f"manual sharding {hlo} has no per-dimension tiling")
        return [1] * ndim, 1
    dims = list(hlo.tile_assignment_dimensions())
    subgroups = list(hlo.subgroup_types())
    if hlo.replicate_on_last_tile_dim() or subgroups == [OpSharding.Type.REPLICATED]:
        partitions, replicas = dims[:-1], dims[-1]
    elif not subgroups:
        partitions, replicas = dims, 1
    else:
        raise NotImplementedError(f"HLO sharding {hlo} has subgroups {subgroups} toolkit does not handle")
    if len(partitions) != ndim:
        raise ValueError(
            f"HLO sharding {hlo} tiles {len(partitions)} dimensions but the array has rank {ndim}")
    return partitions, replicas


def shard_shape_of(hlo: HloSharding, shape: Sequence[int], what: Any = None) -> tuple[int, ...]:
    """The shape of each shard; ``ValueError`` naming the dimension if a split is uneven."""
    shape = tuple(shape)
    if is_replicated(hlo):
        return shape
    partitions, _ = tile_counts(hlo, len(shape))
    result = []
    for dim, (size, ways) in enumerate(zip(shape, partitions)):
        quotient, remainder = divmod(size, ways)
        if remainder:
            raise ValueError(
                f"{what or hlo} splits array dimension {dim} (size {size}) {ways} ways, which does "
                f"not divide it evenly (array shape {shape}, per-dimension splits {partitions})")
        result.append(quotient)
    return tuple(result)


def indices_by_position(hlo: HloSharding, shape: Sequence[int], num_devices: int) -> list[Index]:
    """For device positions ``0..num_devices-1``: the slice of the global array each holds.

    A dimension that is not split is ``slice(None)``; a split one is
    ``slice(start, stop)`` (JAX's convention, so maps compare equal to JAX's).
    """
    shape = tuple(shape)
    full = (slice(None),) * len(shape)
    if is_replicated(hlo):
        return [full] * num_devices
    partitions, replicas = tile_counts(hlo, len(shape))
    per_dim = []
    for size, ways in zip(shape, partitions):
        if ways == 1:
            per_dim.append([slice(None)])
        else:
            step = size // ways
            per_dim.append([slice(i * step, (i + 1) * step) for i in range(ways)])
    positions = iter(hlo.tile_assignment_devices())
    result: list[Any] = [None] * num_devices
    for index in itertools.product(*per_dim):
        for _ in range(replicas):
            position = next(positions)
            if position >= num_devices:
                raise ValueError(f"HLO sharding {hlo} names device position {position} "
                                 f"but only {num_devices} devices were given")
            result[position] = index
    missing = [i for i, r in enumerate(result) if r is None]
    if missing:
        raise ValueError(f"HLO sharding {hlo} leaves device positions {missing} without data "
                         f"({num_devices} devices given)")
    return result


def tile_assignment(hlo: HloSharding, ndim: int) -> np.ndarray:
    """The device positions as an int array of shape ``partitions + [replicas]``."""
    partitions, replicas = tile_counts(hlo, ndim)
    if is_replicated(hlo):
        return np.arange(hlo.num_devices() if not hlo.is_replicated() else 1).reshape([1] * ndim + [-1])
    return np.asarray(hlo.tile_assignment_devices(), dtype=np.int64).reshape(list(partitions) + [replicas])
