"""Executables found by the module XLA is given: eager execution's compilations, shared across its functions.

Outside a trace, ``lax`` control flow, the batching rules and the differentiation
interpreters run ``jit`` of functions made for that call (``toolkit.dispatch.EagerExecutables``:
closures over the programs traced, differentiated or batched this time, or a primitive whose
parameters hold such programs). jit's caches key on the function, so every call of
``jvp(f)(x)`` or ``vmap(f)(xs)`` over a ``cond`` or ``scan`` would have XLA build again the
executable it built on the call before — 20–100 ms each, for the same module.

Those jits (``Wrapped._executables_by_module``) look here first, keyed by everything an executable
is a function of: the bytecode XLA compiles (after the pass pipeline; source locations included,
so the executable's metadata names the right lines), the devices, and the compile settings
(partitions, partitioner, XLA options, output sharding propagation). Equal keys give the same
executable, so reusing one changes no result; what a call still pays is its trace, lowering and
passes (~1–2 ms for a small program).

Kept: modules up to :data:`MAX_MODULE_BYTES`, never one calling host callbacks (its code numbers this
process's callbacks; such a module compiles every time, as before); :data:`ENTRIES` executables, the
least recently used out first; ``toolkit.clear_caches()`` empties it. ``jit`` of a user's function
does not use it: its executables are cached with its lowering by function, as JAX's are.
"""

from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Hashable, Sequence

from toolkit.runtime import host_callbacks

__all__ = ["ENTRIES", "MAX_MODULE_BYTES", "ExecutablesByModule", "EAGER"]

#: How many executables are kept (small eager programs: a few hundred KB each at most).
ENTRIES = 256
#: Larger modules are compiled as before: keying on their bytes would cost more than it saves, and eager
#: execution's programs are small.
MAX_MODULE_BYTES = 256 * 1024


class ExecutablesByModule:
    """Executables by (module bytecode, devices, compile settings), least recently used out (thread-safe)."""

    def __init__(self, entries: int = ENTRIES, max_module_bytes: int = MAX_MODULE_BYTES):
        self.entries = entries
        self.max_module_bytes = max_module_bytes
        self._kept: collections.OrderedDict[tuple, Any] = collections.OrderedDict()
        self._lock = threading.Lock()

    def find_or_compile(self, bytecode: bytes, devices: Sequence[Any], settings: Hashable,
                        compile: Callable[[], Any]) -> Any:
        """The executable kept for ``bytecode`` on ``devices`` compiled with ``settings``, else ``compile()``'s (kept).

        ``settings`` must determine, with the module and devices, every compile option. A module
        too large, calling host callbacks, or with settings that cannot be hashed is compiled and
        not kept. Compile errors propagate; nothing is kept for them.
        """
        if len(bytecode) > self.max_module_bytes or host_callbacks.calls_back(bytecode):
            return compile()
        key = (bytecode, tuple(devices), settings)
        try:
            hash(key)
        except TypeError:  # an XLA option whose value is a list: compiled every time
            return compile()
        with self._lock:
            executable = self._kept.get(key)
            if executable is not None:
                self._kept.move_to_end(key)
                return executable
        executable = compile()  # outside the lock: another thread's compilation of another module goes on meanwhile
        with self._lock:
            self._kept[key] = executable
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)
        return executable

    def clear(self) -> None:
        """Forget every kept executable."""
        with self._lock:
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)


#: Eager execution's executables (``toolkit.jit_compilation.passes_then_xla`` for jits that ask for it).
EAGER = ExecutablesByModule()
