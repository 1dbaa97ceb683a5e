"""``batch_matmul`` (toolkit/lax/linalg.py, ``jax.lax``'s wrapper over ``dot_general``) checked against
``jax.lax`` 0.10.2."""

import numpy as np
import pytest
from _oracle import assert_same as _same
from _oracle import raises_like

import toolkit.lax as tl

jax = pytest.importorskip("jax")
jl = pytest.importorskip("jax.lax")

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("bad", [
    lambda m: m.batch_matmul(np.ones((2, 3)), np.ones((2, 3, 4))),
    lambda m: m.batch_matmul(np.ones(3), np.ones(3)),
])
def test_errors_match_jax(bad):
    raises_like(lambda: bad(tl), lambda: bad(jl))


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (2, 2, 4, 1))])
def test_batch_matmul(shapes):
    a = RNG.standard_normal(shapes[0]).astype(np.float32)
    b = RNG.standard_normal(shapes[1]).astype(np.float32)
    _same(tl.batch_matmul(a, b), jl.batch_matmul(a, b), rtol=1e-5, atol=1e-5)
    ai, bi = (a * 3).astype(np.int32), (b * 3).astype(np.int32)
    _same(tl.batch_matmul(ai, bi), jl.batch_matmul(ai, bi))
