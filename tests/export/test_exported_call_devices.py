"""Device counts of sharded exports, and exports over an ``AbstractMesh`` (device-polymorphic), both ways.

An export records ``nr_devices``. Inside ``toolkit.jit`` the computation must
span that many devices (``tests/export/test_export_sharded.py``); outside jit
toolkit runs it on the first ``nr_devices`` devices, and refuses — naming
``nr_devices`` and the devices available — when there are fewer, or when an
argument is committed to another number of devices. Exports over an
``AbstractMesh`` have ``nr_devices`` from the mesh and no devices recorded.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
from jax import export as jexport  # noqa: E402
from jax.sharding import AbstractMesh as JaxAbstractMesh  # noqa: E402
from jax.sharding import NamedSharding as JaxNamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as JaxP  # noqa: E402

import toolkit  # noqa: E402
from toolkit import export, shard  # noqa: E402

try:
    jax.config.update("jax_num_cpu_devices", 8)
except Exception:  # the backend is already up: the JAX-calls-toolkit test then runs in a subprocess
    pass

F32 = np.float32
A = np.arange(64, dtype=F32).reshape(8, 8)
EIGHT = len(toolkit.devices()) >= 8


def _jax_abstract_mesh_blob() -> bytes:
    mesh = JaxAbstractMesh((2, 4), ("x", "y"))
    f = jax.jit(lambda a: (a * 2).sum(0), in_shardings=JaxNamedSharding(mesh, JaxP("x", "y")),
                out_shardings=JaxNamedSharding(mesh, JaxP("y")))
    return bytes(jexport.export(f)(jax.ShapeDtypeStruct((8, 8), F32)).serialize())


def _toolkit_abstract_mesh_export() -> export.Exported:
    mesh = shard.AbstractMesh((2, 4), ("x", "y"))
    f = toolkit.jit(lambda a: (a * 2).sum(0), in_shardings=shard.NamedSharding(mesh, shard.P("x", "y")),
                    out_shardings=shard.NamedSharding(mesh, shard.P("y")))
    return export.export(f)(toolkit.ShapeDtypeStruct((8, 8), F32))


def test_jax_abstract_mesh_export_reads_and_calls():
    exp = export.deserialize(_jax_abstract_mesh_blob())
    assert exp.nr_devices == 8
    named = exp._in_named_shardings[0]
    assert named.mesh.axis_sizes == (2, 4) and named.mesh.axis_names == ("x", "y")
    assert named.mesh.abstract_device is None  # device-polymorphic: no device recorded
    assert [str(h) for h in exp.in_shardings_hlo] == ["{devices=[2,4]<=[8]}"]
    if not EIGHT:
        pytest.skip("needs 8 toolkit devices to call")
    got = exp.call(A)
    np.testing.assert_allclose(np.asarray(got), (A * 2).sum(0))
    assert got.sharding.spec == shard.P("y")


@pytest.mark.skipif(not EIGHT, reason="toolkit lowers over an AbstractMesh with that many real devices")
def test_toolkit_abstract_mesh_export_has_jax_fields():
    ours = _toolkit_abstract_mesh_export()
    theirs = jexport.deserialize(_jax_abstract_mesh_blob())
    view = jexport.deserialize(bytes(ours.serialize()))
    assert ours.nr_devices == view.nr_devices == theirs.nr_devices == 8
    assert ours._in_named_shardings[0].mesh.abstract_device is None
    assert str(view._in_named_shardings[0]) == str(theirs._in_named_shardings[0])
    assert str(view._out_named_shardings[0]) == str(theirs._out_named_shardings[0])
    assert isinstance(view._in_named_shardings[0].mesh, JaxAbstractMesh)
    np.testing.assert_allclose(np.asarray(ours.call(A)), (A * 2).sum(0))


def _jax_calls_toolkit_abstract_export() -> None:
    from jax.sharding import Mesh
    view = jexport.deserialize(bytes(_toolkit_abstract_mesh_export().serialize()))
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("x", "y"))
    got = jax.jit(view.call, in_shardings=view.in_shardings_jax(mesh))(A)
    np.testing.assert_allclose(np.asarray(got), (A * 2).sum(0))


@pytest.mark.skipif(not EIGHT, reason="needs 8 toolkit devices")
def test_jax_calls_toolkit_abstract_mesh_export():
    if jax.device_count() >= 8:
        _jax_calls_toolkit_abstract_export()
        return
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu",
               TOOLKIT_NUM_CPU_DEVICES="8")
    code = ("import sys; sys.path.insert(0, %r); import test_exported_call_devices as t; "
            "t._jax_calls_toolkit_abstract_export(); print('ok')" % os.path.dirname(__file__))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0 and "ok" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.skipif(not EIGHT, reason="needs 8 toolkit devices")
def test_eager_call_with_an_argument_committed_to_one_device_is_refused():
    exp = export.deserialize(_jax_abstract_mesh_blob())
    x = toolkit.device_put(A, toolkit.devices()[3])
    with pytest.raises(ValueError, match=r"lowered for nr_devices=8 devices, but argument args\[0\] is committed to "
                                         r"1 device \[cpu:3\] \(available devices: \[cpu:0, .*cpu:7\]\)"):
        exp.call(x)
    # Uncommitted arguments are placed over the first 8 devices.
    np.testing.assert_allclose(np.asarray(exp.call(A)), (A * 2).sum(0))


def test_eager_call_with_too_few_devices_is_refused(tmp_path):
    path = tmp_path / "eight.bin"
    path.write_bytes(_jax_abstract_mesh_blob())
    code = ("import numpy as np, toolkit.export as te\n"
            f"exp = te.deserialize(open({str(path)!r}, 'rb').read())\n"
            "try:\n    exp.call(np.ones((8, 8), np.float32))\n"
            "except ValueError as e:\n    print('ERROR', e)\n")
    env = dict(os.environ, TOOLKIT_NUM_CPU_DEVICES="1")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ERROR The exported function '<lambda>' was lowered for nr_devices=8 devices, but only 1 are " \
           "available: [cpu:0]." in result.stdout, result.stdout


@pytest.mark.skipif(not EIGHT, reason="needs 8 toolkit devices")
def test_call_inside_a_one_device_jit_is_refused():
    exp = export.deserialize(_jax_abstract_mesh_blob())
    with pytest.raises(ValueError, match="lowered for 8 devices and is called in a computation with 1 devices"):
        toolkit.jit(lambda a: exp.call(a) * 2).lower(A)
