"""Every export of JAX's shape-polymorphism harnesses, read and run by toolkit (no jax needed).

The corpus (``../shared/corpora/jax_poly_harness``, 2,024 ``jax.export``
artifacts written by JAX 0.10.2 with their inputs and JAX's outputs) is run by
``_poly_harness_worker.py`` in subprocesses — one per core, a chunk of cases
each, so a case that crashes or hangs the process fails alone and the others
are rerun. Three checks per case (see the worker's docstring):

* ``test_stored_run`` — toolkit's results at the stored sizes equal JAX's;
* ``test_other_size`` — at other values of the dimension variables toolkit
  agrees with JAX (when jax is importable) on which sizes are valid and on
  the results: one case of every harness group and every sixth case, or all
  2,024 with ``TOOLKIT_HARNESS_ALL_SIZES=1`` (``scripts/corpus.sh``);
* ``test_refinement_as_static_as_cxx`` — for one case of every harness group,
  ``toolkit-opt`` with ``toolkit-bind-shapes`` + ``toolkit-refine-shapes`` gives
  the ``@main`` signature jaxlib's C++ refinement gives, and a module as static.

Only the selected cases run (``-k cumsum`` runs the cumsum cases).
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[1].parent / "shared" / "corpora" / "jax_poly_harness"
WORKER = HERE / "_poly_harness_worker.py"
CHUNK_TIMEOUT_BASE_SECONDS = 60
CHUNK_TIMEOUT_PER_CASE_SECONDS = 10

# The cases are dealt into CHUNKS chunks of about equal work (_deal; neighbouring cases, often of one harness group,
# go to different chunks). Under pytest-xdist each chunk is one group (an ``xdist_group`` mark on its tests), so the chunks spread over
# the workers and a worker runs only the chunks it was given, in one worker subprocess each; in a single process the
# first test runs every selected chunk at once, two subprocesses at a time. Eight chunks: each costs one start-up of
# toolkit and jax (a few seconds) and about a minute of cases, so two xdist workers end within a chunk of each other.
CHUNKS = 8

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CORPUS / "manifest.json").exists(), reason="needs ../shared/corpora/jax_poly_harness"),
]


def _manifest_cases() -> list[dict]:
    if not (CORPUS / "manifest.json").exists():
        return []
    return json.loads((CORPUS / "manifest.json").read_text())["cases"]


CASES = [entry["name"] for entry in _manifest_cases()]
_first_of_group: dict[str, str] = {}
for _entry in _manifest_cases():
    _first_of_group.setdefault(_entry["group"], _entry["name"])
REFINEMENT_SAMPLE = sorted(_first_of_group.values())
# Other sizes cost two more compilations per case (toolkit's and JAX's); the quick suite checks every
# harness group and every sixth case, TOOLKIT_HARNESS_ALL_SIZES=1 checks all of them.
ALL_SIZES = os.environ.get("TOOLKIT_HARNESS_ALL_SIZES", "") not in ("", "0")
OTHER_SIZE_CASES = CASES if ALL_SIZES else sorted(
    set(_first_of_group.values()) | {name for index, name in enumerate(CASES) if index % 6 == 0})


def _deal(names: list[str]) -> dict[str, int]:
    """Each case's chunk: dealt in order to the chunk with the least work so far, a case's work counted as its
    compilations (one stored run, two more for other sizes, toolkit's and JAX's; one for the refinement)."""
    other_size, refinement = set(OTHER_SIZE_CASES), set(REFINEMENT_SAMPLE)
    load = [0] * CHUNKS
    chunk_of = {}
    for name in names:
        chunk = min(range(CHUNKS), key=lambda index: (load[index], index))
        chunk_of[name] = chunk
        load[chunk] += 1 + 2 * (name in other_size) + (name in refinement)
    return chunk_of


CHUNK_OF = _deal(CASES)


def _params(names: list[str]) -> list:
    """``names`` as parameters, each marked with its chunk's xdist group (tests/xdist_groups.py keeps a group on one
    worker): a case's three tests and the rest of its chunk run where its chunk runs."""
    return [pytest.param(name, marks=pytest.mark.xdist_group(f"jax_poly_harness_{CHUNK_OF[name]}")) for name in names]


def _run_chunk(names: list[str], other_size_cases: set[str], refinement_cases: set[str]) -> dict[str, dict]:
    """Results of ``names`` from worker processes; a crash or hang is blamed on its case, the rest rerun."""
    results: dict[str, dict] = {}
    pending = list(names)
    while pending:
        command = [sys.executable, str(WORKER),
                   "--other-size-cases", ",".join(sorted(other_size_cases & set(pending))),
                   "--refinement-cases", ",".join(sorted(refinement_cases & set(pending))), *pending]
        timeout = CHUNK_TIMEOUT_BASE_SECONDS + CHUNK_TIMEOUT_PER_CASE_SECONDS * len(pending)
        try:
            process = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=HERE.parents[1])
            stdout, stderr, failure = process.stdout, process.stderr, f"worker exited with {process.returncode}"
        except subprocess.TimeoutExpired as expired:
            stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
            stderr = expired.stderr.decode() if isinstance(expired.stderr, bytes) else (expired.stderr or "")
            failure = f"worker timed out after {timeout} s"
        started = None
        for line in stdout.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "start" in record:
                started = record["start"]
            elif "name" in record:
                results[record["name"]] = record
                started = None
        if started is not None:  # the process died or hung inside this case
            tail = " | ".join(stderr.strip().splitlines()[-8:])
            results[started] = {"name": started, "crashed": f"{failure} in this case: {tail}"}
        unfinished = [name for name in pending if name not in results]
        if len(unfinished) == len(pending):  # no progress at all (the worker failed to start)
            for name in unfinished:
                results[name] = {"name": name, "crashed": f"{failure}: {stderr.strip()[-800:]}"}
            break
        pending = unfinished
    return results


def _selected_names(session: pytest.Session) -> set[str]:
    names = set()
    this_file = Path(__file__).resolve()
    for item in session.items:
        if item.fspath is not None and Path(str(item.fspath)).resolve() == this_file:
            callspec = getattr(item, "callspec", None)
            if callspec is not None and "name" in callspec.params:
                names.add(callspec.params["name"])
    return names


class _ChunkResults:
    """The worker's record of each selected case, computed a chunk at a time when a test of the chunk first asks."""

    def __init__(self, selected: list[str]) -> None:
        self._pending: dict[int, list[str]] = collections.defaultdict(list)
        for name in selected:
            self._pending[CHUNK_OF[name]].append(name)
        self._results: dict[str, dict] = {}

    def get(self, name: str) -> dict | None:
        chunk = CHUNK_OF.get(name)
        if chunk is not None and chunk in self._pending:
            # Under xdist this worker was given this chunk (its other chunks may be on another worker): run it alone,
            # in one subprocess (the xdist worker has a core of its own). In one process: every chunk at once.
            if os.environ.get("PYTEST_XDIST_WORKER"):
                self._run([self._pending.pop(chunk)], workers=1)
            else:
                self._run([self._pending.pop(index) for index in sorted(self._pending)],
                          workers=max(1, min(os.cpu_count() or 1, 4)))
        return self._results.get(name)

    def _run(self, chunks: list[list[str]], workers: int) -> None:
        if workers > 1:  # one process: the chunks regrouped into two per subprocess worker (each imports jax once)
            names = [name for chunk in chunks for name in chunk]
            count = max(1, min(len(names), 2 * workers))
            chunks = [names[i::count] for i in range(count)]
        results: dict[str, dict] = {}
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for partial in pool.map(lambda chunk: _run_chunk(chunk, set(OTHER_SIZE_CASES), set(REFINEMENT_SAMPLE)),
                                    chunks):
                results.update(partial)
        _print_summary(results)
        self._results.update(results)


@pytest.fixture(scope="module")
def harness_results(request: pytest.FixtureRequest) -> _ChunkResults:
    wanted = _selected_names(request.session)
    return _ChunkResults([name for name in CASES if name in wanted])


def _print_summary(results: dict[str, dict]) -> None:
    counts: collections.Counter[str] = collections.Counter()
    for record in results.values():
        for check in ("stored", "other_size", "refinement"):
            outcome = record.get(check)
            if outcome is not None:
                counts[f"{check} {'pass' if outcome['ok'] else 'fail'}"] += 1
        if "crashed" in record or "harness_error" in record:
            counts["crashed"] += 1
    sys.stderr.write(f"\njax_poly_harness: {len(results)} cases: {dict(sorted(counts.items()))}\n")


def _outcome(results: _ChunkResults, name: str, check: str) -> dict:
    record = results.get(name)
    assert record is not None, f"{name}: no result from the worker"
    assert "crashed" not in record, f"{name}: {record['crashed']}"
    assert "harness_error" not in record, f"{name}: harness error: {record['harness_error']}"
    outcome = record[check]
    assert outcome is not None, f"{name}: {check} was not run"
    return outcome


@pytest.mark.parametrize("name", _params(CASES))
def test_stored_run(name: str, harness_results: _ChunkResults) -> None:
    outcome = _outcome(harness_results, name, "stored")
    assert outcome["ok"], f"{name}: {outcome['message']}"


@pytest.mark.parametrize("name", _params(OTHER_SIZE_CASES))
def test_other_size(name: str, harness_results: _ChunkResults) -> None:
    outcome = _outcome(harness_results, name, "other_size")
    assert outcome["ok"], f"{name}: {outcome['message']}"


@pytest.mark.parametrize("name", _params(REFINEMENT_SAMPLE))
def test_refinement_as_static_as_cxx(name: str, harness_results: _ChunkResults) -> None:
    outcome = _outcome(harness_results, name, "refinement")
    assert outcome["ok"], f"{name}: {outcome['message']}"
