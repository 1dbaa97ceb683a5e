"""Where a test run's CPU goes to XLA: a pytest plugin (``TOOLKIT_TEST_PROFILE=path``) and its summary.

With ``TOOLKIT_TEST_PROFILE=/tmp/prof`` set, every pytest process (each xdist worker too) appends one JSON line per
test to ``/tmp/prof.<worker>.jsonl``: the test's node id, its CPU seconds (``os.times()``: this process and the
subprocesses it waited for, setup and teardown included), and per side (``toolkit``: every call of
``toolkit.runtime.executable.compile_module``; ``jax``: every call of ``jax._src.compiler.backend_compile_and_load``)
the number of XLA compilations, their CPU seconds, and a short hash of each compiled program without its source
locations (with its device count and options), so the summary can count the programs compiled more than once, in
one process or across the run. Loads of the persistent compilation caches are not compilations and are not
counted; their CPU is in the test's.

``python tests/compile_profile.py /tmp/prof`` prints the table per test file (or per folder, ``--by folder``):
tests, CPU, compilations and compile CPU of each side, and the duplicates. Without the variable the plugin does
nothing. Processes the tests start (the corpus workers, lit tools) are not profiled: their CPU is in their test's.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ENVIRONMENT = "TOOLKIT_TEST_PROFILE"


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class _Recorder:
    """The compilations of the test running now (a list per side), filled by the wrappers below."""

    def __init__(self) -> None:
        self.compiles: list[tuple[str, str, float]] = []  # (side, program hash, CPU seconds)
        self.lock = threading.Lock()
        self.depth = threading.local()  # a compile inside a compile (none known) counts once

    def wrap(self, side: str, original: Any, key_of: Any) -> Any:
        recorder = self

        def profiled(*args: Any, **kwargs: Any) -> Any:
            if getattr(recorder.depth, "inside", False):
                return original(*args, **kwargs)
            recorder.depth.inside = True
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                seconds = time.process_time() - start
                recorder.depth.inside = False
                try:
                    key = key_of(*args, **kwargs)
                except Exception as error:  # noqa: BLE001 - a program the hash cannot read still counts
                    key = f"unhashable:{type(error).__name__}"
                with recorder.lock:
                    recorder.compiles.append((side, key, seconds))

        profiled.__wrapped__ = original  # type: ignore[attr-defined]
        return profiled


def _digest(*parts: Any) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode()
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:16]


def _text_without_locations(module: Any) -> str:
    """The module's text without locations: an ``ir.Module``, its text, or its bytecode (parsed in a fresh context)."""
    from jaxlib.mlir import ir

    if isinstance(module, ir.Module):
        return module.operation.get_asm(enable_debug_info=False)
    from toolkit.ir.context import make_context

    with make_context(), ir.Location.unknown():
        parsed = ir.Module.parse(module)
        return parsed.operation.get_asm(enable_debug_info=False)


def _toolkit_key(module: Any, devices: Any, **options: Any) -> str:
    # `serialized` is the same module's bytecode (with its locations): keying on it would split equal programs.
    options.pop("serialized", None)
    return _digest(_text_without_locations(module), len(devices), sorted((k, repr(v)) for k, v in options.items()))


def _jax_key(backend: Any, module: Any, executable_devices: Any, options: Any, host_callbacks: Any) -> str:
    build = options.executable_build_options
    return _digest(_text_without_locations(module), len(executable_devices), build.num_partitions,
                   build.num_replicas, bool(host_callbacks))


class CompileProfile:
    """The plugin: wraps the two compile entry points, writes a line per test."""

    def __init__(self, path: str, worker: str) -> None:
        self.recorder = _Recorder()
        self.output = open(f"{path}.{worker}.jsonl", "a")  # noqa: SIM115 - open for the whole session
        self.jax_wrapped = False
        from toolkit.runtime import executable as runtime_executable

        runtime_executable.compile_module = self.recorder.wrap("toolkit", runtime_executable.compile_module,
                                                               _toolkit_key)

    def _wrap_jax(self) -> None:
        # Only once a test module imported jax (importing it here would cost every process its import time).
        if self.jax_wrapped or "jax" not in sys.modules:
            return
        from jax._src import compiler

        compiler.backend_compile_and_load = self.recorder.wrap("jax", compiler.backend_compile_and_load, _jax_key)
        self.jax_wrapped = True

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self._wrap_jax()
        with self.recorder.lock:
            self.recorder.compiles.clear()
        start = _cpu()
        wall = time.perf_counter()
        yield
        line: dict[str, Any] = {"test": item.nodeid, "cpu": round(_cpu() - start, 4),
                                "wall": round(time.perf_counter() - wall, 4)}
        with self.recorder.lock:
            compiles = list(self.recorder.compiles)
        for side in ("toolkit", "jax"):
            mine = [(key, seconds) for s, key, seconds in compiles if s == side]
            line[side] = [[key, round(seconds, 4)] for key, seconds in mine]
        self.output.write(json.dumps(line) + "\n")
        self.output.flush()

    def pytest_unconfigure(self, config: Any) -> None:
        self.output.close()


def pytest_configure(config: Any) -> None:
    path = os.environ.get(ENVIRONMENT)
    if not path:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    config.pluginmanager.register(CompileProfile(path, worker), "toolkit-compile-profile")


# --- the summary ---------------------------------------------------------------------------------------------------


def _group(nodeid: str, by: str) -> str:
    path = nodeid.split("::", 1)[0]
    if by == "folder":
        parts = path.split("/")
        return "/".join(parts[:2]) if len(parts) > 2 else path
    return path


def summarize(paths: list[Path], by: str = "file", top: int = 40) -> str:
    """The table of the profile files ``paths``: per group, tests, CPU, compilations and duplicates."""
    rows: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    seen_run: dict[str, set[str]] = {"toolkit": set(), "jax": set()}
    seen_process: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
    total: collections.Counter = collections.Counter()
    for path in paths:
        for text in path.read_text().splitlines():
            line = json.loads(text)
            group = _group(line["test"], by)
            row = rows[group]
            row["tests"] += 1
            row["cpu"] += line["cpu"]
            for side in ("toolkit", "jax"):
                for key, seconds in line.get(side, []):
                    row[f"{side}_n"] += 1
                    row[f"{side}_s"] += seconds
                    if key in seen_process[(str(path), side)]:
                        row[f"{side}_dup_process"] += 1
                        row[f"{side}_dup_process_s"] += seconds
                    if key in seen_run[side]:
                        row[f"{side}_dup_run"] += 1
                        row[f"{side}_dup_run_s"] += seconds
                    seen_process[(str(path), side)].add(key)
                    seen_run[side].add(key)
    for row in rows.values():
        total.update(row)
    header = (f"{'group':<58} {'tests':>5} {'CPU s':>7} | {'tk n':>5} {'tk s':>6} {'dupP':>5} {'dupR':>5} {'dupR s':>6}"
              f" | {'jax n':>5} {'jax s':>6} {'dupP':>5} {'dupR':>5} {'dupR s':>6}")
    out = [header, "-" * len(header)]

    def render(name: str, row: collections.Counter) -> str:
        return (f"{name[-58:]:<58} {row['tests']:>5} {row['cpu']:>7.1f} | {row['toolkit_n']:>5} "
                f"{row['toolkit_s']:>6.1f} {row['toolkit_dup_process']:>5} {row['toolkit_dup_run']:>5} "
                f"{row['toolkit_dup_run_s']:>6.1f} | {row['jax_n']:>5} {row['jax_s']:>6.1f} "
                f"{row['jax_dup_process']:>5} {row['jax_dup_run']:>5} {row['jax_dup_run_s']:>6.1f}")

    for name, row in sorted(rows.items(), key=lambda item: -item[1]["cpu"])[:top]:
        out.append(render(name, row))
    out.append("-" * len(header))
    out.append(render(f"total ({len(rows)} groups)", total))
    out.append("tk/jax n: compilations; s: their CPU seconds; dupP: programs this process compiled before; "
               "dupR: compiled before anywhere in the run (what a shared cache could load instead)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """``python tests/compile_profile.py PREFIX [--by file|folder] [--top N]``: print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("prefix", help="the TOOLKIT_TEST_PROFILE path the run used")
    parser.add_argument("--by", choices=("file", "folder"), default="file")
    parser.add_argument("--top", type=int, default=40)
    options = parser.parse_args(argv)
    prefix = Path(options.prefix)
    paths = sorted(prefix.parent.glob(prefix.name + ".*.jsonl"))
    if not paths:
        parser.error(f"no profile files {prefix}.*.jsonl")
    print(summarize(paths, options.by, options.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
