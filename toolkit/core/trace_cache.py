"""A bounded cache keyed weakly by a Python function: where ``jit`` keeps traces and lowerings across jit objects.

``jax.jit`` caches by the function, not by the jit object: a fresh
``jax.jit(f)`` of an ``f`` traced before reuses the trace (JAX's
``trace_to_jaxpr`` cache, weakly keyed by ``f`` plus the argument types, static
arguments and the tracing context) and the lowering (``_cached_lowering_to_hlo``,
keyed by the traced program and the lowering parameters). toolkit does the
same with one :class:`FunctionCache`, :data:`TRACES`, filled by
``toolkit.stages``:

* ``(f, trace key) -> (program, out tree, argument paths)``;
* ``(f, ("lower", trace key, lowering key)) -> (program, module bytecode, kept inputs, lowering rules)``.

What the keys hold is documented where they are made (``toolkit.jit_cache``)
and in ``docs/architecture.md``.

The function is held weakly: its entries vanish when it is collected (the
cache never keeps a function, or what its closure holds, alive). A function
that cannot be weakly referenced or hashed is not cached (every jit of it
traces again). Equal functions share entries, as in a ``WeakKeyDictionary``;
for plain functions, lambdas and ``functools.partial`` objects that is the
same object (two ``partial(f, 1)`` are two functions, as in JAX).

At most ``maxsize`` entries are kept; the least recently used goes first.
Every operation holds one lock, but never while calling back into user code
beyond ``__hash__``/``__eq__`` of the keys; two threads missing the same key
both compute and the second store wins, which is harmless because the values
are equivalent.

Example::

    >>> cache = FunctionCache(maxsize=4)
    >>> def f(x): return x
    >>> cache.put(f, ("sig",), "program")
    >>> cache.get(f, ("sig",))
    'program'
    >>> del f  # the entry goes with the function
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections import OrderedDict
from typing import Any, Hashable, Iterator, NamedTuple

#: How many entries (traces plus lowerings, over all functions) :data:`TRACES` keeps; JAX keeps 2048 lowerings.
DEFAULT_MAXSIZE = 2048

_MISSING = object()


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    size: int
    maxsize: int


class FunctionCache:
    """``(function, key) -> value``, the function held weakly, least recently used entries evicted first."""

    def __init__(self, maxsize: int = DEFAULT_MAXSIZE):
        self.maxsize = maxsize
        self._lock = threading.RLock()
        # reference to the function -> (the reference stored, made with _collected as callback; {key: value}).
        # A fresh reference to the same live function is equal to the stored one, so it finds the entry.
        self._tables: dict[weakref.ref, tuple[weakref.ref, dict[Hashable, Any]]] = {}
        self._order: OrderedDict[tuple[weakref.ref, Hashable], None] = OrderedDict()  # LRU order, oldest first
        self._dead: list[weakref.ref] = []  # functions collected since the last operation
        self._busy = 0  # > 0 while an operation holds the lock (only the holder changes it)
        self.hits = 0
        self.misses = 0

    # The weakref callback runs when the function is collected: at its last reference's ``del``, or inside
    # the garbage collector, possibly in the middle of an operation of this very cache (this thread's or
    # another's). When no operation is under way it drops the entries at once, so freeing what they hold
    # (programs, modules, executables: tens of ms for a large step function) is paid where the function
    # goes, as in JAX, not by the next jit's trace; otherwise it records the reference for the next operation.
    def _collected(self, ref: weakref.ref) -> None:
        self._dead.append(ref)
        if not self._lock.acquire(blocking=False):
            return  # another thread's operation: it purges when it next starts one
        try:
            if self._busy:
                return  # this thread is inside an operation (the collector ran mid-way): its next one purges
            self._busy += 1
            try:
                self._purge()
            finally:
                self._busy -= 1
        finally:
            self._lock.release()

    @contextlib.contextmanager
    def _operation(self) -> Iterator[None]:
        """Marks an operation under way (entered with the lock held), so a collection mid-way defers its purge."""
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1

    def _purge(self) -> None:
        while self._dead:
            ref = self._dead.pop()
            _, table = self._tables.pop(ref, (None, {}))
            for key in table:
                self._order.pop((ref, key), None)
            del table  # freed here, before the next reference (whose freeing may collect more functions)

    def get(self, fun: Any, key: Hashable, default: Any = None) -> Any:
        """The value stored for ``(fun, key)``, else ``default`` (also when ``fun`` or ``key`` cannot be keyed)."""
        try:
            probe = weakref.ref(fun)
            with self._lock:
                self._busy += 1  # (inline, not _operation(): this is on every trace's path)
                try:
                    if self._dead:
                        self._purge()
                    found = self._tables.get(probe)
                    if found is None or (value := found[1].get(key, _MISSING)) is _MISSING:
                        self.misses += 1
                        return default
                    self.hits += 1
                    self._order.move_to_end((found[0], key))
                    return value
                finally:
                    self._busy -= 1
        except TypeError:  # not weakly referenceable, or an unhashable function or key
            return default

    def put(self, fun: Any, key: Hashable, value: Any) -> bool:
        """Store ``value`` for ``(fun, key)``; False (nothing stored) when ``fun`` or ``key`` cannot be keyed."""
        try:
            hash(key)
            probe = weakref.ref(fun)
            hash(probe)
        except TypeError:
            return False
        with self._lock, self._operation():
            self._purge()
            found = self._tables.get(probe)
            if found is None:
                ref = weakref.ref(fun, self._collected)
                found = self._tables[ref] = (ref, {})
            ref, table = found
            table[key] = value
            self._order[(ref, key)] = None
            self._order.move_to_end((ref, key))
            while len(self._order) > self.maxsize:
                (old_ref, old_key), _ = self._order.popitem(last=False)
                old = self._tables.get(old_ref)
                if old is not None:
                    old[1].pop(old_key, None)
                    if not old[1]:
                        del self._tables[old_ref]
        return True

    def entries(self, fun: Any) -> int:
        """How many entries ``fun`` has (0 when it has none or cannot be keyed)."""
        try:
            probe = weakref.ref(fun)
            with self._lock, self._operation():
                self._purge()
                found = self._tables.get(probe)
                return len(found[1]) if found is not None else 0
        except TypeError:
            return 0

    def clear(self) -> None:
        with self._lock, self._operation():
            self._tables.clear()
            self._order.clear()
            self._dead.clear()

    def info(self) -> CacheInfo:
        with self._lock, self._operation():
            self._purge()
            return CacheInfo(self.hits, self.misses, len(self._order), self.maxsize)

    def __len__(self) -> int:
        with self._lock, self._operation():
            self._purge()
            return len(self._order)


#: The cache of ``toolkit.jit``'s traces and lowerings (see the module docstring).
TRACES = FunctionCache()


def clear_caches() -> None:
    """Forget every cached trace and lowering (``jax.clear_caches()`` does the same for JAX's)."""
    TRACES.clear()
