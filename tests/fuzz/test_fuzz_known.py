"""Crashes and hangs the fuzzers found: one test per report, reproducers in ``tests/fuzz/known/``.

A report that is not fixed yet is a strict xfail: when its fix lands the test
XPASSes, which fails the suite on purpose: then remove the ``xfail`` mark
(and, for a pass, its entry in ``test_fuzz_pipelines.KNOWN_CRASHING``) so
that it stays fixed. Every report below is fixed: each input now ends in one
clean error line (exit 1).
"""

from __future__ import annotations

import os

import pytest

import fuzz_worker

KNOWN = os.path.join(os.path.dirname(__file__), "known")


def _read(name: str) -> bytes:
    with open(os.path.join(KNOWN, name), "rb") as f:
        return f.read()


# jaxlib's bytecode / VHLO readers crash or hang on these; toolkit-opt reads binary input in a
# forked child first (toolkit/ir/serialization.py probe_untrusted_binary): exit 1, one line.
CRASHING_BINARIES = [
    ("bytecode-reader-segfault.mlirbc", "cannot read MLIR bytecode: the reader crashed (SIGSEGV)"),
    ("vhlo-reader-segfault.mlir.bc", "cannot read the StableHLO portable artifact: the reader crashed (SIGSEGV)"),
    ("vhlo-reader-segfault-2.mlirbc", "cannot read the StableHLO portable artifact: the reader crashed (SIGSEGV)"),
]
HANGING_BINARIES = ["bytecode-reader-hang.mlirbc", "bytecode-reader-hang-2.mlirbc"]


@pytest.mark.parametrize("name,message", CRASHING_BINARIES, ids=[c[0] for c in CRASHING_BINARIES])
def test_corrupted_bytecode_does_not_crash(worker, name, message):
    result = worker.opt(_read(name), ["{input}"], filename=name)
    assert result.outcome == "clean-error" and result.exit == 1, result.summary()
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.summary()


@pytest.mark.parametrize("name", HANGING_BINARIES)
def test_corrupted_bytecode_does_not_hang(monkeypatch, name):
    monkeypatch.setenv("TOOLKIT_UNTRUSTED_READ_TIMEOUT", "1")
    short = fuzz_worker.Worker(timeout=15.0)
    try:
        result = short.opt(_read(name), ["{input}"], filename=name)
    finally:
        short.close()
    assert result.outcome == "clean-error" and result.exit == 1, result.summary()
    assert "the reader did not finish within 1 s" in result.stderr, result.summary()


def test_heap_corrupting_artifact_does_not_crash_the_worker(worker):
    """This artifact corrupts the heap of the process reading it (the standing run, seed 2024, found it after
    the probe landed: the child read it without crashing and the worker, reading it again, died later)."""
    for _ in range(3):
        result = worker.opt(_read("vhlo-reader-heap-corruption.mlirbc"), ["-", "-mlir-print-op-generic"])
        assert not result.bad, result.summary()


def test_corrupted_bytecode_in_a_real_process():
    name, message = CRASHING_BINARIES[0]
    result = fuzz_worker.run_real_opt(_read(name), ["{input}"], filename=name)
    assert result.outcome == "clean-error" and result.exit == 1 and message in result.stderr, result.summary()


# Shardy's propagation aborts or segfaults on these; toolkit/passes/preconditions.py refuses them first.
SDY_CASES = [
    ("sdy-propagation-after-vhlo.mlir", "builtin.module(stablehlo-legalize-to-vhlo, sdy-propagation-pipeline)",
     "VHLO ops"),
    ("sdy-propagation-recursive-call.mlir", "builtin.module(sdy-propagation-pipeline)", "recursive"),
    ("sdy-propagation-empty-module.mlir", "builtin.module(sdy-propagation-pipeline)", "no public func.func"),
    ("sdy-propagation-call-to-declaration.mlir", "builtin.module(sdy-propagation-pipeline)", "without a body"),
]


@pytest.mark.parametrize("name,pipeline,reason", SDY_CASES, ids=[c[0] for c in SDY_CASES])
def test_sdy_propagation_is_refused_cleanly(worker, name, pipeline, reason):
    answer = worker.pipeline(_read(name).decode(), pipeline)
    assert answer["status"] == "pipeline-error", answer
    assert "pass 'sdy-propagation-pipeline' cannot run on this module" in answer["message"], answer
    assert reason in answer["message"], answer


@pytest.mark.parametrize("name,pipeline,reason", SDY_CASES, ids=[c[0] for c in SDY_CASES])
def test_sdy_propagation_refusal_is_one_clean_line(worker, name, pipeline, reason):
    result = worker.opt(_read(name), ["{input}", f"--pass-pipeline={pipeline}"])
    assert result.outcome == "clean-error" and result.exit == 1, result.summary()
    assert len(result.stderr.strip().splitlines()) == 1, result.summary()
    assert reason in result.stderr, result.summary()


def test_legalize_to_linalg_is_refused_cleanly(worker):
    # It aborted ('LLVM ERROR: could not reify', SIGABRT) on this module (standing run, seed 7).
    answer = worker.pipeline(_read("legalize-to-linalg-could-not-reify.mlir").decode(),
                             "builtin.module(stablehlo-legalize-to-linalg)")
    assert answer["status"] == "pipeline-error", answer
    assert "pass 'stablehlo-legalize-to-linalg' cannot run on this module" in answer["message"], answer
    assert "changes the element width" in answer["message"], answer


def test_deserialize_error_with_a_newline_in_the_data_is_one_line():
    # A shape string holding "\n" (standing run, seed 7) made a two-line error message.
    import toolkit.export

    with pytest.raises(ValueError, match=r"cannot parse shape \(\\n,10,10,10\)") as info:
        toolkit.export.deserialize(_read("export-newline-in-shape.bin"))
    assert len(str(info.value).splitlines()) == 1
