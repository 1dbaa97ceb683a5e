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


@pytest.mark.xfail(strict=True, reason="Shardy's propagation CHECK-fails (SIGABRT) once funcs are vhlo.func_v1")
def test_sdy_propagation_after_vhlo_legalization(worker):
    answer = worker.pipeline(_read("sdy-propagation-after-vhlo.mlir").decode(),
                             "builtin.module(stablehlo-legalize-to-vhlo, sdy-propagation-pipeline)")
    assert answer["status"] not in ("crash", "hang", "exception"), answer


@pytest.mark.xfail(strict=True, reason="Shardy's propagation segfaults on a recursive func.call")
def test_sdy_propagation_on_recursive_call(worker):
    answer = worker.pipeline(_read("sdy-propagation-recursive-call.mlir").decode(),
                             "builtin.module(sdy-propagation-pipeline)")
    assert answer["status"] not in ("crash", "hang", "exception"), answer


@pytest.mark.xfail(strict=True, reason="Shardy's propagation CHECK-fails (SIGABRT) on a module without functions")
def test_sdy_propagation_on_an_empty_module(worker):
    answer = worker.pipeline(_read("sdy-propagation-empty-module.mlir").decode(),
                             "builtin.module(sdy-propagation-pipeline)")
    assert answer["status"] not in ("crash", "hang", "exception"), answer
