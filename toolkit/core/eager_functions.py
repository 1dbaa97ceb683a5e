"""One function object per eager whole-program call site and closure, so its trace and executable are found again.

Control flow, windowed reductions and the batching rules that build sub-programs
run eagerly by compiling a small closure as a whole (``tracing.eager_call``):
``lax.scan(f, c, xs)`` outside a trace is ``jit(lambda c, x: scan(f, c, x, ...))``.
The lambda is new on every call, and ``jit``'s caches key a function by identity,
so each call traced and compiled again (12-20 ms) where JAX, which keys its
traces by the body function (``f``), compiles once.

:func:`stable` gives back the first function seen with the same code and the
same closure: the same code object, and closure cells (and default arguments)
equal by type and value — host scalars by their bytes (``-0.0`` is not ``0.0``,
``True`` is not ``1``), tuples element by element, other objects by their own
hash and equality (functions, programs, meshes: identity). A closure holding
anything unhashable or mutable (a list, a dict, an array) is returned as it is:
it is traced afresh, as before. The cache holds at most :data:`MAX_ENTRIES`
functions, least recently used first out.

As in JAX, the trace is reused for the same body function: a body that reads a
global changed since (not an argument) sees the value of its first trace.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import numpy as np

#: How many closures are kept (each holds its captured functions and programs, and its jit's executable).
MAX_ENTRIES = 256

_functions: "OrderedDict[Hashable, Callable[..., Any]]" = OrderedDict()
_lock = threading.Lock()

# Cells holding these are not keyed: their contents can change after the closure was made.
_MUTABLE = (list, dict, set, bytearray, np.ndarray)


class _Unkeyable(Exception):
    """A closure cell that cannot be part of a key (mutable or unhashable)."""


def _frozen(value: Any) -> Hashable:
    kind = type(value)
    if kind is float or kind is complex:
        return kind, np.asarray(value).tobytes()  # -0.0 and 0.0 differ; a NaN equals itself
    if isinstance(value, np.generic):
        return kind, value.dtype.str, value.tobytes()
    if isinstance(value, tuple):
        return kind, tuple(_frozen(v) for v in value)
    if isinstance(value, (frozenset, _MUTABLE)) or kind.__hash__ is None:
        raise _Unkeyable
    return kind, value


def closure_key(fun: Callable[..., Any]) -> Hashable | None:
    """``fun``'s code with its closure and defaults, frozen as above; None when a part cannot be keyed."""
    code = getattr(fun, "__code__", None)
    if code is None:
        return None
    try:
        cells = tuple(_frozen(cell.cell_contents) for cell in (fun.__closure__ or ()))
        defaults = _frozen(fun.__defaults__ or ())
        if fun.__kwdefaults__:
            defaults = defaults, _frozen(tuple(sorted(fun.__kwdefaults__.items())))
        key = (code, cells, defaults)
        hash(key)
    except (_Unkeyable, TypeError, ValueError):  # an empty cell, an unhashable value inside a tuple, ...
        return None
    return key


def stable(fun: Callable[..., Any]) -> Callable[..., Any]:
    """The function first seen with ``fun``'s :func:`closure_key` (``fun`` itself when it has none)."""
    key = closure_key(fun)
    if key is None:
        return fun
    with _lock:
        known = _functions.get(key)
        if known is not None:
            _functions.move_to_end(key)
            return known
        _functions[key] = fun
        if len(_functions) > MAX_ENTRIES:
            _functions.popitem(last=False)
    return fun


def clear() -> None:
    """Forget every kept function (``toolkit.clear_caches``)."""
    with _lock:
        _functions.clear()
