"""Exports with ``sdy.manual_computation`` (``jax.shard_map``) are callable under either toolkit partitioner.

JAX writes the export (8 CPU devices, a ``shard_map`` with a ``psum``);
toolkit deserializes and calls it eagerly and inside ``toolkit.jit`` lowered
with ``partitioner="gspmd"`` (the ``sdy`` parts rewritten to GSPMD's manual
sharding custom calls) and ``partitioner="shardy"`` (kept, sharing the
caller's mesh). JAX's own call is the oracle.

JAX only has 8 CPU devices when configured before its backend starts; when
an earlier test already started it with fewer, this file re-runs itself in a
subprocess (``test_in_subprocess``).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
from jax import export as jexport  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import toolkit  # noqa: E402
from toolkit import export, shard  # noqa: E402
from toolkit.export import callee_shardings  # noqa: E402

try:
    jax.config.update("jax_num_cpu_devices", 8)
except Exception:  # the backend is already up: keep what it has
    pass

IN_PROCESS = jax.device_count() == 8 and len(toolkit.devices()) >= 8
F32 = np.float32
A = np.arange(64, dtype=F32).reshape(8, 8)


@pytest.fixture(autouse=True)
def _needs_eight_devices(request):
    if not IN_PROCESS and request.node.name != "test_in_subprocess":
        pytest.skip("covered by test_in_subprocess (JAX needs 8 CPU devices configured before it starts)")


def test_in_subprocess():
    if IN_PROCESS:
        return
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu",
               TOOLKIT_NUM_CPU_DEVICES="8")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                            capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def _jax_mesh():
    return Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("x", "y"))


def _toolkit_mesh():
    return shard.Mesh(np.array(toolkit.devices()[:8]).reshape(2, 4), ("x", "y"))


def _full_manual(mesh):
    def body(block):
        return jax.lax.psum(block.sum(axis=0, keepdims=True), "x") * 2
    return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P(None, "y"))


def _partial_manual(mesh):
    # Manual over "x" only: "y" stays with the partitioner.
    def body(block):
        return jax.lax.psum(block * 3, "x")
    return jax.shard_map(body, mesh=mesh, in_specs=P("x", None), out_specs=P(None, None), axis_names={"x"})


CASES = {"full_manual": _full_manual, "partial_manual": _partial_manual}


def _blob(name: str) -> tuple[bytes, np.ndarray]:
    mesh = _jax_mesh()
    f = jax.jit(CASES[name](mesh), in_shardings=NamedSharding(mesh, P("x", "y")))
    exp = jexport.export(f)(A)
    assert "sdy.manual_computation" in exp.mlir_module()
    blob = bytes(exp.serialize())
    view = jexport.deserialize(blob)  # JAX calls an 8-device export only inside an 8-device jit
    return blob, np.asarray(jax.jit(view.call, in_shardings=view.in_shardings_jax(mesh))(A))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("partitioner", ["gspmd", "shardy"])
def test_call_inside_jit(name, partitioner):
    blob, want = _blob(name)
    exp = export.deserialize(blob)
    assert exp.nr_devices == 8
    mesh = _toolkit_mesh()
    g = toolkit.jit(lambda a: exp.call(a) + 1, in_shardings=shard.NamedSharding(mesh, shard.P("x", "y")))
    lowered = g.trace(A).lower(partitioner=partitioner)
    text = lowered.as_text()
    if partitioner == "gspmd":
        assert "sdy." not in text and "@SPMDFullToShardShape" in text and "@SPMDShardToFullShape" in text
    else:
        assert "sdy.manual_computation" in text and text.count("sdy.mesh @") == 1  # one shared mesh
    np.testing.assert_allclose(np.asarray(lowered.compile()(A)), want + 1, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_call(name):
    blob, want = _blob(name)
    np.testing.assert_allclose(np.asarray(export.deserialize(blob).call(A)), want, rtol=1e-6)


def test_manual_sharding_texts():
    mesh = export.ExportedAbstractMesh((2, 4), ("x", "y"))
    assert callee_shardings._manual_text(mesh, {"x", "y"}, 2) == "{manual}"
    # Manual over x, replicated over y (JAX's manual_proto).
    assert callee_shardings._manual_text(mesh, {"x"}, 2) == \
        "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={replicated, manual}}"
    assert callee_shardings._manual_text(mesh, {"y"}, 1) == "{devices=[1,2,4]<=[2,4] last_tile_dims={replicated, manual}}"
