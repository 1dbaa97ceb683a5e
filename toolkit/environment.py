"""The process's environment as JAX's top-level functions show it: the default backend, host copies of device
arrays, the live arrays, clearing jit's caches, switching jit off, and a printable summary.

``toolkit.default_backend``, ``device_get``, ``live_arrays``, ``clear_caches``, ``disable_jit`` and
``print_environment_info`` have ``jax.*``'s meaning (tests/api/test_environment.py compares them with JAX's).
"""

from __future__ import annotations

import contextlib
import gc
import platform as host_platform
import sys
import textwrap
from typing import Any

import jaxlib
import numpy as np

from toolkit import dispatch, executables_by_module, jit_cache
from toolkit.array import Array
from toolkit.core import eager_functions, pytrees, trace_cache
from toolkit.core.config import flag_override
from toolkit.lax import body_traces
from toolkit.runtime import client as runtime_client
from toolkit.runtime import transfer_guards
from toolkit.stages import Wrapped
from toolkit.version import __version__


def default_backend() -> str:
    """The platform name of the default backend: ``"cpu"`` or ``"gpu"`` (JAX calls CUDA ``"gpu"``)."""
    name = runtime_client.default_platform()
    return "gpu" if name in ("cuda", "rocm") else name


def device_get(x: Any) -> Any:
    """Copy every device array in the pytree ``x`` to the host (``jax.device_get``).

    Arrays become ``numpy.ndarray``s; other leaves (numpy arrays, Python scalars, anything with no
    ``__array__``) are returned as they are. Copies of all arrays are started before the first is awaited.
    """
    leaves, tree = pytrees.tree_flatten(x)
    for leaf in leaves:
        if isinstance(leaf, Array):
            leaf.copy_to_host_async()  # start every copy first, as JAX does, then wait for each
    with transfer_guards.explicit_device_get():  # explicit: only the *_explicit guard levels refuse it (JAX)
        return pytrees.tree_unflatten(tree, [np.asarray(leaf) if isinstance(leaf, Array) else leaf
                                             for leaf in leaves])


def live_arrays(platform: str | None = None) -> list[Array]:
    """Every toolkit ``Array`` alive in the process and not deleted, on ``platform`` (default: the default
    backend's) — ``jax.live_arrays``. A debugging aid: it scans the garbage collector's objects."""
    wanted = None if platform is None else ("cuda" if platform == "gpu" else platform)
    if wanted is None:
        wanted = runtime_client.default_platform()
    # Arrays are not registered anywhere on creation (that would cost every dispatch); the collector knows them.
    found = []
    for obj in gc.get_objects():
        if type(obj) is Array and not obj.is_deleted():
            if any(runtime_client.platform_of(d) == wanted for d in obj.devices()):
                found.append(obj)
    return found


def clear_caches() -> None:
    """Forget every jit trace, lowering and executable (eager ops' too), so the next call of any jitted function
    traces again (``jax.clear_caches``). Arrays are untouched; the persistent compilation cache on disk too."""
    trace_cache.clear_caches()
    jit_cache.NESTED_PROGRAMS.clear()
    if dispatch.EAGER_EXECUTABLES is not None:
        dispatch.EAGER_EXECUTABLES.clear()
    executables_by_module.EAGER.clear()
    eager_functions.clear()
    body_traces.clear()
    # Each jit object keeps its executables; they are not registered centrally (that would slow jit()),
    # so find them through the collector — clearing caches is rare.
    for obj in gc.get_objects():
        if isinstance(obj, Wrapped):
            obj.clear_cache()


def disable_jit(disable: bool = True) -> contextlib.AbstractContextManager[None]:
    """``with toolkit.disable_jit():`` jitted functions run their Python body op by op (``jax.disable_jit``).

    The same switch is the flag ``jax_disable_jit`` (``toolkit.config.update("jax_disable_jit", True)``).
    It applies to this thread inside the block; ``disable=False`` turns jit back on inside an outer block.
    """
    if not isinstance(disable, bool):
        raise TypeError(f"disable_jit(disable=...) takes a bool, got {type(disable).__name__}")
    return flag_override("jax_disable_jit", disable)


def print_environment_info(return_string: bool = False) -> str | None:
    """Print toolkit's, jaxlib's, numpy's and Python's versions, the devices and the host
    (``jax.print_environment_info``); with ``return_string=True`` return the text instead."""
    devices = runtime_client.devices()
    text = textwrap.dedent(f"""\
        toolkit:    {__version__}
        jaxlib:     {jaxlib.__version__}
        numpy:      {np.__version__}
        python:     {sys.version}
        device info: {devices[0].device_kind if devices else "none"}-{len(devices)}, {runtime_client.local_device_count()} local devices
        process_count: {runtime_client.process_count()}
        platform: {host_platform.uname()}
        """)
    if return_string:
        return text
    print(text)
    return None



def copy_to_host_async(x: Any) -> Any:
    """Start copying every array leaf of the pytree ``x`` to the host; returns ``x`` (``jax.copy_to_host_async``).

    Leaves without a ``copy_to_host_async`` method are left alone.
    """
    for leaf in pytrees.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


def process_indices(backend: str | None = None) -> list[int]:
    """Every process's index, ``[0, ..., process_count - 1]`` (``jax.process_indices``)."""
    return list(range(runtime_client.process_count(backend)))
