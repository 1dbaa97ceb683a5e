"""toolkit.multihost across 2 processes × 4 CPU devices (loopback): process_allgather, broadcast_one_to_all,
sync_global_devices and assert_equal, checked against what each process should receive.

Every process runs this file as a script (``python test_multihost_mp.py``)
through ``tests/distributed/launch.py`` and prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[2]))

import toolkit  # noqa: E402

pytestmark = pytest.mark.multiprocess


def _error(fun, *args, **kwargs):
    try:
        fun(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - reported to the test
        return f"{type(exc).__name__}: {exc}"
    return None


def worker() -> dict:
    from toolkit import multihost
    from toolkit.shard import Mesh, NamedSharding, P
    toolkit.distributed.initialize()
    pid = toolkit.process_index()
    t = time.perf_counter()
    out: dict = {"pid": pid}
    # stacked / concatenated host values; scalars are stacked either way
    out["scalar"] = multihost.process_allgather(np.int32(pid)).tolist()
    out["scalar_tiled"] = multihost.process_allgather(np.int32(pid), tiled=True).tolist()
    local = np.full((2, 3), pid, np.float32) + np.arange(3, dtype=np.float32)
    out["stacked"] = multihost.process_allgather(local).tolist()
    out["tiled"] = multihost.process_allgather(local, tiled=True).tolist()
    tree = multihost.process_allgather({"a": np.int64(pid * 10), "b": [np.bool_(pid == 1)]})
    out["tree"] = {"a": tree["a"].tolist(), "b": tree["b"][0].tolist()}
    # a fully addressable toolkit array on this process's devices
    out["local_array"] = multihost.process_allgather(toolkit.device_put(local), tiled=True).tolist()
    # a global array: its whole value (tiled only)
    mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))
    data = np.arange(32, dtype=np.float32).reshape(8, 4)
    g = toolkit.make_array_from_callback(data.shape, NamedSharding(mesh, P("x", "y")), lambda i: data[i])
    out["global"] = multihost.process_allgather(g, tiled=True).tolist()
    out["global_untiled_err"] = _error(multihost.process_allgather, g)
    # broadcasts: from process 0 by default, from process 1 when it says it is the source
    value = {"w": np.full((2, 2), pid + 1.5, np.float32), "n": np.int32(100 + pid), "flag": np.bool_(pid == 0)}
    b0 = multihost.broadcast_one_to_all(value)
    out["b0"] = {k: np.asarray(v).tolist() for k, v in b0.items()}
    out["b0_types"] = sorted({type(v).__name__ for v in b0.values()})
    b1 = multihost.broadcast_one_to_all(np.arange(3, dtype=np.int64) * (pid + 1), is_source=(pid == 1))
    out["b1"] = b1.tolist()
    # barrier; mismatched names and unequal values are errors in every process
    multihost.sync_global_devices("step 1")
    out["sync_mismatch"] = _error(multihost.sync_global_devices, f"name of process {pid}")
    out["assert_equal_ok"] = _error(multihost.assert_equal, {"v": np.arange(4)}, "same")
    out["assert_equal_bad"] = _error(multihost.assert_equal, np.int32(pid), "values differ")
    # the barrier really waits: process 1 arrives 1.5 s late
    if pid == 1:
        time.sleep(1.5)
    before = time.perf_counter()
    multihost.sync_global_devices("late")
    out["waited"] = time.perf_counter() - before
    out["elapsed"] = time.perf_counter() - t
    return out


if __name__ == "__main__":
    result = worker()
    print(json.dumps(result))
    sys.exit(0)


def test_multihost_two_processes():
    from tests.distributed.launch import check, launch
    outputs = check(launch(HERE, num_processes=2, num_cpu_devices=4, timeout=80))
    data = np.arange(32, dtype=np.float32).reshape(8, 4)
    rows = [[[p + 0.0, p + 1.0, p + 2.0]] * 2 for p in range(2)]
    for pid, out in enumerate(outputs):
        assert out["pid"] == pid
        assert out["scalar"] == [0, 1] and out["scalar_tiled"] == [0, 1]
        assert out["stacked"] == rows
        assert out["tiled"] == rows[0] + rows[1] and out["local_array"] == out["tiled"]
        assert out["tree"] == {"a": [0, 10], "b": [False, True]}
        assert out["global"] == data.tolist()
        assert out["global_untiled_err"] == ("ValueError: Gathering global non-fully-addressable arrays only "
                                             "supports tiled=True")
        assert out["b0"] == {"w": [[1.5, 1.5], [1.5, 1.5]], "n": 100, "flag": True}
        assert out["b0_types"] == ["ndarray"]
        assert out["b1"] == [0, 2, 4]
        assert out["sync_mismatch"].startswith("AssertionError: sync_global_devices name mismatch")
        assert out["assert_equal_ok"] is None
        assert out["assert_equal_bad"].startswith("AssertionError: values differ")
    # process 0 waited at the barrier for the late process 1
    assert outputs[0]["waited"] > 1.0, outputs[0]["waited"]
