"""Dot algorithms (toolkit/lax/dot_algorithms.py) and precision lowering, against JAX in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(2)
X = RNG.standard_normal((3, 5)).astype(np.float32)
Y = RNG.standard_normal((5, 4)).astype(np.float32)


def _dot_line(text):
    return [s.split("=", 1)[1].strip() for s in text.splitlines() if "stablehlo.dot_general" in s][0]


def test_presets_mirror_jax():
    assert [p.name for p in lax.DotAlgorithmPreset] == [p.name for p in jlax.DotAlgorithmPreset]
    for ours in lax.DotAlgorithmPreset:
        theirs = jlax.DotAlgorithmPreset[ours.name]
        assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
        lhs = ours.supported_lhs_types
        jl = theirs.supported_lhs_types
        assert (lhs is None) == (jl is None) and (lhs is None or [np.dtype(t) for t in jl] == list(lhs))
        acc = theirs.accumulation_type
        assert ours.accumulation_type == (None if acc is None else np.dtype(acc))
        for a, b in ((np.float16, np.float16), (np.float32, np.float32), (jax.numpy.bfloat16, jax.numpy.bfloat16)):
            want = theirs.supported_output_types(a, b)
            got = ours.supported_output_types(a, b)
            assert (got is None) == (want is None) and (got is None or list(got) == [np.dtype(t) for t in want])


@pytest.mark.parametrize("name", ["DEFAULT", "F16_F16_F16", "F32_F32_F32", "BF16_BF16_F32", "BF16_BF16_F32_X3",
                                  "BF16_BF16_F32_X6"])
def test_cpu_presets_lower_and_run_as_jax(name):
    ours = toolkit.jit(lambda a, b: lax.dot(a, b, precision=lax.DotAlgorithmPreset[name]))
    theirs = jax.jit(lambda a, b: jlax.dot(a, b, precision=jlax.DotAlgorithmPreset[name]))
    assert _dot_line(ours.lower(X, Y).as_text()) == _dot_line(theirs.lower(X, Y).as_text())
    assert_same(ours(X, Y), theirs(X, Y), rtol=2e-3, atol=2e-3)
    # by name, as JAX accepts it
    assert_same(toolkit.jit(lambda a, b: lax.dot(a, b, precision=name))(X, Y), theirs(X, Y), rtol=2e-3, atol=2e-3)


@pytest.mark.x64
def test_f64_preset():
    ours = toolkit.jit(lambda a, b: lax.dot(a, b, precision="F64_F64_F64"))
    theirs = jax.jit(lambda a, b: jlax.dot(a, b, precision="F64_F64_F64"))
    assert _dot_line(ours.lower(X, Y).as_text()) == _dot_line(theirs.lower(X, Y).as_text())
    assert_same(ours(X, Y), theirs(X, Y), rtol=1e-6)


@pytest.mark.parametrize("name", ["F16_F16_F32", "BF16_BF16_BF16", "TF32_TF32_F32", "BF16_BF16_F32_X9",
                                  "ANY_F8_ANY_F8_F32"])
def test_presets_cpu_refuses_like_jax(name):
    with pytest.raises(ValueError, match=f"The precision '{name}' is not supported by dot_general on CPU"):
        jax.jit(lambda a, b: jlax.dot(a, b, precision=name)).lower(X, Y)
    with pytest.raises(Exception, match=f"The precision '{name}' is not supported by dot_general on CPU"):
        toolkit.jit(lambda a, b: lax.dot(a, b, precision=name)).lower(X, Y)


def test_explicit_algorithm_refused_on_cpu_like_jax():
    alg = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    assert alg._fields == jlax.DotAlgorithm._fields and alg.lhs_component_count == 1
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        jax.jit(lambda a, b: jlax.dot(a, b, precision=jlax.DotAlgorithm(np.float32, np.float32, np.float32))) \
            .lower(X, Y)
    with pytest.raises(Exception, match="not supported by dot_general on CPU"):
        toolkit.jit(lambda a, b: lax.dot(a, b, precision=alg)).lower(X, Y)


def test_algorithm_grad_matches_jax():
    f = lambda a, b: (lax.dot(a, b, precision="BF16_BF16_F32") ** 2).sum()  # noqa: E731
    jf = lambda a, b: (jlax.dot(a, b, precision="BF16_BF16_F32") ** 2).sum()  # noqa: E731
    for o, t in zip(toolkit.jit(toolkit.grad(f, (0, 1)))(X, Y), jax.grad(jf, (0, 1))(X, Y)):
        assert_same(o, t, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("precision", [lax.Precision.HIGHEST, "high", ("highest", "default")])
def test_precision_names_lower_to_precision_config(precision):
    jp = precision if isinstance(precision, (str, tuple)) else jlax.Precision.HIGHEST
    if isinstance(precision, tuple):
        jp = tuple(jlax.Precision(p) for p in precision)
    ours = toolkit.jit(lambda a, b: lax.dot(a, b, precision=precision)).lower(X, Y).as_text()
    theirs = jax.jit(lambda a, b: jlax.dot(a, b, precision=jp)).lower(X, Y).as_text()
    assert _dot_line(ours) == _dot_line(theirs)


def test_precision_errors():
    with pytest.raises(ValueError, match="unknown precision 'fast'"):
        lax.dot(X, Y, precision="fast")
    with pytest.raises(ValueError, match="must name two lax.Precision values"):
        lax.dot(X, Y, precision=("F32_F32_F32", "F32_F32_F32"))


def test_tolerance_accuracy_mode_and_aliases():
    assert {m.name: m.value for m in lax.AccuracyMode} == {m.name: m.value for m in jlax.AccuracyMode}
    t = lax.Tolerance(atol=1e-3, ulps=2)
    assert (t.atol, t.rtol, t.ulps) == (1e-3, 0.0, 2)
    for bad, message in (({"atol": -1.0}, "non-negative"), ({}, "At least one")):
        with pytest.raises(ValueError, match=message):
            lax.Tolerance(**bad)
        with pytest.raises(ValueError, match=message):
            jlax.Tolerance(**bad)
    dn = lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    jdn = jlax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    assert (dn.dot_dimension_numbers, dn.lhs_ragged_dimensions, dn.rhs_group_dimensions) == \
        (jdn.dot_dimension_numbers, jdn.lhs_ragged_dimensions, jdn.rhs_group_dimensions)
    assert hash(dn) == hash(lax.RaggedDotDimensionNumbers([[[1], [1]], [[], []]], [0], [0]))
    assert lax.DotDimensionNumbers is not None and lax.PrecisionLike is not None
