"""Numpy in, numpy out: compile a StableHLO module for the first CPU device and run it.

What ``toolkit-run`` and corpus tests need, on top of the main runtime
(``client.py``, ``arrays.py``, ``executable.py``) — no shardings, no jit.

Example::

    executable = compile_module(module_text)
    outputs = execute(executable, [np.ones((2,), np.float32)])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit.core.avals import ShapedArray
from toolkit.runtime import arrays, executable as runtime_executable
from toolkit.runtime.client import default_device
from toolkit.runtime.shardings import replicated


def compile_module(module: str | bytes) -> Any:
    """Compile StableHLO (text or bytecode) for the first CPU device.

    Raises ``ValueError`` with XLA's message when compilation fails.
    """
    try:
        return runtime_executable.compile_module(module, [default_device()])
    except runtime_executable.RuntimeError_ as error:
        raise ValueError(f"XLA could not compile the module: {error}") from None


def execute(executable: Any, arguments: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``executable`` on host arrays; return the results as numpy arrays."""
    device = default_device()
    sharding = replicated((device,))
    device_arrays = [arrays.put_shards(ShapedArray(a.shape, a.dtype), sharding, [a], [device])
                     for a in (np.ascontiguousarray(x) for x in arguments)]
    results = executable.execute_sharded(device_arrays)
    return [np.asarray(per_device[0]) for per_device in results.disassemble_into_single_device_arrays()]
