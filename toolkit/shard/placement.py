"""Placing host data on devices according to a sharding.

Example::

    >>> arr = device_put_sharded(np.arange(64.).reshape(8, 8), NamedSharding(mesh, P("x")))
    >>> [a.shape for a in arr._arrays][:2]
    [(4, 8), (4, 8)]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core.avals import ShapedArray
from toolkit.runtime.arrays import ArrayImpl, put_shards, to_numpy
from toolkit.shard.sharding import Sharding


def addressable_device_assignment(sharding: Sharding) -> list[Any]:
    """The devices of ``sharding._device_assignment`` this process addresses, in that order
    (all of them in a single process)."""
    devices = sharding._device_assignment
    if sharding.is_fully_addressable:
        return list(devices)
    local = sharding.addressable_devices
    return [d for d in devices if d in local]


def host_shards(array: np.ndarray, sharding: Sharding,
                devices: Sequence[Any] | None = None) -> list[np.ndarray]:
    """The piece of ``array`` each device of ``devices`` holds (default: the sharding's addressable
    devices, in ``_device_assignment`` order).

    An integer index (``PmapSharding``'s squeezed dimension) is kept as a
    length-1 slice: the runtime stores every shard with the array's rank.
    """
    index_map = sharding.devices_indices_map(array.shape)
    shards = []
    for device in addressable_device_assignment(sharding) if devices is None else devices:
        index = tuple(slice(i, i + 1) if isinstance(i, (int, np.integer)) else i for i in index_map[device])
        shards.append(np.require(array[index], requirements="C"))  # keeps 0-d (ascontiguousarray makes 1-d)
    return shards


def device_put_sharded(value: Any, sharding: Sharding, *, weak_type: bool = False,
                       committed: bool = True) -> ArrayImpl:
    """One global device array holding ``value`` laid out as ``sharding`` says.

    With several processes each puts its own devices' pieces of ``value``
    (every process passes the whole value, as with JAX's ``device_put``).
    Raises ``ValueError`` (naming the dimension or axis) when the sharding
    cannot describe an array of ``value``'s shape.
    """
    if not isinstance(sharding, Sharding):
        raise TypeError(f"device_put_sharded needs a toolkit Sharding, got {type(sharding).__name__}")
    array = np.asarray(value)
    sharding.shard_shape(array.shape)  # the clear error for rank and divisibility problems
    aval = ShapedArray(array.shape, array.dtype, weak_type=weak_type)
    runtime = sharding._runtime_sharding(array.ndim)
    devices = addressable_device_assignment(sharding)
    return put_shards(aval, runtime, host_shards(array, sharding, devices), devices, committed=committed)


def host_array(impl: ArrayImpl) -> np.ndarray:
    """The global value of a (possibly multi-device) runtime array, assembled on the host."""
    return to_numpy(impl)
