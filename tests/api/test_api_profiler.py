"""toolkit.profiler beside jax.profiler: traces written for TensorBoard, annotations, errors (issue 23)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import toolkit
from toolkit import profiler

jax = pytest.importorskip("jax")


def _files(root):
    return [os.path.join(r, f) for r, _, fs in os.walk(root) for f in fs]


def test_trace_writes_an_xplane_like_jax(tmp_path):
    with profiler.trace(tmp_path / "toolkit"):
        with profiler.TraceAnnotation("toolkit_step", step=1):
            toolkit.jit(lambda x: x * 2)(np.ones(4, np.float32)).block_until_ready()
    files = _files(tmp_path / "toolkit")
    assert any(f.endswith(".xplane.pb") for f in files), files
    assert all(os.sep + os.path.join("plugins", "profile") + os.sep in f for f in files)
    with jax.profiler.trace(tmp_path / "jax"):
        jax.jit(lambda x: x * 2)(np.ones(4, np.float32)).block_until_ready()
    # The same layout as JAX writes (TensorBoard's profile plugin).
    assert {os.path.splitext(os.path.basename(f))[1] for f in _files(tmp_path / "jax")} >= {".pb"}
    # The annotation is in the trace: read it back with ProfileData.
    xplane = next(f for f in files if f.endswith(".xplane.pb"))
    data = profiler.ProfileData.from_file(xplane)
    names = {event.name for plane in data.planes for line in plane.lines for event in line.events}
    assert "toolkit_step" in names


def test_start_and_stop_trace_errors(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(str(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(str(tmp_path))
    finally:
        profiler.stop_trace()
    with pytest.raises(TypeError, match="log_dir"):
        profiler.start_trace(42)
    with pytest.raises(NotImplementedError, match="perfetto"):
        profiler.start_trace(str(tmp_path), create_perfetto_trace=True)
    with pytest.raises(TypeError, match="ProfileOptions"):
        profiler.start_trace(str(tmp_path), profiler_options={"host_tracer_level": 2})


def test_trace_stops_on_error(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with profiler.trace(tmp_path):
            1 / 0
    profiler.start_trace(tmp_path)  # not "already started"
    profiler.stop_trace()


def test_profile_options_and_step_annotation(tmp_path):
    options = profiler.ProfileOptions()
    options.host_tracer_level = 2
    with profiler.trace(tmp_path, profiler_options=options):
        for i in range(2):
            with profiler.StepTraceAnnotation("train", step_num=i):
                pass
    assert any(f.endswith(".xplane.pb") for f in _files(tmp_path))


def test_annotate_function():
    @profiler.annotate_function
    def f(x):
        return x + 1

    @profiler.annotate_function
    def g(x):
        return x + 1

    assert f(1) == 2 and f.__name__ == "f"
    assert jax.profiler.annotate_function(lambda x: x + 1)(1) == g(1)
    with pytest.raises(TypeError, match="callable"):
        profiler.annotate_function(3)


def test_device_memory_profile(tmp_path):
    keep = toolkit.device_put(np.ones(1000, np.float32))
    data = profiler.device_memory_profile()
    assert data[:2] == b"\x1f\x8b" == jax.profiler.device_memory_profile()[:2]  # gzipped pprof, as JAX
    path = tmp_path / "mem.prof"
    profiler.save_device_memory_profile(path)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    del keep


def test_server_errors():
    with pytest.raises(ValueError, match="No active profiler server"):
        profiler.stop_server()
    with pytest.raises(ValueError, match="port"):
        profiler.start_server(0)
    with pytest.raises(TypeError, match="two ints"):
        profiler.register_subprocess("1", 2)
