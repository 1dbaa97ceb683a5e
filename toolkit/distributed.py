"""Several processes, one computation: JAX's multi-controller model on jaxlib's distributed runtime.

Every process runs the same program. ``initialize`` connects the processes
through XLA's coordination service (hosted by process 0) before any device is
used; the CPU client is then made with the distributed client and gloo TCP
collectives, so ``toolkit.devices()`` lists every process's devices (each with
its ``process_index``) and a ``toolkit.jit`` over a mesh of them runs in every
process, each feeding and reading its own devices.

Example (two terminals, same machine; see ``docs/distributed.md``)::

    import toolkit
    toolkit.distributed.initialize("127.0.0.1:12345", num_processes=2, process_id=0)  # 1 in the other
    print(toolkit.process_index(), toolkit.device_count(), toolkit.local_device_count())

Faults never hang a process; they end it within the coordination service's
timeouts, set here. A process that never arrives: after
``initialization_timeout`` seconds the others' ``initialize`` ends the process
with XLA's "Terminating process because the JAX distributed service detected
fatal errors ... Barrier timed out ... Wait_for_all_tasks_to_register" message.
A process that dies: a computation waiting on it in a CPU collective raises
``JaxRuntimeError`` ("Gloo ... Connection closed by peer") at once; after
``heartbeat_timeout`` seconds without its heartbeat the service declares it
dead, a barrier raises ``RuntimeError`` ("Task 1 heartbeat timeout") and every
other process is then ended with the same XLA message. This is JAX's behaviour
too; see ``toolkit/runtime/coordination.py`` for why no Python exception is
possible there.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit import cluster_environments as _cluster
from toolkit.runtime import client as _client
from toolkit.runtime import coordination as _runtime

__all__ = ["initialize", "shutdown", "is_initialized"]

#: Default seconds without a heartbeat after which the service declares a process dead (JAX: 100;
#: shorter here so a dead process is noticed within a minute).
DEFAULT_HEARTBEAT_TIMEOUT = 30
#: Default seconds a process waits in ``shutdown`` for the others (JAX: 300).
DEFAULT_SHUTDOWN_TIMEOUT = 300


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"toolkit.distributed.initialize: {name} must be an int, got {value!r} "
                        f"of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"toolkit.distributed.initialize: {name} must be >= {minimum}, got {value}")
    return value


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: int | Sequence[int] | None = None,
               cluster_detection_method: str | None = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int | None = None, shutdown_timeout_seconds: int | None = None,
               coordinator_bind_address: str | None = None, slice_index: int | None = None,
               partition_index: int | None = None, *, heartbeat_timeout: int | None = None,
               shutdown_timeout: int | None = None) -> None:
    """Join this process to a multi-process run; call it in every process before any device is used.

    Args:
      coordinator_address: ``host:port`` of process 0, where it starts the
        coordination service (bound to every interface on that port) and every
        process connects. Default: ``TOOLKIT_COORDINATOR_ADDRESS``, else the
        launcher's (see below).
      num_processes: how many processes take part. Default: ``TOOLKIT_NUM_PROCESSES``,
        else the launcher's.
      process_id: this process's index, ``0 <= process_id < num_processes``,
        distinct in every process. Default: ``TOOLKIT_PROCESS_ID``, else the launcher's.
      local_device_ids: restrict this process to these local accelerator
        devices (GPU ``visible_devices``); ignored by the CPU client, whose
        device count is ``TOOLKIT_NUM_CPU_DEVICES``. Default:
        ``TOOLKIT_LOCAL_DEVICE_IDS`` (``0,1``), else ``[local rank]`` when a
        launcher says it.

    Arguments left out are found as ``jax.distributed.initialize()`` finds
    them (``toolkit/cluster_environments.py``): an explicit argument wins,
    then each ``TOOLKIT_*`` variable, then the first launcher whose variables
    are present — Open MPI's ``mpirun``, MPICH's ``mpiexec``, SLURM's ``srun``.
      cluster_detection_method: ``None`` (find the launcher), ``"deactivate"``
        (consult no launcher; ``TOOLKIT_*`` variables still count) or a
        launcher's name (``"ompi"``, ``"mpich"``, ``"slurm"``: that one only).
      initialization_timeout: seconds to wait for every process to connect;
        then the process is ended with XLA's message (see the module docstring).
      heartbeat_timeout_seconds: seconds without a heartbeat after which the
        service declares a process dead and ends the others (default 30;
        JAX's 100). ``heartbeat_timeout`` is the same, toolkit's earlier name.
      shutdown_timeout_seconds: seconds ``shutdown`` waits for the other
        processes (default 300). ``shutdown_timeout`` is the same.
      coordinator_bind_address: ``host:port`` process 0's service listens on
        (default: every interface, on the coordinator's port).
      slice_index, partition_index: TPU slices and GPU partitions, which
        toolkit's runtime has no notion of: only ``None``
        (``NotImplementedError`` otherwise).

    Raises:
      RuntimeError: called twice (without ``shutdown`` between), or after a
        device, array or computation was already used in this process.
      ValueError, TypeError: an argument (or its environment variable) is
        missing or wrong; the message names it. With no argument and no
        environment, the message lists every variable looked for.
    """
    heartbeat_timeout = _one_of("heartbeat_timeout", heartbeat_timeout_seconds, heartbeat_timeout,
                                DEFAULT_HEARTBEAT_TIMEOUT)
    shutdown_timeout = _one_of("shutdown_timeout", shutdown_timeout_seconds, shutdown_timeout,
                               DEFAULT_SHUTDOWN_TIMEOUT)
    for name, value in (("slice_index", slice_index), ("partition_index", partition_index)):
        if value is not None:
            raise NotImplementedError(f"toolkit.distributed.initialize: {name} (TPU slices, GPU partitions) is not "
                                      "supported by toolkit's runtime; leave it None")
    if cluster_detection_method is not None:
        _cluster.launcher_named(cluster_detection_method)  # an unknown name is an error even when unused
    if coordinator_bind_address is not None and (not isinstance(coordinator_bind_address, str)
                                                 or ":" not in coordinator_bind_address):
        raise ValueError("toolkit.distributed.initialize: coordinator_bind_address must be 'host:port', "
                         f"got {coordinator_bind_address!r}")
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    if local_device_ids is not None:
        local_device_ids = list(local_device_ids)
        for i in local_device_ids:
            _check_int("local_device_ids[...]", i, 0)
    found = _cluster.resolve(coordinator_address, num_processes, process_id, local_device_ids,
                             cluster_detection_method)
    coordinator_address, num_processes, process_id = (found.coordinator_address, found.num_processes,
                                                      found.process_id)
    local_device_ids = found.local_device_ids
    if coordinator_address is None and num_processes is None and process_id is None:
        raise ValueError("toolkit.distributed.initialize: no coordinator_address, num_processes or process_id "
                         "given and no cluster environment found; looked for " + _cluster.looked_for())
    launchers = ", ".join(env.name for env in _cluster.registered() if env is not _cluster.GenericEnvironment)
    if coordinator_address is None:
        raise ValueError("toolkit.distributed.initialize: coordinator_address is required (host:port of process 0), "
                         f"or set TOOLKIT_COORDINATOR_ADDRESS (no launcher environment ({launchers}) was found "
                         "to supply it)")
    if not isinstance(coordinator_address, str) or ":" not in coordinator_address:
        raise ValueError("toolkit.distributed.initialize: coordinator_address must be 'host:port', "
                         f"got {coordinator_address!r}")
    port = coordinator_address.rsplit(":", 1)[1]
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("toolkit.distributed.initialize: coordinator_address must end in a port number "
                         f"1..65535, got {coordinator_address!r}")
    if num_processes is None:
        raise ValueError("toolkit.distributed.initialize: num_processes is required, or set TOOLKIT_NUM_PROCESSES "
                         f"(no launcher environment ({launchers}) was found to supply it)")
    if process_id is None:
        raise ValueError("toolkit.distributed.initialize: process_id is required, or set TOOLKIT_PROCESS_ID "
                         f"(no launcher environment ({launchers}) was found to supply it)")
    _check_int("num_processes", num_processes, 1)
    _check_int("process_id", process_id, 0)
    if process_id >= num_processes:
        raise ValueError(f"toolkit.distributed.initialize: process_id must be < num_processes, got "
                         f"process_id={process_id}, num_processes={num_processes}")
    _check_int("initialization_timeout", initialization_timeout, 1)
    _check_int("heartbeat_timeout", heartbeat_timeout, 1)
    _check_int("shutdown_timeout", shutdown_timeout, 1)
    if _runtime.state.initialized:
        raise RuntimeError("toolkit.distributed.initialize should only be called once: this process is already "
                           f"process {_runtime.state.process_id} of {_runtime.state.num_processes}; call "
                           "toolkit.distributed.shutdown() before initializing again")
    if _client.backends_are_initialized():
        raise RuntimeError("toolkit.distributed.initialize must be called before anything that creates the "
                           "device backend (toolkit.devices(), device_put, running a computation, ...): move the "
                           "call to the start of the program, before any other toolkit call")
    _runtime.connect(coordinator_address, num_processes, process_id, local_device_ids=local_device_ids,
                     initialization_timeout=initialization_timeout, heartbeat_timeout=heartbeat_timeout,
                     shutdown_timeout=shutdown_timeout, bind_address=coordinator_bind_address)


def _one_of(name: str, jax_value: int | None, toolkit_value: int | None, default: int) -> int:
    """A timeout given by JAX's name (``..._seconds``) or toolkit's, not both; else the default."""
    if jax_value is not None and toolkit_value is not None:
        raise TypeError(f"toolkit.distributed.initialize: give {name}_seconds or {name} (the same), not both")
    if jax_value is not None:
        return jax_value
    return default if toolkit_value is None else toolkit_value


def is_initialized() -> bool:
    """Whether ``initialize`` ran (and ``shutdown`` did not since)."""
    return _runtime.state.initialized


def shutdown() -> None:
    """Leave the multi-process run: disconnect from the coordination service (process 0 also stops it).

    Waits up to ``shutdown_timeout`` seconds for the other processes to shut
    down too. Does nothing when not initialized; runs by itself at interpreter
    exit. Devices already made stay usable only for single-process work.
    """
    _runtime.disconnect()
