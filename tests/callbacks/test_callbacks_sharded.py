"""Host callbacks on 8 CPU devices beside JAX: once per device in shard_map, once for a sharded jit."""

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax = pytest.importorskip("jax")
from jax.sharding import NamedSharding as JNamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as JP  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit import shard  # noqa: E402

try:
    jax.config.update("jax_num_cpu_devices", 8)
except Exception:  # the backend is already up
    pass

P = shard.PartitionSpec


@pytest.fixture(autouse=True)
def _shardy(monkeypatch):
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    if len(toolkit.devices()) < 8 or jax.device_count() < 8:
        pytest.skip("needs 8 CPU devices for toolkit and jax")


@pytest.fixture
def meshes():
    t_mesh = shard.Mesh(np.array(toolkit.devices()[:8]), ("x",))
    j_mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]), ("x",))
    return t_mesh, j_mesh


def lines(capsys):
    jax.effects_barrier()
    return sorted(capsys.readouterr().out.splitlines())


def test_shard_map_prints_each_block(capsys, meshes):
    t_mesh, j_mesh = meshes
    x = np.arange(16, dtype=np.float32)

    def body_of(debug):
        def body(b):
            debug.print("block {}", b)
            return b * 2
        return body
    capsys.readouterr()
    t = toolkit.jit(toolkit.shard_map(body_of(toolkit.debug), mesh=t_mesh, in_specs=P("x"), out_specs=P("x")))(x)
    t_lines = lines(capsys)
    j = jax.jit(jax.shard_map(body_of(jax.debug), mesh=j_mesh, in_specs=JP("x"), out_specs=JP("x")))(x)
    j_lines = lines(capsys)
    assert t_lines == j_lines and len(t_lines) == 8
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_sharded_jit_calls_back_once_with_the_whole_value(capsys, meshes):
    t_mesh, j_mesh = meshes
    x = np.arange(16, dtype=np.float32)
    tx = toolkit.device_put(x, shard.NamedSharding(t_mesh, P("x")))
    jx = jax.device_put(x, JNamedSharding(j_mesh, JP("x")))
    capsys.readouterr()
    t = toolkit.jit(lambda v: (toolkit.debug.print("all {}", v), v + 1)[1])(tx)
    t_lines = lines(capsys)
    j = jax.jit(lambda v: (jax.debug.print("all {}", v), v + 1)[1])(jx)
    j_lines = lines(capsys)
    assert t_lines == j_lines and len(t_lines) == 1
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_pure_callback_on_a_sharded_value(meshes):
    t_mesh, j_mesh = meshes
    x = np.arange(16, dtype=np.float32)
    tx = toolkit.device_put(x, shard.NamedSharding(t_mesh, P("x")))
    jx = jax.device_put(x, JNamedSharding(j_mesh, JP("x")))
    t = toolkit.jit(lambda v: toolkit.pure_callback(np.sin, toolkit.ShapeDtypeStruct(v.shape, v.dtype), v) + v)(tx)
    j = jax.jit(lambda v: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(v.shape, v.dtype), v) + v)(jx)
    np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-6)


def test_explicitly_sharded_inputs(capsys):
    mesh = toolkit.make_mesh((8,), ("x",), axis_types=(toolkit.AxisType.Explicit,))
    x = toolkit.device_put(tnp.arange(8.0), shard.NamedSharding(mesh, P("x")))
    capsys.readouterr()
    y = toolkit.jit(lambda v: (toolkit.debug.print("v {}", v),
                               toolkit.pure_callback(np.cos, toolkit.ShapeDtypeStruct((8,), np.float32), v))[1])(x)
    assert capsys.readouterr().out == "v [0. 1. 2. 3. 4. 5. 6. 7.]\n"
    np.testing.assert_allclose(np.asarray(y), np.cos(np.arange(8.0)), rtol=1e-6)
