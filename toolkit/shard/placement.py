"""Placing host data on devices according to a sharding.

Example::

    >>> arr = device_put_sharded(np.arange(64.).reshape(8, 8), NamedSharding(mesh, P("x")))
    >>> [a.shape for a in arr._arrays][:2]
    [(4, 8), (4, 8)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core.avals import ShapedArray
from toolkit.runtime.arrays import ArrayImpl, put_shards, to_numpy
from toolkit.shard.sharding import Sharding


def host_shards(array: np.ndarray, sharding: Sharding) -> list[np.ndarray]:
    """The piece of ``array`` each device of ``sharding._device_assignment`` holds.

    An integer index (``PmapSharding``'s squeezed dimension) is kept as a
    length-1 slice: the runtime stores every shard with the array's rank.
    """
    index_map = sharding.devices_indices_map(array.shape)
    shards = []
    for device in sharding._device_assignment:
        index = tuple(slice(i, i + 1) if isinstance(i, (int, np.integer)) else i for i in index_map[device])
        shards.append(np.ascontiguousarray(array[index]))
    return shards


def device_put_sharded(value: Any, sharding: Sharding, *, weak_type: bool = False,
                       committed: bool = True) -> ArrayImpl:
    """One global device array holding ``value`` laid out as ``sharding`` says.

    Raises ``ValueError`` (naming the dimension or axis) when the sharding
    cannot describe an array of ``value``'s shape.
    """
    if not isinstance(sharding, Sharding):
        raise TypeError(f"device_put_sharded needs a toolkit Sharding, got {type(sharding).__name__}")
    array = np.asarray(value)
    sharding.shard_shape(array.shape)  # the clear error for rank and divisibility problems
    aval = ShapedArray(array.shape, array.dtype, weak_type=weak_type)
    runtime = sharding._runtime_sharding(array.ndim)
    return put_shards(aval, runtime, host_shards(array, sharding), list(sharding._device_assignment),
                      committed=committed)


def host_array(impl: ArrayImpl) -> np.ndarray:
    """The global value of a (possibly multi-device) runtime array, assembled on the host."""
    return to_numpy(impl)
