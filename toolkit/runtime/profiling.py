"""XLA's profiler as jaxlib ships it (``jaxlib._profiler``): the one place toolkit touches that private module.

``toolkit.profiler`` builds JAX's public profiler API on these names.
"""

from __future__ import annotations

import gzip
from typing import Any

from jaxlib import _profile_data, _profiler

from toolkit.runtime import client as runtime_client

#: Collection options of a profiling session (host/device tracer levels, Python tracer, ...).
ProfileOptions = _profiler.ProfileOptions
#: A scoped trace event (``with TraceMe(name, **metadata)``); recorded only while a session runs.
TraceMe = _profiler.TraceMe
#: A running profiler server (``start_server``), for TensorBoard or xprof to connect to.
ProfilerServer = _profiler.ProfilerServer
#: A collected trace (XSpace) read back: planes of lines of events (``ProfileData.from_file(path)``).
ProfileData = _profile_data.ProfileData
ProfilePlane = _profile_data.ProfilePlane
ProfileEvent = _profile_data.ProfileEvent


def register_subprocess(pid: int, port: int) -> Any:
    """Have traces of this process also collect from the profiler server of process ``pid`` on ``port``."""
    return _profiler.register_subprocess(pid, port)


def start_session(options: Any) -> Any:
    """Start an XLA profiler session with ``options`` (a :data:`ProfileOptions`); returns the session."""
    runtime_client.backend()  # backends first: their tracers register when the session starts (as JAX)
    return _profiler.ProfilerSession(options)


def stop_and_export(session: Any, log_dir: str) -> None:
    """Stop ``session`` and write its trace under ``log_dir`` (TensorBoard's ``plugins/profile/<run>/`` layout)."""
    session.stop_and_export(log_dir)


def start_server(port: int) -> Any:
    """Start the profiler server on ``port``."""
    return _profiler.start_server(port)


def set_metadata(key: str, value: str) -> None:
    """Attach ``key: value`` to traces collected from now on."""
    _profiler.set_metadata(key, value)


def clear_metadata() -> None:
    """Forget metadata set with :func:`set_metadata`."""
    _profiler.clear_metadata()


def device_memory_profile(platform: str | None = None) -> bytes:
    """The backend's live device allocations as a gzipped ``pprof`` protocol buffer (as JAX's)."""
    return gzip.compress(runtime_client.backend(platform).heap_profile())
