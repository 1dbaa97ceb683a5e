"""The reference programs of issue 2 run through jit and match numpy (float32 and bfloat16)."""

import ml_dtypes
import numpy as np
import pytest

import toolkit
from toolkit.core import pytrees
from toolkit.examples.reference_programs import PROGRAMS


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_float32_matches_numpy(name):
    program = PROGRAMS[name]
    args = program.make_inputs(np.random.default_rng(0))
    out = np.asarray(toolkit.jit(program.build(toolkit))(*args))
    expected = program.reference(*pytrees.tree_map(lambda a: np.asarray(a, np.float64), args))
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(out, expected, rtol=program.rtol, atol=program.rtol * scale)


# Programs whose arithmetic is well conditioned enough for bfloat16 (8 bits of mantissa).
BFLOAT16 = {"mlp": 0.05, "transformer": 0.1, "convnet": 0.05, "rnn": 0.05}


@pytest.mark.parametrize("name", sorted(BFLOAT16))
def test_bfloat16_matches_numpy(name):
    program = PROGRAMS[name]
    args = program.make_inputs(np.random.default_rng(1))
    low = pytrees.tree_map(lambda a: np.asarray(a).astype(ml_dtypes.bfloat16), args)
    out = toolkit.jit(program.build(toolkit))(*low)
    assert out.dtype == ml_dtypes.bfloat16
    expected = program.reference(*pytrees.tree_map(lambda a: np.asarray(a, np.float64), low))
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(np.asarray(out, np.float64), expected, atol=BFLOAT16[name] * scale)


def test_programs_lower_without_python_unrolling():
    rnn = PROGRAMS["rnn"]
    text = toolkit.jit(rnn.build(toolkit)).lower(*rnn.make_inputs(np.random.default_rng(0))).as_text()
    assert text.count("stablehlo.while") == 1 and text.count("stablehlo.tanh") == 1
    newton = PROGRAMS["newton"]
    text = toolkit.jit(newton.build(toolkit)).lower(*newton.make_inputs(np.random.default_rng(0))).as_text()
    assert text.count("stablehlo.while") == 1
