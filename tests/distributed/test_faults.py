"""Faults end the surviving processes with a clear message within the coordination timeouts, never a hang.

Timeouts here are short (heartbeat 5 s, initialization 5 s) so the folder stays fast;
``docs/distributed.md`` describes the behaviour with the defaults.
"""

import pytest

from tests.distributed.launch import launch

pytestmark = pytest.mark.multiprocess

KILLED = """
import json, os, sys, time
import numpy as np
import toolkit
from toolkit.runtime import coordination as runtime_distributed
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P

where = sys.argv[1]
toolkit.distributed.initialize(initialization_timeout=30, heartbeat_timeout=5, shutdown_timeout=10)
mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))
rows, replicated = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())

@toolkit.jit
def total(x):
    return toolkit.lax.with_sharding_constraint(x.sum(axis=0), replicated)

x = toolkit.device_put(np.ones((8, 8), np.float32), rows)
assert np.asarray(total(x)).tolist() == [8.0] * 8  # both alive: one collective works
runtime_distributed.barrier("warm", 30)
if toolkit.process_index() == 1:
    time.sleep(0.5)
    os._exit(3)  # dies without a word
start = time.monotonic()
try:
    if where == "barrier":
        runtime_distributed.barrier("after-death", 50)
    else:
        for _ in range(100000):  # bounded: the peer is gone, so this fails long before
            np.asarray(total(x))
    print(json.dumps({"error": None, "seconds": time.monotonic() - start}))
except Exception as e:
    print(json.dumps({"error": f"{type(e).__name__}: {e}", "seconds": time.monotonic() - start}))
"""


def _survivor(results):
    survivor, dead = results
    assert dead.returncode == 3 and not dead.timed_out, dead.describe()
    assert not survivor.timed_out, survivor.describe()
    return survivor


def test_peer_killed_during_collective_fails_the_computation_at_once():
    survivor = _survivor(launch(KILLED, 2, timeout=60, args=["collective"]))
    out = survivor.output
    assert out is not None and out["error"] is not None, survivor.describe()
    assert "Gloo" in out["error"] and "Connection closed by peer" in out["error"], out
    assert out["seconds"] < 60
    # At exit, shutdown finds the dead peer: the process is ended (not hung) with XLA's message.
    assert survivor.returncode != 0 and survivor.elapsed < 60
    assert "heartbeat" in survivor.stderr or "detected fatal errors" in survivor.stderr, survivor.describe()


def test_peer_killed_while_waiting_at_a_barrier_fails_within_the_heartbeat_timeout():
    survivor = _survivor(launch(KILLED, 2, timeout=60, args=["barrier"]))
    out = survivor.output
    # The service's one heartbeat timeout both fails the barrier and tells XLA's error poller,
    # which ends the process: on a loaded machine the poller can win before Python sees the error.
    if out is not None:
        assert out["error"] is not None, survivor.describe()
        assert "after-death" in out["error"] and "Task 1 heartbeat timeout" in out["error"], out
        assert out["seconds"] < 5 + 10  # heartbeat_timeout, plus slack for a loaded machine
    else:
        assert "stopped sending heartbeats" in survivor.stderr, survivor.describe()
    assert survivor.returncode != 0 and survivor.elapsed < 60
    assert "detected fatal errors" in survivor.stderr, survivor.describe()


NEVER = """
import time, toolkit
start = time.monotonic()
try:
    toolkit.distributed.initialize(initialization_timeout=5, heartbeat_timeout=5)
finally:
    import sys
    print(f"initialize returned or raised after {time.monotonic() - start:.1f} s", file=sys.stderr)
"""


def test_process_that_never_arrives_ends_initialize_within_its_timeout():
    # Two processes expected, only process 0 started.
    (alone,) = launch(NEVER, 1, timeout=60, env={"TOOLKIT_NUM_PROCESSES": "2"})
    assert not alone.timed_out and alone.returncode != 0, alone.describe()
    assert alone.elapsed < 5 + 15, alone.describe()
    assert "Wait_for_all_tasks_to_register" in alone.stderr and "1/2" in alone.stderr, alone.describe()


def test_missing_coordinator_ends_initialize_within_its_timeout():
    # Process 1 alone: nobody hosts the coordination service.
    (alone,) = launch(NEVER, 1, timeout=60, env={"TOOLKIT_NUM_PROCESSES": "2", "TOOLKIT_PROCESS_ID": "1"})
    assert not alone.timed_out and alone.returncode != 0, alone.describe()
    assert alone.elapsed < 5 + 15, alone.describe()
    assert "detected fatal errors" in alone.stderr or "DEADLINE_EXCEEDED" in alone.stderr, alone.describe()
