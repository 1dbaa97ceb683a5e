"""Moving host data to devices and back, in jaxlib's ``ArrayImpl`` form.

A global array (JAX's meaning) may span devices of other processes; the
jaxlib object then holds only this process's pieces (``impl._arrays``, in the
order of the sharding's addressable devices), and everything here works on
those.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from jaxlib import _jax
from jaxlib._jax import ArrayImpl  # imported (not assigned) so mypy accepts it as a type

from toolkit.runtime.shardings import RuntimeSharding


# jaxlib's C++ ArrayImpl imports ``jax`` (when it is installed) the first time it makes per-device
# pieces (``_arrays``, ``_fully_replicated_shard``). Refusing that import is not an option: jaxlib
# caches the failure, and jax arrays made later in the same process are broken ('NoneType' object has
# no attribute 'shape'). So the import happens, as it does under JAX; without jax installed the pieces
# carry jaxlib's bare SingleDeviceSharding, which :func:`impl_devices` reads.


def impl_devices(impl: ArrayImpl) -> tuple:
    """The devices an array lives on, in its sharding's order.

    Pieces jaxlib makes itself (``_arrays`` of a global array) carry jaxlib's own
    ``SingleDeviceSharding``, which has ``_device`` but none of the Python-side
    members JAX adds when it is installed.
    """
    sharding = impl._sharding
    device = getattr(sharding, "_device", None)
    return (device,) if device is not None else tuple(sharding._device_assignment)


def _fully_replicated(impl: ArrayImpl) -> bool:
    sharding = impl._sharding
    return getattr(sharding, "_device", None) is not None or sharding.is_fully_replicated


def _pieces(impl: ArrayImpl) -> list[ArrayImpl]:
    return list(impl._arrays)


def _replicated_piece(impl: ArrayImpl) -> ArrayImpl:
    return impl._fully_replicated_shard()


def put_shards(aval: Any, sharding: RuntimeSharding, shards: Sequence[np.ndarray],
               devices: Sequence[Any], committed: bool = True) -> ArrayImpl:
    """One global device array from per-device host shards (``shards[i]`` goes to ``devices[i]``).

    ``aval`` is a ``ShapedArray`` (jaxlib reads its shape, dtype, ndim and
    weak_type). ``devices`` are the addressable devices of ``sharding`` (all of
    them in one process); devices of other processes get their shards there.
    """
    return _jax.batched_device_put(aval, sharding, list(shards), list(devices), committed, False,
                                   enable_x64=True)


def assemble(aval: Any, sharding: RuntimeSharding, pieces: Sequence[ArrayImpl],
             committed: bool = True) -> ArrayImpl:
    """One global array from single-device arrays, one per addressable device of ``sharding``.

    The caller has checked the pieces (devices, shapes, dtypes) and ordered
    them as ``sharding``'s addressable devices; jaxlib's own check calls back
    into JAX's Python ``ArrayImpl``, so it is skipped here.
    """
    return ArrayImpl(aval, sharding, list(pieces), committed, _skip_checks=True)


def piece_device(piece: ArrayImpl) -> Any:
    """The one device a single-device array lives on."""
    devices = impl_devices(piece)
    if len(devices) != 1:
        raise ValueError(f"expected an array on a single device, got one on {len(devices)} devices")
    return devices[0]


def piece_to_numpy(piece: ArrayImpl) -> np.ndarray:
    """The value of an array on one device, read-only (it may alias the buffer on the host's device)."""
    # np.asarray goes through the buffer protocol, which has no code for ml_dtypes (bfloat16 came back as
    # an object array); this copies through jaxlib's own conversion.
    value, _ = piece._single_device_array_to_np_array_did_copy()
    return value


def to_numpy(impl: ArrayImpl, index_map: Any = None) -> np.ndarray:
    """The global value of a (possibly multi-device) array, assembled on the host.

    Bare jaxlib arrays convert with ``np.asarray`` only when they live on one
    device (jax patches the rest in), so the pieces are copied into place here.
    ``index_map`` (device -> slices, from the toolkit sharding) is needed when
    the pieces do not all hold the whole value; only this process's pieces
    are read, so the caller checks that they cover the array.
    """
    if len(impl_devices(impl)) == 1 or _fully_replicated(impl):
        return piece_to_numpy(impl)  # jaxlib reads the first addressable piece
    aval = impl.aval
    if index_map is None:
        index_map = impl._sharding.devices_indices_map(tuple(aval.shape))
    pieces = _pieces(impl)
    for piece in pieces:
        piece._copy_single_device_array_to_host_async()
    result = np.empty(tuple(aval.shape), dtype=aval.dtype)
    for piece in pieces:
        result[index_map[piece_device(piece)]] = piece_to_numpy(piece)
    return result


def single_device_arrays(impl: ArrayImpl) -> list[ArrayImpl]:
    """This process's per-device pieces of a global array, in its sharding's addressable-device order."""
    return _pieces(impl)


def fully_replicated_piece(impl: ArrayImpl) -> ArrayImpl:
    """This process's first piece of a fully replicated array (the whole value)."""
    return _replicated_piece(impl)


def block_until_ready(impl: ArrayImpl) -> None:
    impl.block_until_ready()


def copy_to_host_async(impl: ArrayImpl, pieces: Sequence[int] | None = None) -> None:
    """Start copying this process's pieces (or those at positions ``pieces``) to the host."""
    if pieces is None:
        if _fully_replicated(impl):
            impl._copy_single_device_array_to_host_async()
            return
        chosen = _pieces(impl)
    else:
        arrays = _pieces(impl)
        chosen = [arrays[i] for i in pieces]
    for piece in chosen:
        piece._copy_single_device_array_to_host_async()


def on_device_size_in_bytes(impl: ArrayImpl, num_devices: int) -> int:
    """The global on-device size: one piece's size times the number of devices (as JAX counts)."""
    return _replicated_piece(impl).on_device_size_in_bytes() * num_devices \
        if _fully_replicated(impl) else _pieces(impl)[0].on_device_size_in_bytes() * num_devices


def result_handler(aval: Any, sharding: RuntimeSharding, committed: bool = True) -> Any:
    """A handler that assembles an executable's per-device outputs into one global array."""
    return _jax.array_result_handler(aval, sharding, committed, _skip_checks=True)


def is_device_array(x: Any) -> bool:
    return type(x) is ArrayImpl
