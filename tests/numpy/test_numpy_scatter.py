"""toolkit.numpy.scatter: ``x.at[idx]`` updates against numpy's assignment and ``ufunc.at`` (duplicates,
out-of-bounds modes, ``jit``, dtypes, errors) and against ``jax.numpy`` 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _vs_jax import OOB_IDX, OOB_X, same_values

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


def test_at_add_accumulates_duplicates():
    idx = np.array([0, 1, 1, 3, 3, 3])
    got = tnp.zeros(4).at[idx].add(1.0)
    expected = np.zeros(4, np.float32)
    np.add.at(expected, idx, 1.0)
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_at_multiply_min_max_with_duplicates():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    idx = np.array([0, 0, 2, 3])
    vals = np.array([2.0, 5.0, -1.0, 10.0], np.float32)
    for method, ufunc in (("multiply", np.multiply), ("mul", np.multiply), ("min", np.minimum),
                          ("max", np.maximum)):
        expected = x.copy()
        ufunc.at(expected, idx, vals)
        np.testing.assert_array_equal(np.asarray(getattr(tnp.asarray(x).at[idx], method)(vals)), expected)


def test_at_divide_power_apply_match_numpy_ufunc_at():
    x = np.arange(1, 9, dtype=np.float32)
    idx = np.array([1, 1, 3, 6])
    for method, ufunc in (("divide", np.divide), ("power", np.power)):
        expected = x.copy()
        ufunc.at(expected, idx, np.float32(2.0))
        np.testing.assert_allclose(np.asarray(getattr(tnp.asarray(x).at[idx], method)(2.0)), expected, rtol=1e-6)
    expected = x.copy()
    np.sin.at(expected, np.array([0, 0, 0, 5]))  # applied once per selection: three times at 0
    for fun in (lambda v: v.at[np.array([0, 0, 0, 5])].apply(tnp.sin), toolkit.jit(
            lambda v: v.at[np.array([0, 0, 0, 5])].apply(tnp.sin))):
        np.testing.assert_allclose(np.asarray(fun(tnp.asarray(x))), expected, rtol=1e-6)
    # Out-of-range selections are dropped (the default mode), as JAX's scatter_apply drops them.
    np.testing.assert_array_equal(np.asarray(tnp.asarray(x).at[np.array([0, 9])].apply(lambda v: v * 2)),
                                  np.concatenate([[2.0], x[1:]]))
    with pytest.raises(ValueError, match="func must be elementwise"):
        tnp.asarray(x).at[0].apply(lambda v: v.sum())
    # grad flows through divide and power (not through apply, as in JAX)
    grad = toolkit.grad(lambda v: v.at[1:3].divide(2.0).at[4].power(3.0).sum())(x)
    np.testing.assert_allclose(np.asarray(grad), [1, 0.5, 0.5, 1, 3 * x[4] ** 2, 1, 1, 1], rtol=1e-6)


def test_at_subtract():
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(tnp.asarray(x).at[1:3].subtract(1.0)), [0, 0, 1, 3])


def test_at_set_scalar_broadcasts():
    got = tnp.asarray(A).at[:, 1].set(0.0)
    expected = A.copy()
    expected[:, 1] = 0
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_at_update_out_of_bounds_is_dropped_by_default_and_clipped_on_request():
    z = tnp.zeros(4)
    idx = np.array([0, 5, -1, -7])
    np.testing.assert_array_equal(np.asarray(z.at[idx].add(1.0)), [1, 0, 0, 1])
    np.testing.assert_array_equal(np.asarray(z.at[idx].add(1.0, mode="clip")), [2, 0, 0, 2])
    np.testing.assert_array_equal(np.asarray(z.at[10].set(1.0)), [0, 0, 0, 0])


def test_at_get_modes():
    x = tnp.asarray(np.arange(5.0, dtype=np.float32))
    assert float(x.at[10].get()) == 4.0
    np.testing.assert_array_equal(np.asarray(x.at[np.array([10, 1])].get(mode="fill", fill_value=-1)), [-1, 1])
    assert np.isnan(np.asarray(x.at[np.array([10])].get(mode="fill")))[0]


def test_at_under_jit_with_traced_indices_and_values():
    f = toolkit.jit(lambda x, i, v: x.at[i].add(v))
    idx = np.array([0, 2, 0], np.int32)
    vals = np.ones((3, 4, 5), np.float32)
    expected = A.copy()
    np.add.at(expected, idx, vals)
    np.testing.assert_array_equal(np.asarray(f(A, idx, vals)), expected)
    assert "stablehlo.scatter" in f.lower(A, idx, vals).as_text()


def test_at_with_traced_scalar_index():
    f = toolkit.jit(lambda x, i: x.at[i, 1:3].set(-1.0))
    expected = A.copy()
    expected[-1, 1:3] = -1
    np.testing.assert_array_equal(np.asarray(f(A, np.int32(-1))), expected)


def test_at_converts_values_to_the_array_dtype():
    x = tnp.asarray(np.zeros(3, np.int32))
    out = x.at[1].set(2.7)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 0])


def test_at_bool_array_add_is_jaxs_type_error():
    # JAX's scatter_add refuses booleans (numpy would or them); min/max and set work.
    x = tnp.asarray(np.array([False, True, False]))
    with pytest.raises(TypeError, match="add does not accept dtype bool"):
        x.at[np.array([0, 0])].add(True)
    np.testing.assert_array_equal(np.asarray(x.at[np.array([0, 0])].max(True)), [True, True, False])


def test_at_bad_update_shape():
    with pytest.raises(ValueError, match="cannot broadcast update values of shape"):
        tnp.asarray(A).at[0].set(np.ones((5, 4), np.float32))


def test_at_returns_new_array():
    x = tnp.asarray(np.zeros(3, np.float32))
    y = x.at[0].set(1.0)
    np.testing.assert_array_equal(np.asarray(x), [0, 0, 0])
    np.testing.assert_array_equal(np.asarray(y), [1, 0, 0])


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("mode", [None, "clip", "drop"])
def test_at_updates(method, mode, jnp):
    values = np.arange(6 * 4, dtype=np.float32).reshape(6, 4) - 7
    ours = getattr(tnp.asarray(OOB_X).at[OOB_IDX], method)(values, mode=mode)
    theirs = getattr(jnp.asarray(OOB_X).at[OOB_IDX], method)(values, mode=mode)
    if method == "set":  # which duplicate wins is unspecified: compare positions without duplicates
        keep = [0, 1, 3, 4]
        np.testing.assert_array_equal(np.asarray(ours)[keep], np.asarray(theirs)[keep])
    else:
        same_values(ours, theirs)


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_at_get(mode, jnp):
    same_values(tnp.asarray(OOB_X).at[OOB_IDX].get(mode=mode), jnp.asarray(OOB_X).at[OOB_IDX].get(mode=mode))
