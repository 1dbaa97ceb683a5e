"""Arguments at the edge of what a function takes, against JAX 0.10.2 (found by a sweep of every ``jax.numpy``
function over scalars, empty arrays and every dtype): scalar keys for ``lexsort``, one size for ``unravel_index``,
a 1-D array for ``column_stack``, sample points of another rank than ``y`` for ``trapezoid``, boolean indices for
``take``."""

import numpy as np
import pytest

import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import assert_like_jax

RANKS = np.arange(3.0) * np.ones((2, 3), np.float32)


@pytest.mark.parametrize("call", [
    lambda L: L.lexsort(np.float16([1, 2, 3, 4])),  # a 1-D array is a sequence of scalar keys: 0
    lambda L: L.unravel_index(np.array([3, -1, 12, -13]), 5),
    lambda L: L.unravel_index(7, (3, 4)),
    lambda L: L.unravel_index(np.array([7, 200], np.uint8), (4, 4)),  # toolkit clamped by -16 as uint8: (3, 3)
    lambda L: L.unravel_index(np.array([1, 200, 3], np.uint8), np.int32(3)),  # int32 coordinates, as JAX's
    lambda L: L.unravel_index(np.arange(-30, 30, dtype=np.int16), (2, 3, 4)),
    lambda L: L.unravel_index(np.float32([2.0, 7.5]), (2, 3)),  # JAX's divmod takes floats too
    lambda L: L.column_stack(np.float16([1, 2, 3, 4])),  # its elements are 1x1 columns
    lambda L: L.column_stack(np.ones((2, 3), np.float32)),
    lambda L: L.trapezoid(np.arange(3, dtype=np.int8), RANKS),  # x's own last axis, not y's rank's
    lambda L: L.trapezoid(np.ones((3, 2), np.float32), RANKS.T, axis=0),
    lambda L: L.trapezoid(np.ones((2, 3), np.float32), np.arange(3.0)),
    lambda L: L.take(np.arange(3.0), np.array([True, False])),  # True and False index 1 and 0
    lambda L: L.roll(RANKS, [1, 2]),  # several shifts of one axis add up (numpy's)
    lambda L: L.roll(RANKS, np.int8([1, -1, 2]), 1),
    lambda L: L.roll(RANKS, (1, 3), (1, 0)),
    lambda L: L.take(np.arange(3.0), L.asarray(np.array([True, False])), mode="fill"),
])
def test_edge_arguments_are_jaxs(call, jnp):
    ours, theirs = call(tnp), call(jnp)
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for got, want in zip(ours, theirs):
            assert_like_jax(got, want)
    else:
        assert_like_jax(ours, theirs)


def test_edge_argument_errors_are_jaxs(jnp):
    raises_like(lambda: tnp.unravel_index(3, [(2, 3)]), lambda: jnp.unravel_index(3, [(2, 3)]))
    raises_like(lambda: tnp.take(np.arange(3.0), np.array([True]), mode="clip"),
                lambda: jnp.take(np.arange(3.0), np.array([True]), mode="clip"))
    raises_like(lambda: tnp.roll(RANKS, [[1]]), lambda: jnp.roll(RANKS, [[1]]))
    empty = np.zeros((0, 3), np.float32)
    for mode in (None, "clip", "wrap"):  # an empty axis has nothing to take, in every mode
        raises_like(lambda: tnp.take(empty, np.array([0, 1]), axis=0, mode=mode),
                    lambda: jnp.take(empty, np.array([0, 1]), axis=0, mode=mode))
    with pytest.raises(ValueError):  # a 0-d x has no differences (JAX's type; toolkit's wording)
        tnp.trapezoid(np.int8([1, 2, 3]), np.float32(2.0))


def test_boolean_take_indices_wrap_as_numpy():
    # JAX 0.10 wraps a boolean index by a boolean size (True): every index becomes 0. toolkit wraps 1 and 0 as
    # numpy does (docs/differences-from-jax.md).
    np.testing.assert_array_equal(np.asarray(tnp.take(np.arange(3.0), np.array([True, False]), mode="wrap")),
                                  np.take(np.arange(3.0), np.array([True, False]), mode="wrap"))
