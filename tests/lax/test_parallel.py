"""``toolkit.lax``'s collectives outside ``shard_map``: over no axis they return the value, as JAX's do."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit import lax

X = np.arange(6, dtype=np.float32).reshape(2, 3)

NO_AXIS = {
    "psum": lambda L, x: L.psum(x, ()),
    "pmean": lambda L, x: L.pmean(x, ()),
    "pmax": lambda L, x: L.pmax(x, ()),
    "pmin": lambda L, x: L.pmin(x, ()),
    "all_gather": lambda L, x: L.all_gather(x, ()),
    "psum_scatter": lambda L, x: L.psum_scatter(x, ()),
}


@pytest.mark.parametrize("name", sorted(NO_AXIS))
def test_a_collective_over_no_axis_is_the_identity(name):
    f = NO_AXIS[name]
    np.testing.assert_array_equal(np.asarray(f(lax, X)), X)
    np.testing.assert_array_equal(np.asarray(toolkit.jit(lambda x: f(lax, x))(X)), X)  # traced, outside shard_map


@pytest.mark.parametrize("name", sorted(NO_AXIS))
def test_over_no_axis_as_jax(name):
    jax = pytest.importorskip("jax")
    f = NO_AXIS[name]
    np.testing.assert_array_equal(np.asarray(f(lax, X)), np.asarray(f(jax.lax, jax.numpy.asarray(X))))


def test_axis_size_of_no_axis_is_one():
    assert lax.axis_size(()) == 1


def test_an_unbound_axis_still_names_itself():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(X, "i")
