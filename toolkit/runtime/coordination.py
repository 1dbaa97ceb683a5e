"""jaxlib's distributed runtime: the coordination service, its clients and the CPU collectives.

The only module that touches ``_jax.get_distributed_runtime_service``,
``_jax.get_distributed_runtime_client`` and ``_jax.make_gloo_tcp_collectives``.
``toolkit.distributed`` is the public face; ``client.py`` reads :data:`state`
when it makes the CPU client.

Process 0 hosts the coordination service (bound to every interface on the
coordinator's port, as JAX does); every process, 0 included, connects a client
to it.

How failures surface (measured on jaxlib 0.10.2, 2 processes on loopback):

* a peer that dies while this process is in a CPU collective: gloo's TCP
  connection closes and the running computation raises ``JaxRuntimeError``
  ("Gloo all-reduce failed: ... Connection closed by peer") within about a second;
* a peer that dies while this process waits at a barrier: ``barrier`` raises
  once the service declares the peer dead (``heartbeat_timeout``);
* in every other case — a peer never arriving at ``initialize`` (after
  ``initialization_timeout``), a peer dead for ``heartbeat_timeout`` seconds,
  ``shutdown`` after a peer died — the coordination client's error handler ends
  the process (SIGABRT) with XLA's message "Terminating process because the JAX
  distributed service detected fatal errors ... absl::Status: ...". That
  handler cannot be replaced from Python: jaxlib 0.10.2 accepts a
  ``missed_heartbeat_callback`` but cannot pass its ``absl::Status`` argument
  to Python (the process dies with ``std::bad_cast`` instead), so the default
  stays. The process never hangs.
"""

from __future__ import annotations

import atexit
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from jaxlib import _jax

RuntimeError_ = _jax.JaxRuntimeError

@dataclass
class State:
    """The distributed runtime of this process (one per process, :data:`state`)."""

    coordinator_address: str | None = None
    process_id: int = 0
    num_processes: int = 1
    local_device_ids: list[int] | None = None
    heartbeat_timeout: int = 30
    shutdown_timeout: int = 300
    service: Any = None
    client: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def initialized(self) -> bool:
        return self.client is not None


state = State()


def default_bind_address(coordinator_address: str) -> str:
    """Where process 0's service listens: every interface, on the coordinator's port (JAX's default)."""
    return "[::]:" + coordinator_address.rsplit(":", 1)[1]


def connect(coordinator_address: str, num_processes: int, process_id: int, *,
            local_device_ids: Sequence[int] | None, initialization_timeout: int,
            heartbeat_timeout: int, shutdown_timeout: int, bind_address: str | None = None) -> None:
    """Start the service (process 0) and connect this process's client; fills :data:`state`.

    Raises ``RuntimeError`` when already connected, and ``RuntimeError`` naming the
    coordinator when the other processes do not all connect within ``initialization_timeout``.
    ``bind_address``: where process 0's service listens (default :func:`default_bind_address`).
    """
    with state._lock:
        if state.initialized:
            raise RuntimeError("toolkit.distributed.initialize should only be called once "
                               f"(this process is already process {state.process_id} of {state.num_processes}); "
                               "call toolkit.distributed.shutdown() first to start again")
        service = None
        listen = bind_address or default_bind_address(coordinator_address)
        if process_id == 0:
            try:
                service = _jax.get_distributed_runtime_service(
                    listen, num_processes,
                    heartbeat_timeout=heartbeat_timeout,
                    cluster_register_timeout=initialization_timeout,
                    shutdown_timeout=shutdown_timeout)
            except RuntimeError_ as error:
                raise RuntimeError(f"toolkit.distributed.initialize: process 0 could not start the coordination "
                                   f"service on {listen} (is the port free?): "
                                   f"{error}") from None
        client = _jax.get_distributed_runtime_client(
            coordinator_address, process_id,
            init_timeout=initialization_timeout,
            shutdown_timeout=shutdown_timeout,
            heartbeat_timeout=heartbeat_timeout,
            use_compression=True)
        try:
            client.connect()
        except RuntimeError_ as error:
            if service is not None:
                service.shutdown()
            raise RuntimeError(
                f"toolkit.distributed.initialize: process {process_id} of {num_processes} could not join the "
                f"coordination service at {coordinator_address} within initialization_timeout="
                f"{initialization_timeout} s (did every process start, with the same coordinator_address and "
                f"num_processes, and a distinct process_id?): {error}") from None
        state.coordinator_address = coordinator_address
        state.process_id = process_id
        state.num_processes = num_processes
        state.local_device_ids = None if local_device_ids is None else list(local_device_ids)
        state.heartbeat_timeout = heartbeat_timeout
        state.shutdown_timeout = shutdown_timeout
        state.service = service
        state.client = client
        _register_atexit()


def disconnect() -> None:
    """Disconnect the client, then stop the service (process 0). Idempotent; safe at interpreter exit.

    The client's shutdown waits (up to ``shutdown_timeout``) for every process to
    reach shutdown, so processes leave together.
    """
    with state._lock:
        client, service = state.client, state.service
        state.client = state.service = None
        errors = []
        if client is not None:
            try:
                client.shutdown()
            except RuntimeError_ as error:
                errors.append(error)
        if service is not None:
            try:
                service.shutdown()
            except RuntimeError_ as error:
                errors.append(error)
        state.coordinator_address, state.process_id, state.num_processes = None, 0, 1
        state.local_device_ids = None
    if errors:
        raise RuntimeError(f"toolkit.distributed.shutdown: {'; '.join(map(str, errors))}")


_atexit_registered = False


def _register_atexit() -> None:
    global _atexit_registered
    if not _atexit_registered:
        _atexit_registered = True
        atexit.register(_shutdown_at_exit)


def _shutdown_at_exit() -> None:
    try:
        disconnect()
    except Exception as error:  # at exit, a message beats a traceback
        sys.stderr.write(f"{error}\n")


def make_cpu_collectives() -> Any:
    """Gloo collectives over TCP, rendezvousing through the distributed client (for the CPU client)."""
    if state.client is None:
        return None
    return _jax.make_gloo_tcp_collectives(distributed_client=state.client)


def barrier(name: str, timeout_seconds: float, process_ids: Sequence[int] | None = None) -> None:
    """Wait until every process (or ``process_ids``) reaches the barrier ``name``.

    Raises ``RuntimeError`` naming the barrier when it is not reached within ``timeout_seconds``
    or a process failed.
    """
    if state.client is None:
        return
    try:
        state.client.wait_at_barrier(name, int(timeout_seconds * 1000),
                                     None if process_ids is None else list(process_ids))
    except RuntimeError_ as error:
        raise RuntimeError(f"process {state.process_id}: barrier {name!r} failed (timeout {timeout_seconds} s; "
                           f"another process died or did not arrive): {error}") from None


def key_value_set(key: str, value: bytes) -> None:
    """Publish ``value`` under ``key`` in the coordination service's store."""
    state.client.key_value_set_bytes(key, value)


def key_value_get(key: str, timeout_seconds: float) -> bytes:
    """Wait up to ``timeout_seconds`` for ``key`` in the coordination service's store."""
    try:
        return state.client.blocking_key_value_get_bytes(key, int(timeout_seconds * 1000))
    except RuntimeError_ as error:
        raise RuntimeError(f"process {state.process_id}: key {key!r} did not appear within {timeout_seconds} s: "
                           f"{error}") from None
