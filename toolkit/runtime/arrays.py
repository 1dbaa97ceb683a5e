"""Moving host data to devices and back, in jaxlib's ``ArrayImpl`` form."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from jaxlib import _jax

from toolkit.runtime.shardings import RuntimeSharding

ArrayImpl = _jax.ArrayImpl


def put_shards(aval: Any, sharding: RuntimeSharding, shards: Sequence[np.ndarray],
               devices: Sequence[Any], committed: bool = True) -> ArrayImpl:
    """One global device array from per-device host shards (``shards[i]`` goes to ``devices[i]``).

    ``aval`` is a ``ShapedArray`` (jaxlib reads its shape, dtype, ndim and weak_type).
    """
    return _jax.batched_device_put(aval, sharding, list(shards), list(devices), committed, False,
                                   enable_x64=True)


def _piece_to_numpy(piece: ArrayImpl) -> np.ndarray:
    # np.asarray goes through the buffer protocol, which has no code for ml_dtypes (bfloat16 came back as
    # an object array); this copies through jaxlib's own conversion.
    value, _ = piece._single_device_array_to_np_array_did_copy()
    return value


def to_numpy(impl: ArrayImpl) -> np.ndarray:
    """The global value of a (possibly multi-device) array, assembled on the host.

    Bare jaxlib arrays convert with ``np.asarray`` only when they live on one
    device (jax patches the rest in), so the pieces are copied into place here.
    """
    pieces = impl._arrays
    if len(pieces) == 1 or impl._sharding.is_fully_replicated:
        return _piece_to_numpy(pieces[0])
    aval = impl.aval
    index_map = impl._sharding.devices_indices_map(tuple(aval.shape))
    result = np.empty(tuple(aval.shape), dtype=aval.dtype)
    for piece in pieces:
        device = next(iter(piece.devices()))
        result[index_map[device]] = _piece_to_numpy(piece)
    return result


def single_device_arrays(impl: ArrayImpl) -> list[ArrayImpl]:
    """The per-device pieces of a global array, in its sharding's device order."""
    return list(impl._arrays)


def block_until_ready(impl: ArrayImpl) -> None:
    impl.block_until_ready()


def result_handler(aval: Any, sharding: RuntimeSharding, committed: bool = True) -> Any:
    """A handler that assembles an executable's per-device outputs into one global array."""
    return _jax.array_result_handler(aval, sharding, committed, _skip_checks=True)


def is_device_array(x: Any) -> bool:
    return type(x) is ArrayImpl
