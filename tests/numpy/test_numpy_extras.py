"""toolkit.numpy extras vs numpy: sorting, cumulative ops, einsum, split, pad, flips, repetition,
take, diagonals, closeness, meshgrid; plus error paths."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


X = f32(4, 6)
C = f32(2, 3, 4)
SQ = f32(4, 4)


def check(got, expected, **tol):
    got = np.asarray(got)
    assert got.shape == np.shape(expected)
    if tol:
        np.testing.assert_allclose(got, expected, **tol)
    else:
        np.testing.assert_array_equal(got, expected)


# --- sorting ---------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort(axis):
    check(tnp.sort(X, axis=axis), np.sort(X, axis=axis))
    check(tnp.argsort(X, axis=axis), np.argsort(X, axis=axis, kind="stable"))


def test_sort_nan_last_and_stable_ties():
    x = np.array([3.0, np.nan, 1.0, -0.0, 0.0, 2.0, np.nan, 1.0], np.float32)
    check(tnp.sort(x), np.sort(x))
    check(tnp.argsort(x), np.argsort(x, kind="stable"))
    ties = np.array([2, 1, 2, 1, 0, 1], np.int32)
    check(tnp.argsort(ties), np.argsort(ties, kind="stable"))


def test_sort_descending_stable():
    ties = np.array([2, 1, 2, 1, 0, 1], np.int32)
    check(tnp.sort(ties, descending=True), np.sort(ties)[::-1])
    expected = np.argsort(-ties.astype(np.int64), kind="stable")
    check(tnp.argsort(ties, descending=True), expected)


def test_sort_under_jit_and_integer_dtypes():
    x = RNG.integers(-50, 50, (5, 7)).astype(np.int8)
    check(toolkit.jit(lambda v: tnp.sort(v, axis=0))(x), np.sort(x, axis=0))
    u = RNG.integers(0, 200, (9,)).astype(np.uint8)
    check(tnp.sort(u), np.sort(u))


def test_sort_errors():
    with pytest.raises(ValueError, match="out of bounds for an array of rank 0"):
        tnp.sort(np.float32(1.0))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        tnp.sort(X, axis=2)


# --- cumulative ------------------------------------------------------------------------


def test_cumsum_cumprod():
    check(tnp.cumsum(X, axis=1), np.cumsum(X, axis=1), rtol=1e-5, atol=1e-5)
    check(tnp.cumsum(X), np.cumsum(X), rtol=1e-5, atol=1e-5)
    check(tnp.cumprod(X[:2], axis=0), np.cumprod(X[:2], axis=0), rtol=1e-5)
    got = tnp.cumsum(np.array([True, True, False]))
    check(got, [1, 2, 2])
    assert got.dtype == np.int32
    check(tnp.cumsum(np.arange(5, dtype=np.int32), dtype=np.float32), np.arange(5).cumsum().astype(np.float32))


def test_diff():
    check(tnp.diff(X, axis=0), np.diff(X, axis=0))
    check(tnp.diff(X, n=2), np.diff(X, n=2))


# --- einsum ----------------------------------------------------------------------------

A34, B45 = f32(3, 4), f32(4, 5)
EINSUM_CASES = [
    ("ij,jk->ik", (A34, B45)),
    ("ij,jk", (A34, B45)),
    ("ij->ji", (A34,)),
    ("ij", (A34,)),
    ("ji", (A34,)),
    ("ii->i", (SQ,)),
    ("ii", (SQ,)),
    ("ij->", (A34,)),
    ("ij->j", (A34,)),
    ("bij,jk->bik", (C, B45)),
    ("...ij,jk->...ik", (C, B45)),
    ("...ij->...ji", (C,)),
    ("...i->...", (C,)),
    ("i...->...", (C,)),
    ("ij,ij->", (A34, A34)),
    ("ij,ij->ij", (A34, A34)),
    ("i,j->ij", (A34[0], B45[0])),
    ("i,i", (A34[0], A34[1])),
    ("ij,kj->ik", (A34, A34)),
    ("bij,bkj->bik", (C, C)),
    ("ijk->k", (C,)),
    ("ijk->kji", (C,)),
    ("ij,jk,kl->il", (A34, B45, B45.T)),
    ("ij,j->i", (A34, B45[:, 0])),
    ("i,i,i->i", (A34[0], A34[1], A34[2])),
    ("ab,bc,ca->", (A34, B45[:, :3] if False else f32(4, 2), f32(2, 3))),
    ("iij->ij", (f32(3, 3, 2),)),
    ("bii->b", (f32(2, 3, 3),)),
    ("...,...->...", (f32(3, 1), f32(1, 4))),
    (" ij , jk -> ik ", (A34, B45)),
]


@pytest.mark.parametrize("spec,operands", EINSUM_CASES, ids=[c[0].replace(" ", "_") for c in EINSUM_CASES])
def test_einsum_matches_numpy(spec, operands):
    check(tnp.einsum(spec, *operands), np.einsum(spec, *operands), rtol=1e-4, atol=1e-4)


def test_einsum_lowers_to_dot_general():
    text = toolkit.jit(lambda a, b: tnp.einsum("bij,bjk->bki", a, b)).lower(f32(2, 3, 4), f32(2, 4, 5)).as_text()
    assert "stablehlo.dot_general" in text and "stablehlo.transpose" in text


def test_einsum_promotes_and_preferred_type():
    a = RNG.integers(0, 5, (2, 3)).astype(np.int32)
    check(tnp.einsum("ij,jk->ik", a, a.T), a @ a.T)
    out = tnp.einsum("ij,jk->ik", A34, B45, preferred_element_type=np.float32)
    assert out.dtype == np.float32


@pytest.mark.parametrize("spec,operands,message", [
    ("ij,jk->ik", (A34,), "name 2 operands but 1 were given"),
    ("ijk,jk->ik", (A34, B45), "names 3 dimensions but the operand has rank 2"),
    ("ij,jk->iz", (A34, B45), "output subscript 'z' does not appear"),
    ("ij,jk->ii", (A34, B45), "repeats a subscript"),
    ("i1,jk->ik", (A34, B45), "invalid subscript '1'"),
    ("ij,jk->ik->i", (A34, B45), "more than one '->'"),
    ("ij,ij->i", (A34, B45), "subscript 'i' has size 4 in operand 1 but 3"),
    ("i..j,jk->ik", (A34, B45), "malformed ellipsis"),
])
def test_einsum_bad_spec_raises_value_error(spec, operands, message):
    with pytest.raises(ValueError, match=message):
        tnp.einsum(spec, *operands)


# --- split / pad ----------------------------------------------------------------------


def test_split_and_array_split():
    for got, want in zip(tnp.split(X, 3, axis=1), np.split(X, 3, axis=1)):
        check(got, want)
    for got, want in zip(tnp.array_split(X, 4, axis=1), np.array_split(X, 4, axis=1)):
        check(got, want)
    for got, want in zip(tnp.split(X, [1, -2, 10], axis=1), np.split(X, [1, -2, 10], axis=1)):
        check(got, want)
    for got, want in zip(tnp.hsplit(X, 2), np.hsplit(X, 2)):
        check(got, want)
    for got, want in zip(tnp.vsplit(X, 2), np.vsplit(X, 2)):
        check(got, want)


def test_split_uneven_raises():
    with pytest.raises(ValueError, match="does not result in an equal division"):
        tnp.split(X, 4, axis=1)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", [1, ((1, 2), (3, 0)), ((5, 7), (9, 2)), ((0, 13), (20, 1))],
                         ids=["1", "small", "wide", "wider"])
def test_pad_matches_numpy(mode, width):
    check(tnp.pad(X, width, mode=mode), np.pad(X, width, mode=mode))


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
def test_pad_length_one_axis(mode):
    check(tnp.pad(X[:1], 3, mode=mode), np.pad(X[:1], 3, mode=mode))


def test_pad_constant_values():
    check(tnp.pad(X, 1, constant_values=7.0), np.pad(X, 1, constant_values=7.0))
    check(tnp.pad(X, (1, 2), constant_values=((1, 2), (3, 4))), np.pad(X, (1, 2), constant_values=((1, 2), (3, 4))))


def test_pad_errors():
    with pytest.raises(ValueError, match="non-negative"):
        tnp.pad(X, -1)
    with pytest.raises(NotImplementedError, match="mode 'median'"):
        tnp.pad(X, 1, mode="median")
    with pytest.raises(TypeError, match="unexpected arguments"):
        tnp.pad(X, 1, mode="edge", constant_values=1)


# --- flips, rolls, repetition ------------------------------------------------------------


def test_flips_and_rot90():
    check(tnp.flip(X), np.flip(X))
    check(tnp.flip(C, (0, 2)), np.flip(C, (0, 2)))
    check(tnp.fliplr(X), np.fliplr(X))
    check(tnp.flipud(X), np.flipud(X))
    for k in range(-1, 5):
        check(tnp.rot90(X, k), np.rot90(X, k))
    check(tnp.rot90(C, 1, (2, 0)), np.rot90(C, 1, (2, 0)))


def test_roll():
    check(tnp.roll(X, 2, 1), np.roll(X, 2, 1))
    check(tnp.roll(X, -3), np.roll(X, -3))
    check(tnp.roll(X, (1, -2), (0, 1)), np.roll(X, (1, -2), (0, 1)))
    f = toolkit.jit(lambda x, s: tnp.roll(x, s, 1))
    for s in (-8, -1, 0, 5, 13):
        check(f(X, np.int32(s)), np.roll(X, s, 1))


def test_tile_and_repeat():
    check(tnp.tile(X[0], (2, 3)), np.tile(X[0], (2, 3)))
    check(tnp.tile(X, 2), np.tile(X, 2))
    check(tnp.tile(C, (2, 1, 1, 1)), np.tile(C, (2, 1, 1, 1)))
    check(tnp.repeat(X, 2, axis=0), np.repeat(X, 2, axis=0))
    check(tnp.repeat(X, 3), np.repeat(X, 3))
    check(tnp.repeat(X, [1, 0, 2, 3], axis=0), np.repeat(X, [1, 0, 2, 3], axis=0))


def test_repeat_errors():
    with pytest.raises(ValueError, match="3 repeat counts for axis 0 of size 4"):
        tnp.repeat(X, [1, 2, 3], axis=0)
    with pytest.raises(TypeError, match="repeats must be static"):
        toolkit.jit(lambda x, r: tnp.repeat(x, r))(X, np.int32(2))


# --- take ---------------------------------------------------------------------------------


def test_take():
    check(tnp.take(X, [1, -1], axis=1), np.take(X, [1, -1], axis=1))
    check(tnp.take(X, 5), np.take(X, 5))
    check(tnp.take(X, [[0, 1], [2, 3]], axis=0), np.take(X, [[0, 1], [2, 3]], axis=0))
    check(tnp.take(X, np.array([7, 1]), axis=1, mode="wrap"), np.take(X, [7, 1], axis=1, mode="wrap"))
    check(tnp.take(X, np.array([7, 1, -1]), axis=1, mode="clip"), np.take(X, [7, 1, -1], axis=1, mode="clip"))
    traced_clip = toolkit.jit(lambda x, i: tnp.take(x, i, axis=1, mode="clip"))
    check(traced_clip(X, np.array([7, -1], np.int32)), np.take(X, [7, -1], axis=1, mode="clip"))
    filled = np.asarray(tnp.take(np.arange(5.0, dtype=np.float32), [7, 1]))
    assert np.isnan(filled[0]) and filled[1] == 1.0
    check(tnp.take(np.arange(5, dtype=np.int32), [7], fill_value=-1), [-1])


def test_take_along_axis():
    idx = np.argsort(X, axis=1)
    check(tnp.take_along_axis(X, idx, 1), np.take_along_axis(X, idx, 1))
    idx0 = np.argsort(C, axis=0)
    check(tnp.take_along_axis(C, idx0, 0), np.take_along_axis(C, idx0, 0))
    narrow = np.array([[0], [5], [2], [1]])
    check(tnp.take_along_axis(X, narrow, axis=1), np.take_along_axis(X, narrow, axis=1))
    check(tnp.take_along_axis(X, np.array([3, 0]), axis=None), np.take_along_axis(X, np.array([3, 0]), axis=None))
    f = toolkit.jit(lambda x: tnp.take_along_axis(x, tnp.argsort(x, axis=0), axis=0))
    check(f(X), np.sort(X, axis=0))


def test_take_errors():
    with pytest.raises(ValueError, match="unknown mode 'raise'"):
        tnp.take(X, [0], mode="raise")
    with pytest.raises(ValueError, match="must match the array's rank"):
        tnp.take_along_axis(X, np.array([0]), axis=1)


# --- diagonals and triangles ----------------------------------------------------------------


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3, 7])
def test_diagonal_diag_trace(offset):
    check(tnp.diagonal(X, offset), np.diagonal(X, offset))
    check(tnp.diagonal(C, offset, 1, 2), np.diagonal(C, offset, 1, 2))
    check(tnp.diagonal(C, offset, 2, 0), np.diagonal(C, offset, 2, 0))
    check(tnp.diag(X[0], offset), np.diag(X[0], offset))
    check(tnp.diag(X, offset), np.diag(X, offset))
    check(tnp.trace(X, offset), np.trace(X, offset), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_triu_tril(k):
    check(tnp.triu(X, k), np.triu(X, k))
    check(tnp.tril(C, k), np.tril(C, k))


def test_diag_errors():
    with pytest.raises(ValueError, match="1-D or 2-D"):
        tnp.diag(C)
    with pytest.raises(ValueError, match="rank at least 2"):
        tnp.triu(X[0])


# --- counting, closeness, grids, stacking -----------------------------------------------------


def test_count_nonzero():
    x = np.array([[0, 1, 2], [0, 0, 3]], np.int32)
    assert int(tnp.count_nonzero(x)) == 3
    check(tnp.count_nonzero(x, axis=1), np.count_nonzero(x, axis=1))
    check(tnp.count_nonzero(x, axis=0, keepdims=True), np.count_nonzero(x, axis=0, keepdims=True))


def test_isclose_allclose():
    a = np.array([1.0, np.inf, np.nan, 1.0, -np.inf, 0.0], np.float32)
    b = np.array([1.000001, np.inf, np.nan, 2.0, np.inf, 1e-9], np.float32)
    check(tnp.isclose(a, b), np.isclose(a, b))
    check(tnp.isclose(a, b, equal_nan=True), np.isclose(a, b, equal_nan=True))
    check(tnp.isclose(np.arange(3), np.array([0, 1, 3])), [True, True, False])
    assert bool(tnp.allclose(X, X + 1e-7))
    assert not bool(tnp.allclose(X, X + 1e-2))
    assert bool(tnp.array_equal(X, X)) and not bool(tnp.array_equal(X, X[:2]))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    xs = (np.arange(3), np.arange(4.0), np.arange(2))
    for got, want in zip(tnp.meshgrid(*xs, indexing=indexing, sparse=sparse),
                         np.meshgrid(*xs, indexing=indexing, sparse=sparse)):
        check(got, want.astype(np.asarray(got).dtype))


def test_meshgrid_bad_indexing():
    with pytest.raises(ValueError, match="indexing must be"):
        tnp.meshgrid(np.arange(2), indexing="yx")


def test_stacking_helpers():
    check(tnp.dstack([X, X]), np.dstack([X, X]))
    check(tnp.dstack([X[0], X[1]]), np.dstack([X[0], X[1]]))
    check(tnp.column_stack([X[0], X[1]]), np.column_stack([X[0], X[1]]))
    check(tnp.column_stack([X, X[:, 0]]), np.column_stack([X, X[:, 0]]))
    check(tnp.append(X, X), np.append(X, X))
    check(tnp.append(X, X[:1], axis=0), np.append(X, X[:1], axis=0))


# --- lexsort / searchsorted / index helpers -------------------------------------------------


def test_lexsort():
    k1 = np.array([1, 0, 1, 0, 1, 0])
    k2 = np.array([5.0, 3.0, 1.0, 4.0, 1.0, 3.0], np.float32)
    check(tnp.lexsort((k2, k1)), np.lexsort((k2, k1)))
    m = RNG.integers(0, 3, (2, 7))
    check(tnp.lexsort(m), np.lexsort(m))
    with pytest.raises(ValueError, match="same shape"):
        tnp.lexsort((k1, k2[:3]))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
    v = np.array([[0, 2, 2.5], [3, 9, np.nan]], np.float32)
    check(tnp.searchsorted(a, v, side), np.searchsorted(a, v, side))
    ints = np.array([1, 3, 3, 7])
    check(tnp.searchsorted(ints, 3, side), np.searchsorted(ints, 3, side))
    check(tnp.searchsorted(np.array([3, 1, 2]), np.array([2]), side, sorter=np.array([1, 2, 0])),
          np.searchsorted(np.array([3, 1, 2]), [2], side, sorter=[1, 2, 0]))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="side must be"):
        tnp.searchsorted(np.arange(3), 1, side="middle")
    with pytest.raises(ValueError, match="1-D sorted array"):
        tnp.searchsorted(np.zeros((2, 2)), 1)


def test_ix_unravel_ravel():
    x = np.arange(20).reshape(4, 5)
    check(tnp.asarray(x)[tnp.ix_([0, 2], [1, 3, 4])], x[np.ix_([0, 2], [1, 3, 4])])
    check(tnp.asarray(x)[tnp.ix_(np.array([True, False, True, False]), [4])],
          x[np.ix_(np.array([True, False, True, False]), [4])])
    for got, want in zip(tnp.unravel_index(np.array([0, 7, 19, -1]), (4, 5)), np.unravel_index([0, 7, 19, 19], (4, 5))):
        check(got, want.astype(np.asarray(got).dtype))
    check(tnp.ravel_multi_index((np.array([0, 1, 3]), np.array([4, 2, 0])), (4, 5)),
          np.ravel_multi_index(([0, 1, 3], [4, 2, 0]), (4, 5)))
    check(tnp.ravel_multi_index((np.array([5]), np.array([-1])), (4, 5), mode="wrap"),
          np.ravel_multi_index(([5], [-1]), (4, 5), mode="wrap"))
