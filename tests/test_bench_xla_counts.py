"""bench/workload.py's count of what XLA made of a program (its optimized HLO), on programs whose shape is known."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit import lax

_SPEC = importlib.util.spec_from_file_location("bench_workload", Path(__file__).parents[1] / "bench" / "workload.py")
assert _SPEC is not None and _SPEC.loader is not None
workload = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_workload"] = workload
_SPEC.loader.exec_module(workload)


def _counts(fun, *args) -> dict[str, int]:
    return workload.xla_program_counts(toolkit.jit(fun).lower(*args).compile().as_text())


def test_a_fused_elementwise_chain_is_one_kernel():
    counts = _counts(lambda x: tnp.sin(x) * 2 + 1, np.ones(16, np.float32))
    assert counts["kernels"] == 1 and counts["kLoop"] == 1
    assert counts["while"] == 0 and counts["instructions"] >= 2  # the parameter and the fusion


def test_loop_bodies_count_and_fusion_insides_do_not():
    def scan_step(xs):
        return lax.scan(lambda c, x: (tnp.tanh(c * x + 1.0), c), 0.5 * xs[0], xs)

    hlo = toolkit.jit(scan_step).lower(np.ones((8, 4), np.float32)).compile().as_text()
    counts = workload.xla_program_counts(hlo)
    assert counts["while"] == 1
    # Every fusion instruction of the module runs (the loop's body included, behind XLA's outlined call); the
    # instructions inside fused computations are not counted.
    assert counts["kernels"] == hlo.count(" fusion(") >= 3
    assert counts["instructions"] < sum(1 for line in hlo.splitlines() if " = " in line)


def test_text_without_an_entry_counts_nothing():
    assert set(workload.xla_program_counts("HloModule m\n").values()) == {0}
