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
