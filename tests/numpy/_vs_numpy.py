"""Data and the check of the toolkit.numpy tests compared with numpy."""

import numpy as np

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
