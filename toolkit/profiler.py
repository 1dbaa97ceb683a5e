"""``toolkit.profiler``: JAX's profiler API (``jax.profiler``) on XLA's profiler in jaxlib.

``start_trace(log_dir)`` / ``stop_trace()`` or ``with trace(log_dir):`` collect a trace of host and device
activity, written for TensorBoard's profile plugin (``log_dir/plugins/profile/<run>/*.xplane.pb``);
``TraceAnnotation``/``StepTraceAnnotation``/``annotate_function`` add named events to it.

Example::

    with toolkit.profiler.trace("/tmp/trace"):
        with toolkit.profiler.TraceAnnotation("step"):
            f(x).block_until_ready()
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from typing import Any, Callable, Iterator

from toolkit.runtime import profiling
from toolkit.version import __version__

ProfileOptions = profiling.ProfileOptions
ProfileData = profiling.ProfileData
ProfilePlane = profiling.ProfilePlane
ProfileEvent = profiling.ProfileEvent

_lock = threading.Lock()
_session: Any = None
_log_dir: str | None = None
_server: Any = None


def _check_perfetto(create_perfetto_link: bool, create_perfetto_trace: bool) -> None:
    if create_perfetto_link or create_perfetto_trace:
        raise NotImplementedError("create_perfetto_link/create_perfetto_trace are not supported by toolkit yet; "
                                  "open the trace written to log_dir with TensorBoard or xprof")


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """Start collecting a profiler trace, written to ``log_dir`` by :func:`stop_trace` (``jax.profiler``).

    Only one trace runs at a time: starting a second raises ``RuntimeError`` (as JAX). ``profiler_options`` is
    a :data:`ProfileOptions` (default: XLA's defaults).
    """
    global _session, _log_dir
    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"start_trace: log_dir must be a path, got {type(log_dir).__name__}")
    _check_perfetto(create_perfetto_link, create_perfetto_trace)
    if profiler_options is not None and not isinstance(profiler_options, ProfileOptions):
        raise TypeError(f"start_trace: profiler_options must be a toolkit.profiler.ProfileOptions, got "
                        f"{type(profiler_options).__name__}")
    with _lock:
        if _session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
        profiling.clear_metadata()
        profiling.set_metadata("toolkit_version", __version__)
        _session = profiling.start_session(profiler_options if profiler_options is not None else ProfileOptions())
        _log_dir = os.fspath(log_dir)


def stop_trace() -> None:
    """Stop the running trace and write it under the ``log_dir`` given to :func:`start_trace`; ``RuntimeError``
    when none runs."""
    global _session, _log_dir
    with _lock:
        if _session is None:
            raise RuntimeError("No profile started")
        session, log_dir = _session, _log_dir
        _session, _log_dir = None, None
        profiling.stop_and_export(session, str(log_dir))
        profiling.clear_metadata()


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
          profiler_options: Any = None) -> Iterator[None]:
    """``with trace(log_dir):`` — :func:`start_trace` on entry, :func:`stop_trace` on exit (even on error)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation(profiling.TraceMe):
    """``with TraceAnnotation("label", **metadata):`` — a named event spanning the block in the trace."""


class StepTraceAnnotation(TraceAnnotation):
    """A step event (``with StepTraceAnnotation("train", step_num=i):``); the profiler analyses steps."""

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs: Any) -> Callable:
    """Wrap ``func`` so each call is a :class:`TraceAnnotation` named ``name`` (default its qualified name)."""
    if not callable(func):
        raise TypeError(f"annotate_function expects a callable, got {type(func).__name__}")
    label = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def start_server(port: int) -> Any:
    """Start a profiler server on ``port`` for TensorBoard/xprof to capture from; one per process."""
    global _server
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise ValueError(f"start_server: port must be an int in 1..65535, got {port!r}")
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    _server = profiling.start_server(port)
    return _server


def stop_server() -> None:
    """Stop the server :func:`start_server` started; ``ValueError`` when none runs."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None  # the server stops when its last reference goes, as in JAX


def register_subprocess(pid: int, port: int) -> Any:
    """Traces of this process also collect from the profiler server (:func:`start_server`) of process ``pid``
    listening on ``port``; returns a callable that unregisters it."""
    if not isinstance(pid, int) or not isinstance(port, int):
        raise TypeError(f"register_subprocess(pid, port) takes two ints, got {pid!r}, {port!r}")
    return profiling.register_subprocess(pid, port)


def device_memory_profile(backend: str | None = None) -> bytes:
    """The device memory in use as a gzipped ``pprof`` protocol buffer (``jax.profiler.device_memory_profile``)."""
    return profiling.device_memory_profile(backend)


def save_device_memory_profile(filename: os.PathLike | str, backend: str | None = None) -> None:
    """Write :func:`device_memory_profile` to ``filename``."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)


__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane", "StepTraceAnnotation", "TraceAnnotation",
           "annotate_function", "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]
