"""A sharded toolkit.jit over a mesh of both processes' eight devices."""

import json

import numpy as np
import pytest

from tests.distributed.launch import check, launch

pytestmark = pytest.mark.multiprocess

SHARDED_JIT = """
import json
import os
import numpy as np
import toolkit
import toolkit.numpy as tnp
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P

# JAX's keyword names; process 0's service listens on loopback only (its default is every interface).
port = os.environ["TOOLKIT_COORDINATOR_ADDRESS"].rsplit(":", 1)[1]
toolkit.distributed.initialize(initialization_timeout=30, heartbeat_timeout_seconds=10, shutdown_timeout_seconds=30,
                               coordinator_bind_address="127.0.0.1:" + port)
mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))
rows = NamedSharding(mesh, P("x"))
replicated = NamedSharding(mesh, P())

x_host = np.arange(8 * 6, dtype=np.float32).reshape(8, 6) / 10
w_host = np.linspace(-1, 1, 6 * 5, dtype=np.float32).reshape(6, 5)
# Every process holds the same host value; device_put places this process's rows on its own devices.
x = toolkit.device_put(x_host, rows)
w = toolkit.device_put(w_host, replicated)

@toolkit.jit
def f(x, w):
    h = tnp.tanh(x @ w)                      # rows split across the processes
    return toolkit.lax.with_sharding_constraint((h * h).sum(axis=0), replicated), h.sum()

total_per_column, total = f(x, w)
local = sorted(d.id for d in toolkit.local_devices())
print(json.dumps({
    "columns": np.asarray(total_per_column).tolist(), "total": float(np.asarray(total)),
    "x_devices": sorted(d.id for d in x.sharding.device_set), "local": local,
    "addressable": sorted(d.id for s in [x] for d in s.sharding.device_set if d.process_index == toolkit.process_index()),
}))
"""


def test_sharded_jit_over_eight_global_devices_gives_the_same_replicated_result():
    outputs = check(launch(SHARDED_JIT, 2, num_cpu_devices=4, timeout=90))
    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6) / 10
    w = np.linspace(-1, 1, 6 * 5, dtype=np.float32).reshape(6, 5)
    h = np.tanh(x @ w)
    for out in outputs:
        np.testing.assert_allclose(out["columns"], (h * h).sum(axis=0), rtol=1e-5)
        np.testing.assert_allclose(out["total"], h.sum(), rtol=1e-5, atol=1e-5)
        assert len(out["x_devices"]) == 8  # the input spans both processes
        assert out["addressable"] == out["local"]
    # The replicated results are bit-identical in both processes.
    assert json.dumps(outputs[0]["columns"]) == json.dumps(outputs[1]["columns"])
    assert outputs[0]["total"] == outputs[1]["total"]
