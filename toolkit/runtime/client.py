"""PJRT clients and devices: the CPU client (with ``TOOLKIT_NUM_CPU_DEVICES``
virtual devices) and, when jaxlib's CUDA plugin is installed and a GPU is
present, the CUDA client.

The CUDA path follows jaxlib's plugin discovery (``jax_plugins.xla_cuda*``)
and is untested on this project's machines, which have no GPU.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

from jaxlib import _jax, xla_client

Device = _jax.Device

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
    for module_name in ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"):
        try:
            plugin = importlib.import_module(module_name)
        except ImportError:
            continue
        path = os.path.join(os.path.dirname(plugin.__file__), "xla_cuda_plugin.so")
        if not os.path.exists(path):
            continue
        if not _jax.pjrt_plugin_loaded("cuda"):
            _jax.load_pjrt_plugin("cuda", path)
        if not _jax.pjrt_plugin_initialized("cuda"):
            _jax.initialize_pjrt_plugin("cuda")
        return _jax.get_c_api_client("cuda", {})
    raise RuntimeError("platform 'cuda' is not available: no jaxlib CUDA PJRT plugin is installed")


def backend(platform: str | None = None) -> Any:
    """The PJRT client for ``platform`` (``"cpu"`` by default; ``"cuda"``/``"gpu"`` when present)."""
    platform = (platform or "cpu").lower()
    if platform == "gpu":
        platform = "cuda"
    client = _clients.get(platform)
    if client is not None:
        return client
    with _lock:
        client = _clients.get(platform)
        if client is None:
            if platform == "cpu":
                client = xla_client.make_cpu_client(num_devices=num_cpu_devices())
            elif platform == "cuda":
                client = _make_cuda_client()
            else:
                raise ValueError(f"unknown platform {platform!r}; toolkit knows 'cpu' and 'cuda'")
            _clients[platform] = client
    return client


def devices(platform: str | None = None) -> list[Device]:
    """The devices of ``platform`` (default: CPU), in id order."""
    return list(backend(platform).devices())


def default_device() -> Device:
    return backend().devices()[0]


def platform_of(device: Device) -> str:
    return device.platform
