"""``toolkit.config``: JAX's configuration flags, by JAX's names, for the flags toolkit has.

    toolkit.config.update("jax_enable_x64", True)     # as jax.config.update
    toolkit.config.jax_enable_x64                     # the current value
    with toolkit.enable_x64():                        # for this thread, inside the block
        ...

A flag is defined once (:func:`define_flag`): its JAX name, default, the
environment variable that sets it at start-up (``TOOLKIT_ENABLE_X64=1``) and
how a value is checked. Unknown names are refused by name — a flag JAX has
and toolkit does not is an error, never a silently ignored setting.

Values are read often (dtype canonicalization reads ``jax_enable_x64`` for
every array it makes), so :func:`flag_value` is a dictionary lookup plus a
thread-local check. What a compiled or traced result depends on is part of
the caches' keys through :func:`cache_state`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["Config", "FlagDefinition", "cache_state", "config", "define_flag", "enable_x64", "flag_value",
           "x64_enabled"]

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def parse_bool(text: str) -> bool:
    """An environment variable's boolean: 1/true/yes/on or 0/false/no/off (case-insensitive)."""
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false, yes/no, on/off), got {text!r}")


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool: a bool, 0 or 1 (numpy's bool too); anything else is a ``TypeError`` naming the flag."""
    if isinstance(value, np.bool_):
        return bool(value)
    if not isinstance(value, (bool, int)) or isinstance(value, int) and value not in (0, 1):
        raise TypeError(f"{name} takes a bool, got {value!r}")
    return bool(value)


@dataclasses.dataclass(frozen=True)
class FlagDefinition:
    """One flag: its JAX name, default, environment variable, and the check a new value passes."""

    name: str
    default: Any
    help: str
    environment: str | None = None
    check: Callable[[str, Any], Any] = check_bool
    parse: Callable[[str], Any] = parse_bool
    #: True when traced, lowered or compiled results depend on it (it is then part of the caches' keys).
    affects_compilation: bool = False


_DEFINITIONS: dict[str, FlagDefinition] = {}
_VALUES: dict[str, Any] = {}
_CACHE_FLAGS: list[str] = []
_local = threading.local()  # .overrides: {name: value} set by context managers on this thread
# How many override blocks are open on any thread: while none is, a flag's value is its global value and
# cache_state() is one prebuilt tuple (the hot dispatch path reads it on every call).
_open_overrides = 0
_counter_lock = threading.Lock()
_global_cache_state: tuple = ()


def define_flag(definition: FlagDefinition) -> FlagDefinition:
    """Register a flag; its start-up value comes from its environment variable when set (a bad one raises)."""
    if definition.name in _DEFINITIONS:
        raise ValueError(f"flag {definition.name!r} is already defined")
    value = definition.default
    if definition.environment is not None and definition.environment in os.environ:
        text = os.environ[definition.environment]
        try:
            value = definition.check(definition.name, definition.parse(text))
        except (TypeError, ValueError) as error:
            raise ValueError(f"environment variable {definition.environment}={text!r} (sets {definition.name}): "
                             f"{error}") from None
    _DEFINITIONS[definition.name] = definition
    _VALUES[definition.name] = value
    if definition.affects_compilation:
        _CACHE_FLAGS.append(definition.name)
        _refresh_global_cache_state()
    return definition


def _refresh_global_cache_state() -> None:
    global _global_cache_state
    _global_cache_state = tuple(_VALUES[name] for name in _CACHE_FLAGS)


def _unknown(name: str) -> AttributeError:
    known = ", ".join(sorted(_DEFINITIONS))
    return AttributeError(f"Unrecognized config option: {name} (toolkit has: {known})")


def flag_value(name: str) -> Any:
    """The value of flag ``name`` on this thread (a context manager's override, else the global value)."""
    if not _open_overrides:
        return _VALUES[name]
    overrides = getattr(_local, "overrides", None)
    if overrides and name in overrides:
        return overrides[name]
    return _VALUES[name]


@contextlib.contextmanager
def flag_override(name: str, value: Any) -> Iterator[None]:
    """Set flag ``name`` for this thread inside the block (nested blocks restore in order)."""
    if name not in _DEFINITIONS:
        raise _unknown(name)
    value = _DEFINITIONS[name].check(name, value)
    overrides = getattr(_local, "overrides", None)
    if overrides is None:
        overrides = _local.overrides = {}
    missing = object()
    previous = overrides.get(name, missing)
    overrides[name] = value
    _count_override(+1)
    try:
        yield
    finally:
        if previous is missing:
            del overrides[name]
        else:
            overrides[name] = previous
        _count_override(-1)


def _count_override(step: int) -> None:
    global _open_overrides
    with _counter_lock:
        _open_overrides += step


def cache_state() -> tuple:
    """The values of the flags compiled results depend on, in definition order (part of every cache key).

    Cheap: with no override block open on any thread it is one prebuilt tuple.
    """
    if not _open_overrides:
        return _global_cache_state
    return tuple(flag_value(name) for name in _CACHE_FLAGS)


class Config:
    """``toolkit.config``: read flags as attributes, set them with :meth:`update` (JAX's names and meaning)."""

    def update(self, name: str, value: Any) -> None:
        """Set flag ``name`` for the process; an unknown name raises ``AttributeError`` naming it."""
        if name not in _DEFINITIONS:
            raise _unknown(name)
        _VALUES[name] = _DEFINITIONS[name].check(name, value)
        _refresh_global_cache_state()

    def read(self, name: str) -> Any:
        """The current value of flag ``name``."""
        if name not in _DEFINITIONS:
            raise _unknown(name)
        return flag_value(name)

    @property
    def values(self) -> dict[str, Any]:
        """Every flag's current value."""
        return {name: flag_value(name) for name in _DEFINITIONS}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in _DEFINITIONS:
            raise _unknown(name)
        return flag_value(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"set flags with toolkit.config.update({name!r}, value)")

    def __dir__(self) -> list[str]:
        return [*sorted(_DEFINITIONS), "read", "update", "values"]

    def __repr__(self) -> str:
        return "toolkit.config(" + ", ".join(f"{k}={v!r}" for k, v in self.values.items()) + ")"


config = Config()

ENABLE_X64 = define_flag(FlagDefinition(
    "jax_enable_x64", False, environment="TOOLKIT_ENABLE_X64", affects_compilation=True,
    help="64-bit types: when off (the default, as JAX), int64/uint64/float64/complex128 values and dtypes "
         "become their 32-bit counterparts."))

DISABLE_JIT = define_flag(FlagDefinition(
    "jax_disable_jit", False, environment="JAX_DISABLE_JIT",
    help="Jitted functions run their Python body op by op instead of compiling (toolkit.disable_jit)."))


def x64_enabled() -> bool:
    """True when 64-bit types are on (``jax_enable_x64``) for this thread."""
    if not _open_overrides:
        return _VALUES["jax_enable_x64"]
    overrides = getattr(_local, "overrides", None)
    if overrides and "jax_enable_x64" in overrides:
        return overrides["jax_enable_x64"]
    return _VALUES["jax_enable_x64"]


def enable_x64(new_val: bool = True) -> contextlib.AbstractContextManager[None]:
    """``with toolkit.enable_x64():`` turns 64-bit types on for this thread inside the block (``jax.enable_x64``)."""
    return flag_override("jax_enable_x64", new_val)
