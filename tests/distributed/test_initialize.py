"""toolkit.distributed.initialize's errors: bad arguments, twice, after the backend was made."""

import pytest

import toolkit
from tests.distributed.launch import check, launch

pytestmark = pytest.mark.multiprocess


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(coordinator_address="127.0.0.1", num_processes=2, process_id=0), ValueError, "coordinator_address"),
    (dict(coordinator_address="127.0.0.1:99999", num_processes=2, process_id=0), ValueError, "port"),
    (dict(coordinator_address="127.0.0.1:1234", num_processes=2, process_id=2), ValueError, "process_id"),
    (dict(coordinator_address="127.0.0.1:1234", num_processes=0, process_id=0), ValueError, "num_processes"),
    (dict(coordinator_address="127.0.0.1:1234", num_processes="2", process_id=0), TypeError, "num_processes"),
    (dict(coordinator_address="127.0.0.1:1234", num_processes=2, process_id=-1), ValueError, "process_id"),
    (dict(coordinator_address="127.0.0.1:1234", num_processes=2, process_id=0, initialization_timeout=0),
     ValueError, "initialization_timeout"),
    (dict(coordinator_address="127.0.0.1:1234", num_processes=2, process_id=0, local_device_ids=["a"]),
     TypeError, "local_device_ids"),
])
def test_bad_arguments_name_the_argument(kwargs, error, words):
    with pytest.raises(error, match=words):
        toolkit.distributed.initialize(**kwargs)
    assert not toolkit.distributed.is_initialized()


def test_missing_arguments_name_the_environment_variable(monkeypatch):
    for name in ("TOOLKIT_COORDINATOR_ADDRESS", "TOOLKIT_NUM_PROCESSES", "TOOLKIT_PROCESS_ID"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="TOOLKIT_COORDINATOR_ADDRESS"):
        toolkit.distributed.initialize()
    monkeypatch.setenv("TOOLKIT_COORDINATOR_ADDRESS", "127.0.0.1:1234")
    with pytest.raises(ValueError, match="TOOLKIT_NUM_PROCESSES"):
        toolkit.distributed.initialize()
    monkeypatch.setenv("TOOLKIT_NUM_PROCESSES", "two")
    with pytest.raises(ValueError, match="TOOLKIT_NUM_PROCESSES"):
        toolkit.distributed.initialize()
    monkeypatch.setenv("TOOLKIT_NUM_PROCESSES", "2")
    with pytest.raises(ValueError, match="TOOLKIT_PROCESS_ID"):
        toolkit.distributed.initialize()


def test_after_the_backend_was_made_is_refused():
    toolkit.devices()  # makes the backend in this (pytest) process
    with pytest.raises(RuntimeError, match="before anything that creates the device backend"):
        toolkit.distributed.initialize("127.0.0.1:1234", num_processes=2, process_id=0)
    assert not toolkit.distributed.is_initialized()


def test_single_process_without_initialize():
    assert toolkit.process_index() == 0 and toolkit.process_count() == 1
    assert toolkit.local_devices() == toolkit.devices()
    assert toolkit.device_count() == toolkit.local_device_count() == len(toolkit.devices())
    toolkit.distributed.shutdown()  # not initialized: does nothing


TWICE = """
import json
import toolkit
toolkit.distributed.initialize(initialization_timeout=20, heartbeat_timeout=10, shutdown_timeout=10)
errors = {}
try:
    toolkit.distributed.initialize(initialization_timeout=20)
except RuntimeError as e:
    errors["twice"] = str(e)
first = toolkit.devices()
toolkit.distributed.shutdown()
toolkit.distributed.shutdown()  # idempotent
try:
    toolkit.distributed.initialize(initialization_timeout=20)
except RuntimeError as e:
    errors["after_backend"] = str(e)
errors["process_index"] = toolkit.process_index()
errors["devices"] = len(first)
print(json.dumps(errors))
"""


def test_initialize_twice_and_after_shutdown():
    (out,) = check(launch(TWICE, 1, num_cpu_devices=2, timeout=60))
    assert "only be called once" in out["twice"] and "shutdown()" in out["twice"]
    assert "before anything that creates the device backend" in out["after_backend"]
    assert out["process_index"] == 0 and out["devices"] == 2
