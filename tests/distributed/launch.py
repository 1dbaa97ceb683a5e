"""Start N toolkit processes on loopback, run one worker script in each, collect what they print.

Stable API (other multi-process tests build on it)::

    from tests.distributed.launch import launch, check

    results = launch(WORKER, num_processes=2)   # WORKER: Python source, or a path to a .py file
    outputs = check(results)                    # every process exited 0 → their JSON outputs, by process id

``launch(worker, num_processes=2, *, num_cpu_devices=4, timeout=60.0, args=(), env=None)``
starts ``num_processes`` copies of ``sys.executable`` running ``worker``
(source text is written to a temporary file; a ``str``/``Path`` naming an
existing ``.py`` file is run as is) with ``args`` as ``sys.argv[1:]``, each in
its own session, with

* ``TOOLKIT_COORDINATOR_ADDRESS=127.0.0.1:<free port>``,
  ``TOOLKIT_NUM_PROCESSES=<num_processes>``, ``TOOLKIT_PROCESS_ID=<i>`` — so the
  worker just calls ``toolkit.distributed.initialize()`` (pass shorter timeouts
  there when a test wants faults to show quickly);
* ``TOOLKIT_NUM_CPU_DEVICES=<num_cpu_devices>`` (local devices per process);
* the repository root first on ``PYTHONPATH`` and as the working directory;
* ``env`` on top, in every process (a value of ``None`` removes the variable;
  ``env={"TOOLKIT_NUM_PROCESSES": "2"}`` with ``num_processes=1`` starts only
  process 0 of two — a process that never arrives).

It waits until all have exited or ``timeout`` seconds have passed, then kills
(SIGKILL, by process group id) whatever it started that is still running — it
always does, in a ``finally``, also when the caller is interrupted. It returns
one :class:`ProcessResult` per process, in process-id order: ``returncode``
(negative: killed by that signal), ``stdout``, ``stderr``, ``output`` (the last
stdout line that parses as JSON — workers ``print(json.dumps(...))`` once at
the end), ``elapsed`` (seconds from start to exit) and ``timed_out``.

``check(results)`` raises ``AssertionError`` showing every process's exit
status and stderr tail unless all exited 0 with a JSON output, and returns the
outputs as a list.

Run directly for a smoke test: ``python tests/distributed/launch.py``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ProcessResult:
    """What one worker process did."""

    process_id: int
    returncode: int | None
    stdout: str
    stderr: str
    output: Any
    elapsed: float
    timed_out: bool

    def describe(self) -> str:
        tail = "\n".join(self.stderr.strip().splitlines()[-25:])
        status = "timed out (killed)" if self.timed_out else f"exit status {self.returncode}"
        return (f"--- process {self.process_id}: {status} after {self.elapsed:.1f} s\n"
                f"stdout: {self.stdout.strip()[-2000:]}\nstderr (tail):\n{tail}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _last_json(text: str) -> Any:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def launch(worker: str | os.PathLike, num_processes: int = 2, *, num_cpu_devices: int = 4,
           timeout: float = 60.0, args: Sequence[str] = (),
           env: Mapping[str, str | None] | None = None) -> list[ProcessResult]:
    """Run ``worker`` in ``num_processes`` processes on loopback; see the module docstring."""
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    with tempfile.TemporaryDirectory(prefix="toolkit-dist-") as tmp:
        path = Path(worker) if isinstance(worker, os.PathLike) or (
            isinstance(worker, str) and "\n" not in worker and worker.endswith(".py")) else None
        if path is None:
            path = Path(tmp) / "worker.py"
            path.write_text(str(worker))
        elif not path.exists():
            raise FileNotFoundError(f"worker script {path} does not exist")
        base = dict(os.environ)
        base.update(
            TOOLKIT_COORDINATOR_ADDRESS=f"127.0.0.1:{free_port()}",
            TOOLKIT_NUM_PROCESSES=str(num_processes),
            TOOLKIT_NUM_CPU_DEVICES=str(num_cpu_devices),
            TF_CPP_MIN_LOG_LEVEL=base.get("TF_CPP_MIN_LOG_LEVEL", "1"),
            PYTHONPATH=os.pathsep.join([str(REPO_ROOT)] + [p for p in [base.get("PYTHONPATH")] if p]),
            PYTHONUNBUFFERED="1",
        )

        def process_env(i: int) -> dict[str, str]:
            result = {**base, "TOOLKIT_PROCESS_ID": str(i)}
            for key, value in (env or {}).items():
                if value is None:
                    result.pop(key, None)
                else:
                    result[key] = str(value)
            return result
        procs: list[subprocess.Popen] = []
        files = []
        start = time.monotonic()
        ended: dict[int, float] = {}
        try:
            for i in range(num_processes):
                out = open(Path(tmp) / f"out{i}", "w+")
                err = open(Path(tmp) / f"err{i}", "w+")
                files.append((out, err))
                procs.append(subprocess.Popen(
                    [sys.executable, str(path), *map(str, args)], cwd=REPO_ROOT,
                    env=process_env(i), stdin=subprocess.DEVNULL,
                    stdout=out, stderr=err, start_new_session=True))
            deadline = start + timeout
            while len(ended) < num_processes and time.monotonic() < deadline:
                for i, p in enumerate(procs):
                    if i not in ended and p.poll() is not None:
                        ended[i] = time.monotonic() - start
                time.sleep(0.05)
        finally:
            for p in procs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)  # its own session: the worker and anything it started
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
            timed_out = i not in ended
            results.append(ProcessResult(i, p.returncode, stdout, stderr, _last_json(stdout),
                                         ended.get(i, time.monotonic() - start), timed_out))
        return results


def check(results: Sequence[ProcessResult]) -> list[Any]:
    """Every process exited 0 with a JSON output: return the outputs; else ``AssertionError`` with the details."""
    if all(r.returncode == 0 and not r.timed_out and r.output is not None for r in results):
        return [r.output for r in results]
    raise AssertionError("a worker process failed:\n" + "\n".join(r.describe() for r in results))


_SMOKE = """
import json, toolkit
toolkit.distributed.initialize()
print(json.dumps({"process_index": toolkit.process_index(), "devices": toolkit.device_count(),
                  "local": toolkit.local_device_count()}))
"""

if __name__ == "__main__":
    for r in launch(_SMOKE, 2, timeout=60):
        print(r.describe())
