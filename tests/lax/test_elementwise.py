"""``jax.lax``'s wrappers in toolkit/lax/elementwise.py (``square``, ``reciprocal``) checked against ``jax.lax``
0.10.2."""

import numpy as np
import pytest
from _oracle import assert_same as _same
from _oracle import is_weak as _weak
from _oracle import raises_like

import toolkit.lax as tl

jax = pytest.importorskip("jax")
jl = pytest.importorskip("jax.lax")
jnp = pytest.importorskip("jax.numpy")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, jnp.bfloat16, np.int32, np.complex64])
def test_square_and_reciprocal(dtype):
    x = (np.arange(1, 7).reshape(2, 3) - 3.5).astype(dtype) if dtype != np.int32 else np.arange(-3, 3, dtype=dtype)
    _same(tl.square(x), jl.square(x))
    if dtype != np.int32:
        _same(tl.reciprocal(x), jl.reciprocal(x), rtol=1e-6)
    assert _weak(tl.square(2.0)) == _weak(jl.square(2.0))
    assert _weak(tl.reciprocal(2.0)) == _weak(jl.reciprocal(2.0))


@pytest.mark.parametrize("bad", [
    lambda m: m.reciprocal(np.arange(3, dtype=np.int32)),
])
def test_errors_match_jax(bad):
    raises_like(lambda: bad(tl), lambda: bad(jl))


def test_clamp_is_weak_only_when_all_three_operands_are():
    # Found by the scipy.stats comparison: gamma.cdf(np.arange(4), 2.0) was weakly typed where JAX's is not.
    import toolkit
    strong = np.float32(0.5)
    cases = [
        lambda m, lax: lax.clamp(0.0, lax.mul(2.0, 3.0), 1.0),  # all weak
        lambda m, lax: lax.clamp(strong, lax.mul(2.0, 3.0), strong + 1),  # a weak x between strong bounds
        lambda m, lax: lax.clamp(0.0, strong * np.ones(3, np.float32), 1.0),  # weak bounds, strong x
    ]
    for case in cases:
        ours, theirs = case(toolkit.numpy, tl), case(jnp, jl)
        _same(ours, theirs)
        assert _weak(ours) == _weak(theirs)
        _same(toolkit.jit(lambda: case(toolkit.numpy, tl))(), jax.jit(lambda: case(jnp, jl))())
