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
