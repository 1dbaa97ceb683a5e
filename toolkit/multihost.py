"""Communication across processes, built on toolkit's own ``jit``, shardings and XLA's collectives
(JAX's ``jax.experimental.multihost_utils``).

Every function here is collective: each process of a multi-process run
(``toolkit.distributed.initialize``) must call it, in the same order, with
arrays of the same shapes. The data crosses processes the way any sharded
computation's does: each process's value becomes its rows of a global array
over a ``("processes", "local_devices")`` mesh of every device, and a jitted
identity or sum whose output is replicated makes XLA insert the all-gather
or all-reduce. With one process they reduce to numpy conversions.

Example (in every process)::

    from toolkit import multihost
    multihost.sync_global_devices("loaded")                 # a barrier
    seed = multihost.broadcast_one_to_all(np.int32(time.time_ns() % 2**31))   # process 0's value
    ids = multihost.process_allgather(np.int32(toolkit.process_index()))      # array([0, 1])
    full = multihost.process_allgather(global_array, tiled=True)              # the whole value, as numpy
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

import numpy as np

import toolkit.numpy as tnp
from toolkit.array import Array, device_put
from toolkit.core import pytrees
from toolkit.global_arrays import local_devices, make_array_from_single_device_arrays, process_count, process_index
from toolkit.runtime import client as runtime_client
from toolkit.shard import GSPMDSharding, Mesh, NamedSharding, PartitionSpec
from toolkit.stages import jit

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices", "assert_equal"]


def _processes_mesh() -> Any:
    """Every device as a ``("processes", "local_devices")`` mesh: row ``p`` is process ``p``'s devices."""
    devices = sorted(runtime_client.devices(), key=lambda d: (d.process_index, d.id))
    count = process_count()
    if len(devices) % count:
        raise RuntimeError(f"the processes have different numbers of devices ({len(devices)} devices over "
                           f"{count} processes); toolkit.multihost needs the same number in every process")
    return Mesh(np.array(devices, dtype=object).reshape(count, len(devices) // count),
                ("processes", "local_devices"))


def _identity(x: Any) -> Any:
    return x


def _sum_over_processes(tree: Any) -> Any:
    def one(x: Any) -> Any:
        if x.dtype == np.bool_:
            return tnp.any(x, axis=0)
        return tnp.sum(x, axis=0, dtype=x.dtype)
    return pytrees.tree_map(one, tree)


@functools.lru_cache(maxsize=64)
def _jitted(fun: Any, out_sharding: Any) -> Any:
    """One ``jit`` per (function, output sharding), so repeated calls reuse the executable."""
    return jit(fun, out_shardings=out_sharding)


def _host_rows_to_global(value: np.ndarray, mesh: Any) -> Array:
    """A global array of shape ``(process_count * n, ...)`` whose rows ``p*n:(p+1)*n`` are process ``p``'s
    ``value`` (shape ``(n, ...)``), replicated over that process's devices."""
    sharding = NamedSharding(mesh, PartitionSpec("processes"))
    pieces = [device_put(value, d) for d in local_devices()]
    shape = (value.shape[0] * mesh.shape["processes"],) + tuple(value.shape[1:])
    return make_array_from_single_device_arrays(shape, sharding, pieces)


def _replicated_like(x: Array) -> Any:
    if isinstance(x.sharding, NamedSharding):
        return x.sharding.update(spec=PartitionSpec())
    return GSPMDSharding.get_replicated(tuple(x.sharding._device_assignment))


def _host(x: Any) -> np.ndarray:
    return np.asarray(x)


def _allgather_one(x: Any, tiled: bool) -> np.ndarray:
    if isinstance(x, Array) and not x.is_fully_addressable:
        if not tiled:
            raise ValueError("Gathering global non-fully-addressable arrays only supports tiled=True")
        out = _jitted(_identity, _replicated_like(x))(x)
        return np.asarray(out.addressable_data(0))
    if process_count() == 1:
        value = np.asarray(x)
        return value if tiled else np.expand_dims(value, 0)
    mesh = _processes_mesh()
    value = np.asarray(x)
    if value.ndim == 0 or not tiled:
        value = np.expand_dims(value, 0)
    rows = _host_rows_to_global(value, mesh)
    out = _jitted(_identity, NamedSharding(mesh, PartitionSpec()))(rows)
    return np.asarray(out.addressable_data(0))


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Gather every process's value; returns a pytree of numpy arrays, the same in every process.

    * A global ``Array`` that is not fully addressable (it spans other
      processes' devices): its whole value (``tiled=True`` is required; it is
      already one array).
    * A numpy array, scalar or fully addressable ``Array`` (each process has
      its own): the processes' values stacked on a new leading axis
      (``tiled=False``, shape ``(process_count, *shape)``) or concatenated
      along axis 0 (``tiled=True``; scalars are always stacked).

    Every process must call it with values of the same shapes and dtypes.

    Example (2 processes)::

        >>> process_allgather(np.array([toolkit.process_index()] * 2))
        array([[0, 0],
               [1, 1]])
    """
    return pytrees.tree_map(lambda x: _allgather_one(x, tiled), in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Every process gets the source process's value (process 0's unless ``is_source`` says otherwise).

    ``in_tree`` is a pytree of arrays of the same shapes and dtypes in every
    process; exactly one process should pass ``is_source=True`` when it is
    given. Returns a pytree of numpy arrays. The value crosses processes as
    a sum over a ``processes`` mesh axis in which only the source contributes.

    Example::

        >>> key = broadcast_one_to_all(np.random.default_rng().integers(0, 2**31, 2))   # process 0's draw
    """
    if process_count() == 1:
        return pytrees.tree_map(_host, in_tree)
    if is_source is None:
        is_source = process_index() == 0
    mesh = _processes_mesh()

    def pre(x: Any) -> Array:
        value = np.asarray(x)
        value = value if is_source else np.zeros_like(value)
        return _host_rows_to_global(np.expand_dims(value, 0), mesh)

    rows = pytrees.tree_map(pre, in_tree)
    out = _jitted(_sum_over_processes, NamedSharding(mesh, PartitionSpec()))(rows)
    return pytrees.tree_map(lambda x: np.asarray(x.addressable_data(0)), out)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """``AssertionError`` (with ``fail_message``) unless every process passed the same values."""
    def expected(x: Any) -> np.ndarray:
        if isinstance(x, Array) and not x.is_fully_addressable:
            return np.asarray(x.addressable_data(0))
        value = np.asarray(x)
        if value.ndim == 0:
            value = np.expand_dims(value, 0)
        return np.concatenate([value] * process_count())

    gathered = process_allgather(in_tree, tiled=True)
    wanted = pytrees.tree_map(expected, in_tree)
    pairs = zip(pytrees.tree_leaves(wanted), pytrees.tree_leaves(gathered))
    if not all(bool(np.all(np.equal(a, b))) for a, b in pairs):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """A barrier: returns in each process once every process has called it with the same ``name``.

    The processes exchange a hash of ``name`` through a collective over all
    devices; different names raise ``AssertionError`` in every process.
    """
    digest = np.uint32(zlib.crc32(name.encode()))
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")
