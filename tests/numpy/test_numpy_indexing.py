"""toolkit.numpy.indexing: ``x[idx]`` against numpy (every index expression also through ``.at[idx]``),
what it lowers to, errors, symbolic dimensions; out-of-bounds array indices against ``jax.numpy``."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _vs_jax import OOB_IDX, OOB_X, same_values

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

# (label, index) pairs: every index is compared with numpy on A (shape 3x4x5).
INDEX_CASES = [
    ("int", np.s_[1]),
    ("negative_int", np.s_[-1]),
    ("two_ints", np.s_[1, -2]),
    ("three_ints", np.s_[2, 3, 4]),
    ("slice", np.s_[1:]),
    ("slice_stop", np.s_[:2]),
    ("slice_step", np.s_[::2]),
    ("slice_negative_bounds", np.s_[-2:-1]),
    ("slice_reverse", np.s_[::-1]),
    ("slice_negative_step", np.s_[:, ::-2]),
    ("slice_negative_step_bounds", np.s_[:, 3:0:-2]),
    ("slice_reverse_to_start", np.s_[:, 2::-1]),
    ("slice_empty", np.s_[2:1]),
    ("slice_empty_negative", np.s_[:, 1:3:-1]),
    ("slice_out_of_range", np.s_[1:100]),
    ("slices_all_axes", np.s_[1:3, 1::2, ::-3]),
    ("newaxis", np.s_[None]),
    ("newaxis_middle", np.s_[:, None, 1]),
    ("newaxis_trailing", np.s_[..., None]),
    ("ellipsis", np.s_[...]),
    ("ellipsis_int", np.s_[..., 1]),
    ("int_ellipsis_newaxis_int", np.s_[0, ..., None, 2]),
    ("ellipsis_middle", np.s_[1, ..., 2]),
    ("true", np.s_[True]),
    ("false", np.s_[False]),
    ("int_true", np.s_[0, True]),
    ("array_1d", np.s_[[0, 2]]),
    ("array_negative", np.s_[[-1, 0, -3]]),
    ("array_repeated", np.s_[[1, 1, 1]]),
    ("array_second_axis", np.s_[:, [1, 3]]),
    ("array_last_axis", np.s_[..., [4, 0]]),
    ("array_2d", np.s_[[[0, 1], [2, 0]]]),
    ("arrays_adjacent", np.s_[:, [0, 1], [1, 2]]),
    ("arrays_separated", np.s_[[0, 1], :, [1, 2]]),
    ("array_int_separated", np.s_[0, :, [1, 2]]),
    ("int_array_adjacent", np.s_[:, 0, [1, 2]]),
    ("arrays_broadcast", np.s_[[[0], [1]], [1, 2]]),
    ("arrays_broadcast_3", np.s_[[[0], [2]], [[1, 2, 3]], 4]),
    ("array_with_slices", np.s_[1:2, [-1, 0], 3:0:-1]),
    ("array_newaxis_separates", np.s_[:, [1, 3], None, [0, 1]]),
    ("array_empty", np.s_[[]]),
    ("array_scalar_numpy", np.s_[np.int64(2)]),
    ("mask_first_axis", np.s_[np.array([True, False, True])]),
    ("mask_two_axes", np.s_[A[:, :, 0] > 20]),
    ("mask_after_slice", np.s_[:, np.array([False, True, True, False])]),
    ("numpy_int_array", np.s_[np.array([2, 0], np.int32)]),
    ("tuple_of_lists", np.s_[[0, 1], [2, 3]]),
]


@pytest.mark.parametrize("index", [c[1] for c in INDEX_CASES], ids=[c[0] for c in INDEX_CASES])
def test_getitem_matches_numpy(index):
    expected = A[index]
    got = np.asarray(tnp.asarray(A)[index])
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("index", [c[1] for c in INDEX_CASES], ids=[c[0] for c in INDEX_CASES])
def test_getitem_matches_numpy_under_jit(index):
    got = toolkit.jit(lambda x: x[index])(A)
    np.testing.assert_array_equal(np.asarray(got), A[index])


@pytest.mark.parametrize("index", [c[1] for c in INDEX_CASES], ids=[c[0] for c in INDEX_CASES])
def test_at_set_and_add_match_numpy(index):
    shape = A[index].shape
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 100
    expected = A.copy()
    expected[index] = values
    np.testing.assert_array_equal(np.asarray(tnp.asarray(A).at[index].set(values)), expected)
    expected = A.copy()
    np.add.at(expected, index, values)  # accumulates duplicate indices, like scatter-add
    np.testing.assert_array_equal(np.asarray(tnp.asarray(A).at[index].add(values)), expected)
    np.testing.assert_array_equal(np.asarray(tnp.asarray(A).at[index].get()), A[index])


def _ops(text):
    return [line.split("=", 1)[1].split()[0].strip('"') for line in text.splitlines() if " = " in line and
            "stablehlo." in line]


def test_static_slices_lower_without_gather():
    text = toolkit.jit(lambda x: x[1:, ::-2, 3]).lower(A).as_text()
    assert "gather" not in text
    assert "stablehlo.reverse" in text and "stablehlo.slice" in text and "stablehlo.reshape" in text


def test_full_slice_is_free():
    program = toolkit.jit(lambda x: x[:, ...]).trace(A).program
    assert not program.eqns


def test_traced_scalar_index_uses_dynamic_slice():
    f = toolkit.jit(lambda x, i: x[i, 1:3])
    for i in (0, 2, -1, -3):
        np.testing.assert_array_equal(np.asarray(f(A, np.int32(i))), A[i, 1:3])
    text = f.lower(A, np.int32(0)).as_text()
    assert "dynamic_slice" in text and "gather" not in text


def test_traced_scalar_index_out_of_range_clamps():
    f = toolkit.jit(lambda x, i: x[i])
    np.testing.assert_array_equal(np.asarray(f(A, np.int32(7))), A[2])


def test_traced_integer_array_index_is_a_gather():
    f = toolkit.jit(lambda x, i: x[:, i])
    idx = np.array([3, -1, 0], np.int32)
    np.testing.assert_array_equal(np.asarray(f(A, idx)), A[:, idx])
    assert "stablehlo.gather" in f.lower(A, idx).as_text()


def test_traced_index_combined_with_static_array():
    f = toolkit.jit(lambda x, i: x[[0, 2], i])
    np.testing.assert_array_equal(np.asarray(f(A, np.int32(-1))), A[[0, 2], -1])


def test_out_of_range_array_index_clamps_like_jax():
    got = np.asarray(tnp.asarray(A)[np.array([5, -7])])
    np.testing.assert_array_equal(got, A[[2, 0]])


def test_tracer_method_indexing_and_iteration():
    def f(x):
        rows = [r for r in x]
        return rows[1][2] + x[0][1, 1]
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(A)), A[1][2] + A[0][1, 1])


def test_index_with_device_array():
    idx = tnp.asarray(np.array([2, 0], np.int32))
    np.testing.assert_array_equal(np.asarray(tnp.asarray(A)[idx]), A[[2, 0]])
    np.testing.assert_array_equal(np.asarray(tnp.asarray(A)[tnp.asarray(np.int32(1))]), A[1])


# --- errors ---------------------------------------------------------------------


def test_too_many_indices():
    with pytest.raises(IndexError, match="too many indices for array: array is 3-dimensional, but 4 were indexed"):
        tnp.asarray(A)[0, 0, 0, 0]


def test_static_int_out_of_range_clamps_as_jax():
    # JAX clamps static out-of-bounds indices (x[4] of 4 is x[3]); only an empty axis raises.
    np.testing.assert_array_equal(tnp.asarray(A)[0, 4], A[0, 3])
    np.testing.assert_array_equal(toolkit.jit(lambda x: x[-4])(A), A[0])
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        tnp.zeros((0, 2))[0]


def test_two_ellipses():
    with pytest.raises(IndexError, match="single ellipsis"):
        tnp.asarray(A)[..., 0, ...]


def test_float_index():
    # JAX's exception class (TypeError) and words
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got indexer with type float64"):
        tnp.asarray(A)[1.5]
    with pytest.raises(TypeError, match="type float32"):
        tnp.asarray(A)[np.array([1.0], np.float32)]


def test_traced_boolean_mask():
    with pytest.raises(IndexError, match="boolean-mask indexing needs a concrete mask"):
        toolkit.jit(lambda x: x[x > 3])(A)


def test_mask_shape_mismatch():
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0"):
        tnp.asarray(A)[np.array([True, False])]


def test_traced_slice_bound():
    with pytest.raises(IndexError, match="slice start must be static"):
        toolkit.jit(lambda x, i: x[i:])(A, np.int32(1))


def test_zero_slice_step():
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        tnp.asarray(A)[::0]


# --- randomized index expressions ------------------------------------------------------


def _random_index(rng, shape):
    """A random mix of ints, slices, None, Ellipsis and integer arrays for an array of ``shape``."""
    items = []
    dim = 0
    used_ellipsis = False
    while dim < len(shape) and rng.random() < 0.85:
        kind = rng.choice(["int", "slice", "slice", "none", "array", "ellipsis"])
        n = shape[dim]
        if kind == "int":
            items.append(int(rng.integers(-n, n)))
            dim += 1
        elif kind == "slice":
            start = None if rng.random() < 0.3 else int(rng.integers(-n - 1, n + 2))
            stop = None if rng.random() < 0.3 else int(rng.integers(-n - 1, n + 2))
            step = None if rng.random() < 0.4 else int(rng.choice([-3, -2, -1, 1, 2, 3]))
            items.append(slice(start, stop, step))
            dim += 1
        elif kind == "none":
            items.append(None)
        elif kind == "array":
            items.append(rng.integers(-n, n, size=tuple(rng.integers(1, 3, size=rng.integers(1, 3)))))
            dim += 1
        elif not used_ellipsis:
            used_ellipsis = True
            items.append(Ellipsis)
            dim = len(shape) - sum(1 for i in items if i is not None and i is not Ellipsis)
            dim = max(dim, 0)
            break
    return tuple(items)


def test_random_index_expressions_match_numpy():
    rng = np.random.default_rng(1234)
    base = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    x = tnp.asarray(base)
    checked = 0
    while checked < 40:
        index = _random_index(rng, base.shape)
        try:
            expected = base[index]
        except (IndexError, ValueError):
            continue  # e.g. array indices that do not broadcast
        got = np.asarray(x[index])
        assert got.shape == expected.shape, index
        np.testing.assert_array_equal(got, expected, err_msg=str(index))
        updated = np.asarray(x.at[index].set(-1.0))
        want = base.copy()
        want[index] = -1.0
        np.testing.assert_array_equal(updated, want, err_msg=f".at{index}.set")
        checked += 1


# --- symbolic (shape-polymorphic) dimensions ------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda x: x[:, [1, 3]],
    lambda x: x[[0, 2]],
    lambda x: x[[-1, 0]],
    lambda x: x[-1, ::-1],
    lambda x: x[:, 1:3],
    lambda x: x.at[[0, -1]].add(1.0),
    lambda x: x.at[[0, 2], 1].get(mode="fill"),
    lambda x: tnp.take(x, np.array([1, 9]), axis=0),
    lambda x: tnp.sort(x, 0),
], ids=["array_static_dim", "array_symbolic_dim", "negative_symbolic", "int_reverse", "slice", "at_add",
        "at_get_fill", "take_fill", "sort"])
def test_indexing_with_symbolic_leading_dimension(fn):
    from toolkit.core.avals import ShapeDtypeStruct
    from toolkit.core.shape_poly import symbolic_shape
    (b,) = symbolic_shape("b")
    compiled = toolkit.jit(fn).lower(ShapeDtypeStruct((b, 4), np.float32)).compile()
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    np.testing.assert_array_equal(np.asarray(compiled(x)), np.asarray(toolkit.jit(fn)(x)))


def test_bool_scalar_with_array_index_is_not_supported():
    with pytest.raises(NotImplementedError, match="bool scalar index combined with array indices"):
        tnp.asarray(A)[True, [0]]


@pytest.mark.parametrize("index", [np.s_[[]], np.s_[:, [0, 1]], np.s_[:, 1], np.s_[::-1]])
def test_indexing_empty_arrays(index):
    empty = np.zeros((0, 3), np.float32)
    x = tnp.asarray(empty)
    check_shape = empty[index].shape
    assert np.asarray(x[index]).shape == check_shape
    np.testing.assert_array_equal(np.asarray(x.at[index].set(1.0)), empty)


def test_getitem_out_of_bounds_array_index(jnp):
    same_values(tnp.asarray(OOB_X)[OOB_IDX], jnp.asarray(OOB_X)[OOB_IDX])
    same_values(tnp.asarray(OOB_X)[:, OOB_IDX], jnp.asarray(OOB_X)[:, OOB_IDX])
