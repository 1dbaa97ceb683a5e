"""Global arrays from per-device data: ``make_array_from_callback``, ``make_array_from_single_device_arrays``
and ``make_array_from_process_local_data``, with JAX's meaning.

A global array may span the devices of several processes (after
``toolkit.distributed.initialize``); every process calls the same function
with the same global shape and sharding and supplies only the data of its own
(addressable) devices. With one process every device is addressable and these
are the same as placing the whole value.

Example (2 processes × 4 CPU devices, or 1 process × 8)::

    mesh = toolkit.make_mesh((2, 4), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    data = np.arange(64.0).reshape(8, 8)
    x = toolkit.make_array_from_callback((8, 8), s, lambda index: data[index])
    [shard.data.shape for shard in x.addressable_shards]      # [(4, 2), ...] this process's devices
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from toolkit.array import Array, device_put
from toolkit.core import dtypes, pytrees
from toolkit.core.avals import ShapedArray
from toolkit.core.tracing import Tracer, UnexpectedTracerError
from toolkit.runtime import arrays as runtime_arrays
from toolkit.runtime.client import local_devices, process_count, process_index  # noqa: F401
from toolkit.shard import PartitionSpec, Sharding
from toolkit.shard.explicit import type_sharding
from toolkit.shard.placement import addressable_device_assignment
from toolkit.shard.resolve import resolve_sharding

__all__ = ["make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data"]

Shape = tuple[int, ...]
Index = tuple


# -- helpers -------------------------------------------------------------------------------------------------
def _check_sharding(sharding: Any, fname: str) -> Any:
    if not isinstance(sharding, Sharding):
        raise TypeError(f"sharding should be an instance of toolkit.shard.Sharding (e.g. a NamedSharding). Got "
                        f"{sharding!r} of type {type(sharding).__name__} in toolkit.{fname}")
    return sharding


def _check_shape(shape: Any, fname: str) -> Shape:
    try:
        result = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"toolkit.{fname}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in result):
        raise ValueError(f"toolkit.{fname}: shape must have non-negative dimensions, got {result}")
    return result


def _get_and_check_dtype(values: Sequence[Any], dtype: Any, fname: str) -> np.dtype:
    if dtype is None:
        if not values:
            raise ValueError("If the Array has no addressable shards, `dtype` must be provided via the `dtype` "
                             f"argument to `toolkit.{fname}`.")
        return np.dtype(values[0].dtype)
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    if values and values[0].dtype != dtype:
        raise ValueError(f"If `dtype` is provided to `toolkit.{fname}`, it must match the dtype of the addressable "
                         f"shards. Got dtype={dtype} and shard dtype={values[0].dtype}.")
    return dtype


def _validate_shards(values: Sequence[Any], sharding: Any, aval: ShapedArray, expected_shape: Shape) -> None:
    for value in values:
        if value.dtype != aval.dtype:
            raise ValueError(f"Input buffers to `Array` must have matching dtypes. Got {value.dtype}, expected "
                             f"{aval.dtype} for buffer: {value!r}")
        if tuple(value.shape) != tuple(expected_shape):
            raise ValueError(f"Expected shard shape {tuple(expected_shape)} doesn't match the single device array "
                             f"shape {tuple(value.shape)}. Shape of Array is {aval.str_short()} with sharding "
                             f"{sharding}")


def _typed_aval(shape: Shape, dtype: np.dtype, sharding: Any) -> ShapedArray:
    """The array's abstract value; on a mesh with Explicit axes the sharding is part of its type."""
    aval = ShapedArray(shape, dtype)
    typed = type_sharding(sharding, len(shape))
    return aval.update(sharding=typed) if typed is not None else aval


def _addressable_devices(sharding: Any) -> list[Any]:
    return addressable_device_assignment(sharding)


def _callback_value(value: Any, fname: str) -> np.ndarray:
    if isinstance(value, Tracer):
        raise UnexpectedTracerError(f"toolkit.{fname} cannot be called within a traced context (the callback "
                                    "returned a tracer)")
    if isinstance(value, Array):
        return np.asarray(value)
    if dtypes.is_python_scalar(value):
        return np.asarray(value, dtypes.dtype_of(value))
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"toolkit.{fname}: the data callback returned a value of type {type(value).__name__}, "
                        f"not an array: {value!r}")
    canonical = dtypes.canonicalize_dtype(array.dtype)
    return array if canonical == array.dtype else array.astype(canonical)


# -- make_array_from_callback -------------------------------------------------------------------------------
def make_array_from_callback(shape: Sequence[int], sharding: Any, data_callback: Callable[[Index], Any],
                             dtype: Any = None) -> Array:
    """A global ``Array`` of ``shape`` laid out by ``sharding``, each addressable device's data fetched from
    ``data_callback(index)``.

    ``index`` is a tuple of slices into the global array (the device's piece
    of it, ``sharding.addressable_devices_indices_map(shape)[device]``); the
    callback returns that piece as any array-like (numpy array, scalar, ...).
    In a multi-process run every process calls this with the same ``shape``
    and ``sharding``; the callback is asked only for its own devices' pieces.
    A fully replicated sharding asks once, for the whole array. ``dtype``
    defaults to the first piece's.

    Raises ``TypeError`` when ``sharding`` is not a toolkit sharding, and
    ``ValueError`` when a piece has the wrong shape or the pieces' dtypes
    differ (or disagree with ``dtype``), or when the sharding does not split
    ``shape`` evenly.

    Example::

        >>> data = np.arange(64).reshape(8, 8)
        >>> arr = toolkit.make_array_from_callback((8, 8), NamedSharding(mesh, P("x", "y")), lambda i: data[i])
        >>> arr.addressable_data(0).shape
        (4, 2)
    """
    fname = "make_array_from_callback"
    sharding = _check_sharding(sharding, fname)
    shape = _check_shape(shape, fname)
    expected_shape = sharding.shard_shape(shape)  # the clear error for rank and divisibility problems
    devices = _addressable_devices(sharding)
    if sharding.is_fully_replicated:
        whole = _callback_value(data_callback((slice(None),) * len(shape)), fname) if devices else None
        values = [whole] * len(devices)
    else:
        index_map = sharding.devices_indices_map(shape)
        values = [_callback_value(data_callback(index_map[d]), fname) for d in devices]
    dtype = _get_and_check_dtype(values, dtype, fname)
    aval = _typed_aval(shape, dtype, sharding)
    _validate_shards(values, sharding, aval, expected_shape)
    runtime = sharding._runtime_sharding(len(shape))
    impl = runtime_arrays.put_shards(ShapedArray(shape, dtype), runtime,
                                     [np.require(v, requirements="C") for v in values], devices, committed=True)
    return Array(impl, aval, sharding, committed=True)


# -- make_array_from_single_device_arrays -------------------------------------------------------------------
def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any, arrays: Sequence[Array], *,
                                         dtype: Any = None) -> Array:
    """A global ``Array`` of ``shape`` laid out by ``sharding`` from this process's per-device ``Array``\\ s.

    ``arrays`` is a list or tuple with one single-device ``Array`` for every
    addressable device of ``sharding`` (any order), each of the shard shape;
    in a multi-process run every process passes its own devices' arrays. The
    buffers are used as they are (no copy).

    Raises ``TypeError`` if ``arrays`` is not a list/tuple of toolkit Arrays,
    ``ValueError`` when there are too few or too many, two share a device,
    their devices are not the sharding's addressable devices, or a shape or
    dtype is wrong.

    Example::

        >>> arrays = [toolkit.device_put(data[index], d)
        ...           for d, index in s.addressable_devices_indices_map((8, 8)).items()]
        >>> arr = toolkit.make_array_from_single_device_arrays((8, 8), s, arrays)
    """
    fname = "make_array_from_single_device_arrays"
    sharding = _check_sharding(sharding, fname)
    shape = _check_shape(shape, fname)
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"toolkit.{fname} `arrays` argument must be a list or tuple, but got {type(arrays)}.")
    if any(isinstance(a, Tracer) for a in arrays):
        raise ValueError(f"toolkit.{fname} requires a list of concrete arrays as input, but got types "
                         f"{sorted({type(a).__name__ for a in arrays})}")
    bad = [type(a).__name__ for a in arrays if not isinstance(a, Array)]
    if bad:
        raise TypeError(f"toolkit.{fname} needs toolkit Arrays each on one device (e.g. from "
                        f"toolkit.device_put(x, device)), got {sorted(set(bad))}")
    dtype = _get_and_check_dtype(arrays, dtype, fname)
    aval = _typed_aval(shape, dtype, sharding)
    expected_shape = sharding.shard_shape(shape)
    for a in arrays:
        a._check_alive()
        if len(a.sharding._device_assignment) != 1:
            raise ValueError(f"toolkit.{fname}: every array must live on a single device, got one of shape "
                             f"{a.aval.str_short()} on {len(a.sharding._device_assignment)} devices")
    by_device = {}
    for a in arrays:
        device = runtime_arrays.piece_device(a._impl)
        if device.id in by_device:
            ids = [runtime_arrays.piece_device(x._impl).id for x in arrays]
            raise ValueError(f"When making an array from single-device arrays, the input arrays must be from "
                             f"distinct devices, but got device IDs {ids}")
        by_device[device.id] = a
    devices = _addressable_devices(sharding)
    if len(arrays) != len(devices):
        raise ValueError(f"Expected {len(devices)} per-device arrays (this is how many devices are addressable by "
                         f"the sharding), but got {len(arrays)}")
    wanted = {d.id for d in devices}
    missing, extra = wanted - set(by_device), set(by_device) - wanted
    if missing or extra:
        message = "Addressable devices and per-device arrays devices do not match."
        if missing:
            message += f" Sharding contains devices {sorted(missing)} that are not present in per-device arrays."
        if extra:
            message += f" Per-device arrays contain devices {sorted(extra)} that are not present in the sharding."
        raise ValueError(message)
    _validate_shards(arrays, sharding, aval, expected_shape)
    ordered = [by_device[d.id]._impl for d in devices]
    impl = runtime_arrays.assemble(ShapedArray(shape, dtype), sharding._runtime_sharding(len(shape)), ordered)
    return Array(impl, aval, sharding, committed=True)


# -- make_array_from_process_local_data ---------------------------------------------------------------------
class NonUniformShardingError(ValueError):
    """Processes hold differently sized or partially overlapping parts of a dimension."""


def _slice_key(index: Any) -> tuple:
    return (index.start, index.stop) if isinstance(index, slice) else (index, index)


def process_index_and_count(sharding: Any, dim: int, ndim: int) -> tuple[int, int]:
    """``(i, n)``: this process holds the ``i``-th of ``n`` distinct parts of dimension ``dim``.

    Processes holding the same part share ``i``. Raises ``NonUniformShardingError``
    when processes hold differently many parts of ``dim``, or parts that
    overlap without being equal (JAX's ``get_process_index_and_count``).
    """
    if sharding.is_fully_addressable or sharding.is_fully_replicated:
        return 0, 1
    device_map = sharding.devices_indices_map((sharding.num_devices,) * ndim)
    by_process: dict[int, set] = {}
    every: set = set()
    for device, index in device_map.items():
        key = _slice_key(index[dim])
        by_process.setdefault(device.process_index, set()).add(key)
        every.add(key)
    mine = frozenset(by_process[next(iter(sharding.addressable_devices)).process_index])
    if any(len(parts) != len(mine) for parts in by_process.values()):
        raise NonUniformShardingError(f"{sharding} is non-uniform on dimension {dim}: some processes hold "
                                      "different numbers of slices")
    unique = list(dict.fromkeys(frozenset(parts) for parts in by_process.values()))
    if sum(len(parts) for parts in unique) != len(every):
        raise NonUniformShardingError(f"{sharding} is non-uniform on dimension {dim}")
    return unique.index(mine), len(unique)


def local_to_global_shape(sharding: Any, local_shape: Sequence[int]) -> tuple[int | None, ...]:
    """The global shape whose process-local part is ``local_shape`` (None where the sharding is non-uniform)."""
    result: list[int | None] = []
    for dim, size in enumerate(local_shape):
        try:
            result.append(size * process_index_and_count(sharding, dim, len(local_shape))[1])
        except NonUniformShardingError:
            result.append(None)
    return tuple(result)


def num_addressable_indices(sharding: Any, dim: int, global_shape: Sequence[int]) -> int:
    """How many indices of dimension ``dim`` this process's devices hold together."""
    addressable = sharding.addressable_devices_indices_map(tuple(global_shape))
    unique = {_slice_key(index[dim]) for index in addressable.values()}
    return sharding.shard_shape(tuple(global_shape))[dim] * len(unique)


def _array_from_process_local_data(local_data: np.ndarray, sharding: Any, global_shape: Any) -> Array:
    local_shape = local_data.shape
    if global_shape is None:
        global_shape = local_to_global_shape(sharding, local_shape)
        if None in global_shape:
            raise ValueError(f"Unable to compute global_shape due to non-uniform sharding. Specify global shape "
                             f"directly. Partially computed global_shape={global_shape}.")
    elif None in tuple(global_shape):
        raise ValueError(f"global_shape={tuple(global_shape)} has Nones. This is not supported.")
    global_shape = tuple(int(d) for d in global_shape)
    if len(global_shape) != len(local_shape):
        raise ValueError(f"global_shape {global_shape} and the local data's shape {local_shape} have different "
                         "ranks")
    full_dim = []
    for dim, (data_dim, global_dim) in enumerate(zip(local_shape, global_shape)):
        full_dim.append(data_dim == global_dim)
        if data_dim != global_dim:
            process_slice = num_addressable_indices(sharding, dim, global_shape)
            if process_slice != data_dim:
                raise ValueError(f"Invalid host data, each dimension should match either global or process shape. "
                                 f"In dimension {dim}, the process data has {data_dim} elements. Process addresses "
                                 f"{process_slice} elements and global_shape={global_shape}.")
    addressable = sharding.addressable_devices_indices_map(global_shape)
    shard_shape = sharding.shard_shape(global_shape)
    starts: list[list[int]] = [sorted({(index[dim].start or 0) for index in addressable.values()})
                               for dim in range(len(global_shape))]

    @functools.lru_cache(maxsize=4096)
    def local_slice(dim: int, start: int | None) -> slice:
        begin = starts[dim].index(start or 0) * shard_shape[dim]
        return slice(begin, begin + shard_shape[dim])

    def callback(index: Index) -> np.ndarray:
        return local_data[tuple(s if full_dim[d] else local_slice(d, s.start) for d, s in enumerate(index))]

    return make_array_from_callback(global_shape, sharding, callback)


def make_array_from_process_local_data(sharding: Any, local_data: Any, global_shape: Any = None) -> Any:
    """A global ``Array`` (or pytree of them) from the data this process has.

    The common case: the batch dimension is sharded over the processes and
    each process loads its own sub-batch; ``local_data`` is that sub-batch and
    the global shape is inferred. In general each dimension of
    ``local_data`` either equals ``global_shape``'s (every process has the
    whole extent) or is the extent this process's devices hold together, which
    are mapped in order onto ``local_data``. ``sharding`` may be a
    ``PartitionSpec`` under ``toolkit.set_mesh``, or a pytree prefix of
    ``local_data``; ``global_shape`` a shape or a pytree prefix of shapes.

    With one process this is ``device_put(local_data, sharding)``; a
    ``global_shape`` other than the data's is then a ``ValueError``.

    Example (2 processes × 4 devices; rows over all 8 devices)::

        >>> s = NamedSharding(mesh, P(("x", "y")))
        >>> local = np.full((8, 32), toolkit.process_index())       # this process's 8 rows
        >>> x = toolkit.make_array_from_process_local_data(s, local)
        >>> x.shape
        (16, 32)
    """
    fname = "make_array_from_process_local_data"
    leaves, tree = pytrees.tree_flatten(local_data)
    def is_sharding_leaf(x):
        return x is None or isinstance(x, PartitionSpec) or _is_sharding(x)

    sharding_flat = pytrees.broadcast_prefix(sharding, local_data, is_leaf=is_sharding_leaf)
    sharding_flat = [_check_sharding(resolve_sharding(s, fname, abstract_use="never")  # devices: a concrete mesh
                                     if isinstance(s, PartitionSpec) else s, fname) for s in sharding_flat]
    shape_flat = pytrees.broadcast_prefix(global_shape, local_data,
                                            is_leaf=lambda x: x is None or isinstance(x, tuple))
    data_flat = [np.asarray(x) if not isinstance(x, Array) else x for x in leaves]
    if process_count() == 1:
        for shape, data in zip(shape_flat, data_flat):
            if shape is not None and tuple(shape) != tuple(data.shape):
                raise ValueError(f"When calling `make_array_from_process_local_data` on a single process, "
                                 f"global_shape should be None or equal to local_data.shape. Got "
                                 f"global_shape={tuple(shape)} and local_data.shape={tuple(data.shape)}.")
        return pytrees.tree_unflatten(tree, [device_put(d, s) for d, s in zip(data_flat, sharding_flat)])
    out = [_array_from_process_local_data(np.asarray(d), s, shape)
           for d, s, shape in zip(data_flat, sharding_flat, shape_flat)]
    return pytrees.tree_unflatten(tree, out)


def _is_sharding(x: Any) -> bool:
    return isinstance(x, Sharding)
