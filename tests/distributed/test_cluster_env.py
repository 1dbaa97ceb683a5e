"""toolkit.distributed.initialize() with no arguments under SLURM, Open MPI, MPICH and the TOOLKIT_* variables.

Unit tests read simulated environments (compared with JAX's own ``ClusterEnv``
detectors where JAX has one); the process tests start real processes on
loopback with the variables set as each launcher sets them, and each run does
a collective (``process_allgather``). Runs under the real ``mpirun``/``mpiexec``
skip when Debian's Open MPI / MPICH are not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import toolkit
from toolkit import cluster_environments as ce
from tests.distributed.launch import REPO_ROOT, ProcessResult, _last_json, check

pytestmark = pytest.mark.multiprocess

_PREFIXES = ("SLURM_", "OMPI_", "PMI_", "PMIX_", "MPI_LOCAL", "HYDI_", "TOOLKIT_COORDINATOR", "TOOLKIT_NUM_PROCESSES",
             "TOOLKIT_PROCESS_ID", "TOOLKIT_LOCAL_DEVICE_IDS", "JAX_COORDINATOR")


def _clean_env(environ) -> dict[str, str]:
    return {k: v for k, v in environ.items() if not k.startswith(_PREFIXES)}


@pytest.fixture
def bare(monkeypatch):
    """No launcher variables in this process's environment."""
    for name in list(os.environ):
        if name.startswith(_PREFIXES):
            monkeypatch.delenv(name)
    return monkeypatch


SLURM = dict(SLURM_JOB_ID="123456", SLURM_NTASKS="4", SLURM_PROCID="2", SLURM_LOCALID="1",
             SLURM_STEP_NODELIST="node[003-004,010],login1")
OMPI = dict(OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_RANK="1", OMPI_COMM_WORLD_LOCAL_RANK="1",
            OMPI_COMM_WORLD_LOCAL_SIZE="2",
            OMPI_MCA_orte_hnp_uri="1167785984.0;tcp://10.96.0.1,10.148.0.1:39753;tcp6://[fd00::2]:41109")
MPICH = dict(PMI_RANK="1", PMI_SIZE="2", MPI_LOCALRANKID="1", MPI_LOCALNRANKS="2", PMI_FD="8")


def _set(monkeypatch, variables):
    for k, v in variables.items():
        monkeypatch.setenv(k, v)


# --- unit tests: no processes ------------------------------------------------------------------------------------

def test_nothing_found_names_every_variable_looked_for(bare):
    with pytest.raises(ValueError) as info:
        toolkit.distributed.initialize()
    message = str(info.value)
    for name in ("TOOLKIT_COORDINATOR_ADDRESS", "TOOLKIT_NUM_PROCESSES", "TOOLKIT_PROCESS_ID", "SLURM_JOB_ID",
                 "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_STEP_NODELIST", "OMPI_COMM_WORLD_SIZE",
                 "OMPI_COMM_WORLD_RANK", "OMPI_MCA_orte_hnp_uri", "PMIX_SERVER_URI", "PMI_RANK", "PMI_SIZE",
                 "MPI_LOCALRANKID"):
        assert name in message
    assert not toolkit.distributed.is_initialized()


def test_partial_slurm_is_not_a_slurm_environment(bare):
    bare.setenv("SLURM_JOB_ID", "7")  # as in a login shell after salloc: no task variables
    with pytest.raises(ValueError, match="no cluster environment found.*SLURM_PROCID"):
        toolkit.distributed.initialize()


@pytest.mark.parametrize("nodelist, hosts", [
    ("node001", ["node001"]),
    ("node001,host2", ["node001", "host2"]),
    ("node[001-004,007],other", ["node001", "node002", "node003", "node004", "node007", "other"]),
    ("node[9-11]", ["node9", "node10", "node11"]),
    ("node[098-101]", ["node098", "node099", "node100", "node101"]),
    ("r[1-2]n[01-02],x", ["r1n01", "r1n02", "r2n01", "r2n02", "x"]),
    ("a[1]-ib,b", ["a1-ib", "b"]),
    ("127.0.0.[1-3]", ["127.0.0.1", "127.0.0.2", "127.0.0.3"]),
])
def test_expand_nodelist(nodelist, hosts):
    assert ce.expand_nodelist(nodelist) == hosts


@pytest.mark.parametrize("nodelist", ["node[1-2", "node1-2]", "node[a-b]", "node[5-3]", "node[1,,2]"])
def test_expand_nodelist_errors_name_the_list(nodelist):
    with pytest.raises(ValueError, match=re.escape(repr(nodelist))):
        ce.expand_nodelist(nodelist)


def test_slurm_matches_jax(bare):
    clusters = pytest.importorskip("jax._src.clusters")
    _set(bare, SLURM)
    found = ce.resolve()
    assert (found.coordinator_address, found.num_processes, found.process_id, found.local_device_ids) == (
        "node003:" + str(61440 + 123456 % 4096), 4, 2, [1])
    assert found.sources == dict.fromkeys(["coordinator_address", "num_processes", "process_id",
                                           "local_device_ids"], "slurm")
    jax_env = clusters.SlurmCluster
    assert jax_env.is_env_present() and ce.detect() is ce.SlurmEnvironment
    for nodelist in ("node003", "node003,login1", "node[003-004,010],login1", "node[010,003],x", "127.0.0.[1-4]"):
        bare.setenv("SLURM_STEP_NODELIST", nodelist)
        assert ce.SlurmEnvironment.get_coordinator_address() == jax_env.get_coordinator_address(None, None)
    assert (jax_env.get_process_count(), jax_env.get_process_id(), jax_env.get_local_process_id()) == (4, 2, 1)
    bare.setenv("TOOLKIT_COORDINATOR_PORT", "5000")
    assert ce.resolve().coordinator_address == jax_env.get_coordinator_address(None, "5000") == "127.0.0.1:5000"


def test_open_mpi_matches_jax(bare):
    clusters = pytest.importorskip("jax._src.clusters")
    _set(bare, OMPI)
    found = ce.resolve()
    expected_port = 1167785984 // 4096 % 4096 + 61440
    assert (found.coordinator_address, found.num_processes, found.process_id, found.local_device_ids) == (
        f"10.96.0.1:{expected_port}", 2, 1, [1])
    assert found.coordinator_address == clusters.OmpiCluster.get_coordinator_address(None, None)
    bare.setenv("OMPI_MCA_orte_hnp_uri", "1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083::2]:43370")
    jax_address = clusters.OmpiCluster.get_coordinator_address(None, None)  # JAX leaves out the brackets
    assert ce.resolve().coordinator_address == "[fe80::b9b:ac5d:9cf0:b858]:" + jax_address.rsplit(":", 1)[1]


def test_open_mpi_5_pmix_single_host_only(bare):
    _set(bare, {k: v for k, v in OMPI.items() if k != "OMPI_MCA_orte_hnp_uri"})
    assert ce.detect() is None  # no launcher URI: not Open MPI
    bare.setenv("PMIX_SERVER_URI41", "prterun-vm-4242@0.0;tcp4://127.0.0.1:33995")
    bare.setenv("PMIX_SERVER_URI2", "prterun-vm-4242@0.0;tcp4://127.0.0.1:33995")
    bare.setenv("PMIX_NAMESPACE", "prterun-vm-4242@1")
    found = ce.resolve()
    assert ce.detect() is ce.OpenMPIEnvironment
    host, port = found.coordinator_address.rsplit(":", 1)
    assert host == "127.0.0.1" and 61440 <= int(port) <= 65535
    bare.setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1")  # ranks on two hosts: the URI names this host's daemon
    with pytest.raises(ValueError, match="TOOLKIT_COORDINATOR_ADDRESS"):
        ce.resolve()
    bare.setenv("TOOLKIT_COORDINATOR_ADDRESS", "head:1234")
    assert ce.resolve().coordinator_address == "head:1234"


def test_mpich_single_host(bare):
    _set(bare, MPICH)
    assert ce.detect() is ce.MPICHEnvironment
    with pytest.raises(ValueError, match="hydra_pmi_proxy.*TOOLKIT_COORDINATOR_PORT"):
        ce.resolve()  # pytest was not started by mpiexec: no port every rank agrees on
    bare.setenv("TOOLKIT_COORDINATOR_PORT", "23456")
    found = ce.resolve()
    assert (found.coordinator_address, found.num_processes, found.process_id, found.local_device_ids) == (
        "127.0.0.1:23456", 2, 1, [1])
    bare.setenv("MPI_LOCALNRANKS", "1")
    with pytest.raises(ValueError, match="several hosts.*TOOLKIT_COORDINATOR_ADDRESS"):
        ce.resolve()


def test_precedence_argument_then_toolkit_variable_then_launcher(bare):
    _set(bare, SLURM)
    _set(bare, OMPI)  # mpirun inside a SLURM allocation: Open MPI's ranks win (as in JAX)
    found = ce.resolve()
    assert found.sources["process_id"] == "ompi" and found.num_processes == 2
    bare.setenv("TOOLKIT_COORDINATOR_ADDRESS", "10.1.1.1:999")
    bare.setenv("TOOLKIT_LOCAL_DEVICE_IDS", "0,3")
    found = ce.resolve()
    assert found.coordinator_address == "10.1.1.1:999" and found.local_device_ids == [0, 3]
    assert found.sources == {"coordinator_address": "generic", "local_device_ids": "generic",
                             "num_processes": "ompi", "process_id": "ompi"}
    found = ce.resolve("h:1", 8, 5, [2])
    assert (found.coordinator_address, found.num_processes, found.process_id, found.local_device_ids) == (
        "h:1", 8, 5, [2])
    assert set(found.sources.values()) == {"argument"}
    found = ce.resolve(process_id=0)
    assert found.process_id == 0 and found.sources["process_id"] == "argument"


def test_cluster_detection_method_as_jax_names_it(bare):
    _set(bare, SLURM)
    _set(bare, OMPI)
    assert ce.resolve().sources["process_id"] == "ompi"  # detected: Open MPI's ranks win
    assert ce.resolve(cluster_detection_method="slurm").sources["process_id"] == "slurm"  # that launcher only
    found = ce.resolve(cluster_detection_method="deactivate")
    assert (found.coordinator_address, found.num_processes, found.process_id) == (None, None, None)
    bare.setenv("TOOLKIT_NUM_PROCESSES", "3")  # toolkit's own variables still count
    assert ce.resolve(cluster_detection_method="deactivate").num_processes == 3
    with pytest.raises(ValueError, match=r"unknown cluster_detection_method 'pbs'.*'ompi', 'mpich', 'slurm'"):
        ce.resolve(cluster_detection_method="pbs")
    with pytest.raises(ValueError, match="mpirun's and mpiexec's variables"):
        ce.resolve(cluster_detection_method="mpi4py")


def test_initialize_takes_jax_keywords(bare):
    # jax.distributed.initialize's names (heartbeat_timeout_seconds, ...) reach the runtime; toolkit's earlier
    # names stay; what toolkit's runtime cannot do is an error, never ignored.
    import inspect
    jax = pytest.importorskip("jax")
    ours = list(inspect.signature(toolkit.distributed.initialize).parameters)
    theirs = list(inspect.signature(jax.distributed.initialize).parameters)
    assert ours[:len(theirs)] == theirs  # the same names in the same positions
    calls = []
    bare.setattr(toolkit.distributed._runtime, "connect", lambda *args, **kwargs: calls.append((args, kwargs)))
    bare.setattr(toolkit.distributed._client, "backends_are_initialized", lambda: False)
    toolkit.distributed.initialize("127.0.0.1:1234", 2, 1, None, "deactivate", 20, heartbeat_timeout_seconds=7,
                                   shutdown_timeout_seconds=9, coordinator_bind_address="127.0.0.1:1234")
    toolkit.distributed.initialize("127.0.0.1:1234", 2, 1, heartbeat_timeout=8)
    assert calls[0][0] == ("127.0.0.1:1234", 2, 1)
    assert {k: calls[0][1][k] for k in ("initialization_timeout", "heartbeat_timeout", "shutdown_timeout",
                                        "bind_address")} == dict(initialization_timeout=20, heartbeat_timeout=7,
                                                                 shutdown_timeout=9, bind_address="127.0.0.1:1234")
    assert (calls[1][1]["heartbeat_timeout"], calls[1][1]["shutdown_timeout"], calls[1][1]["bind_address"]) == (
        8, 300, None)
    with pytest.raises(TypeError, match="heartbeat_timeout_seconds or heartbeat_timeout"):
        toolkit.distributed.initialize("127.0.0.1:1234", 2, 1, heartbeat_timeout_seconds=5, heartbeat_timeout=5)
    with pytest.raises(NotImplementedError, match="slice_index"):
        toolkit.distributed.initialize("127.0.0.1:1234", 2, 1, slice_index=0)
    with pytest.raises(ValueError, match="coordinator_bind_address must be 'host:port'"):
        toolkit.distributed.initialize("127.0.0.1:1234", 2, 1, coordinator_bind_address="localhost")
    with pytest.raises(ValueError, match="unknown cluster_detection_method"):
        toolkit.distributed.initialize("127.0.0.1:1234", 2, 1, cluster_detection_method="pbs")
    assert len(calls) == 2


def test_generic_alone_needs_no_launcher(bare):
    _set(bare, dict(TOOLKIT_COORDINATOR_ADDRESS="127.0.0.1:1", TOOLKIT_NUM_PROCESSES="3", TOOLKIT_PROCESS_ID="2"))
    found = ce.resolve()
    assert (found.coordinator_address, found.num_processes, found.process_id, found.local_device_ids) == (
        "127.0.0.1:1", 3, 2, None)
    assert ce.detect() is None and ce.GenericEnvironment.is_env_present()


@pytest.mark.parametrize("variables, words", [
    (dict(SLURM, SLURM_NTASKS="four"), "SLURM_NTASKS.*integer"),
    (dict(SLURM, SLURM_STEP_NODELIST="node[1-"), "SLURM node list"),
    (dict(OMPI, OMPI_MCA_orte_hnp_uri="1167785984.0;ud://1"), "OMPI_MCA_orte_hnp_uri"),
    (dict(OMPI, OMPI_MCA_orte_hnp_uri="job.0;tcp://1.2.3.4:5"), "OMPI_MCA_orte_hnp_uri"),
    (dict(SLURM, TOOLKIT_COORDINATOR_PORT="99999"), "TOOLKIT_COORDINATOR_PORT"),
    (dict(SLURM, TOOLKIT_LOCAL_DEVICE_IDS="0;1"), "TOOLKIT_LOCAL_DEVICE_IDS"),
    (dict(TOOLKIT_PROCESS_ID="x"), "TOOLKIT_PROCESS_ID"),
])
def test_malformed_variables_are_named(bare, variables, words):
    _set(bare, variables)
    with pytest.raises(ValueError, match=words):
        toolkit.distributed.initialize()
    assert not toolkit.distributed.is_initialized()


def test_registry_order_and_subclass_contract():
    names = [env.name for env in ce.registered()]
    assert names == ["generic", "ompi", "mpich", "slurm"]
    for env in ce.registered():
        assert env.variables and env.__doc__


# --- processes on loopback -------------------------------------------------------------------------------------

WORKER = """
import json, numpy as np, toolkit
from toolkit import multihost
from toolkit.runtime import coordination
toolkit.distributed.initialize(initialization_timeout=60, heartbeat_timeout=10, shutdown_timeout=30)
ids = multihost.process_allgather(np.int32(toolkit.process_index() * 10 + toolkit.local_device_count()))
print(json.dumps({"index": toolkit.process_index(), "count": toolkit.process_count(),
                  "devices": toolkit.device_count(), "gathered": ids.tolist(),
                  "coordinator": coordination.state.coordinator_address,
                  "local_device_ids": coordination.state.local_device_ids}))
"""


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _job_id(scale: int) -> int:
    """A job id whose derived port (61440 + id // scale % 4096) is free now."""
    for job in range(os.getpid() % 4096, os.getpid() % 4096 + 4096):
        if _free(61440 + job % 4096):
            return job * scale
    raise RuntimeError("no free port in 61440..65535")


def _run(envs: list[dict[str, str]], command: list[str] | None = None, timeout: float = 90.0,
         num_cpu_devices: int = 2) -> list[ProcessResult]:
    """Start one process per environment (or one ``command`` with envs[0]); kill whatever is left at the end."""
    with tempfile.TemporaryDirectory(prefix="toolkit-cluster-") as tmp:
        script = Path(tmp) / "worker.py"
        script.write_text(WORKER)
        base = _clean_env(os.environ)
        base.update(TOOLKIT_NUM_CPU_DEVICES=str(num_cpu_devices), PYTHONUNBUFFERED="1",
                    PYTHONPATH=os.pathsep.join([str(REPO_ROOT)] + [p for p in [base.get("PYTHONPATH")] if p]),
                    TF_CPP_MIN_LOG_LEVEL="1")
        commands = [[sys.executable, str(script)]] * len(envs) if command is None else [
            command + [sys.executable, str(script)]]
        procs, files, start = [], [], time.monotonic()
        try:
            for i, (argv, env) in enumerate(zip(commands, envs)):
                out, err = open(Path(tmp) / f"o{i}", "w+"), open(Path(tmp) / f"e{i}", "w+")
                files.append((out, err))
                procs.append(subprocess.Popen(argv, cwd=REPO_ROOT, env={**base, **env}, stdin=subprocess.DEVNULL,
                                              stdout=out, stderr=err, start_new_session=True))
            while any(p.poll() is None for p in procs) and time.monotonic() - start < timeout:
                time.sleep(0.05)
        finally:
            for p in procs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        results = []
        for i, (p, (out, err)) in enumerate(zip(procs, files)):
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
            out.close()
            err.close()
            results.append(ProcessResult(i, p.returncode, stdout, stderr, _last_json(stdout),
                                         time.monotonic() - start, p.returncode is None))
        return results


def _check_run(outputs: list[dict], n: int, coordinator: str, devices_each: int) -> None:
    outputs = sorted(outputs, key=lambda o: o["index"])
    assert [o["index"] for o in outputs] == list(range(n))
    for o in outputs:
        assert o["count"] == n and o["devices"] == n * devices_each
        assert o["gathered"] == [10 * i + devices_each for i in range(n)]
        assert o["coordinator"] == coordinator


@pytest.mark.parametrize("n", [2, 4])
def test_slurm_processes(n):
    job = _job_id(1)
    port = 61440 + job % 4096
    envs = [dict(SLURM_JOB_ID=str(job), SLURM_NTASKS=str(n), SLURM_PROCID=str(i), SLURM_LOCALID=str(i),
                 SLURM_STEP_NODELIST="127.0.0.[1-4],spare[01-02]", SLURM_STEP_NUM_NODES="1",
                 SLURM_NODEID="0") for i in range(n)]
    outputs = check(_run(envs, num_cpu_devices=2 if n == 2 else 1))
    _check_run(outputs, n, f"127.0.0.1:{port}", 2 if n == 2 else 1)
    assert [o["local_device_ids"] for o in outputs] == [[i] for i in range(n)]


@pytest.mark.parametrize("n", [2, 4])
def test_open_mpi_processes(n):
    job = _job_id(4096)  # Open MPI 4's job ids are multiples of 4096
    port = 61440 + job // 4096 % 4096
    uri = f"{job}.0;tcp://127.0.0.1:1"
    envs = [dict(OMPI_COMM_WORLD_SIZE=str(n), OMPI_COMM_WORLD_RANK=str(i), OMPI_COMM_WORLD_LOCAL_RANK=str(i),
                 OMPI_COMM_WORLD_LOCAL_SIZE=str(n), OMPI_COMM_WORLD_NODE_RANK=str(i),
                 OMPI_MCA_orte_hnp_uri=uri, PMIX_NAMESPACE=str(job + 1),
                 PMIX_SERVER_URI41=f"{job}.0;tcp4://127.0.0.1:2") for i in range(n)]
    outputs = check(_run(envs, num_cpu_devices=2 if n == 2 else 1))
    _check_run(outputs, n, f"127.0.0.1:{port}", 2 if n == 2 else 1)


def test_mpich_processes_with_port_override():
    from tests.distributed.launch import free_port
    port = free_port()
    envs = [dict(PMI_RANK=str(i), PMI_SIZE="2", PMI_FD=str(6 + 2 * i), MPI_LOCALRANKID=str(i), MPI_LOCALNRANKS="2",
                 HYDI_CONTROL_FD="7", TOOLKIT_COORDINATOR_PORT=str(port)) for i in range(2)]
    _check_run(check(_run(envs)), 2, f"127.0.0.1:{port}", 2)


def test_generic_processes_with_local_device_ids():
    from tests.distributed.launch import free_port
    address = f"127.0.0.1:{free_port()}"
    envs = [dict(TOOLKIT_COORDINATOR_ADDRESS=address, TOOLKIT_NUM_PROCESSES="2", TOOLKIT_PROCESS_ID=str(i),
                 TOOLKIT_LOCAL_DEVICE_IDS=f"{i},{i + 2}") for i in range(2)]
    outputs = check(_run(envs))
    _check_run(outputs, 2, address, 2)
    assert [o["local_device_ids"] for o in outputs] == [[0, 2], [1, 3]]


def _launcher(name: str, package: str):
    path = shutil.which(name)
    return pytest.mark.skipif(path is None, reason=f"{name} is not installed (Debian package {package}); the "
                              "simulated environment tests above cover the detection")


@_launcher("mpirun.openmpi", "openmpi-bin")
def test_real_open_mpi_mpirun():
    # Loopback only: --mca oob_tcp_if_include lo makes mpirun's URI (the coordinator's host) 127.0.0.1.
    command = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "--mca", "oob_tcp_if_include", "lo",
               "--mca", "btl_tcp_if_include", "lo", "-n", "2"]
    results = _run([{}], command=command, timeout=120)
    assert results[0].returncode == 0, results[0].describe()
    outputs = [_last_json(line) for line in results[0].stdout.splitlines() if line.startswith("{")]
    assert len(outputs) == 2, results[0].describe()
    coordinator = outputs[0]["coordinator"]
    assert coordinator.startswith("127.0.0.1:") and 61440 <= int(coordinator.rsplit(":", 1)[1]) <= 65535
    _check_run(outputs, 2, coordinator, 2)


@_launcher("mpiexec.hydra", "mpich")
def test_real_mpich_mpiexec():
    results = _run([{}], command=["mpiexec.hydra", "-n", "2"], timeout=120)
    assert results[0].returncode == 0, results[0].describe()
    outputs = [_last_json(line) for line in results[0].stdout.splitlines() if line.startswith("{")]
    assert len(outputs) == 2, results[0].describe()
    coordinator = outputs[0]["coordinator"]
    assert coordinator.startswith("127.0.0.1:")
    _check_run(outputs, 2, coordinator, 2)
