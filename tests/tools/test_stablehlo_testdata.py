"""toolkit-run over the 476 upstream StableHLO test programs (XLA CPU).

Inputs are fed as runtime parameters, as in the corpus's reference run. The
corpus README says all 476 pass that way on the reference machine; a few
borderline float programs may differ by CPU, so the bar is 470.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import pathlib

import pytest

CORPUS = pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "corpora" / "stablehlo_testdata"
REQUIRED_PASSES = 470


def _run_one(path: str) -> tuple[str, bool, str]:
    from toolkit.tools.run import run_program

    try:
        outcome = run_program(pathlib.Path(path).read_bytes())
    except Exception as error:  # reported as a miss with its reason
        return path, False, f"{type(error).__name__}: {str(error)[:300]}"
    if not outcome.checks:
        return path, False, "no check.* custom calls found"
    failed = [v.message for _, v in outcome.checks if not v.ok]
    return path, not failed, "; ".join(failed)


def run_corpus(paths: list[str], workers: int) -> list[tuple[str, bool, str]]:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                                max_tasks_per_child=60) as pool:
        return list(pool.map(_run_one, paths, chunksize=4))


@pytest.mark.slow
def test_stablehlo_testdata_passes_on_xla_cpu() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    paths = sorted(str(p) for p in CORPUS.glob("*.mlir"))
    assert len(paths) == 476
    results = run_corpus(paths, workers=max(2, os.cpu_count() or 2))
    misses = [(pathlib.Path(p).name, reason) for p, ok, reason in results if not ok]
    passed = len(results) - len(misses)
    report = "\n".join(f"  {name}: {reason}" for name, reason in misses)
    print(f"\nstablehlo_testdata: {passed}/{len(results)} passed\n{report}")
    assert passed >= REQUIRED_PASSES, f"only {passed}/{len(results)} passed; misses:\n{report}"


def test_a_few_testdata_programs_pass() -> None:
    """A fast sample so the default (non-slow) run covers the path too."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    for name in ("abs_bfloat16_20_20.mlir", "cumprod_complex64_8_9.mlir"):
        path = CORPUS / name
        if path.exists():
            _, ok, reason = _run_one(str(path))
            assert ok, f"{name}: {reason}"
