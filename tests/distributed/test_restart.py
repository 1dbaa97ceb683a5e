"""toolkit.checkpointing and toolkit/examples/restartable_training.py: a 2-process run killed and restarted.

* in this process (8 CPU devices): save on an 8×1 mesh, restore on 4×2, 2×4,
  1×8 and replicated — the same values; every error path;
* 2 processes × 4 devices: an uninterrupted run; a run whose process 1 is
  killed (SIGKILL) after its first checkpoint, then restarted — its final
  parameters equal the uninterrupted run's bit for bit; the final checkpoint
  read by 2 processes on a 4×2 mesh gives the same values.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorstore", reason="toolkit.checkpointing needs tensorstore (pip install 'toolkit[checkpoint]')")

import toolkit  # noqa: E402
from toolkit import checkpointing  # noqa: E402
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402
from tests.distributed.launch import REPO_ROOT, check, free_port, launch  # noqa: E402

EXAMPLE = REPO_ROOT / "toolkit" / "examples" / "restartable_training.py"


def _mesh(rows: int, cols: int) -> Mesh:
    devices = toolkit.devices()
    if len(devices) < rows * cols:
        pytest.skip("needs TOOLKIT_NUM_CPU_DEVICES=8")
    return Mesh(np.array(devices[:rows * cols]).reshape(rows, cols), ("data", "model"))


def _tree():
    return {"w": np.arange(16 * 8, dtype=np.float32).reshape(16, 8) / 7,
            "b": np.arange(16, dtype=np.int32) - 3,
            "h": (np.arange(8 * 4, dtype=np.float32).reshape(8, 4) / 3).astype(toolkit.numpy.bfloat16),
            "s": np.float32(2.5)}


def _put(tree, mesh, specs):
    return {k: toolkit.make_array_from_callback(v.shape, NamedSharding(mesh, specs[k]), lambda i, v=v: v[i])
            for k, v in tree.items()}


SAVE_SPECS = {"w": P("data"), "b": P("data"), "h": P("data"), "s": P()}


def test_save_on_8x1_restores_on_other_meshes(tmp_path):
    host = _tree()
    saved = _put(host, _mesh(8, 1), SAVE_SPECS)
    where = checkpointing.save(tmp_path, 3, saved)
    assert where == tmp_path / "step_00000003" and checkpointing.latest_step(tmp_path) == 3
    record = json.loads((where / "checkpoint.json").read_text())
    assert [leaf["path"] for leaf in record["leaves"]] == ["['b']", "['h']", "['s']", "['w']"]
    assert record["leaves"][1]["dtype"] == "bfloat16"
    for rows, cols, specs in [(4, 2, {"w": P("data", "model"), "b": P(("data", "model")), "h": P("model", "data"),
                                      "s": P()}),
                              (2, 4, {"w": P("model", "data"), "b": P("model"), "h": P(None, "model"), "s": P()}),
                              (1, 8, {"w": P(None, "model"), "b": P("model"), "h": P("model"), "s": P()}),
                              (8, 1, {k: P() for k in host})]:
        mesh = _mesh(rows, cols)
        target = {k: NamedSharding(mesh, s) for k, s in specs.items()}
        restored = checkpointing.restore(tmp_path, target)
        for k, value in host.items():
            assert restored[k].sharding == target[k]
            assert restored[k].dtype == value.dtype
            np.testing.assert_array_equal(np.asarray(restored[k]), value)
    # arrays as the target: their shardings are used
    again = checkpointing.restore(tmp_path, saved, step=3)
    assert all(again[k].sharding == saved[k].sharding for k in host)


def test_unfinished_step_is_ignored_and_refused(tmp_path):
    mesh = _mesh(8, 1)
    checkpointing.save(tmp_path, 4, _put(_tree(), mesh, SAVE_SPECS))
    (tmp_path / "step_00000008" / "leaf_00000").mkdir(parents=True)  # a save a dead process never finished
    (tmp_path / "not_a_step").mkdir()
    assert checkpointing.all_steps(tmp_path) == [4] and checkpointing.latest_step(tmp_path) == 4
    with pytest.raises(FileNotFoundError, match="no finished checkpoint"):
        checkpointing.restore(tmp_path, {k: NamedSharding(mesh, P()) for k in _tree()}, step=8)
    assert checkpointing.latest_step(tmp_path / "missing") is None


def test_errors_name_what_is_wrong(tmp_path, monkeypatch):
    mesh = _mesh(8, 1)
    arrays = _put(_tree(), mesh, SAVE_SPECS)
    with pytest.raises(TypeError, match=r"leaf \['x'\] is a ndarray"):
        checkpointing.save(tmp_path, 1, {"x": np.ones(3)})
    with pytest.raises(ValueError, match="no leaves"):
        checkpointing.save(tmp_path, 1, {})
    with pytest.raises(ValueError, match="step must be an int >= 0"):
        checkpointing.save(tmp_path, -1, arrays)
    with pytest.raises(FileNotFoundError, match="no finished checkpoint"):
        checkpointing.restore(tmp_path, arrays)
    checkpointing.save(tmp_path, 1, arrays)
    with pytest.raises(FileExistsError, match="step 1 is already saved"):
        checkpointing.save(tmp_path, 1, arrays)
    with pytest.raises(ValueError, match="differ from those saved"):
        checkpointing.restore(tmp_path, {"w": arrays["w"]})
    with pytest.raises(ValueError, match=r"\['b'\]"):  # 16 rows do not split over a 3-device axis
        odd = Mesh(np.array(toolkit.devices()[:3]).reshape(3, 1), ("data", "model"))
        checkpointing.restore(tmp_path, {k: NamedSharding(odd, P("data") if k == "b" else P()) for k in arrays})
    record = tmp_path / "step_00000001" / "checkpoint.json"
    record.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="not a toolkit-checkpoint version 1 record"):
        checkpointing.restore(tmp_path, arrays)
    monkeypatch.setattr(checkpointing, "_ts", None)
    with pytest.raises(ImportError, match=r"toolkit\[checkpoint\]"):
        checkpointing.save(tmp_path, 2, arrays)


# --- two processes -----------------------------------------------------------------------------------------------

STEPS, EVERY = 12, 4


def _args(directory: Path, *extra: str) -> list[str]:
    return ["--directory", str(directory), "--steps", str(STEPS), "--checkpoint-every", str(EVERY), *extra]


def _killed_run(directory: Path, timeout: float = 120.0) -> tuple[list[int | None], str]:
    """Start 2 processes; SIGKILL process 1 once it reported its first checkpoint; wait for process 0 to end."""
    env = dict(os.environ, TOOLKIT_COORDINATOR_ADDRESS=f"127.0.0.1:{free_port()}", TOOLKIT_NUM_PROCESSES="2",
               TOOLKIT_NUM_CPU_DEVICES="4", PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="1",
               PYTHONPATH=os.pathsep.join([str(REPO_ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    with tempfile.TemporaryDirectory(prefix="toolkit-restart-") as tmp:
        outs = [Path(tmp) / f"out{i}" for i in range(2)]
        procs: list[subprocess.Popen] = []
        start = time.monotonic()
        try:
            for i in range(2):
                with open(outs[i], "w") as out:
                    procs.append(subprocess.Popen(
                        [sys.executable, str(EXAMPLE), *_args(directory, "--step-delay", "0.5", "--heartbeat-timeout", "5")], cwd=REPO_ROOT,
                        env={**env, "TOOLKIT_PROCESS_ID": str(i)}, stdin=subprocess.DEVNULL, stdout=out,
                        stderr=subprocess.STDOUT, start_new_session=True))
            while f"saved step {EVERY}" not in outs[1].read_text():
                if time.monotonic() - start > timeout or procs[1].poll() is not None:
                    raise AssertionError("process 1 never saved its first checkpoint:\n" + outs[1].read_text())
                time.sleep(0.05)
            os.killpg(procs[1].pid, signal.SIGKILL)
            procs[1].wait(timeout=10)
            while procs[0].poll() is None and time.monotonic() - start < timeout:
                time.sleep(0.1)
        finally:
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=10)
        return [p.returncode for p in procs], outs[0].read_text()


def test_killed_and_restarted_run_equals_uninterrupted_run(tmp_path):
    whole = check(launch(EXAMPLE, 2, timeout=150, args=_args(tmp_path / "whole")))
    assert whole[0] == whole[1] and whole[0]["start"] == 0
    assert checkpointing.all_steps(tmp_path / "whole") == [4, 8, 12]

    returncodes, process0 = _killed_run(tmp_path / "killed")
    assert returncodes[1] == -signal.SIGKILL
    assert returncodes[0] != 0, "process 0 must notice its peer died:\n" + process0
    resumed_from = checkpointing.latest_step(tmp_path / "killed")
    assert resumed_from in (4, 8), checkpointing.all_steps(tmp_path / "killed")

    restarted = check(launch(EXAMPLE, 2, timeout=150, args=_args(tmp_path / "killed")))
    assert [r["start"] for r in restarted] == [resumed_from] * 2
    assert restarted[0]["params"] == restarted[1]["params"] == whole[0]["params"]  # bit for bit
    assert restarted[0]["loss"] == whole[0]["loss"]

    # the final checkpoint (saved on 8×1 by 2 processes) read on a 4×2 mesh: the same values
    resharded = check(launch(EXAMPLE, 2, timeout=150, args=_args(tmp_path / "killed", "--restore-only",
                                                                    "--mesh", "4x2")))
    assert resharded[0]["steps"] == STEPS and resharded[0]["params"] == whole[0]["params"]
