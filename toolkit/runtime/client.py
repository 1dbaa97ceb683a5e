"""PJRT clients and devices: the CPU client (with ``TOOLKIT_NUM_CPU_DEVICES``
virtual devices) and, when jaxlib's CUDA plugin is installed and a GPU is
present, the CUDA client.

After ``toolkit.distributed.initialize`` the clients are made with the
distributed runtime (``runtime/coordination.py``): the CPU client gets the
distributed client, this process's node id, the number of processes and gloo
TCP collectives, so ``devices()`` lists every process's devices and
``local_devices()`` this process's own.

The default platform is chosen as JAX chooses (``platforms.py``): CUDA when
its plugin is installed and a GPU is visible, else CPU; ``TOOLKIT_PLATFORMS``
restricts and orders. The CUDA path follows jaxlib's plugin discovery
(``jax_plugins.xla_cuda*``) and is untested on this project's machines, which
have no GPU.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

from jaxlib import _jax, xla_client
from jaxlib._jax import Device  # imported (not assigned) so mypy accepts it as a type

from toolkit.core.config import flag_value
from toolkit.runtime import coordination as _coordination
from toolkit.runtime import platforms

_clients: dict[str, Any] = {}
_lock = threading.Lock()


def num_cpu_devices() -> int:
    """How many CPU devices the CPU client makes (``TOOLKIT_NUM_CPU_DEVICES``, default 1)."""
    text = os.environ.get("TOOLKIT_NUM_CPU_DEVICES", "1")
    try:
        count = int(text)
    except ValueError:
        raise ValueError(f"TOOLKIT_NUM_CPU_DEVICES must be a positive integer, got {text!r}") from None
    if count < 1:
        raise ValueError(f"TOOLKIT_NUM_CPU_DEVICES must be a positive integer, got {count}")
    return count


def _make_cuda_client() -> Any:
    path = platforms.cuda_plugin_path()
    if path is None:
        raise RuntimeError(f"platform 'cuda' is not available: {platforms.missing_reason('cuda')}")
    if not _jax.pjrt_plugin_loaded("cuda"):
        _jax.load_pjrt_plugin("cuda", path)
    if not _jax.pjrt_plugin_initialized("cuda"):
        _jax.initialize_pjrt_plugin("cuda")
    state = _coordination.state
    options: dict[str, Any] = {}
    if state.local_device_ids is not None:
        options["visible_devices"] = list(state.local_device_ids)
    if not state.initialized:
        return _jax.get_c_api_client("cuda", options)
    options.update(node_id=state.process_id, num_nodes=state.num_processes)
    return _jax.get_c_api_client("cuda", options, state.client)


def _make_cpu_client() -> Any:
    state = _coordination.state
    if not state.initialized:
        return xla_client.make_cpu_client(num_devices=num_cpu_devices())
    return xla_client.make_cpu_client(
        distributed_client=state.client, node_id=state.process_id, num_nodes=state.num_processes,
        collectives=_coordination.make_cpu_collectives(), num_devices=num_cpu_devices())


def backends_are_initialized() -> bool:
    """Whether any PJRT client was made (after which ``toolkit.distributed.initialize`` is refused)."""
    return bool(_clients)


_default_platform: str | None = None


def default_platform() -> str:
    """The default backend's platform (``runtime/platforms.py``: CUDA when present, else CPU;
    ``TOOLKIT_PLATFORMS`` restricts and orders). Fixed at its first use in the process."""
    global _default_platform
    if _default_platform is None:
        _default_platform = platforms.default_platform()
    return _default_platform


def backend(platform: str | None = None) -> Any:
    """The PJRT client for ``platform`` (``"cpu"``, ``"cuda"``/``"gpu"``); by default the default platform's."""
    if platform is None:
        platform = _default_platform or default_platform()
    client = _clients.get(platform)
    if client is not None:
        return client
    platform = platforms.check_allowed(platform)
    with _lock:
        client = _clients.get(platform)
        if client is None:
            if platform == "cpu":
                client = _make_cpu_client()
            else:
                client = _make_cuda_client()
            _clients[platform] = client
    return client


def _client_of(backend_: Any) -> Any:
    """The PJRT client a ``backend=`` argument names: a platform name (``"cpu"``, ``"gpu"``), None for the
    default platform's, or a client itself (as JAX's ``jax.devices(backend=client)``)."""
    if backend_ is None or isinstance(backend_, str):
        return backend(backend_)
    if hasattr(backend_, "devices") and hasattr(backend_, "process_index"):
        return backend_
    raise TypeError(f"backend must be a platform name such as 'cpu' or a PJRT client, got {backend_!r}")


def devices(backend: str | Any | None = None) -> list[Device]:
    """Every process's devices of ``backend`` (a platform name such as ``"cpu"``, or a client; default: the
    default platform's), in id order."""
    return list(_client_of(backend).devices())


def local_devices(process_index: int | None = None, backend: str | Any | None = None,
                  host_id: int | None = None) -> list[Device]:
    """The devices of process ``process_index`` (default: this one's own, addressable devices) of ``backend``.

    ``host_id`` is JAX's old name for ``process_index`` (with JAX's warning); an index that is not a process's is
    a ``ValueError``.
    """
    if host_id is not None:
        warnings.warn("The argument to jax.local_devices has been renamed from `host_id` to `process_index`. This "
                      "alias will eventually be removed; please update your code.", stacklevel=2)
        process_index = host_id
    client = _client_of(backend)
    if process_index is None or process_index == client.process_index():
        return list(client.local_devices())
    if not 0 <= process_index < process_count(client):
        raise ValueError(f"Unknown process_index {process_index}")
    return [d for d in client.devices() if d.process_index == process_index]


def device_count(backend: str | Any | None = None) -> int:
    """How many devices every process together has."""
    return _client_of(backend).device_count()


def local_device_count(backend: str | Any | None = None) -> int:
    """How many devices this process has."""
    return _client_of(backend).local_device_count()


def process_index(backend: str | Any | None = None) -> int:
    """This process's index (0 when single-process)."""
    return _client_of(backend).process_index()


def process_count(backend: str | Any | None = None) -> int:
    """How many processes take part (1 when single-process)."""
    return 1 + max(d.process_index for d in _client_of(backend).devices())


def default_device() -> Device:
    """The device uncommitted arrays and single-device programs use: ``jax_default_device`` when set (a device,
    or a platform name: its first device here), else the first of this process's devices."""
    chosen = flag_value("jax_default_device")
    if chosen is None:
        return backend().local_devices()[0]
    if isinstance(chosen, str):
        for device in backend().local_devices():
            if device.platform == chosen:
                return device
        raise RuntimeError(f"jax_default_device is {chosen!r}, but this process has no {chosen} device "
                           f"(its platform is {backend().platform})")
    return chosen


def platform_of(device: Device) -> str:
    return device.platform
