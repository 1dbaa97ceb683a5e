"""Functions that join or fill with values of several types, against JAX in this process (a pass of 15 such
functions over the divergence sweep's pairs of inputs found these): lists of numpy values typed by JAX's lattice,
Python ints wrapped into unsigned fills, and clip's refusal of complex values."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _same(ours, theirs):
    assert (ours.dtype, ours.shape, bool(ours.weak_type)) == (theirs.dtype, theirs.shape, bool(theirs.aval.weak_type))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("values", [
    [np.float16([1, 2]), np.int32([3, 4])], [np.uint32([1, 2]), np.float16([3, 4])], [np.float16(1), 2.5],
    [np.arange(2, dtype=np.int8), np.arange(2, dtype=np.uint8)], [[np.int8(1)], [2]], [1, 2.5], [True, 2],
], ids=str)
def test_array_of_a_list_of_numpy_values_takes_jaxs_type(values):
    _same(tnp.array(values), jnp.array(values))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.int8])
def test_full_like_wraps_a_python_int_as_jax(dtype):
    a = np.arange(3, dtype=dtype)
    _same(tnp.full_like(a, -2), jnp.full_like(a, -2))
    _same(tnp.full((3,), -2, dtype), jnp.full((3,), -2, dtype))


@pytest.mark.parametrize("args", [(np.array([1 + 1j, 2]), 0, None), (np.arange(3.0), 1j, None),
                                  (np.arange(3.0), None, np.complex64(2)), (1j, None, 3)], ids=str)
def test_clip_refuses_complex_values_as_jax(args):
    with pytest.raises(ValueError) as theirs:
        jnp.clip(*args)
    with pytest.raises(ValueError) as ours:
        tnp.clip(*args)
    assert str(ours.value) == str(theirs.value)
