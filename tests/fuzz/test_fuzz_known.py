"""Crashes and hangs the fuzzers found that are not fixed yet: one strict xfail per report.

Each reproducer is in ``tests/fuzz/known/``. When a fix lands the test
XPASSes, which fails the suite on purpose: remove the ``xfail`` mark (and,
for a pass, its entry in ``test_fuzz_pipelines.KNOWN_CRASHING``) so that it
stays fixed.
"""

from __future__ import annotations

import os

import pytest

import fuzz_worker

KNOWN = os.path.join(os.path.dirname(__file__), "known")


def _read(name: str) -> bytes:
    with open(os.path.join(KNOWN, name), "rb") as f:
        return f.read()


@pytest.mark.xfail(strict=True, reason="jaxlib's MLIR bytecode reader segfaults on this corrupted bytecode; "
                                       "toolkit-opt reads binary input in-process (toolkit/ir/serialization.py)")
def test_corrupted_bytecode_does_not_crash(worker):
    result = worker.opt(_read("bytecode-reader-segfault.mlirbc"), ["{input}"], filename="in.mlirbc")
    assert not result.bad, result.summary()


@pytest.mark.xfail(strict=True, reason="jaxlib's MLIR bytecode reader never returns on this 154-byte module "
                                       "(one byte of a lit chunk's bytecode changed)")
def test_corrupted_bytecode_does_not_hang():
    short = fuzz_worker.Worker(timeout=5.0)
    try:
        result = short.opt(_read("bytecode-reader-hang.mlirbc"), ["{input}"], filename="in.mlirbc")
    finally:
        short.close()
    assert not result.bad, result.summary()


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
