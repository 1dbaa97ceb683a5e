"""Global arrays and sharded computations over several processes (loopback, CPU devices).

Each test starts processes with ``tests/distributed/launch.py``; every process
runs this file as a script (``python test_global_arrays_mp.py <mode>``), calls
``toolkit.distributed.initialize()`` and prints one JSON line. The test then
checks each process's answer and compares with the single-process result on
8 devices (computed in the pytest process, or a subprocess if its backend has
another device count):

* 2 processes × 4 devices: a global array from a callback (its addressable
  shards hold the right data; reading it into numpy is the clear error), from
  process-local rows and from single-device arrays; a sharded MLP forward with
  a sharding constraint and one SGD step over the global (2, 4) mesh; the
  replicated outputs bit-identical in both processes; a sharded export made in
  both processes (same bytes), deserialized and called.
* 4 processes × 2 devices: the MLP forward and SGD step again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[2]))

import toolkit  # noqa: E402
from toolkit.shard import Mesh, NamedSharding, P  # noqa: E402

pytestmark = pytest.mark.multiprocess

BATCH, D_IN, HIDDEN, D_OUT = 16, 8, 16, 4
LR = 0.1
SPECS = {"x": P("x"), "y": P("x"), "w1": P(None, "y"), "b1": P(), "w2": P("y", None)}


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((BATCH, D_IN)).astype(np.float32),
            "y": rng.standard_normal((BATCH, D_OUT)).astype(np.float32),
            "w1": (rng.standard_normal((D_IN, HIDDEN)) * 0.3).astype(np.float32),
            "b1": (rng.standard_normal((HIDDEN,)) * 0.1).astype(np.float32),
            "w2": (rng.standard_normal((HIDDEN, D_OUT)) * 0.3).astype(np.float32)}


def global_mesh() -> Mesh:
    """All 8 devices (every process's) as a (2, 4) mesh, in device-id order."""
    return Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))


def mlp_functions(mesh: Mesh):
    import toolkit.numpy as tnp
    ns = {k: NamedSharding(mesh, s) for k, s in SPECS.items()}

    def forward(x, w1, b1, w2):
        h = tnp.tanh(x @ w1 + b1)
        h = toolkit.lax.with_sharding_constraint(h, NamedSharding(mesh, P("x", "y")))
        return h @ w2

    def loss(params, x, y):
        return tnp.mean((forward(x, params["w1"], params["b1"], params["w2"]) - y) ** 2)

    def step(params, x, y):
        value, grads = toolkit.value_and_grad(loss)(params, x, y)
        return value, {k: params[k] - LR * grads[k] for k in params}

    param_s = {k: ns[k] for k in ("w1", "b1", "w2")}
    fwd = toolkit.jit(forward, in_shardings=(ns["x"], ns["w1"], ns["b1"], ns["w2"]), out_shardings=ns["x"])
    train = toolkit.jit(step, in_shardings=(param_s, ns["x"], ns["y"]),
                        out_shardings=(NamedSharding(mesh, P()), param_s))
    return forward, fwd, train, ns


def run_mlp(gather) -> dict:
    """Forward and one SGD step on global arrays; ``gather`` turns a global array into a numpy value."""
    mesh = global_mesh()
    data = inputs()
    _, fwd, train, ns = mlp_functions(mesh)
    arrays = {k: toolkit.make_array_from_callback(v.shape, ns[k], lambda index, v=v: v[index])
              for k, v in data.items()}
    out = fwd(arrays["x"], arrays["w1"], arrays["b1"], arrays["w2"])
    params = {k: arrays[k] for k in ("w1", "b1", "w2")}
    loss, new = train(params, arrays["x"], arrays["y"])
    return {"forward": gather(out).tolist(), "out_spec": str(out.sharding.spec),
            "loss": float(loss), "loss_hex": np.asarray(loss).tobytes().hex(),
            "b1_hex": np.asarray(new["b1"]).tobytes().hex(),  # replicated: read locally, must agree bitwise
            "new": {k: gather(v).tolist() for k, v in new.items()},
            "new_specs": {k: str(v.sharding.spec) for k, v in new.items()}}


# -- the worker (each process) -------------------------------------------------------------------------------
def worker_main() -> dict:
    """2 × 4: global arrays, the MLP, the export."""
    from toolkit import multihost
    from toolkit.export import deserialize, export
    report: dict = {"pid": toolkit.process_index()}
    timings = {}
    t = time.perf_counter()
    mesh = global_mesh()
    data = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    s = NamedSharding(mesh, P("x", "y"))
    asked = []
    g = toolkit.make_array_from_callback(data.shape, s, lambda index: asked.append(index) or data[index])
    shards = g.addressable_shards
    report["callback"] = {
        "asked": len(asked), "n_addressable": len(shards),
        "positions": sorted(list(mesh.devices.flat).index(sh.device) for sh in shards),
        "shard_pids": sorted({sh.device.process_index for sh in shards}),
        "shards_ok": all(np.array_equal(np.asarray(sh.data), data[sh.index]) for sh in shards),
        "shard_shapes": sorted({tuple(np.asarray(sh.data).shape) for sh in shards}),
        "global_shards": len(g.global_shards), "none_shards": sum(sh.data is None for sh in g.global_shards),
        "fully_addressable": g.is_fully_addressable, "fully_replicated": g.is_fully_replicated,
        "committed": g.committed, "nbytes": g.nbytes, "on_device": g.on_device_size_in_bytes(),
        "repr": repr(g), "str": str(g), "addressable_data0": np.asarray(g.addressable_data(0)).tolist(),
    }
    for what, read in [("asarray", np.asarray), ("item", lambda a: a.item()), ("tolist", lambda a: a.tolist())]:
        try:
            read(g)
            report["callback"][f"err_{what}"] = None
        except RuntimeError as exc:
            report["callback"][f"err_{what}"] = str(exc)
    g.copy_to_host_async()
    report["callback"]["gathered_ok"] = bool(np.array_equal(multihost.process_allgather(g, tiled=True), data))
    # fully replicated over both processes: not fully addressable, but every process has the value
    r = toolkit.make_array_from_callback(data.shape, NamedSharding(mesh, P()), lambda index: data[index])
    report["replicated"] = {"fully_addressable": r.is_fully_addressable, "value_ok": bool(np.array_equal(
        np.asarray(r), data)), "repr_has_values": "0." in repr(r)}
    # process-local rows: P(("x", "y")) puts rows 8p..8p+8 of a (16, 4) array on process p's devices
    pid = toolkit.process_index()
    rows = np.arange(16 * 4, dtype=np.int32).reshape(16, 4)
    local = rows[8 * pid:8 * pid + 8]
    pl = toolkit.make_array_from_process_local_data(NamedSharding(mesh, P(("x", "y"))), local)
    report["process_local"] = {"shape": list(pl.shape),
                               "ok": bool(np.array_equal(multihost.process_allgather(pl, tiled=True), rows))}
    # single-device arrays: this process's pieces only
    pieces = [toolkit.device_put(data[index], d) for d, index in s.addressable_devices_indices_map(data.shape).items()]
    sd = toolkit.make_array_from_single_device_arrays(data.shape, s, pieces[::-1])
    report["single_device"] = {"ok": bool(np.array_equal(multihost.process_allgather(sd, tiled=True), data))}
    try:
        toolkit.make_array_from_single_device_arrays(data.shape, s, pieces[:-1])
        report["single_device"]["err"] = None
    except ValueError as exc:
        report["single_device"]["err"] = str(exc)
    # device_put between shardings of the same devices, and numpy into a non-replicated jit sharding
    moved = toolkit.device_put(g, NamedSharding(mesh, P("y", "x")))
    report["reshard_ok"] = bool(np.array_equal(multihost.process_allgather(moved, tiled=True), data))
    try:
        toolkit.jit(lambda a: a + 1, in_shardings=s)(data)
        report["numpy_err"] = None
    except ValueError as exc:
        report["numpy_err"] = str(exc)
    timings["arrays"] = time.perf_counter() - t

    t = time.perf_counter()
    report["mlp"] = run_mlp(lambda a: multihost.process_allgather(a, tiled=True))
    timings["mlp"] = time.perf_counter() - t

    t = time.perf_counter()
    forward, _, _, ns = mlp_functions(mesh)
    d = inputs()
    shardings = (ns["x"], ns["w1"], ns["b1"], ns["w2"])
    specs = [toolkit.ShapeDtypeStruct(d[k].shape, d[k].dtype) for k in ("x", "w1", "b1", "w2")]
    exp = export(toolkit.jit(forward, in_shardings=shardings, out_shardings=ns["x"]))(*specs)
    blob = exp.serialize()
    again = deserialize(blob)
    args = [toolkit.make_array_from_callback(d[k].shape, s_, lambda index, v=d[k]: v[index])
            for k, s_ in zip(("x", "w1", "b1", "w2"), shardings)]
    called = again.call(*args)
    inside = toolkit.jit(lambda *a: again.call(*a) * 2)(*args)
    import hashlib
    report["export"] = {"sha": hashlib.sha256(bytes(blob)).hexdigest(), "nr_devices": exp.nr_devices,
                        "called": multihost.process_allgather(called, tiled=True).tolist(),
                        "called_spec": str(called.sharding.spec),
                        "inside": multihost.process_allgather(inside, tiled=True).tolist()}
    timings["export"] = time.perf_counter() - t
    report["timings"] = timings
    return report


def worker_mlp() -> dict:
    from toolkit import multihost
    return {"pid": toolkit.process_index(), "local": len(toolkit.local_devices()),
            "mlp": run_mlp(lambda a: multihost.process_allgather(a, tiled=True))}


def reference() -> dict:
    """The single-process answer on 8 devices."""
    return run_mlp(np.asarray)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "reference":
        print(json.dumps(reference()))
        sys.exit(0)
    toolkit.distributed.initialize()
    result = {"main": worker_main, "mlp": worker_mlp}[mode]()
    from toolkit import multihost
    multihost.sync_global_devices(f"done {mode}")
    print(json.dumps(result))
    sys.exit(0)


# -- the tests ---------------------------------------------------------------------------------------------
_REFERENCE: dict = {}


def single_process_reference() -> dict:
    if not _REFERENCE:
        if len(toolkit.devices()) == 8 and toolkit.process_count() == 1:
            _REFERENCE.update(reference())
        else:
            env = dict(os.environ, TOOLKIT_NUM_CPU_DEVICES="8",
                       PYTHONPATH=os.pathsep.join([str(HERE.parents[2]), os.environ.get("PYTHONPATH", "")]))
            for key in ("TOOLKIT_COORDINATOR_ADDRESS", "TOOLKIT_NUM_PROCESSES", "TOOLKIT_PROCESS_ID"):
                env.pop(key, None)
            out = subprocess.run([sys.executable, str(HERE), "reference"], capture_output=True, text=True,
                                 timeout=120, env=env, cwd=str(HERE.parents[2]))
            assert out.returncode == 0, out.stderr[-3000:]
            _REFERENCE.update(json.loads(out.stdout.strip().splitlines()[-1]))
    return _REFERENCE


def _launch(mode: str, num_processes: int, num_cpu_devices: int) -> list[dict]:
    from tests.distributed.launch import check, launch
    # SOURCE_DATE_EPOCH: the export's provenance time is then the same in both processes (it is the second the
    # export was made otherwise, and the two processes can straddle a second).
    return check(launch(HERE, num_processes=num_processes, num_cpu_devices=num_cpu_devices, timeout=80,
                        args=(mode,), env={"SOURCE_DATE_EPOCH": "1767225600"}))


def _check_mlp(outputs: list[dict]) -> None:
    ref = single_process_reference()
    first = outputs[0]["mlp"]
    for out in outputs:
        mlp = out["mlp"]
        np.testing.assert_allclose(mlp["forward"], ref["forward"], rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(mlp["loss"], ref["loss"], rtol=2e-5)
        for k in ("w1", "b1", "w2"):
            np.testing.assert_allclose(mlp["new"][k], ref["new"][k], rtol=2e-5, atol=1e-6)
        assert mlp["out_spec"] == ref["out_spec"] == str(P("x"))
        assert mlp["new_specs"] == ref["new_specs"]
        # replicated outputs are bit-identical in every process
        assert mlp["loss_hex"] == first["loss_hex"] and mlp["b1_hex"] == first["b1_hex"]
        # gathered sharded outputs too
        assert mlp["forward"] == first["forward"] and mlp["new"] == first["new"]


def test_two_processes_global_arrays_mlp_and_export():
    outputs = _launch("main", 2, 4)
    data = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    assert [o["pid"] for o in outputs] == [0, 1]
    for pid, out in enumerate(outputs):
        cb = out["callback"]
        assert cb["asked"] == 4 and cb["n_addressable"] == 4 and cb["shards_ok"]
        assert cb["positions"] == [4 * pid + i for i in range(4)] and cb["shard_pids"] == [pid]
        assert cb["shard_shapes"] == [[4, 4]]
        assert cb["global_shards"] == 8 and cb["none_shards"] == 4
        assert not cb["fully_addressable"] and not cb["fully_replicated"] and cb["committed"]
        assert cb["nbytes"] == data.nbytes and cb["on_device"] == data.nbytes  # 8 distinct (4, 4) pieces
        assert cb["repr"] == "Array(shape=(8, 16), dtype=float32)"
        assert cb["str"] == cb["repr"]  # printing shows no values, as JAX
        for what in ("asarray", "item", "tolist"):
            assert cb[f"err_{what}"] and "toolkit.multihost.process_allgather" in cb[f"err_{what}"], what
        assert cb["gathered_ok"]
        assert np.array_equal(cb["addressable_data0"], data[4 * pid:4 * pid + 4, 0:4])
        assert out["replicated"] == {"fully_addressable": False, "value_ok": True, "repr_has_values": True}
        assert out["process_local"] == {"shape": [16, 4], "ok": True}
        assert out["single_device"]["ok"]
        assert "Expected 4 per-device arrays" in out["single_device"]["err"]
        assert out["reshard_ok"]
        assert "non-trivial shardings for numpy inputs" in out["numpy_err"]
        ex = out["export"]
        assert ex["nr_devices"] == 8 and ex["called_spec"] == str(P("x"))
        np.testing.assert_allclose(ex["called"], out["mlp"]["forward"], rtol=1e-6)
        np.testing.assert_allclose(ex["inside"], np.asarray(out["mlp"]["forward"]) * 2, rtol=1e-6)
    assert outputs[0]["export"]["sha"] == outputs[1]["export"]["sha"]  # the same export in both processes
    _check_mlp(outputs)


def test_four_processes_mlp():
    outputs = _launch("mlp", 4, 2)
    assert [o["pid"] for o in outputs] == [0, 1, 2, 3] and all(o["local"] == 2 for o in outputs)
    _check_mlp(outputs)
