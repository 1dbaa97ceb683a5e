"""lax.gather / lax.scatter*: results vs numpy for each mode, dimension numbers, and shape-rule errors."""

import numpy as np
import pytest

import toolkit
from toolkit import lax
from toolkit.lax import GatherDimensionNumbers as GDN
from toolkit.lax import GatherScatterMode
from toolkit.lax import ScatterDimensionNumbers as SDN

X = np.arange(12, dtype=np.float32).reshape(4, 3)
ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
ROW_UPDATES = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


def test_gather_rows_in_bounds():
    idx = np.array([[2], [0], [3]], np.int32)
    out = toolkit.jit(lambda x, i: lax.gather(x, i, ROWS, (1, 3), mode="promise_in_bounds"))(X, idx)
    np.testing.assert_array_equal(np.asarray(out), X[[2, 0, 3]])


def test_gather_clip_and_fill_modes():
    idx = np.array([[1], [3], [5], [-1]], np.int32)
    clipped = lax.gather(X, idx, ROWS, (1, 3), mode="clip")
    np.testing.assert_array_equal(np.asarray(clipped), X[[1, 3, 3, 0]])
    filled = np.asarray(lax.gather(X, idx, ROWS, (1, 3), mode="fill"))
    np.testing.assert_array_equal(filled[:2], X[[1, 3]])
    assert np.isnan(filled[2:]).all()
    custom = np.asarray(lax.gather(X, idx, ROWS, (1, 3), mode=GatherScatterMode.FILL_OR_DROP, fill_value=-5))
    np.testing.assert_array_equal(custom[2:], -5)


def test_gather_fill_defaults_per_dtype():
    ints = np.arange(4, dtype=np.int32)
    dn = GDN((), (0,), (0,))
    out = np.asarray(lax.gather(ints, np.array([[9]], np.int32), dn, (1,), mode="fill"))
    assert out[0] == np.iinfo(np.int32).min
    u = np.arange(4, dtype=np.uint8)
    assert np.asarray(lax.gather(u, np.array([[9]], np.int32), dn, (1,), mode="fill"))[0] == 255


def test_gather_defaults_are_jaxs():
    """lax.gather without a mode promises in-bounds indices (XLA clamps), and fill_value counts only with "fill",
    as JAX's; so lax.index_take, which passes no mode, clamps too."""
    jax = pytest.importorskip("jax")
    idx = np.array([[1], [5], [-2]], np.int32)
    jdn = jax.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    for kwargs in ({}, {"mode": "clip", "fill_value": 0.0}, {"mode": "promise_in_bounds", "fill_value": 7.0},
                   {"mode": "fill", "fill_value": 7.0}):
        ours = toolkit.jit(lambda x, i: lax.gather(x, i, ROWS, (1, 3), **kwargs))(X, idx)
        theirs = jax.jit(lambda x, i: jax.lax.gather(x, i, jdn, (1, 3), **kwargs))(X, idx)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=str(kwargs))
    take_idx = (np.array([1, 6, 3], np.int32),)
    np.testing.assert_array_equal(np.asarray(lax.index_take(X, take_idx, (0,))),
                                  np.asarray(jax.lax.index_take(X, take_idx, (0,))))


def test_gather_windows_and_2d_index_vectors():
    # 2x2 windows starting at (r, c) pairs: a 2-D index vector.
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    starts = np.array([[0, 0], [3, 4], [1, 2]], np.int32)
    dn = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
    out = np.asarray(lax.gather(x, starts, dn, (2, 2), mode="clip"))
    expected = np.stack([x[r:r + 2, c:c + 2] for r, c in starts])
    np.testing.assert_array_equal(out, expected)


def test_gather_batching_dims():
    # out[b, k] = x[b, idx[b, k]]: operand/indices batching dims pair dimension 0 of both.
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[[1], [3]], [[0], [0]], [[2], [1]]], np.int32)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
             start_indices_batching_dims=(0,))
    out = np.asarray(lax.gather(x, idx, dn, (1, 1), mode="clip"))
    np.testing.assert_array_equal(out, np.take_along_axis(x, idx[..., 0], axis=1))


def test_gather_lowering_is_one_op_without_fill():
    text = toolkit.jit(lambda x, i: lax.gather(x, i, ROWS, (1, 3), mode="clip")).lower(
        X, np.zeros((2, 1), np.int32)).as_text()
    assert text.count('"stablehlo.gather"') == 1 and "stablehlo.select" not in text


@pytest.mark.parametrize("fn,ufunc", [(lax.scatter_add, np.add), (lax.scatter_mul, np.multiply),
                                      (lax.scatter_min, np.minimum), (lax.scatter_max, np.maximum)])
def test_scatter_combiners_with_duplicates(fn, ufunc):
    idx = np.array([[0], [2], [0], [3]], np.int32)
    upd = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) * 1.5
    expected = X.copy()
    ufunc.at(expected, idx[:, 0], upd)
    np.testing.assert_allclose(np.asarray(fn(X, idx, upd, ROW_UPDATES)), expected)


def test_scatter_set():
    idx = np.array([[3], [1]], np.int32)
    upd = np.full((2, 3), -1, np.float32)
    expected = X.copy()
    expected[[3, 1]] = -1
    np.testing.assert_array_equal(np.asarray(lax.scatter(X, idx, upd, ROW_UPDATES)), expected)


def test_scatter_modes():
    idx = np.array([[1], [3], [5], [-1]], np.int32)
    upd = np.ones((4, 3), np.float32)
    dropped = np.asarray(lax.scatter_add(X, idx, upd, ROW_UPDATES, mode="drop"))
    expected = X.copy()
    expected[[1, 3]] += 1
    np.testing.assert_array_equal(dropped, expected)
    clipped = np.asarray(lax.scatter_add(X, idx, upd, ROW_UPDATES, mode="clip"))
    expected = X.copy()
    np.add.at(expected, [1, 3, 3, 0], 1)
    np.testing.assert_array_equal(clipped, expected)


def test_scatter_window_clip_keeps_window_in_bounds():
    x = np.zeros((6,), np.float32)
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    out = np.asarray(lax.scatter_add(x, np.array([[5]], np.int32), np.ones((1, 3), np.float32), dn, mode="clip"))
    np.testing.assert_array_equal(out, [0, 0, 0, 1, 1, 1])


def test_scatter_lowering_has_update_region():
    f = toolkit.jit(lambda x, i, u: lax.scatter_max(x, i, u, ROW_UPDATES))
    text = f.lower(X, np.zeros((2, 1), np.int32), np.zeros((2, 3), np.float32)).as_text()
    assert "stablehlo.scatter" in text and "stablehlo.maximum" in text


def test_mode_parsing():
    assert GatherScatterMode.from_any(None) is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any("drop") is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any("clip") is GatherScatterMode.CLIP
    with pytest.raises(ValueError, match="unknown gather/scatter mode 'wrap'"):
        GatherScatterMode.from_any("wrap")


# --- shape-rule errors ------------------------------------------------------------


def test_gather_errors():
    idx = np.zeros((2, 1), np.int32)
    with pytest.raises(TypeError, match="indices must have an integer dtype"):
        lax.gather(X, idx.astype(np.float32), ROWS, (1, 3))
    with pytest.raises(TypeError, match="slice size 4 does not fit operand dimension 1 of size 3"):
        lax.gather(X, idx, ROWS, (1, 4))
    with pytest.raises(TypeError, match="slice_sizes .* needs one entry per dimension"):
        lax.gather(X, idx, ROWS, (1,))
    with pytest.raises(TypeError, match="index vector .* has 1 entries but start_index_map"):
        lax.gather(X, idx, GDN((1,), (0,), (0, 1)), (1, 3))
    with pytest.raises(TypeError, match="collapsed/batching operand dimension 0 must have slice size <= 1"):
        lax.gather(X, idx, ROWS, (2, 3))
    with pytest.raises(TypeError, match="offset_dims"):
        lax.gather(X, idx, GDN((), (0,), (0,)), (1, 3))
    with pytest.raises(TypeError, match="dimension_numbers must be a GatherDimensionNumbers"):
        lax.gather(X, idx, ((1,), (0,), (0,)), (1, 3))


def test_scatter_errors():
    idx = np.zeros((2, 1), np.int32)
    upd = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="updates dtype int32 differs from the operand's float32"):
        lax.scatter_add(X, idx, upd.astype(np.int32), ROW_UPDATES)
    with pytest.raises(TypeError, match="update scatter dimensions"):
        lax.scatter_add(X, np.zeros((3, 1), np.int32), upd, ROW_UPDATES)
    with pytest.raises(TypeError, match="update window dimension 1 of size 5 exceeds operand dimension 1"):
        lax.scatter_add(X, idx, np.zeros((2, 5), np.float32), ROW_UPDATES)
    with pytest.raises(ValueError, match="inserted_window_dims .* has 2, out of bounds for rank 2"):
        lax.scatter(X, idx, upd, SDN((1,), (2,), (0,)))
