"""A minimal, self-contained compile-and-run path on XLA CPU for ``toolkit-run``.

One CPU device, numpy in, numpy out. It shares nothing with the main runtime
(``client.py``/``arrays.py``/``executable.py``) on purpose so the two can be
merged later without a tangle.

Example::

    executable = compile_module(module_text)
    outputs = execute(executable, [np.ones((2,), np.float32)])
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax, xla_client

_lock = threading.Lock()
_client: Any = None
_lapack_registered = False
_x64_state_set = False


def cpu_client() -> Any:
    """The process's standalone single-device CPU client (made on first use)."""
    global _client
    with _lock:
        if _client is None:
            _client = xla_client.make_cpu_client()
        return _client


def register_lapack_kernels() -> None:
    """Register jaxlib's LAPACK custom-call targets (linalg programs name them)."""
    global _lapack_registered
    with _lock:
        if _lapack_registered:
            return
        from jaxlib import lapack

        # The kernels reach LAPACK through function pointers that initialize()
        # fills in; registering without it makes linalg programs crash.
        initialize = getattr(getattr(lapack, "_lapack", None), "initialize", None)
        if initialize is not None:
            initialize()
        for platform, targets in lapack.registrations().items():
            for name, capsule, api_version in targets:
                xla_client.register_custom_call_target(name, capsule, platform=platform,
                                                       api_version=api_version)
        _lapack_registered = True


class _SingleDevice(_jax.SingleDeviceSharding):
    """jaxlib's single-device sharding plus the Python members its C++ reads."""

    memory_kind = None
    is_fully_addressable = True
    is_fully_replicated = True
    num_devices = 1

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return xla_client.HloSharding.replicate()

    @property
    def _device_assignment(self) -> tuple:
        return (self._device,)

    @property
    def device_set(self) -> set:
        return {self._device}

    def shard_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(shape)

    def devices_indices_map(self, shape: Sequence[int]) -> dict:
        return {self._device: tuple(slice(None) for _ in shape)}


class _Aval:
    __slots__ = ("shape", "dtype", "ndim", "weak_type")

    def __init__(self, array: np.ndarray):
        self.shape, self.dtype, self.ndim, self.weak_type = array.shape, array.dtype, array.ndim, False


def _ensure_x64_state() -> None:
    global _x64_state_set
    if not _x64_state_set:
        try:
            _jax.jax_jit.set_enable_x64_state(
                _jax.config.Config("toolkit_standalone_x64", True, include_in_jit_key=True))
        except Exception:  # another part of the process installed one already
            pass
        _x64_state_set = True


def compile_module(module: str | bytes) -> Any:
    """Compile StableHLO (text or bytecode) for the one CPU device.

    Raises ValueError with XLA's message when compilation fails.
    """
    register_lapack_kernels()
    client = cpu_client()
    devices = client.devices()[:1]
    try:
        return client.compile_and_load(module, executable_devices=xla_client.DeviceList(tuple(devices)),
                                       compile_options=xla_client.CompileOptions())
    except _jax.JaxRuntimeError as error:
        raise ValueError(f"XLA could not compile the module: {error}") from None


def execute(executable: Any, arguments: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``executable`` on host arrays; return the results as numpy arrays."""
    _ensure_x64_state()
    device = cpu_client().devices()[0]
    sharding = _SingleDevice(device)
    device_arrays = [
        _jax.batched_device_put(_Aval(a), sharding, [a], [device], True, False, enable_x64=True)
        for a in (np.ascontiguousarray(x) for x in arguments)
    ]
    results = executable.execute_sharded(device_arrays)
    return [np.asarray(per_device[0]) for per_device in results.disassemble_into_single_device_arrays()]
