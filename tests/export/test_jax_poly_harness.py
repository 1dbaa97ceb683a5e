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

pytestmark = [
    pytest.mark.slow,
    # harness_results runs every selected case once per process: under pytest-xdist, one worker runs this module.
    pytest.mark.one_worker,
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


@pytest.fixture(scope="module")
def harness_results(request: pytest.FixtureRequest) -> dict[str, dict]:
    wanted = _selected_names(request.session)
    selected = [name for name in CASES if name in wanted]
    workers = max(1, min(os.cpu_count() or 1, 4))
    chunk_count = max(1, min(len(selected), 2 * workers))  # each worker imports toolkit and jax once
    chunks = [selected[i::chunk_count] for i in range(chunk_count)]
    results: dict[str, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for partial in pool.map(lambda chunk: _run_chunk(chunk, set(OTHER_SIZE_CASES), set(REFINEMENT_SAMPLE)),
                                chunks):
            results.update(partial)
    _print_summary(results)
    return results


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


def _outcome(results: dict[str, dict], name: str, check: str) -> dict:
    record = results.get(name)
    assert record is not None, f"{name}: no result from the worker"
    assert "crashed" not in record, f"{name}: {record['crashed']}"
    assert "harness_error" not in record, f"{name}: harness error: {record['harness_error']}"
    outcome = record[check]
    assert outcome is not None, f"{name}: {check} was not run"
    return outcome


@pytest.mark.parametrize("name", CASES)
def test_stored_run(name: str, harness_results: dict[str, dict]) -> None:
    outcome = _outcome(harness_results, name, "stored")
    assert outcome["ok"], f"{name}: {outcome['message']}"


@pytest.mark.parametrize("name", OTHER_SIZE_CASES)
def test_other_size(name: str, harness_results: dict[str, dict]) -> None:
    outcome = _outcome(harness_results, name, "other_size")
    assert outcome["ok"], f"{name}: {outcome['message']}"


@pytest.mark.parametrize("name", REFINEMENT_SAMPLE)
def test_refinement_as_static_as_cxx(name: str, harness_results: dict[str, dict]) -> None:
    outcome = _outcome(harness_results, name, "refinement")
    assert outcome["ok"], f"{name}: {outcome['message']}"
