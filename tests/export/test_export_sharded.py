"""Sharded exports on 8 CPU devices: fields, round trip, call; and interop with JAX (in a subprocess).

tests/conftest.py sets TOOLKIT_NUM_CPU_DEVICES=8 for the session. JAX only
gets 8 host devices when XLA_FLAGS is set before it is imported, so the
interop part runs this file as a script in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("TOOLKIT_NUM_CPU_DEVICES", "8")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import toolkit  # noqa: E402
from toolkit import shard  # noqa: E402
from toolkit.export import deserialize, export  # noqa: E402
from toolkit.runtime import client  # noqa: E402

F32 = np.float32


def _mesh():
    devices = client.devices()
    if len(devices) < 8:
        pytest.skip("needs 8 CPU devices (TOOLKIT_NUM_CPU_DEVICES=8 before the first backend use)")
    return shard.Mesh(np.array(devices[:8]).reshape(2, 4), ("x", "y"))


def _sharded_matmul(mesh):
    ns = lambda *spec: shard.NamedSharding(mesh, shard.P(*spec))  # noqa: E731
    return toolkit.jit(lambda a, b: (a @ b, a.sum()), in_shardings=(ns("x", "y"), ns("y", None)),
                       out_shardings=(ns("x"), ns()))


def test_sharded_export_fields_round_trip_and_call():
    mesh = _mesh()
    exp = export(_sharded_matmul(mesh))(np.ones((8, 8), F32), np.ones((8, 4), F32))
    assert exp.nr_devices == 8
    # As JAX 0.10.2's export: the named shardings are recorded, the HloSharding fields left None (JAX's
    # deserializer derives them; so does toolkit's, and toolkit's own readers derive them when they need them).
    assert exp.in_shardings_hlo == (None, None) and exp.out_shardings_hlo == (None, None)
    assert [str(h) for h in exp._hlo_shardings("in")] == [
        "{devices=[2,4]<=[8]}", "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"]
    assert [str(h) for h in exp._hlo_shardings("out")] == ["{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
                                                           "{replicated}"]
    back = deserialize(exp.serialize())
    assert [str(h) for h in back.in_shardings_hlo] == [str(h) for h in exp._hlo_shardings("in")]
    named = exp._in_named_shardings[0]
    assert named.mesh.axis_sizes == (2, 4) and named.mesh.axis_names == ("x", "y")
    assert named.mesh.abstract_device.platform == "cpu"
    text = exp.mlir_module()
    assert "mhlo.num_partitions = 8" in text
    # Shardy form, as JAX 0.10.2 exports (its call cannot mix GSPMD modules into Shardy ones).
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>' in text
    again = deserialize(exp.serialize())
    assert again == exp
    a, b = np.random.rand(8, 8).astype(F32), np.random.rand(8, 4).astype(F32)
    prod, total = again.call(a, b)
    np.testing.assert_allclose(np.asarray(prod), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(total), a.sum(), rtol=1e-5)
    assert prod.sharding.spec == shard.P("x")
    assert [type(s).__name__ for s in again.in_shardings_jax(mesh)] == ["NamedSharding", "NamedSharding"]


def test_device_count_is_checked():
    mesh = _mesh()
    exp = export(_sharded_matmul(mesh))(np.ones((8, 8), F32), np.ones((8, 4), F32))
    single = toolkit.jit(lambda a, b: exp.call(a, b)[1])
    with pytest.raises(ValueError, match="lowered for 8 devices and is called in a computation with 1 devices"):
        single.lower(np.ones((8, 8), F32), np.ones((8, 4), F32))


def test_sharded_multi_platform_export():
    mesh = _mesh()
    f = toolkit.jit(lambda a: a * 2, in_shardings=shard.NamedSharding(mesh, shard.P("x")))
    exp = export(f, platforms=("cpu", "cuda"))(np.ones((8, 2), F32))
    text = exp.mlir_module()
    assert 'jax.global_constant = "_platform_index"' in text and "sdy.sharding" in text and "sdy.mesh" in text
    x = np.arange(16, dtype=F32).reshape(8, 2)
    np.testing.assert_allclose(np.asarray(deserialize(exp.serialize()).call(x)), x * 2)


def test_jax_interop_in_a_subprocess():
    pytest.importorskip("jax")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu",
               TOOLKIT_NUM_CPU_DEVICES="8")
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    result = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, cwd=here,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "sharded export interop ok" in result.stdout


def _interop_main() -> None:
    """Both directions with 8 devices: toolkit blob -> JAX call, JAX blob -> toolkit call."""
    import jax
    from jax import export as jexport
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    assert jax.device_count() == 8
    a, b = np.random.rand(8, 8).astype(F32), np.random.rand(8, 4).astype(F32)

    # toolkit -> JAX
    mesh = shard.Mesh(np.array(client.devices()[:8]).reshape(2, 4), ("x", "y"))
    texp = export(_sharded_matmul(mesh))(a, b)
    jview = jexport.deserialize(bytes(texp.serialize()))
    assert jview.nr_devices == 8
    assert [str(h) for h in jview.in_shardings_hlo] == [str(h) for h in texp._hlo_shardings("in")]
    jmesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    got = jax.jit(jview.call, in_shardings=jview.in_shardings_jax(jmesh))(a, b)
    np.testing.assert_allclose(np.asarray(got[0]), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]), a.sum(), rtol=1e-5)

    # JAX -> toolkit
    f = jax.jit(lambda a, b: (a @ b, a.sum()),
                in_shardings=(NamedSharding(jmesh, P("x", "y")), NamedSharding(jmesh, P("y", None))),
                out_shardings=(NamedSharding(jmesh, P("x")), NamedSharding(jmesh, P())))
    jexp = jexport.export(f)(a, b)
    tview = deserialize(bytes(jexp.serialize()))
    assert tview.nr_devices == 8
    prod, total = tview.call(a, b)
    np.testing.assert_allclose(np.asarray(prod), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(total), a.sum(), rtol=1e-5)
    print("sharded export interop ok")


if __name__ == "__main__":
    _interop_main()
