"""toolkit.random's discrete samplers against jax.random, bitwise: poisson (Knuth and rejection),
binomial (inversion and BTRS, with its NaN/inf edge cases), multinomial, geometric; x64; errors."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import toolkit  # noqa: E402
from toolkit import random as tr  # noqa: E402


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert (np.atleast_1d(a).view(np.uint8) == np.atleast_1d(b).view(np.uint8)).all(), (a, b)


LAM = np.array([0., 0.5, 3., 12., 100.], np.float32)


def test_poisson():
    for seed in (0, 9):
        k, jk = tr.key(seed), jax.random.key(seed)
        _same(tr.poisson(k, LAM, (2, 5)), jax.random.poisson(jk, LAM, (2, 5)))
    _same(tr.poisson(tr.PRNGKey(1), 4.0, (3,), "int16"), jax.random.poisson(jax.random.PRNGKey(1), 4.0, (3,), "int16"))


def test_binomial():
    n = np.array([5., 20., 100., 1000., np.inf, -1., 7.], np.float32)
    p = np.array([.3, .7, .5, .9, .5, .5, np.nan], np.float32)
    _same(tr.binomial(tr.key(1), n, p), jax.random.binomial(jax.random.key(1), n, p))


def test_multinomial_geometric():
    k, jk = tr.key(2), jax.random.key(2)
    p = np.array([.2, .3, .5], np.float32)
    _same(tr.multinomial(k, 20., p), jax.random.multinomial(jk, 20., p))
    _same(tr.geometric(k, np.float32([0.1, 0.5, 0.9])), jax.random.geometric(jk, np.float32([0.1, 0.5, 0.9])))


def test_poisson_under_vmap():
    ks, jks = tr.split(tr.PRNGKey(3), 2), jax.random.split(jax.random.PRNGKey(3), 2)
    _same(toolkit.vmap(lambda k: tr.poisson(k, 2.5, (3,)))(ks), jax.vmap(lambda k: jax.random.poisson(k, 2.5, (3,)))(jks))


@pytest.mark.x64  # 64-bit on both sides (tests/conftest.py)
def test_x64_default_int64():
    k, jk = tr.PRNGKey(4), jax.random.PRNGKey(4)
    _same(tr.geometric(k, 0.3, (4,)), jax.random.geometric(jk, 0.3, (4,)))


def test_errors():
    k = tr.key(0)
    with pytest.raises(ValueError, match="must be an int dtype"):
        tr.poisson(k, 1.0, (2,), "float32")
    with pytest.raises(ValueError, match="must be an int dtype"):
        tr.geometric(k, 0.5, (2,), "float32")
    with pytest.raises(ValueError, match="must be a float dtype"):
        tr.binomial(k, 5., 0.5, (2,), "int32")
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        tr.binomial(k, [5., 6.], 0.5)
