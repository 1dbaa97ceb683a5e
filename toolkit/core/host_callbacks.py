"""Host callbacks: Python functions a compiled program calls back into, and the table that numbers them.

A :class:`HostCallback` is the parameter of the callback primitives
(``toolkit/lax/callbacks.py``): it wraps the user's flat function and checks
what it returns against the declared result types, as JAX's
``emit_python_callback`` does. Lowering writes its number (:func:`index_of`)
into the ``xla_ffi_python_cpu_callback`` custom call (``mhlo.backend_config =
{index = N : ui64}``, the target JAX 0.10.2 emits on CPU), and the runtime hands
jaxlib the table (:func:`table`) when it compiles such a module: jaxlib's FFI
handler calls entry ``N`` with the operands as numpy arrays, which reach the
user's function as arrays on the CPU device, as JAX's callbacks receive them.

The numbers are process-wide, so a module names its callbacks without carrying
Python objects. The table holds them weakly: the traced program (and, once
compiled, the executable, which jaxlib gives its own references) keeps a
callback alive; a number whose callback is gone calls :func:`_released`, which
raises instead of calling something else. Pure Python: no jaxlib here.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray

__all__ = ["CALLBACK_TARGET", "MARK_ATTRIBUTE", "SESSION", "HostCallback", "index_of", "install_argument_arrays",
           "lookup", "mark_of", "table"]

#: The custom call target of host callbacks on CPU (jaxlib's typed-FFI handler, as JAX 0.10.2 emits).
CALLBACK_TARGET = "xla_ffi_python_cpu_callback"
#: The op attribute that says which process numbered a callback call: ``"<SESSION>:<index>"``. A module
#: lowered elsewhere (by JAX, or by another process) uses the same target with numbers that mean nothing
#: here; without this mark its calls would reach this process's callbacks of the same numbers.
MARK_ATTRIBUTE = "toolkit.host_callback"
#: This process's mark (random: no two processes share it).
SESSION = uuid.uuid4().hex[:16]


def mark_of(index: int) -> str:
    """The :data:`MARK_ATTRIBUTE` value of this process's callback ``index``."""
    return f"{SESSION}:{index}"


class HostCallback:
    """A flat Python function a program calls on the host, with its declared results.

    ``function(*numpy_arrays)`` returns a sequence of as many values as
    ``result_avals``; each must convert (``numpy.asarray``, 64-bit values
    canonicalized as JAX does) to exactly the declared shape and dtype, else a
    ``RuntimeError`` saying which (JAX's messages). ``kind`` names the API for
    messages (``"pure_callback"``, ...); ``ordered`` callbacks take and return
    a token (the first operand and result). Compared by identity, so each call
    of a callback API is its own callback.
    """

    __slots__ = ("function", "result_avals", "kind", "ordered", "index", "__weakref__")

    def __init__(self, function: Callable[..., Sequence[Any]], result_avals: Sequence[ShapedArray], *,
                 kind: str, ordered: bool = False):
        if not callable(function):
            raise TypeError(f"{kind}: the callback must be callable, got {type(function).__name__}")
        self.function = function
        self.result_avals = tuple(result_avals)
        self.kind = kind
        self.ordered = bool(ordered)
        self.index: int | None = None

    def __repr__(self) -> str:
        name = getattr(self.function, "__qualname__", type(self.function).__name__)
        return f"HostCallback({self.kind}, {name})"

    def call_flat(self, *args: Any) -> tuple[np.ndarray, ...]:
        """Call the function on the operands (arrays on the CPU device, as JAX 0.10 hands its callbacks
        ``jax.Array``s, once :func:`install_argument_arrays` ran; numpy before) and check its results against
        ``result_avals``."""
        if _argument_arrays is not None:
            args = _argument_arrays(args)
        outs = self.function(*args)
        if outs is None:
            outs = ()
        outs = tuple(outs)
        if len(outs) != len(self.result_avals):
            raise RuntimeError("Mismatched number of outputs from callback. "
                               f"Expected: {len(self.result_avals)}, Actual: {len(outs)}")
        checked = []
        for i, (value, aval) in enumerate(zip(outs, self.result_avals)):
            array = np.asarray(value)
            canonical = dtypes.canonicalize_dtype(array.dtype)
            if canonical != array.dtype:
                array = array.astype(canonical)
            if array.shape != tuple(aval.shape):
                raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                   f"Expected: {tuple(aval.shape)}, Actual: {array.shape}")
            if array.dtype != aval.dtype:
                raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                                   f"Expected: {aval.dtype}, Actual: {array.dtype}")
            checked.append(array)
        return tuple(checked)

    def __call__(self, *args: Any) -> tuple[Any, ...]:
        """What jaxlib calls: the operands (after the token, if ordered) -> the results (after the token)."""
        if self.ordered:
            token, *rest = args
            return (token, *self.call_flat(*rest))
        return self.call_flat(*args)


_lock = threading.Lock()
_table: list[weakref.ref] = []
_argument_arrays: Callable[[tuple], tuple] | None = None


def install_argument_arrays(convert: Callable[[tuple], tuple]) -> None:
    """Install how the numpy operands jaxlib passes become the arrays a callback receives (``toolkit.stages``
    installs toolkit ``Array``s on the CPU device, JAX's ``device_put`` of each callback argument)."""
    global _argument_arrays
    _argument_arrays = convert


def index_of(callback: HostCallback) -> int:
    """The process-wide number of ``callback`` (given the first time it is asked for; stable after)."""
    with _lock:
        if callback.index is None:
            callback.index = len(_table)
            _table.append(weakref.ref(callback))
        return callback.index


def lookup(index: int) -> HostCallback | None:
    """The live callback numbered ``index``, or None (never numbered, or released)."""
    with _lock:
        if 0 <= index < len(_table):
            return _table[index]()
    return None


def _released(*args: Any) -> tuple:
    raise RuntimeError("a host callback was called after the program that defined it was released; "
                       "trace and compile the function again")


def table(indices: Sequence[int] = ()) -> list[Callable[..., Any]]:
    """The callbacks by number, for jaxlib's ``host_callbacks``.

    ``indices``: the numbers a module uses; each must name a live callback, else
    ``ValueError`` (compiling would bind a call to nothing). Only those are in
    the list (the others raise when called): an executable holds references to
    what it can call, not to every callback of the process.
    """
    used = set(indices)
    with _lock:
        entries = [ref() if i in used else None for i, ref in enumerate(_table)]
    for i in used:
        if not 0 <= i < len(entries) or entries[i] is None:
            raise ValueError(f"the module calls host callback #{i}, which this process does not hold (a module "
                             "with host callbacks only compiles in the process that lowered it, while its program "
                             "is alive)")
    return [entry if entry is not None else _released for entry in entries]
