"""lax.ragged_dot (toolkit/lax/ragged_dot.py) against JAX in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(4)
L = RNG.standard_normal((7, 4)).astype(np.float32)
W = RNG.standard_normal((3, 4, 5)).astype(np.float32)


@pytest.mark.parametrize("sizes", [[2, 0, 3], [7, 0, 0], [1, 2, 4], [0, 0, 0]])
def test_values_like_jax(sizes):
    gs = np.array(sizes, np.int32)
    assert_same(toolkit.jit(lax.ragged_dot)(L, W, gs), jax.jit(jlax.ragged_dot)(L, W, gs), rtol=1e-5, atol=1e-6)


def test_single_group_preferred_type_and_grads():
    gs = np.array([5], np.int32)
    assert_same(lax.ragged_dot(L, W[:1], gs, preferred_element_type=np.float32),
                jlax.ragged_dot(L, W[:1], gs, preferred_element_type=np.float32), rtol=1e-5, atol=1e-6)
    gs3 = np.array([2, 1, 3], np.int32)
    f = lambda R: lambda lhs, rhs: (R.ragged_dot(lhs, rhs, gs3) ** 2).sum()  # noqa: E731
    for o, t in zip(toolkit.jit(toolkit.grad(f(lax), (0, 1)))(L, W), jax.grad(f(jlax), (0, 1))(L, W)):
        assert_same(o, t, rtol=1e-4, atol=1e-5)


def test_errors():
    gs = np.array([2, 0, 3], np.int32)
    with pytest.raises(TypeError, match="expected lhs \\(m, k\\)"):
        lax.ragged_dot(L[0], W, gs)
    with pytest.raises(TypeError, match="contracting dimensions differ"):
        lax.ragged_dot(L[:, :3], W, gs)
    with pytest.raises(TypeError, match="group_sizes has 2 entries for 3 groups"):
        lax.ragged_dot(L, W, gs[:2])
    with pytest.raises(TypeError, match="integer dtype"):
        lax.ragged_dot(L, W, gs.astype(np.float32))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(L, W, gs, group_offset=np.int32(0))
