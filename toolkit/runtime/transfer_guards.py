"""JAX's transfer guards on toolkit's arrays: the ``jax_transfer_guard_*`` flags applied to jaxlib's guard state.

The checks themselves are jaxlib's (``jaxlib._jax.guard_lib``, the C++ JAX uses): an implicit host-to-device
transfer (a numpy argument of a jit call, a Python scalar operand) under ``disallow`` raises jaxlib's
``JaxRuntimeError`` ("Disallowed host-to-device transfer: ..."), ``log`` logs it. Explicit transfers
(``toolkit.device_put``, ``toolkit.device_get``) are marked with :func:`explicit_device_put` /
:func:`explicit_device_get`, so only ``disallow_explicit`` / ``log_explicit`` guard them — as in JAX. As in JAX,
a device-to-host copy on the CPU backend is no transfer and is never guarded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from jaxlib._jax import guard_lib

from toolkit.core.config import watch_flag

__all__ = ["explicit_device_get", "explicit_device_put", "install"]

_LEVELS = {
    "allow": guard_lib.TransferGuardLevel.ALLOW, "log": guard_lib.TransferGuardLevel.LOG,
    "disallow": guard_lib.TransferGuardLevel.DISALLOW, "log_explicit": guard_lib.TransferGuardLevel.LOG_EXPLICIT,
    "disallow_explicit": guard_lib.TransferGuardLevel.DISALLOW_EXPLICIT,
}


def _watcher(direction: str) -> Any:
    def apply(value: Any, thread_local: bool) -> None:
        state = guard_lib.thread_local_state() if thread_local else guard_lib.global_state()
        setattr(state, direction, None if value is None else _LEVELS[value])
    return apply


_installed = False


def install() -> None:
    """Apply the three ``jax_transfer_guard_*`` flags to jaxlib's guard state, now and on every change."""
    global _installed
    if _installed:
        return
    _installed = True
    for direction in ("host_to_device", "device_to_device", "device_to_host"):
        watch_flag(f"jax_transfer_guard_{direction}", _watcher(direction))


@contextlib.contextmanager
def explicit_device_put() -> Iterator[None]:
    """Mark the transfers inside as explicit (``device_put``): only the ``*_explicit`` levels guard them."""
    state = guard_lib.thread_local_state()
    previous = state.explicit_device_put
    state.explicit_device_put = True
    try:
        yield
    finally:
        state.explicit_device_put = previous


@contextlib.contextmanager
def explicit_device_get() -> Iterator[None]:
    """Mark the transfers inside as explicit (``device_get``): only the ``*_explicit`` levels guard them."""
    state = guard_lib.thread_local_state()
    previous = state.explicit_device_get
    state.explicit_device_get = True
    try:
        yield
    finally:
        state.explicit_device_get = previous
