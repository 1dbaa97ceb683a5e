"""``toolkit.monitoring``: named events with listeners, as ``jax.monitoring``.

toolkit records the events JAX records where it does the same work, with JAX's names, so a listener written for
JAX's metrics works unchanged:

* ``/jax/core/compile/jaxpr_trace_duration``: a ``jit`` trace (a trace-cache miss), ``fun_name=`` the function;
* ``/jax/core/compile/jaxpr_to_mlir_module_duration``: its lowering to StableHLO;
* ``/jax/core/compile/backend_compile_duration``: the pass pipeline and XLA's compilation.

Each is recorded as a duration (:func:`record_event_duration_secs`), a time span
(:func:`record_event_time_span`) and its start time as a scalar (:func:`record_scalar`), as JAX's
``log_elapsed_time`` does; the same phases are logged (logger ``toolkit.monitoring``) at WARNING level when
``jax_log_compiles`` is on (``toolkit.log_compiles()``), else at DEBUG.

Example::

    durations = []
    toolkit.monitoring.register_event_duration_secs_listener(
        lambda event, secs, **kw: durations.append((event, secs, kw)))
    toolkit.jit(f)(x)    # three events: trace, lowering, compilation
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any, Protocol

from toolkit.core.config import flag_value

__all__ = [
    "BACKEND_COMPILE_EVENT", "JAXPR_TO_MLIR_MODULE_EVENT", "JAXPR_TRACE_EVENT", "clear_event_listeners",
    "get_event_duration_listeners", "get_event_listeners", "get_event_time_span_listeners", "get_scalar_listeners",
    "record_event", "record_event_duration_secs", "record_event_time_span", "record_scalar",
    "register_event_duration_secs_listener", "register_event_listener", "register_event_time_span_listener",
    "register_scalar_listener", "timed_phase", "unregister_event_duration_listener", "unregister_event_listener",
    "unregister_event_time_span_listener", "unregister_scalar_listener",
]

#: JAX's event names (``jax._src.dispatch``), recorded by toolkit's jit at the same phases.
JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

logger = logging.getLogger("toolkit.monitoring")


class EventListenerWithMetadata(Protocol):
    """``listener(event, **kwargs)``."""

    def __call__(self, event: str, **kwargs: str | int) -> None: ...


class EventDurationListenerWithMetadata(Protocol):
    """``listener(event, duration_secs, **kwargs)``."""

    def __call__(self, event: str, duration_secs: float, **kwargs: str | int) -> None: ...


class EventTimeSpanListenerWithMetadata(Protocol):
    """``listener(event, start_time, end_time, **kwargs)``."""

    def __call__(self, event: str, start_time: float, end_time: float, **kwargs: str | int) -> None: ...


class ScalarListenerWithMetadata(Protocol):
    """``listener(event, value, **kwargs)``."""

    def __call__(self, event: str, value: float | int, **kwargs: str | int) -> None: ...


_event_listeners: list[EventListenerWithMetadata] = []
_duration_listeners: list[EventDurationListenerWithMetadata] = []
_time_span_listeners: list[EventTimeSpanListenerWithMetadata] = []
_scalar_listeners: list[ScalarListenerWithMetadata] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Call every event listener with ``(event, **kwargs)``."""
    for callback in list(_event_listeners):
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Call every duration listener with ``(event, duration, **kwargs)`` (seconds, a float)."""
    for callback in list(_duration_listeners):
        callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs: str | int) -> None:
    """Call every time-span listener with ``(event, start_time, end_time, **kwargs)`` (``time.time()`` seconds)."""
    for callback in list(_time_span_listeners):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Call every scalar listener with ``(event, value, **kwargs)``."""
    for callback in list(_scalar_listeners):
        callback(event, value, **kwargs)


def _check_callable(kind: str, callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"register_{kind}_listener takes a callable, got {type(callback).__name__}")


def register_event_listener(callback: EventListenerWithMetadata) -> None:
    """Call ``callback(event, **kwargs)`` on every :func:`record_event`."""
    _check_callable("event", callback)
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Call ``callback(event, duration_secs, **kwargs)`` on every :func:`record_event_duration_secs`."""
    _check_callable("event_duration_secs", callback)
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Call ``callback(event, start_time, end_time, **kwargs)`` on every :func:`record_event_time_span`."""
    _check_callable("event_time_span", callback)
    _time_span_listeners.append(callback)


def register_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Call ``callback(event, value, **kwargs)`` on every :func:`record_scalar`."""
    _check_callable("scalar", callback)
    _scalar_listeners.append(callback)


def get_event_listeners() -> list[EventListenerWithMetadata]:
    """A copy of the registered event listeners."""
    return list(_event_listeners)


def get_event_duration_listeners() -> list[EventDurationListenerWithMetadata]:
    """A copy of the registered duration listeners."""
    return list(_duration_listeners)


def get_event_time_span_listeners() -> list[EventTimeSpanListenerWithMetadata]:
    """A copy of the registered time-span listeners."""
    return list(_time_span_listeners)


def get_scalar_listeners() -> list[ScalarListenerWithMetadata]:
    """A copy of the registered scalar listeners."""
    return list(_scalar_listeners)


def clear_event_listeners() -> None:
    """Forget every listener of every kind."""
    for listeners in (_event_listeners, _duration_listeners, _time_span_listeners, _scalar_listeners):
        listeners.clear()


def _unregister(listeners: list, callback: Any, kind: str) -> None:
    try:
        listeners.remove(callback)
    except ValueError:
        raise ValueError(f"{callback!r} is not a registered {kind} listener") from None


def unregister_event_listener(callback: EventListenerWithMetadata) -> None:
    """Remove an event listener; ``ValueError`` when it is not registered."""
    _unregister(_event_listeners, callback, "event")


def unregister_event_duration_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Remove a duration listener; ``ValueError`` when it is not registered."""
    _unregister(_duration_listeners, callback, "event duration")


def unregister_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Remove a time-span listener; ``ValueError`` when it is not registered."""
    _unregister(_time_span_listeners, callback, "event time span")


def unregister_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Remove a scalar listener; ``ValueError`` when it is not registered."""
    _unregister(_scalar_listeners, callback, "scalar")


@contextlib.contextmanager
def timed_phase(message: str, fun_name: str, event: str) -> Iterator[None]:
    """Time the block as one of jit's phases: record ``event`` and log ``message`` (JAX's ``log_elapsed_time``).

    ``message`` is formatted with ``fun_name`` and ``elapsed_time``; it is logged at WARNING level when
    ``jax_log_compiles`` is on, else at DEBUG. Nothing is recorded when the block raises.
    """
    start = time.time()
    record_scalar(event, start, fun_name=fun_name)
    yield
    end = time.time()
    priority = logging.WARNING if flag_value("jax_log_compiles") else logging.DEBUG
    if logger.isEnabledFor(priority):
        logger.log(priority, message.format(fun_name=fun_name, elapsed_time=end - start))
    record_event_duration_secs(event, end - start, fun_name=fun_name)
    record_event_time_span(event, start, end, fun_name=fun_name)
