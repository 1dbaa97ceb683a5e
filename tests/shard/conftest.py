"""Fixtures of the sharding tests that compare with JAX: eight CPU devices for toolkit and for JAX, and the
(2, 4) meshes of Explicit axes ("x", "y") both libraries make.

The environment is set here, before any test module imports jaxlib's backends (the device counts are read once).
"""

import os

os.environ["TOOLKIT_NUM_CPU_DEVICES"] = "8"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import pytest  # noqa: E402

import toolkit  # noqa: E402


@pytest.fixture(scope="session")
def tmesh():
    """toolkit's (2, 4) mesh, axes Explicit (as ``make_mesh`` makes them by default)."""
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    return toolkit.make_mesh((2, 4), ("x", "y"))


@pytest.fixture(scope="session")
def jx():
    """The ``jax`` module, seeing eight CPU devices."""
    jax = pytest.importorskip("jax")
    if len(jax.devices()) < 8:
        pytest.skip("jax does not see 8 CPU devices in this process")
    return jax


@pytest.fixture(scope="session")
def jmesh(jx):
    """JAX's (2, 4) mesh, as ``jax.make_mesh`` makes it."""
    return jx.make_mesh((2, 4), ("x", "y"))
