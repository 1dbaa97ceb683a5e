"""lit RUN lines read and run as lit would, for tools that need a test's output (``toolkit-update-checks``).

* :func:`run_lines` — a test file's ``RUN:`` commands (continuation lines
  joined), each split at its pipe into ``FileCheck`` when it has one: the
  producing command, the check prefix, or why the line is not one a tool can
  regenerate checks for (:attr:`RunLine.skip_reason`);
* :func:`run_output` — what a RUN line's producing command prints, with the
  substitutions of ``test/lit/lit.cfg.py`` (``%python``/``%PYTHON``,
  ``%inputs``, ``%corpora``, ``toolkit-opt``, ``toolkit-run``) and lit's
  built-ins (``%s``, ``%S``, ``%p``, ``%t``, ``%T``, ``%%``), run by ``bash -o
  pipefail`` in a scratch folder with lit.cfg.py's environment.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

__all__ = ["DEFAULT_TIMEOUT", "RUN_LINE_RE", "LitCommandError", "RunLine", "run_lines", "run_output", "run_outputs",
           "substitutions"]

#: How long one RUN command may take before it is reported as hanging (seconds).
DEFAULT_TIMEOUT = 300.0


class LitCommandError(ValueError):
    """A RUN command could not be run, failed or hung; the message names the file, the line and the command."""


RUN_LINE_RE = re.compile(r"^\s*(?://|#|;)\s*RUN:(.*)$")
_FILECHECK_NAMES = ("filecheck", "FileCheck")
_SPLIT_FLAG_RE = re.compile(r"(?:^|\s)--?split-input-file(?:[=\s]|$)")


@dataclasses.dataclass
class RunLine:
    line: int  # 1-based line of the RUN: keyword
    command: str  # the whole command, continuation lines joined
    producer: str = ""  # the command up to the pipe into FileCheck
    prefix: str | None = None  # the (first) check prefix FileCheck uses
    skip_reason: str | None = None  # why the line is not one update_test_file can generate for

    @property
    def splits(self) -> bool:
        """Whether the command splits its input (``-split-input-file``/``--split-input-file``)."""
        return bool(_SPLIT_FLAG_RE.search(self.producer))


def run_lines(lines: Sequence[str]) -> list[RunLine]:
    """The ``RUN:`` lines of a lit test's ``lines``, continuation lines (ending in ``\\``) joined into one
    :class:`RunLine` each, with their 1-based line numbers.
    """
    runs: list[RunLine] = []
    continuing: RunLine | None = None
    for number, line in enumerate(lines, start=1):
        match = RUN_LINE_RE.match(line)
        if match is None:
            if continuing is not None:  # lit joins only RUN lines
                continuing = None
            continue
        part = match.group(1).strip()
        if continuing is not None:
            continuing.command += " " + part.rstrip("\\").strip()
        else:
            continuing = RunLine(number, part.rstrip("\\").strip())
            runs.append(continuing)
        if not part.endswith("\\"):
            continuing = None
    for run in runs:
        _parse_filecheck(run)
    return runs


def _pipe_segments(command: str) -> list[str]:
    """``command`` split at its pipes (``|``, not ``||`` and not inside quotes)."""
    segments, current, quote, i = [], [], "", 0
    while i < len(command):
        char = command[i]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"' and i + 1 < len(command):
                current.append(char)
                i += 1
                char = command[i]
        elif char in "'\"":
            quote = char
        elif char == "\\" and i + 1 < len(command):
            current.append(char)
            i += 1
            char = command[i]
        elif char == "|":
            if command[i + 1:i + 2] == "|" or (current and current[-1] == "|"):
                current.append(char)
                i += 1
                continue
            segments.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    segments.append("".join(current))
    return [segment.strip() for segment in segments]


def _expects_failure(command: str) -> bool:
    """Whether ``command`` runs under lit's ``not`` (``not cmd``, ``env X=1 not cmd``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if words and words[0] == "env":
        words = words[1:]
        while words and ("=" in words[0] or words[0].startswith("-")):
            words = words[1:]
    return bool(words) and words[0] == "not"


def _parse_filecheck(run: RunLine) -> None:
    segments = _pipe_segments(run.command)
    checker = None
    for position, segment in enumerate(segments):
        try:
            words = shlex.split(segment)
        except ValueError:
            continue
        if words and os.path.basename(words[0]) in _FILECHECK_NAMES:
            checker = position
            break
    if checker is None:
        run.skip_reason = "does not pipe its output into FileCheck"
        return
    if checker != len(segments) - 1:
        run.skip_reason = "pipes FileCheck's output on to another command"
        return
    words = shlex.split(segments[checker])[1:]
    prefixes: list[str] = []
    check_file = input_file = None
    i = 0
    while i < len(words):
        word = words[i]
        option, _, value = word.lstrip("-").partition("=")
        takes_value = word.startswith("-") and not value and option in (
            "check-prefix", "check-prefixes", "input-file", "implicit-check-not", "D")
        if (takes_value or word == "<") and i + 1 < len(words):
            value = words[i + 1]
            i += 1
        if word.startswith("-") and option in ("check-prefix", "check-prefixes"):
            prefixes += [p for p in value.split(",") if p]
        elif (word.startswith("-") and option == "input-file") or word == "<":
            input_file = value  # FileCheck reads this file, not the pipe
        elif word.startswith("<") and len(word) > 1:
            input_file = word[1:]
        elif not word.startswith("-") and check_file is None:
            check_file = word
        i += 1
    producer = " | ".join(segments[:checker])
    if input_file is not None:
        read = f"cat {input_file}"
        producer = f"{producer} >/dev/null && {read}" if producer else read
    elif not producer:
        run.skip_reason = "does not pipe its output into FileCheck"
        return
    run.producer = producer
    run.prefix = prefixes[0] if prefixes else "CHECK"
    if check_file != "%s":
        run.skip_reason = f"checks against {check_file or 'no file'}, not this file (%s)"
    elif _expects_failure(producer):
        run.skip_reason = "expects its command to fail ('not'); check diagnostics by hand"


def _lit_config_dir(path: str) -> str:
    """The folder of the nearest ``lit.cfg.py`` above ``path`` (the suite root), or ``path``'s folder."""
    folder = os.path.dirname(os.path.abspath(path))
    probe = folder
    while True:
        if os.path.isfile(os.path.join(probe, "lit.cfg.py")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return folder
        probe = parent


def _tool_command(name: str, module: str) -> str:
    # As test/lit/lit.cfg.py's _tool: the venv's console script, else `python -m`.
    found = shutil.which(name, path=os.path.dirname(sys.executable))
    return shlex.quote(found) if found else f"{shlex.quote(sys.executable)} -m {module}"


def substitutions(path: str, scratch: str) -> list[tuple[str, str]]:
    """lit's substitutions for ``path``, in lit's order: test/lit/lit.cfg.py's, then lit's built-ins."""
    source = os.path.abspath(path)
    suite = _lit_config_dir(path)
    python = shlex.quote(sys.executable)
    return [
        (r"%PYTHON", python),
        (r"%python", python),
        (r"%corpora", os.path.join(suite, "..", "..", "..", "shared", "corpora")),
        (r"%inputs", os.path.join(suite, "Inputs")),
        (r"(?<![\w-])toolkit-opt(?![\w-])", _tool_command("toolkit-opt", "toolkit.tools.opt")),
        (r"(?<![\w-])toolkit-run(?![\w-])", _tool_command("toolkit-run", "toolkit.tools.run")),
        (r"%s", source),
        (r"%S", os.path.dirname(source)),
        (r"%p", os.path.dirname(source)),
        (r"%t", os.path.join(scratch, os.path.basename(source) + ".tmp")),
        (r"%T", scratch),
    ]


def _substitute(command: str, substitutions: Sequence[tuple[str, str]]) -> str:
    command = command.replace("%%", "\0")  # lit's escaped percent sign
    for pattern, value in substitutions:
        command = re.sub(pattern, value.replace("\\", "\\\\"), command)  # the value is literal text
    return command.replace("\0", "%")


def _environment() -> dict[str, str]:
    """The environment lit.cfg.py gives tests: this interpreter's bin first, toolkit importable."""
    env = dict(os.environ)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [package_root, env.get("PYTHONPATH", "")] if p)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return env


# lit's `not` (the shell has none): succeed when the command fails; `not --crash`: when it dies by a signal.
_NOT_FUNCTION = 'not() { if [ "$1" = --crash ]; then shift; "$@"; [ $? -ge 128 ]; return; fi; ! "$@"; }\n'


def _run(path: str, line: int, text: str, timeout: float, scratch: str, *, check: bool) -> str:
    command = _substitute(text, substitutions(path, scratch))
    shell = shutil.which("bash")
    script = _NOT_FUNCTION + command
    argv = [shell, "-o", "pipefail", "-c", script] if shell else ["/bin/sh", "-c", script]
    where = f"{path}:{line}"
    try:
        done = subprocess.run(argv, cwd=scratch, env=_environment(), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LitCommandError(f"{where}: the RUN command did not finish in {timeout:g} s: {command}") from None
    except OSError as error:
        raise LitCommandError(f"{where}: cannot start the RUN command ({error.strerror or error}): "
                              f"{command}") from None
    if check and done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip().splitlines()
        tail = "\n".join(stderr[-10:])
        raise LitCommandError(f"{where}: the RUN command failed (exit status {done.returncode}): {command}"
                              + (f"\n{tail}" if tail else ""))
    return done.stdout.decode(errors="replace")


def run_output(path: str, run: RunLine, timeout: float = DEFAULT_TIMEOUT) -> str:
    """What ``run``'s command prints (its part before the pipe into FileCheck), run as lit would, on its own."""
    with tempfile.TemporaryDirectory(prefix="toolkit-update-checks-") as scratch:
        return _run(path, run.line, run.producer, timeout, scratch, check=True)


_SCRATCH_RE = re.compile(r"%[tT](?![a-zA-Z])")


def run_outputs(path: str, runs: Sequence[RunLine], wanted: Sequence[RunLine],
                timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """What each of ``wanted`` (some of the file's ``runs``) prints, in order; :class:`LitCommandError` on failure.

    Independent commands run side by side. When one uses the scratch path
    (``%t``, ``%T``), lit's view holds: the test is one script, so every RUN
    line before it runs first, in order, in one scratch folder (their own
    failures ignored: the commands are run for the files they leave).
    """
    if not any(_SCRATCH_RE.search(run.producer) for run in wanted):
        workers = max(1, min(len(wanted), os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run_output, path, run, timeout) for run in wanted]
        return [future.result() for future in futures]
    outputs: dict[int, str] = {}
    last = max(runs.index(run) for run in wanted)
    with tempfile.TemporaryDirectory(prefix="toolkit-update-checks-") as scratch:
        for run in runs[:last + 1]:
            if run in wanted:
                outputs[id(run)] = _run(path, run.line, run.producer, timeout, scratch, check=True)
            else:
                _run(path, run.line, run.producer or run.command, timeout, scratch, check=False)
    return [outputs[id(run)] for run in wanted]
