"""Run fuzz cases in a separate process, so that a crash or a hang is observed instead of suffered.

The parent side is :class:`Worker`: it starts ``python fuzz_worker.py --serve FD``
once and sends it cases as JSON lines; the child runs each case in-process
(``toolkit.tools.opt.main(argv)``, ``toolkit.tools.export_cli.main(["export",
"inspect", ...])``, or a pass pipeline on a parsed module) and answers on the
pipe ``FD``. Many inputs share one interpreter, which is what makes
thousands of cases cheap. If the child dies (a signal: segfault, abort) the
case is reported as a crash with the tail of the child's stderr, where
``faulthandler`` printed the Python stack; if it does not answer within the
timeout the case is a hang (``faulthandler.dump_traceback_later`` prints where
it was). Either way the child is restarted for the next case.

:func:`run_real_opt` runs the installed ``toolkit-opt`` as a real subprocess.

Outcomes (``Result.outcome``):

* ``output``      -- exit status 0;
* ``clean-error`` -- exit status 1 and an ``error:`` message on stderr, no traceback;
* ``unclean``     -- anything else: an exception escaped ``main``, a traceback
  was printed, a usage error (exit 2) for a well-formed command line, an
  exit status 1 without a message;
* ``crash`` / ``hang``.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BAD_OUTCOMES = ("unclean", "crash", "hang")


@dataclasses.dataclass
class Result:
    outcome: str
    exit: int | None = None
    stderr: str = ""
    detail: str = ""  # traceback, crash log, or why the outcome is unclean
    seconds: float = 0.0

    @property
    def bad(self) -> bool:
        return self.outcome in BAD_OUTCOMES

    def summary(self) -> str:
        text = f"{self.outcome} (exit {self.exit})"
        if self.stderr:
            text += "\nstderr:\n" + self.stderr[-2000:]
        if self.detail:
            text += "\n" + self.detail[-4000:]
        return text


def classify_cli(exit_code: int | None, stderr: str, exception: str | None,
                 error_exits: tuple[int, ...] = (1,), one_line: bool = False) -> Result:
    """The outcome of one command-line run (in-process or a real subprocess).

    docs/tools.md: 0 success, 1 failure of the input or a pass, 2 usage only;
    ``one_line``: an error must be exactly one line of stderr.
    """
    if exception:
        return Result("unclean", exit_code, stderr, "exception escaped main():\n" + exception)
    if exit_code is None:
        return Result("unclean", exit_code, stderr, "no exit status")
    if exit_code < 0:
        return Result("crash", exit_code, stderr, f"killed by signal {-exit_code}")
    if "Traceback (most recent call last)" in stderr:
        return Result("unclean", exit_code, stderr, "a Python traceback on stderr")
    if exit_code == 0:
        return Result("output", 0, stderr)
    if exit_code in error_exits:
        if "error" not in stderr:
            return Result("unclean", exit_code, stderr, f"exit status {exit_code} without an error message")
        if one_line and len(stderr.strip().splitlines()) != 1:
            return Result("unclean", exit_code, stderr, "the error is not one line")
        return Result("clean-error", exit_code, stderr)
    return Result("unclean", exit_code, stderr, f"exit status {exit_code} (expected 0 or {error_exits})")


# --------------------------------------------------------------------------
# Child side
# --------------------------------------------------------------------------


def _run_main(main: Any, argv: list[str], stdin: bytes = b"") -> tuple[int | None, str, str | None, int]:
    """Call ``main(argv)`` with stdout/stderr captured; (exit, stderr, traceback or None, stdout bytes)."""
    import traceback

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr = out, err
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    exception = None
    code: Any = None
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) or e.code is None else 1
        if e.code is not None and not isinstance(e.code, int):
            err.write(f"{e.code}\n")
        code = 0 if code is None else code
    except BaseException:  # noqa: BLE001 - exactly what the fuzzer looks for
        exception = traceback.format_exc()
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
    out.flush()
    err.flush()
    return code, err.buffer.getvalue().decode("utf-8", "replace"), exception, len(out.buffer.getvalue())


def _case_opt(case: dict, tmp: str) -> dict:
    from toolkit.tools import opt

    path = os.path.join(tmp, case.get("filename", "input.mlir"))
    data = base64.b64decode(case["input"])
    with open(path, "wb") as f:
        f.write(data)
    argv = [a.replace("{input}", path) for a in case["argv"]]
    code, stderr, exception, out_len = _run_main(opt.main, argv, stdin=data if "-" in argv else b"")
    return dict(exit=code, stderr=stderr.replace(path, "<input>"), exception=exception, stdout_len=out_len)


def _case_inspect(case: dict, tmp: str) -> dict:
    from toolkit.tools import export_cli as cli

    path = os.path.join(tmp, "blob.bin")
    with open(path, "wb") as f:
        f.write(base64.b64decode(case["input"]))
    code, stderr, exception, out_len = _run_main(cli.main, ["export", case.get("action", "inspect"), path])
    return dict(exit=code, stderr=stderr.replace(path, "<blob>"), exception=exception, stdout_len=out_len)


def _case_pipeline(case: dict, tmp: str) -> dict:
    """Parse, run the pipeline (verifying after each pass), verify; report what happened."""
    import traceback

    from toolkit.ir.context import make_context
    from toolkit.ir.serialization import read_module
    from toolkit.passes import PipelineError, parse_pipeline

    context = make_context()
    context.attach_diagnostic_handler(lambda d: True)
    try:
        module = read_module(case["text"], context)
    except Exception as e:  # noqa: BLE001 - a seed that does not parse is skipped
        return dict(status="skip", message=f"{type(e).__name__}: {e}")
    stream = io.StringIO()
    try:
        pipeline = parse_pipeline(case["pipeline"])
        pipeline.run(module, verify=True, stream=stream)
    except PipelineError as e:
        return dict(status="pipeline-error", message=str(e))
    except BaseException as e:  # noqa: BLE001
        return dict(status="exception", message=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
    try:
        ok = module.operation.verify()
    except Exception as e:  # noqa: BLE001
        return dict(status="invalid-ir", message=f"verify() raised {type(e).__name__}: {e}")
    if not ok:
        return dict(status="invalid-ir", message="the module does not verify after a successful pipeline")
    return dict(status="ok", message="")


_CASES = {"opt": _case_opt, "inspect": _case_inspect, "pipeline": _case_pipeline}


def serve(result_fd: int) -> None:
    import faulthandler

    faulthandler.enable(all_threads=True)
    tmp = tempfile.mkdtemp(prefix="toolkit-fuzz-")
    results = os.fdopen(result_fd, "w", buffering=1)
    try:
        for line in sys.stdin:
            case = json.loads(line)
            sys.__stderr__.write(f"=== case {case.get('id')} ({case['kind']})\n")
            sys.__stderr__.flush()
            timeout = case.get("timeout")
            if timeout:
                faulthandler.dump_traceback_later(max(1.0, timeout - 2), exit=False)
            start = time.perf_counter()
            try:
                answer = _CASES[case["kind"]](case, tmp)
            finally:
                faulthandler.cancel_dump_traceback_later()
            answer["seconds"] = time.perf_counter() - start
            answer["id"] = case.get("id")
            results.write(json.dumps(answer) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------


class Worker:
    """A restartable child process that runs cases; ``run`` never raises for crashes or hangs."""

    def __init__(self, timeout: float = 60.0, restart_every: int = 1500):
        self.timeout = timeout
        self.restart_every = restart_every
        self.proc: subprocess.Popen | None = None
        self.count = 0
        self.log_path = ""
        self.starts = 0

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        log = tempfile.NamedTemporaryFile(prefix="toolkit-fuzz-worker-", suffix=".log", delete=False)
        self.log_path = log.name
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO, env.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen([sys.executable, "-u", os.path.abspath(__file__), "--serve", str(write_fd)],
                                     stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(write_fd,),
                                     cwd=REPO, env=env, start_new_session=True)
        log.close()
        os.close(write_fd)
        self.results = os.fdopen(read_fd, "rb")
        self.count = 0
        self.starts += 1

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._kill()
        self.results.close()
        self.proc = None
        self._remove_log()

    def _kill(self) -> None:
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: only the worker and its children
        except ProcessLookupError:
            pass
        self.proc.wait()

    def _remove_log(self) -> None:
        try:
            os.unlink(self.log_path)
        except OSError:
            pass

    def _log_tail(self, offset: int) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", "replace")[-6000:]
        except OSError:
            return ""

    def call(self, case: dict) -> tuple[str, dict | None, str]:
        """(``"ok"``/``"crash"``/``"hang"``, the child's answer, the child's stderr for this case)."""
        if self.proc is None or self.count >= self.restart_every:
            self.close()
            self._start()
        assert self.proc is not None
        self.count += 1
        offset = os.path.getsize(self.log_path)
        case = dict(case, timeout=self.timeout)
        try:
            self.proc.stdin.write((json.dumps(case) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([self.results], [], [], self.timeout)
        line = self.results.readline() if ready else None
        if line:
            return "ok", json.loads(line), self._log_tail(offset)
        if ready:  # EOF: the child died
            code = self.proc.wait()
            log = self._log_tail(offset)
            self.results.close()
            self.proc = None
            self._remove_log()
            return "crash", {"exit": code}, log
        time.sleep(0.5)  # let faulthandler's timer print where it is
        log = self._log_tail(offset)
        self._kill()
        self.results.close()
        self.proc = None
        self._remove_log()
        return "hang", None, log

    # ---- typed helpers -------------------------------------------------

    def _cli(self, kind: str, data: bytes, error_exits: tuple[int, ...], one_line: bool = False,
             **fields: Any) -> Result:
        status, answer, log = self.call(dict(kind=kind, input=base64.b64encode(data).decode(), **fields))
        if status == "hang":
            return Result("hang", None, "", f"no answer within {self.timeout} s; worker log:\n{log}")
        if status == "crash":
            code = answer["exit"] if answer else None
            return Result("crash", code, "", f"worker died with status {code}; worker log:\n{log}")
        result = classify_cli(answer["exit"], answer["stderr"], answer["exception"], error_exits, one_line)
        result.seconds = answer.get("seconds", 0.0)
        return result

    def opt(self, data: bytes, argv: list[str], filename: str = "input.mlir") -> Result:
        """``toolkit-opt`` on ``data``; ``argv`` names the input as ``{input}`` (or ``-``: standard input)."""
        return self._cli("opt", data, (1,), argv=argv, filename=filename)

    def inspect(self, blob: bytes, action: str = "inspect") -> Result:
        """``toolkit export inspect`` (or ``mlir``) on ``blob``: output, or exit 1 with one error line."""
        return self._cli("inspect", blob, (1,), one_line=True, action=action)

    def pipeline(self, text: str, pipeline: str) -> dict:
        """{"status": ok|skip|pipeline-error|exception|invalid-ir|crash|hang, "message": ...}."""
        status, answer, log = self.call(dict(kind="pipeline", text=text, pipeline=pipeline))
        if status != "ok":
            return dict(status=status, message=log, exit=(answer or {}).get("exit"))
        return answer


def toolkit_opt_command() -> list[str]:
    found = shutil.which("toolkit-opt", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "toolkit.tools.opt"]


def run_real_opt(data: bytes, argv: list[str], timeout: float = 120.0, filename: str = "input.mlir") -> Result:
    """The installed ``toolkit-opt`` as a real process (``{input}`` in ``argv`` is the input file, ``-`` stdin)."""
    with tempfile.TemporaryDirectory(prefix="toolkit-fuzz-") as tmp:
        path = os.path.join(tmp, filename)
        with open(path, "wb") as f:
            f.write(data)
        command = toolkit_opt_command() + [a.replace("{input}", path) for a in argv]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
        start = time.perf_counter()
        piped = "-" in argv
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                stdin=subprocess.PIPE if piped else subprocess.DEVNULL,
                                cwd=tmp, env=env, start_new_session=True)
        try:
            _, stderr = proc.communicate(input=data if piped else None, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, stderr = proc.communicate()
            return Result("hang", None, stderr.decode("utf-8", "replace"), f"no exit within {timeout} s")
        result = classify_cli(proc.returncode, stderr.decode("utf-8", "replace").replace(path, "<input>"), None)
        result.seconds = time.perf_counter() - start
        return result


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]))
    else:
        sys.exit("usage: fuzz_worker.py --serve RESULT_FD (started by fuzz_worker.Worker)")
