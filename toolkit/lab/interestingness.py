"""What makes a module "interesting" to the reducer: the test kinds of ``toolkit-reduce --test=KIND``.

* ``crash`` — the pipeline dies of a signal (run in a forked child with a
  time limit); the reduced module must die of the same signal as the input;
* ``error[:REGEX]`` — the pipeline fails and its message matches ``REGEX``
  (``re.search``); without one, it fails in the same pass as the input;
* ``numerics`` — :func:`toolkit.passes.numerics.verify_numerics` reports a
  divergence (in the same pass as the input's);
* ``filecheck:FILE`` — the pipeline succeeds and its output fails FileCheck
  against ``FILE``, at the same CHECK line as the input's output;
* ``cmd:COMMAND`` — the shell command exits 0; ``{}`` in it is the path of
  the candidate file (appended as the last argument when missing).

``error``, ``filecheck`` and ``numerics`` run in the reducer's process (fast;
the input is first tried in a child, so a pipeline that crashes is refused
with a hint to use ``crash``); ``crash`` and ``cmd`` in a child process. Each test is first *calibrated* on
the input (:meth:`InterestingnessTest.calibrate`), which also fixes what
"the same failure" means, so the reduction cannot slide to another bug.
"""

from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import io
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable

from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.passes import Pipeline, PipelineError, parse_pipeline

try:  # the pip `filecheck` package runs FileCheck in-process; without it the `filecheck` command runs
    from filecheck.finput import FInput
    from filecheck.matcher import Matcher
    from filecheck.options import Options
    from filecheck.parser import Parser
except ImportError:  # pragma: no cover - depends on the environment
    FInput = Matcher = Options = Parser = None  # type: ignore[assignment,misc]

from toolkit.passes.numerics import verify_numerics

#: Test kinds ``parse_test`` accepts.
KINDS = ("crash", "error", "numerics", "filecheck", "cmd")
#: Seconds a crash or cmd child may run before it is killed (and the candidate judged not interesting).
DEFAULT_TIMEOUT = 60.0

_PASS_NAME = re.compile(r"pass '([^']+)'")
_FILECHECK_LINE = re.compile(r":(\d+):(?:\d+:)? (?:\x1b\[[0-9;]*m)*error")


class NotInterestingError(ValueError):
    """The input module is not interesting for the test: there is nothing to reduce."""


@dataclasses.dataclass
class InterestingnessTest:
    """One ``--test=KIND`` with its pipeline; call :meth:`calibrate` on the input, then :meth:`__call__`.

    ``kind`` is one of :data:`KINDS`; ``argument`` the part after ``:`` (a
    regex, a FileCheck file, a shell command). ``expected`` is what
    calibration saw (the signal, the failing pass, the failing CHECK line).
    """

    kind: str
    argument: str | None = None
    pipeline: Pipeline | None = None
    timeout: float = DEFAULT_TIMEOUT
    expected: object = None
    last_message: str = ""

    @property
    def spec(self) -> str:
        """The test as ``--test`` spells it."""
        return self.kind if self.argument is None else f"{self.kind}:{self.argument}"

    def calibrate(self, text: str, module: ir.Module) -> None:
        """Run the test on the input; raise :class:`NotInterestingError` saying why when it is not interesting.

        The in-process kinds first run the pipeline on the input in a forked
        child: a pipeline that crashes would take the reducer down with it.
        """
        if self.kind in ("error", "numerics", "filecheck") and self.pipeline is not None and hasattr(os, "fork"):
            number = crash_signal(text, self.pipeline, timeout=self.timeout)
            if number is not None:
                raise NotInterestingError(f"the pipeline crashes on the input ({signal_name(number)}), so "
                                          f"--test={self.spec} cannot run it in-process: use --test=crash")
        outcome = self._observe(text, module)
        if outcome is None:
            raise NotInterestingError(f"the input is not interesting for --test={self.spec}: {self.last_message}")
        self.expected = outcome

    def __call__(self, text: str, module: ir.Module) -> bool:
        """Whether candidate ``text`` (``module`` is its parse, which the test may change) is interesting."""
        outcome = self._observe(text, module)
        return outcome is not None and (self.expected is None or outcome == self.expected)

    # Each observer returns None (not interesting) or what identifies the failure.
    def _observe(self, text: str, module: ir.Module) -> object:
        return getattr(self, f"_observe_{self.kind}")(text, module)

    def _observe_error(self, text: str, module: ir.Module) -> object:
        assert self.pipeline is not None
        message = run_pipeline_message(module, self.pipeline)
        if message is None:
            self.last_message = "the pipeline ran without an error"
            return None
        self.last_message = message
        if self.argument:
            return True if re.search(self.argument, message) else None
        found = _PASS_NAME.search(message)
        return found.group(1) if found else message.split("\n")[0]

    def _observe_crash(self, text: str, module: ir.Module) -> object:
        assert self.pipeline is not None
        number = crash_signal(text, self.pipeline, timeout=self.timeout)
        if number is None:
            self.last_message = "the pipeline did not die of a signal"
            return None
        self.last_message = f"the pipeline died of {signal_name(number)}"
        return number

    def _observe_numerics(self, text: str, module: ir.Module) -> object:
        assert self.pipeline is not None
        # Cheap first: a pipeline that leaves the module as it was cannot change its numerics
        # (and one that fails is another bug); only then compile on XLA.
        before = module.operation.get_asm()
        after = pipeline_output(ir.Module.parse(before, module.context), self.pipeline)
        if after is None or after == before:
            self.last_message = ("the pipeline failed" if after is None else "the pipeline left the module unchanged")
            return None
        try:
            # One trial: a candidate either shows the divergence on the seed's inputs or is dropped.
            report = verify_numerics(module, self.pipeline, trials=1, bisect=True)
        except Exception as error:  # noqa: BLE001 - the pipeline or XLA failed: another bug, not this one
            self.last_message = f"the numerics check failed to run: {type(error).__name__}: {error}"
            return None
        if report.ok:
            self.last_message = "the pipeline's output matches the input's numerics"
            return None
        self.last_message = str(report)
        return report.first_divergent_pass or True

    def _observe_filecheck(self, text: str, module: ir.Module) -> object:
        assert self.pipeline is not None and self.argument is not None
        output = pipeline_output(module, self.pipeline)
        if output is None:
            self.last_message = "the pipeline failed (filecheck tests need its output)"
            return None
        failure = filecheck_failure(output, self.argument)
        if failure is None:
            self.last_message = "the pipeline's output passes FileCheck"
            return None
        self.last_message = failure[1]
        return failure[0]

    def _observe_cmd(self, text: str, module: ir.Module) -> object:
        assert self.argument is not None
        code = run_command(self.argument, text, timeout=self.timeout)
        self.last_message = f"the command exited with status {code}" if code is not None else "the command timed out"
        return True if code == 0 else None


def parse_test(spec: str, pipeline: str | Pipeline | None = None, *,
               timeout: float = DEFAULT_TIMEOUT) -> InterestingnessTest:
    """The test ``spec`` (``crash``, ``error:REGEX``, ``numerics``, ``filecheck:FILE``, ``cmd:COMMAND``).

    ``pipeline`` (text or :class:`Pipeline`) is required by every kind but
    ``cmd``. Raises ValueError naming what is wrong (unknown kind, bad regex,
    missing FileCheck file or pipeline).
    """
    kind, colon, argument = spec.partition(":")
    kind = kind.strip()
    if kind not in KINDS:
        raise ValueError(f"unknown test kind {kind!r} in {spec!r} (expected one of: crash, error[:REGEX], "
                         "numerics, filecheck:FILE, cmd:COMMAND)")
    value: str | None = argument if colon else None
    if kind in ("crash", "numerics") and value:
        raise ValueError(f"--test={kind} takes no argument (got {spec!r})")
    if kind == "error" and value is not None:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"--test=error:REGEX: bad regular expression {value!r}: {error}") from None
        value = value or None
    if kind == "filecheck":
        if not value:
            raise ValueError("--test=filecheck needs a FileCheck file: --test=filecheck:FILE")
        if not os.path.isfile(value):
            raise ValueError(f"--test=filecheck: no such file {value!r}")
    if kind == "cmd" and not (value or "").strip():
        raise ValueError("--test=cmd needs a shell command: --test=cmd:'grep -q foo {}'")
    if isinstance(pipeline, str):
        pipeline = parse_pipeline(pipeline) if pipeline.strip() else None
    if kind != "cmd" and (pipeline is None or not pipeline.elements):
        raise ValueError(f"--test={kind} needs a pass pipeline (--pass-pipeline=...)")
    if timeout <= 0:
        raise ValueError(f"the timeout must be positive, got {timeout}")
    return InterestingnessTest(kind, value, pipeline, timeout)


# --- running the pipeline ----------------------------------------------------------------------


def run_pipeline_message(module: ir.Module, pipeline: Pipeline) -> str | None:
    """Run ``pipeline`` on ``module``; the failure's message (with its diagnostics), or None when it succeeds."""
    try:
        pipeline.run(module, stream=io.StringIO())
    except PipelineError as error:
        return str(error)
    except Exception as error:  # noqa: BLE001 - a pass that raises outside the pass manager is a failure too
        return f"{type(error).__name__}: {error}"
    return None


def pipeline_output(module: ir.Module, pipeline: Pipeline) -> str | None:
    """Run ``pipeline`` on ``module``; the result as text, or None when it fails."""
    if run_pipeline_message(module, pipeline) is not None:
        return None
    return module.operation.get_asm()


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11, ``signal 99`` for numbers without a name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _crash_child(text: str, pipeline: Pipeline) -> None:
    """In the forked child: parse ``text`` in a fresh context, run ``pipeline``, exit 0 or 1. Never returns."""
    code = 3
    try:
        faulthandler.disable()  # the parent reports the signal; a stack dump per candidate is noise
        for number in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGFPE, signal.SIGILL):
            signal.signal(number, signal.SIG_DFL)
        with contextlib.suppress(ImportError, ValueError, OSError):
            import resource  # lazy: not on every platform (the ImportError is caught)

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        # A fresh single-threaded context: the parent's thread pool does not exist in a forked child.
        context = make_context()
        context.enable_multithreading(False)
        context.attach_diagnostic_handler(lambda diagnostic: True)
        module = ir.Module.parse(text, context)
        code = 0 if run_pipeline_message(module, pipeline) is None else 1
    except BaseException:  # noqa: BLE001 - never return into the parent's code
        code = 2
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float) -> int | None:
    """The wait status of child ``pid``, or None after killing it when it ran longer than ``timeout``."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def crash_signal(text: str, pipeline: Pipeline, *, timeout: float = DEFAULT_TIMEOUT) -> int | None:
    """Run ``pipeline`` on ``text`` in a forked child: the signal it died of, or None (exited, or timed out)."""
    if not hasattr(os, "fork"):
        raise ValueError("--test=crash needs os.fork (not available on this platform)")
    for stream in (sys.stdout, sys.stderr):  # the child must not flush the parent's buffers
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "use of fork() may lead to deadlocks"
        pid = os.fork()
    if pid == 0:
        _crash_child(text, pipeline)
    status = _wait(pid, timeout)
    if status is None or not os.WIFSIGNALED(status):
        return None
    return os.WTERMSIG(status)


def run_command(command: str, text: str, *, timeout: float = DEFAULT_TIMEOUT) -> int | None:
    """Write ``text`` to a temporary ``.mlir`` file, run ``command`` on it (``{}``: the path); its exit status.

    None when it ran longer than ``timeout`` seconds (its process group is killed).
    """
    with tempfile.TemporaryDirectory(prefix="toolkit-reduce-") as folder:
        path = os.path.join(folder, "candidate.mlir")
        with open(path, "w") as stream:
            stream.write(text)
        quoted = shlex.quote(path)
        line = command.replace("{}", quoted) if "{}" in command else f"{command} {quoted}"
        process = subprocess.Popen(line, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return None


# --- FileCheck -----------------------------------------------------------------------------------


def _filecheck_in_process(output: str, check_file: str, prefix: str) -> tuple[int, str]:
    """Run the ``filecheck`` package's matcher on ``output``: (exit status, messages)."""
    if Matcher is None:
        raise ImportError("the filecheck package is not installed")
    options = Options(match_filename=check_file, check_prefixes=[prefix])
    matcher = Matcher(options, FInput("-", FInput.canonicalize_line_ends(output)), Parser.from_opts(options))
    messages = io.StringIO()
    matcher.stderr = messages
    with contextlib.redirect_stderr(messages):
        code = matcher.run()
    return code, messages.getvalue()


def _filecheck_command(output: str, check_file: str, prefix: str) -> tuple[int, str]:
    done = subprocess.run(["filecheck", check_file, f"--check-prefix={prefix}"], input=output, text=True,
                          capture_output=True, timeout=DEFAULT_TIMEOUT)
    return done.returncode, done.stderr


def run_filecheck(output: str, check_file: str, *, prefix: str = "CHECK") -> tuple[int, str]:
    """FileCheck ``output`` against ``check_file``: (exit status, messages); in-process when the package allows."""
    try:
        return _filecheck_in_process(output, check_file, prefix)
    except ImportError:  # another FileCheck: run the command
        return _filecheck_command(output, check_file, prefix)


def filecheck_failure(output: str, check_file: str, *, prefix: str = "CHECK") -> tuple[int, str] | None:
    """None when ``output`` passes; else (the line of ``check_file`` whose check failed (0: unknown), message)."""
    code, messages = run_filecheck(output, check_file, prefix=prefix)
    if code == 0:
        return None
    found = _FILECHECK_LINE.search(messages)
    first = next((line for line in messages.splitlines() if line.strip()), f"FileCheck exited {code}")
    return (int(found.group(1)) if found else 0), re.sub(r"\x1b\[[0-9;]*m", "", first)


def make_test(test: str | InterestingnessTest | Callable[[str], bool], pipeline: str | Pipeline | None,
              timeout: float = DEFAULT_TIMEOUT) -> InterestingnessTest:
    """``test`` as an :class:`InterestingnessTest`: parsed from a spec, or a Python callable wrapped."""
    if isinstance(test, InterestingnessTest):
        return test
    if isinstance(test, str):
        return parse_test(test, pipeline, timeout=timeout)
    if callable(test):
        return CallableTest("python", None, None, timeout, function=test)
    raise TypeError(f"test must be a spec string, an InterestingnessTest or a callable, not {type(test).__name__}")


@dataclasses.dataclass
class CallableTest(InterestingnessTest):
    """A Python predicate on the candidate's text: ``True`` = interesting (the Python API's own kind)."""

    function: Callable[[str], bool] = dataclasses.field(default=lambda text: False)

    def _observe(self, text: str, module: ir.Module) -> object:
        verdict = bool(self.function(text))
        self.last_message = "the predicate returned False"
        return True if verdict else None

