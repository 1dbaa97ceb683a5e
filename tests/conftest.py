"""Session-wide test setup: eight virtual CPU devices (read before the first backend use)."""

import os

os.environ.setdefault("TOOLKIT_NUM_CPU_DEVICES", "8")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def mesh():
    """A (2, 4) mesh over the eight CPU devices, axes ("x", "y")."""
    import numpy as np

    import toolkit
    from toolkit.shard import Mesh

    devices = toolkit.devices()
    if len(devices) < 8:
        pytest.skip("needs TOOLKIT_NUM_CPU_DEVICES=8")
    return Mesh(np.array(devices[:8]).reshape(2, 4), ("x", "y"))


def _count_calls(monkeypatch, owner, name):
    """A one-element list counting the calls of ``owner.name`` from now on (patched for the test)."""
    count = [0]
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return count


@pytest.fixture
def compilations(monkeypatch):
    """How many modules XLA compiled since the fixture started.

    jit's cache by function (``toolkit.core.trace_cache``) is emptied first, so
    nothing an earlier test compiled answers for this one.
    """
    from toolkit import stages
    from toolkit.core import trace_cache

    trace_cache.clear_caches()
    return _count_calls(monkeypatch, stages.runtime_executable, "compile_module")


@pytest.fixture
def lowerings(monkeypatch):
    """How many modules were lowered since the fixture started (jit's cache by function emptied first)."""
    from toolkit import lowering
    from toolkit.core import trace_cache

    trace_cache.clear_caches()
    return _count_calls(monkeypatch, lowering, "lower_program")


def pytest_configure(config):
    config.addinivalue_line("markers", "x64: run the test with 64-bit types on (toolkit.enable_x64(), JAX's x64)")


@pytest.fixture(autouse=True)
def _x64_marker(request):
    """Tests marked ``x64`` check 64-bit behaviour: they run inside ``toolkit.enable_x64()`` (x64 is off by default),
    and JAX's x64 too when the test module imported jax (its oracle)."""
    if request.node.get_closest_marker("x64") is None:
        yield
        return
    import contextlib
    import sys

    import toolkit

    with contextlib.ExitStack() as stack:
        stack.enter_context(toolkit.enable_x64())
        if "jax" in sys.modules:
            stack.enter_context(sys.modules["jax"].enable_x64(True))
        yield
