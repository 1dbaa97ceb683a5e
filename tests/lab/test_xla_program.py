"""toolkit.lab.xla_program: what XLA made of a program (its optimized HLO), counted, on programs whose shape is known."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.lab.xla_program import XlaCounts


def _hlo(fun, *args) -> str:
    return toolkit.jit(fun).lower(*args).compile().as_text()


def test_a_fused_elementwise_chain_is_one_kernel():
    counts = XlaCounts.of(_hlo(lambda x: tnp.sin(x) * 2 + 1, np.ones(16, np.float32)))
    assert counts.kernels == counts.loop_fusions == 1
    assert counts.loops == counts.copies == counts.other_fusions == 0
    assert counts.instructions >= 2  # the parameter and the fusion


def test_loop_bodies_count_and_fusion_insides_do_not():
    def scan_step(xs):
        return lax.scan(lambda c, x: (tnp.tanh(c * x + 1.0), c), 0.5 * xs[0], xs)

    hlo = _hlo(scan_step, np.ones((8, 4), np.float32))
    counts = XlaCounts.of(hlo)
    assert counts.loops == 1
    # Every fusion of the module runs (the loop's body included, behind XLA's outlined call); what is inside the
    # fused computations is not counted.
    assert counts.kernels == hlo.count(" fusion(") >= 3
    assert counts.instructions < sum(1 for line in hlo.splitlines() if " = " in line)


def test_library_calls_and_branches():
    def branchy(x, w):
        return lax.cond(x[0, 0] > 0, lambda v: v @ w, lambda v: v - 1.0, x)

    counts = XlaCounts.of(_hlo(branchy, np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)))
    assert counts.kernels >= 1
    # The matmul runs in the taken branch: counted once, as a library call or inside a library-backed fusion.
    assert counts.dots + counts.custom_fusions >= 1


@pytest.mark.parametrize("text", ["", "HloModule m\n", "not HLO at all {\n}\n"])
def test_text_without_an_entry_counts_nothing(text):
    assert XlaCounts.of(text) == XlaCounts()
    assert set(XlaCounts.of(text).to_dict().values()) == {0}
