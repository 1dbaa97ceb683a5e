"""Two processes × four CPU devices: who is who, and which devices each sees."""

import pytest

from tests.distributed.launch import check, launch

pytestmark = pytest.mark.multiprocess

TOPOLOGY = """
import json
import toolkit
toolkit.distributed.initialize(initialization_timeout=30, heartbeat_timeout=10)
devices, local = toolkit.devices(), toolkit.local_devices()
print(json.dumps({
    "process_index": toolkit.process_index(), "process_count": toolkit.process_count(),
    "device_count": toolkit.device_count(), "local_device_count": toolkit.local_device_count(),
    "devices": [[d.id, d.process_index] for d in devices],
    "local": [[d.id, d.process_index] for d in local],
    "initialized": toolkit.distributed.is_initialized(),
}))
toolkit.distributed.shutdown()
toolkit.distributed.shutdown()  # idempotent
"""


def test_two_processes_four_devices_each():
    outputs = check(launch(TOPOLOGY, 2, num_cpu_devices=4, timeout=60))
    for i, out in enumerate(outputs):
        assert out["process_index"] == i
        assert out["process_count"] == 2
        assert out["device_count"] == 8 and len(out["devices"]) == 8
        assert out["local_device_count"] == 4 and len(out["local"]) == 4
        assert all(p == i for _, p in out["local"])
        assert out["initialized"]
    # Both processes see the same global device list, four devices per process.
    assert outputs[0]["devices"] == outputs[1]["devices"]
    assert sorted(p for _, p in outputs[0]["devices"]) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert not set(map(tuple, outputs[0]["local"])) & set(map(tuple, outputs[1]["local"]))
