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


@pytest.fixture
def meshes(tmesh, jmesh):
    """``(toolkit's mesh, JAX's mesh)``: the pair a comparison runs one program on."""
    return tmesh, jmesh


@pytest.fixture
def shardy(monkeypatch):
    """jit partitions with Shardy; skipped without 8 CPU devices in both libraries."""
    jax = pytest.importorskip("jax")
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    if len(toolkit.devices()) < 8 or jax.device_count() < 8:
        pytest.skip("needs 8 CPU devices for toolkit and jax")


@pytest.fixture(scope="module")
def libs():
    """``(toolkit, jax)`` as namespaces of the same names — ``lax``, ``np``, ``shard_map``, ``P``, a (2, 4)
    ``mesh`` of Auto axes ("x", "y"), ``jit``, ``grad``, ``vmap``, ``jvp``, ``pmap``, ``tree_map`` — so that a
    program written once over ``L`` runs in both."""
    import types

    import numpy as np

    import toolkit.numpy as tnp
    from toolkit import shard
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    tk = types.SimpleNamespace(
        lax=toolkit.lax, np=tnp, shard_map=toolkit.shard_map, P=shard.PartitionSpec,
        mesh=shard.Mesh(np.array(toolkit.devices()[:8]).reshape(2, 4), ("x", "y")), jit=toolkit.jit,
        grad=toolkit.grad, vmap=toolkit.vmap, jvp=toolkit.jvp, pmap=toolkit.pmap, tree_map=toolkit.tree_util.tree_map,
        name="toolkit")
    jx = types.SimpleNamespace(
        lax=jax.lax, np=jnp, shard_map=jax.shard_map, P=jax.sharding.PartitionSpec,
        mesh=jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("x", "y")), jit=jax.jit, grad=jax.grad,
        vmap=jax.vmap, jvp=jax.jvp, pmap=jax.pmap, tree_map=jax.tree_util.tree_map, name="jax")
    return tk, jx
