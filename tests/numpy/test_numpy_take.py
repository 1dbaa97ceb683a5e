"""toolkit.numpy.take: ``take`` and ``take_along_axis`` against numpy, and their out-of-bounds modes
against ``jax.numpy`` 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _vs_jax import OOB_IDX, OOB_X, same_values
from _vs_numpy import C, X, check


def test_take():
    check(tnp.take(X, np.array([1, -1]), axis=1), np.take(X, [1, -1], axis=1))
    check(tnp.take(X, 5), np.take(X, 5))
    check(tnp.take(X, np.array([[0, 1], [2, 3]]), axis=0), np.take(X, [[0, 1], [2, 3]], axis=0))
    check(tnp.take(X, np.array([7, 1]), axis=1, mode="wrap"), np.take(X, [7, 1], axis=1, mode="wrap"))
    check(tnp.take(X, np.array([7, 1, -1]), axis=1, mode="clip"), np.take(X, [7, 1, -1], axis=1, mode="clip"))
    traced_clip = toolkit.jit(lambda x, i: tnp.take(x, i, axis=1, mode="clip"))
    check(traced_clip(X, np.array([7, -1], np.int32)), np.take(X, [7, -1], axis=1, mode="clip"))
    filled = np.asarray(tnp.take(np.arange(5.0, dtype=np.float32), np.array([7, 1])))
    assert np.isnan(filled[0]) and filled[1] == 1.0
    check(tnp.take(np.arange(5, dtype=np.int32), np.array([7]), fill_value=-1), [-1])


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
        tnp.take(X, np.array([0]), mode="raise")
    with pytest.raises(ValueError, match="must match the array's rank"):
        tnp.take_along_axis(X, np.array([0]), axis=1)


@pytest.mark.parametrize("mode", [None, "clip", "wrap", "fill"])
def test_take_matches_jax(mode, jnp):
    same_values(tnp.take(OOB_X, OOB_IDX, axis=1, mode=mode), jnp.take(OOB_X, OOB_IDX, axis=1, mode=mode))


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_take_along_axis_matches_jax(mode, jnp):
    idx = np.array([[0, 7, -1, -9]] * 5, np.int32)
    same_values(tnp.take_along_axis(OOB_X, idx, 1, mode=mode), jnp.take_along_axis(OOB_X, idx, 1, mode=mode))
