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

__all__ = ["Config", "FlagDefinition", "UserContext", "cache_state", "config", "define_flag", "enable_x64",
           "flag_value", "make_user_context", "watch_flag", "x64_enabled"]

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
# Flags whose effect lives outside Python (jaxlib's transfer guards): told of every change, as JAX's update hooks.
_WATCHERS: dict[str, list[Callable[[Any, bool], None]]] = {}


def watch_flag(name: str, watcher: Callable[[Any, bool], None]) -> None:
    """Call ``watcher(value, thread_local)`` whenever flag ``name`` changes (JAX's update hooks).

    ``thread_local`` is True for a context manager's override on this thread (``value`` None when the block ends
    and no outer block sets it), False for :meth:`Config.update`. The watcher is called once now with the
    global value.
    """
    if name not in _DEFINITIONS:
        raise _unknown(name)
    _WATCHERS.setdefault(name, []).append(watcher)
    watcher(_VALUES[name], False)


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
    known = ", ".join(sorted(n for n in _DEFINITIONS if not n.startswith(_USER_PREFIX)))
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
    for watcher in _WATCHERS.get(name, ()):
        watcher(value, True)
    try:
        yield
    finally:
        if previous is missing:
            del overrides[name]
        else:
            overrides[name] = previous
        _count_override(-1)
        for watcher in _WATCHERS.get(name, ()):
            watcher(None if previous is missing else previous, True)


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
        for watcher in _WATCHERS.get(name, ()):
            watcher(_VALUES[name], False)

    def read(self, name: str) -> Any:
        """The current value of flag ``name``."""
        if name not in _DEFINITIONS:
            raise _unknown(name)
        return flag_value(name)

    @property
    def values(self) -> dict[str, Any]:
        """Every flag's current value."""
        return {name: flag_value(name) for name in _DEFINITIONS if not name.startswith(_USER_PREFIX)}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in _DEFINITIONS:
            raise _unknown(name)
        return flag_value(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"set flags with toolkit.config.update({name!r}, value)")

    def __dir__(self) -> list[str]:
        return [*sorted(n for n in _DEFINITIONS if not n.startswith(_USER_PREFIX)), "read", "update", "values"]

    def __repr__(self) -> str:
        return "toolkit.config(" + ", ".join(f"{k}={v!r}" for k, v in self.values.items()) + ")"


config = Config()

# User contexts are flags under names no JAX flag has (hidden from toolkit.config's listing): one flag machinery,
# so their values join cache_state() and thread-local blocks exactly as jax_enable_x64's do.
_USER_PREFIX = "user_context#"
_user_lock = threading.Lock()


def _check_hashable(name: str, value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"a user context's value is part of jit's cache key and must be hashable, "
                        f"got {type(value).__name__}: {value!r}") from None
    return value


def _no_parse(text: str) -> Any:
    raise ValueError("user contexts have no environment variable")


class UserContext:
    """A jit-cache-sensitive value (``jax.make_user_context``'s result): calling it gives a block that sets it.

    ``with ctx(v): ...`` sets the value for this thread inside the block; :meth:`set_global` sets it for the
    process. The value is part of every jit cache key, so a function jitted once is traced, lowered and
    compiled again when the value differs from the one it was compiled under (and found again when it is back).
    """

    def __init__(self, default_value: Any = None) -> None:
        with _user_lock:
            self._name = f"{_USER_PREFIX}{sum(n.startswith(_USER_PREFIX) for n in _DEFINITIONS)}"
            define_flag(FlagDefinition(self._name, _check_hashable(self._name, default_value),
                                       help="a user context (make_user_context)", check=_check_hashable,
                                       parse=_no_parse, affects_compilation=True))

    @property
    def value(self) -> Any:
        """The value on this thread (an open block's, else the global one)."""
        return flag_value(self._name)

    def get_global(self) -> Any:
        """The process-wide value (ignoring blocks open on this thread)."""
        return _VALUES[self._name]

    def set_global(self, new_value: Any) -> None:
        """Set the process-wide value (must be hashable: a ``TypeError`` otherwise)."""
        _VALUES[self._name] = _check_hashable(self._name, new_value)
        _refresh_global_cache_state()

    def __call__(self, new_value: Any) -> contextlib.AbstractContextManager[None]:
        """A block setting the value for this thread (nested blocks restore in order)."""
        return flag_override(self._name, new_value)

    def __repr__(self) -> str:
        return f"UserContext(value={self.value!r})"


def make_user_context(default_value: Any = None) -> UserContext:
    """``jax.make_user_context``: a context whose value is part of jit's cache key.

    ``with ctx(v):`` sets it for the block on this thread; jitted functions re-trace, re-lower and re-compile
    when it has a value they were not compiled under. ``default_value`` and every value set must be hashable.
    Creating contexts is not thread-safe with other calls (as JAX's); using them is.
    """
    return UserContext(default_value)

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


# --- flags with JAX's names, each honoured where toolkit does the work JAX's flag governs --------------------------
# JAX reads every flag's start-up value from its upper-cased name (JAX_LOG_COMPILES=1); so does toolkit.


def parse_text(text: str) -> str:
    """An environment variable's text, as is (enum flags check it against their values)."""
    return text.strip()


def enum_check(*values: str, optional: bool = False) -> Callable[[str, Any], Any]:
    """A check accepting exactly ``values`` (and ``None`` when ``optional``); anything else raises naming the flag."""
    def check(name: str, value: Any) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, str) or value not in values:
            allowed = ", ".join(repr(v) for v in values) + (" or None" if optional else "")
            raise ValueError(f"{name} takes one of {allowed}; got {value!r}")
        return value
    return check


def _define_bool(name: str, default: bool, help: str, affects_compilation: bool = False) -> FlagDefinition:
    return define_flag(FlagDefinition(name, default, help, environment=name.upper(),
                                      affects_compilation=affects_compilation))


def _define_enum(name: str, default: Any, values: tuple[str, ...], help: str, optional: bool = False,
                 affects_compilation: bool = False) -> FlagDefinition:
    return define_flag(FlagDefinition(name, default, help, environment=name.upper(),
                                      check=enum_check(*values, optional=optional), parse=parse_text,
                                      affects_compilation=affects_compilation))


LOG_COMPILES = _define_bool(
    "jax_log_compiles", False,
    "Log (logging, WARNING level; DEBUG when off) each time jit traces and compiles a function, with timings.")
EXPLAIN_CACHE_MISSES = _define_bool(
    "jax_explain_cache_misses", False,
    "Log (WARNING level) why a jit call missed its tracing cache: the first call, or which argument's type, "
    "static value or flag changed.")
NO_TRACING = _define_bool("jax_no_tracing", False, "Refuse to trace a function for jit (a RuntimeError).")
NO_EXECUTION = _define_bool("jax_no_execution", False, "Refuse to run compiled programs (a RuntimeError).",
                            affects_compilation=True)
CHECK_TRACER_LEAKS = _define_bool(
    "jax_check_tracer_leaks", False,
    "After each trace, raise an error when a tracer of it is still referenced from outside (a leak).")
NUMPY_RANK_PROMOTION = _define_enum(
    "jax_numpy_rank_promotion", "allow", ("allow", "warn", "raise"),
    "Implicit rank promotion in toolkit.numpy's broadcasting: allowed, a warning, or a ValueError.",
    affects_compilation=True)
NUMPY_DTYPE_PROMOTION = _define_enum(
    "jax_numpy_dtype_promotion", "standard", ("standard", "strict"),
    "Implicit dtype promotion: JAX's standard lattice, or strict (only Python scalars promote; "
    "differing dtypes raise TypePromotionError).", affects_compilation=True)
DEFAULT_MATMUL_PRECISION = _define_enum(
    "jax_default_matmul_precision", None,
    ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32"),
    "The precision of dot products and convolutions that do not name one (JAX's legacy precision names).",
    optional=True, affects_compilation=True)
SOFTMAX_CUSTOM_JVP = _define_bool(
    "jax_softmax_custom_jvp", False,
    "toolkit.nn.softmax/log_softmax with JAX's custom_jvp rule (its derivative program) instead of "
    "differentiating the formula.", affects_compilation=True)
ALLOW_F16_REDUCTIONS = _define_bool(
    "jax_allow_f16_reductions", True, "When False, reduce_sum of float16 or bfloat16 values raises an error.",
    affects_compilation=True)
_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
TRANSFER_GUARD_HOST_TO_DEVICE = _define_enum(
    "jax_transfer_guard_host_to_device", None, _GUARD_LEVELS,
    "Host-to-device transfers: allow, log or disallow the implicit ones (log_explicit / disallow_explicit: all).",
    optional=True)
TRANSFER_GUARD_DEVICE_TO_DEVICE = _define_enum(
    "jax_transfer_guard_device_to_device", None, _GUARD_LEVELS,
    "Device-to-device transfers: allow, log or disallow the implicit ones (log_explicit / disallow_explicit: all).",
    optional=True)
TRANSFER_GUARD_DEVICE_TO_HOST = _define_enum(
    "jax_transfer_guard_device_to_host", None, _GUARD_LEVELS,
    "Device-to-host transfers: allow, log or disallow the implicit ones (log_explicit / disallow_explicit: all).",
    optional=True)


def _check_default_device(name: str, value: Any) -> Any:
    # A Device (duck-typed: jaxlib's class lives in the runtime, above core) or a platform name, as JAX's validator.
    if value is None or value in ("cpu", "gpu", "tpu") or "Device" in type(value).__name__:
        return value
    raise ValueError(f"{name} must be passed either a Device object (e.g. `toolkit.devices('cpu')[0]`) or a "
                     f"platform name string like 'cpu' or 'gpu', got: {value!r}")


DEFAULT_DEVICE = define_flag(FlagDefinition(
    "jax_default_device", None, environment="JAX_DEFAULT_DEVICE", check=_check_default_device, parse=parse_text,
    affects_compilation=True,
    help="The device uncommitted arrays are put on and single-device jit calls run on (a Device or a platform)."))


def _flag_context(name: str) -> Callable[[Any], contextlib.AbstractContextManager[None]]:
    def manager(new_val: Any) -> contextlib.AbstractContextManager[None]:
        return flag_override(name, new_val)
    manager.__name__ = name.removeprefix("jax_")
    manager.__qualname__ = manager.__name__
    manager.__doc__ = (f"``with toolkit.{manager.__name__}(value):`` sets ``{name}`` for this thread inside the "
                       f"block (JAX's context manager of the same name). {_DEFINITIONS[name].help}")
    return manager


log_compiles = _flag_context("jax_log_compiles")
explain_cache_misses = _flag_context("jax_explain_cache_misses")
no_tracing = _flag_context("jax_no_tracing")
no_execution = _flag_context("jax_no_execution")
check_tracer_leaks = _flag_context("jax_check_tracer_leaks")
numpy_rank_promotion = _flag_context("jax_numpy_rank_promotion")
numpy_dtype_promotion = _flag_context("jax_numpy_dtype_promotion")
default_matmul_precision = _flag_context("jax_default_matmul_precision")
softmax_custom_jvp = _flag_context("jax_softmax_custom_jvp")
allow_f16_reductions = _flag_context("jax_allow_f16_reductions")
transfer_guard_host_to_device = _flag_context("jax_transfer_guard_host_to_device")
transfer_guard_device_to_device = _flag_context("jax_transfer_guard_device_to_device")
transfer_guard_device_to_host = _flag_context("jax_transfer_guard_device_to_host")
default_device = _flag_context("jax_default_device")


def host_to_device_unguarded() -> bool:
    """Whether implicit host-to-device transfers are unguarded on this thread (level unset or ``allow``): only then
    may a device value kept from an earlier call stand in for uploading a host value again (under ``log`` or
    ``disallow`` every use uploads, and is logged or refused, as in JAX)."""
    return flag_value("jax_transfer_guard_host_to_device") in (None, "allow")


def checking_leaks() -> contextlib.AbstractContextManager[None]:
    """``with toolkit.checking_leaks():`` is ``check_tracer_leaks(True)`` (JAX's shorthand)."""
    return flag_override("jax_check_tracer_leaks", True)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """``with toolkit.transfer_guard(level):`` sets all three transfer directions' guard level on this thread."""
    with flag_override("jax_transfer_guard_host_to_device", new_val), \
            flag_override("jax_transfer_guard_device_to_device", new_val), \
            flag_override("jax_transfer_guard_device_to_host", new_val), flag_override("jax_transfer_guard", new_val):
        yield


TRANSFER_GUARD = _define_enum(
    "jax_transfer_guard", None, _GUARD_LEVELS,
    "Set-only: the guard level of all three transfer directions (read each direction's own flag).", optional=True)


def _set_all_directions(value: Any, thread_local: bool) -> None:
    # config.update("jax_transfer_guard", level) sets the three, as JAX's update hook; None (its start-up value
    # without JAX_TRANSFER_GUARD) leaves each direction's own setting.
    if not thread_local and value is not None:
        for direction in ("host_to_device", "device_to_device", "device_to_host"):
            config.update(f"jax_transfer_guard_{direction}", value)


watch_flag("jax_transfer_guard", _set_all_directions)


LEGACY_PRNG_KEY = _define_enum(
    "jax_legacy_prng_key", "allow", ("allow", "warn", "error"),
    "Raw uint32 keys (random.PRNGKey) passed to toolkit.random functions: allowed, a warning, or a ValueError.")
ENABLE_CUSTOM_PRNG = _define_bool(
    "jax_enable_custom_prng", False,
    "With raw uint32 keys allowed, toolkit.random warns that raw keys are deprecated (JAX's upgrade flag).")
# In the caches' keys (JAX leaves it out): a raw key traced under jit is read with the default implementation.
DEFAULT_PRNG_IMPL = _define_enum(
    "jax_default_prng_impl", "threefry2x32",
    ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"),
    "The PRNG implementation toolkit.random.key()/PRNGKey() use when none is named, and the one raw uint32 keys "
    "are read with.", affects_compilation=True)
legacy_prng_key = _flag_context("jax_legacy_prng_key")
enable_custom_prng = _flag_context("jax_enable_custom_prng")
default_prng_impl = _flag_context("jax_default_prng_impl")
ENABLE_CHECKS = _define_bool(
    "jax_enable_checks", False,
    "Type-check every program jit traces (JaxprTypeError on an ill-typed or ill-scoped equation); slower.")
enable_checks = _flag_context("jax_enable_checks")
THREEFRY_PARTITIONABLE = _define_bool(
    "jax_threefry_partitionable", True,
    "toolkit.random's threefry counters: JAX's partitionable layout (the default), or its original one (False) — "
    "bit-exact with JAX either way.", affects_compilation=True)
threefry_partitionable = _flag_context("jax_threefry_partitionable")
JAX2TF_ASSOCIATIVE_SCAN_REDUCTIONS = _define_bool(
    "jax2tf_associative_scan_reductions", False,
    "Kept for JAX's API only: JAX 0.10.2 defines it but reads it nowhere (its jax2tf is gone); toolkit neither.")
jax2tf_associative_scan_reductions = _flag_context("jax2tf_associative_scan_reductions")
