"""lax.sort (multi-operand, num_keys, stability, NaN order), lax.argsort and lax.top_k vs numpy;
lax.sort_key_val vs jax.lax."""

import numpy as np
import pytest
from _oracle import assert_same

import toolkit
from toolkit import lax

RNG = np.random.default_rng(1)


def test_sort_single_operand_each_dimension():
    x = RNG.standard_normal((3, 5, 4)).astype(np.float32)
    for d in (0, 1, 2, -1):
        np.testing.assert_array_equal(np.asarray(lax.sort(x, d)), np.sort(x, axis=d))


def test_sort_floats_nan_last_and_signed_zero_ties_stable():
    x = np.array([np.nan, 1.0, -0.0, -np.inf, 0.0, np.inf, np.nan, -2.0], np.float32)
    out = np.asarray(lax.sort(x))
    np.testing.assert_array_equal(out, np.sort(x))
    np.testing.assert_array_equal(np.signbit(out[2:4]), [True, False])  # stable: -0.0 stays first
    np.testing.assert_array_equal(np.asarray(lax.argsort(x)), np.argsort(x, kind="stable"))


def test_sort_bfloat16_and_integers():
    import ml_dtypes
    x = RNG.standard_normal(10).astype(ml_dtypes.bfloat16)
    # Compared in float32: converting bfloat16 results to numpy is the runtime's business, not sort's.
    out = toolkit.jit(lambda v: lax.convert_element_type(lax.sort(v), np.float32))(x)
    np.testing.assert_array_equal(np.asarray(out), np.sort(x.astype(np.float32)))
    for dt in (np.int8, np.int32, np.uint16, np.int64):
        v = RNG.integers(0, 100, 12).astype(dt)
        np.testing.assert_array_equal(np.asarray(lax.sort(v)), np.sort(v))


def test_sort_complex_lexicographic():
    c = np.array([1 + 2j, 1 + 1j, 0 + 5j, -1 - 1j], np.complex64)
    np.testing.assert_array_equal(np.asarray(lax.sort(c)), np.sort(c))


def test_sort_bool():
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(np.asarray(lax.sort(b)), np.sort(b))


def test_multi_operand_sort_carries_values_and_is_stable():
    keys = np.array([2, 1, 2, 1, 0, 1], np.int32)
    vals = np.arange(6, dtype=np.float32)
    k, v = lax.sort((keys, vals), 0)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(np.asarray(k), keys[order])
    np.testing.assert_array_equal(np.asarray(v), vals[order])


def test_sort_num_keys_is_lexicographic():
    k1 = np.array([1, 0, 1, 0, 1], np.int32)
    k2 = np.array([5.0, 3.0, 1.0, 4.0, 1.0], np.float32)
    payload = np.arange(5, dtype=np.int32)
    a, b, c = lax.sort((k1, k2, payload), 0, num_keys=2)
    order = np.lexsort((k2, k1))  # numpy's lexsort: last key is primary
    np.testing.assert_array_equal(np.asarray(c), payload[order])
    np.testing.assert_array_equal(np.asarray(a), k1[order])
    np.testing.assert_array_equal(np.asarray(b), k2[order])


def test_sort_is_one_op_with_comparator_region():
    text = toolkit.jit(lambda x: lax.sort(x)).lower(np.zeros(4, np.float32)).as_text()
    assert '"stablehlo.sort"' in text and "is_stable = true" in text and "stablehlo.return" in text


def test_argsort_dimension_and_dtype():
    x = RNG.integers(0, 4, (4, 7)).astype(np.int32)
    out = lax.argsort(x, 0)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.argsort(x, axis=0, kind="stable"))
    with toolkit.enable_x64():  # int64 indices need 64-bit types on (with them off they are int32, as in JAX)
        assert lax.argsort(x, index_dtype=np.int64).dtype == np.int64
    assert lax.argsort(x, index_dtype=np.int64).dtype == np.int32


def test_top_k():
    x = RNG.standard_normal((3, 9)).astype(np.float32)
    values, indices = lax.top_k(x, 4)
    assert indices.dtype == np.int32
    expected_idx = np.argsort(-x, axis=-1, kind="stable")[:, :4]
    np.testing.assert_array_equal(np.asarray(indices), expected_idx)
    np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(x, expected_idx, -1))


def test_top_k_under_jit_lowers_to_chlo():
    f = toolkit.jit(lambda x: lax.top_k(x, 2))
    assert "chlo.top_k" in f.lower(np.zeros((5,), np.float32)).as_text()
    v, i = f(np.array([1.0, 5.0, 3.0, 5.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(v), [5.0, 5.0])
    np.testing.assert_array_equal(np.asarray(i), [1, 3])


def test_sort_errors():
    with pytest.raises(TypeError, match="equal shapes"):
        lax.sort((np.zeros(3, np.float32), np.zeros(4, np.float32)), 0)
    with pytest.raises(ValueError, match="num_keys=3 must be between 1 and the number of operands"):
        lax.sort((np.zeros(3, np.float32), np.zeros(3, np.float32)), 0, num_keys=3)
    with pytest.raises(ValueError, match="dimension 1 is out of bounds"):
        lax.sort(np.zeros(3, np.float32), 1)
    with pytest.raises(TypeError, match="sort needs at least one operand"):
        lax.sort((), 0)


def test_top_k_errors():
    with pytest.raises(ValueError, match="k=6 must be between 0 and the last dimension's size 5"):
        lax.top_k(np.zeros(5, np.float32), 6)
    with pytest.raises(ValueError, match="axis -1 is out of bounds for array of dimension 0"):  # JAX's
        lax.top_k(np.float32(1.0), 1)
    with pytest.raises(TypeError, match="k must be a Python int"):
        lax.top_k(np.zeros(5, np.float32), 2.0)


# --- sort_key_val, checked against jax.lax 0.10.2 ---------------------------------------------------------

@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_key_val(dimension):
    jl = pytest.importorskip("jax.lax")
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 4, (5, 6)).astype(np.int32)
    vals = rng.standard_normal((5, 6)).astype(np.float32)
    for a, b in zip(lax.sort_key_val(keys, vals, dimension), jl.sort_key_val(keys, vals, dimension)):
        assert_same(a, b)


@pytest.mark.parametrize("axis", [0, 1, -2, -1])
def test_top_k_along_an_axis_as_jax(axis):
    jax = pytest.importorskip("jax")
    jl, tl = jax.lax, lax
    x = np.random.default_rng(1).normal(size=(3, 4, 5)).astype(np.float32)
    for ours, theirs in ((tl.top_k(x, 2, axis=axis), jl.top_k(x, 2, axis=axis)),
                         (toolkit.jit(lambda a: tl.top_k(a, 2, axis=axis))(x), jax.jit(lambda a: jl.top_k(a, 2, axis=axis))(x))):
        for o, t in zip(ours, theirs):
            assert o.shape == t.shape and o.dtype == t.dtype
            np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
    for bad in (lambda m: m.top_k(x, -1), lambda m: m.top_k(x, 2, axis=3)):
        with pytest.raises(ValueError) as theirs_error:
            bad(jl)
        with pytest.raises(ValueError) as ours_error:
            bad(tl)
        assert str(ours_error.value) == str(theirs_error.value)
