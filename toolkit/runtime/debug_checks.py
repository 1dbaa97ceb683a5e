"""``jax_debug_nans`` and ``jax_debug_infs``: a ``jit`` call whose outputs hold a NaN (an inf) raises.

With the flag on, ``jit`` compiles executables wrapped by :func:`checking`
(the flags are part of the caches' keys, so turning one on compiles again):
each run's floating-point outputs are copied to the host and checked, and a
NaN raises ``FloatingPointError("invalid value (nan) encountered in jit(f)")``
— JAX's exception and message. Primitives run eagerly go through ``jit``'s
executables, so ``toolkit.numpy.log(-1.0)`` raises too (naming ``jit(log)``).
Unlike JAX, toolkit does not then re-run the function op by op to name the
primitive that made the NaN (docs/debugging.md). Costs a device-to-host copy
of every output: a debugging mode.
"""

from __future__ import annotations

import contextlib
from typing import Any, Sequence

import numpy as np

from toolkit.core.config import FlagDefinition, define_flag, flag_override, flag_value

__all__ = ["DEBUG_INFS", "DEBUG_NANS", "checking", "debug_infs", "debug_nans", "enabled"]

DEBUG_NANS = define_flag(FlagDefinition(
    "jax_debug_nans", False, environment="JAX_DEBUG_NANS", affects_compilation=True,
    help="Raise FloatingPointError when a jit call (or an eager operation) outputs a NaN."))
DEBUG_INFS = define_flag(FlagDefinition(
    "jax_debug_infs", False, environment="JAX_DEBUG_INFS", affects_compilation=True,
    help="Raise FloatingPointError when a jit call (or an eager operation) outputs an inf."))


def debug_nans(new_val: bool = True) -> contextlib.AbstractContextManager[None]:
    """``with toolkit.debug_nans():`` turns ``jax_debug_nans`` on for this thread inside the block (``jax.debug_nans``)."""
    return flag_override("jax_debug_nans", new_val)


def debug_infs(new_val: bool = True) -> contextlib.AbstractContextManager[None]:
    """``with toolkit.debug_infs():`` turns ``jax_debug_infs`` on for this thread inside the block (``jax.debug_infs``)."""
    return flag_override("jax_debug_infs", new_val)


def enabled() -> bool:
    """Whether either check is on for this thread."""
    return bool(flag_value("jax_debug_nans") or flag_value("jax_debug_infs"))


def checking(executable: Any, name: str) -> "CheckingExecutable":
    """``executable`` whose runs check their outputs for the kinds of invalid value on now (``name``: ``jit(f)``)."""
    return CheckingExecutable(executable, name, nans=bool(flag_value("jax_debug_nans")),
                              infs=bool(flag_value("jax_debug_infs")))


class CheckingExecutable:
    """A loaded executable whose runs raise ``FloatingPointError`` on NaN (inf) outputs; the rest passes through."""

    __slots__ = ("_executable", "_name", "_nans", "_infs")

    def __init__(self, executable: Any, name: str, *, nans: bool, infs: bool):
        self._executable = executable
        self._name = name
        self._nans = nans
        self._infs = infs

    def execute_sharded(self, arguments: Sequence[Any], with_tokens: bool = False) -> "_CheckedResults":
        """Run; the outputs are checked when they are taken (``consume_with_handlers``)."""
        return _CheckedResults(self._executable.execute_sharded(arguments, with_tokens=with_tokens), self)

    def check(self, outputs: Sequence[Any]) -> None:
        """Raise ``FloatingPointError`` if an output holds a value the flags refuse."""
        for out in outputs:
            if not getattr(out, "is_fully_addressable", True):
                continue  # spans other processes: each process checks its own
            value = np.asarray(out)
            if not np.issubdtype(value.dtype, np.inexact):
                continue
            if self._nans and np.isnan(value).any():
                raise FloatingPointError(f"invalid value (nan) encountered in {self._name}")
            if self._infs and np.isinf(value).any():
                raise FloatingPointError(f"invalid value (inf) encountered in {self._name}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executable, name)


class _CheckedResults:
    """PJRT's execute results; taking the outputs checks them."""

    __slots__ = ("_results", "_owner")

    def __init__(self, results: Any, owner: CheckingExecutable):
        self._results = results
        self._owner = owner

    def consume_with_handlers(self, handlers: Sequence[Any]) -> list[Any]:
        outputs = self._results.consume_with_handlers(handlers)
        self._owner.check(outputs)
        return outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._results, name)
