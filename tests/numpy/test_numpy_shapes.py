"""toolkit.numpy.shapes against numpy (split, pad, flips, rolls, repetition, stacking) and against
``jax.numpy`` 0.10.2 (the array-API helpers, ``rollaxis``, ``block``), errors included."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import RNG, assert_like_jax, compare_with_jax
from _vs_numpy import C, X, check


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


def test_pad_errors(jnp):
    """pad's refusals are JAX's (more, for every mode, in test_pad_modes_as_jax.py)."""
    for width, kwargs in [(-1, {}), (1, {"mode": "median_of_three"}), (1, {"mode": "edge", "constant_values": 1}),
                          (((1, 2),) * 3, {}), (1.0, {"mode": "wrap"}), (1, {"mode": "reflect", "reflect_type": [0]})]:
        raises_like(lambda: tnp.pad(X, width, **kwargs), lambda: jnp.pad(X, width, **kwargs))
    with pytest.raises(ValueError, match="reflect_type must be 'even' or 'odd', got 'foo'"):  # JAX: an assert
        tnp.pad(X, 1, mode="reflect", reflect_type="foo")


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("width", [1, 3, 12, (2, 9)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_pad_odd_reflections_are_jaxs(mode, width, dtype, jnp):
    # reflect_type="odd": each reflection is 2 * edge - x, and wide pads reflect what was padded so far
    for shape in [(5,), (1,), (2,), (3, 4)]:
        a = (np.arange(np.prod(shape)) * 3 % 7).reshape(shape).astype(dtype)
        assert_like_jax(tnp.pad(a, width, mode=mode, reflect_type="odd"),
                        jnp.pad(a, width, mode=mode, reflect_type="odd"), tol=0)


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
    check(tnp.roll(X, [], ()), np.roll(X, [], ()))  # no shifts, no axes: unchanged (was a ZeroDivisionError)
    check(tnp.roll(X, [3], ()), np.roll(X, [3], ()))
    f = toolkit.jit(lambda x, s: tnp.roll(x, s, 1))
    for s in (-8, -1, 0, 5, 13):
        check(f(X, np.int32(s)), np.roll(X, s, 1))


def test_roll_converts_other_shift_dtypes_as_jax():
    # JAX converts a shift of any dtype to int32 (a float truncates toward zero, True is 1); toolkit refused them.
    jnp = pytest.importorskip("jax.numpy")
    x = np.arange(5.0, dtype=np.float32)
    for shift in (-1.5, 2.7, np.float32(-0.5), True, np.array([1.5, 0.5, 2.0], np.float32)):
        check(tnp.roll(x, shift), np.asarray(jnp.roll(x, shift)))
    check(toolkit.jit(lambda s: tnp.roll(x, s))(1.7), np.roll(x, 1))


def test_tile_and_repeat():
    check(tnp.tile(X[0], (2, 3)), np.tile(X[0], (2, 3)))
    check(tnp.tile(X, 2), np.tile(X, 2))
    check(tnp.tile(C, (2, 1, 1, 1)), np.tile(C, (2, 1, 1, 1)))
    check(tnp.repeat(X, 2, axis=0), np.repeat(X, 2, axis=0))
    check(tnp.repeat(X, 3), np.repeat(X, 3))
    check(tnp.repeat(X, np.array([1, 0, 2, 3]), axis=0), np.repeat(X, [1, 0, 2, 3], axis=0))


def test_repeat_errors():
    with pytest.raises(ValueError, match="3 repeat counts for axis 0 of size 4"):
        tnp.repeat(X, np.array([1, 2, 3]), axis=0)
    with pytest.raises(TypeError, match="repeats must be static"):
        toolkit.jit(lambda x, r: tnp.repeat(x, r))(X, np.int32(2))


def test_stacking_helpers():
    check(tnp.dstack([X, X]), np.dstack([X, X]))
    check(tnp.dstack([X[0], X[1]]), np.dstack([X[0], X[1]]))
    check(tnp.column_stack([X[0], X[1]]), np.column_stack([X[0], X[1]]))
    check(tnp.column_stack([X, X[:, 0]]), np.column_stack([X, X[:, 0]]))
    check(tnp.append(X, X), np.append(X, X))
    check(tnp.append(X, X[:1], axis=0), np.append(X, X[:1], axis=0))


def test_shape_helpers(jnp):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    compare_with_jax("permute_dims", x, (2, 0, 1))
    compare_with_jax("matrix_transpose", x)
    compare_with_jax("unstack", x, axis=1)
    compare_with_jax("unstack", x)
    for a in (3.0, np.ones(3, np.float32), np.ones((2, 3), np.int32), x):
        compare_with_jax("atleast_3d", a)
    assert_like_jax(tnp.atleast_3d(np.ones(2, np.float32), 1.0), jnp.atleast_3d(np.ones(2, np.float32), 1.0))
    for axis, start in ((2, 0), (0, 3), (1, -1), (-1, 1)):
        compare_with_jax("rollaxis", x, axis, start)
    a, b = np.ones((2, 2), np.float32), np.zeros((2, 3), np.int32)
    compare_with_jax("block", [[a, b], [b[:, :2] + 1, np.full((2, 3), 5.0, np.float32)]])
    compare_with_jax("block", [np.ones(2, np.float32), 3.0, np.arange(3, dtype=np.int32)])
    compare_with_jax("block", np.ones(3, np.float32))
    raises_like(lambda: tnp.matrix_transpose(np.ones(3)), lambda: jnp.matrix_transpose(np.ones(3)))
    raises_like(lambda: tnp.unstack(np.float32(1)), lambda: jnp.unstack(np.float32(1)))
