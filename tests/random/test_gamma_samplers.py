"""toolkit.random's gamma family against jax.random (the oracle): the same bits for the same keys.

gamma, loggamma, beta, dirichlet bitwise eagerly and under vmap (keys batched);
gradients with respect to the shape parameters (JAX's implicit reparameterization) to float rounding;
``random_gamma_grad`` against ``jax.lax.random_gamma_grad``; x64; errors.
"""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit import random as tr  # noqa: E402
from toolkit.random.gamma_samplers import random_gamma_grad  # noqa: E402

A = np.array([0.05, 0.3, 1.0, 2.5, 7.0], np.float32)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert (np.atleast_1d(a).view(np.uint8) == np.atleast_1d(b).view(np.uint8)).all(), (a, b)


def _keys(seed):
    return tr.PRNGKey(seed), jax.random.PRNGKey(seed)


def test_gamma_loggamma_bitwise():
    for seed in (0, 2**31 + 5):
        tk, jk = _keys(seed)
        _same(tr.gamma(tk, A), jax.random.gamma(jk, A))
        _same(tr.loggamma(tk, A), jax.random.loggamma(jk, A))


def test_gamma_float16_typed_keys_empty():
    k, jk = tr.key(3), jax.random.key(3)
    _same(tr.gamma(k, 1.5, (4,), "float16"), jax.random.gamma(jk, 1.5, (4,), "float16"))
    _same(tr.gamma(k, np.zeros((0,), np.float32)), jax.random.gamma(jk, np.zeros((0,), np.float32)))


def test_beta_dirichlet_bitwise():
    tk, jk = _keys(1)
    _same(tr.beta(tk, A, A[::-1]), jax.random.beta(jk, A, A[::-1]))
    alpha = np.array([[0.2, 1.0, 3.0], [5.0, 0.5, 0.5]], np.float32)
    _same(tr.dirichlet(tk, alpha), jax.random.dirichlet(jk, alpha))


def test_gamma_under_vmap():
    # keys batched, parameters not: JAX broadcasts the parameters first (toolkit matches its rounding)
    ks, jks = tr.split(tr.PRNGKey(3), 3), jax.random.split(jax.random.PRNGKey(3), 3)
    _same(toolkit.vmap(lambda k: tr.gamma(k, A))(ks), jax.vmap(lambda k: jax.random.gamma(k, A))(jks))


def test_gradients_match_jax():
    tk, jk = _keys(0)
    cases = [
        (lambda a: tnp.sum(tr.gamma(tk, a)), lambda a: jnp.sum(jax.random.gamma(jk, a))),
        (lambda a: tnp.sum(tr.beta(tk, a, 2.0)), lambda a: jnp.sum(jax.random.beta(jk, a, 2.0))),
    ]
    for f, g in cases:
        np.testing.assert_allclose(toolkit.grad(f)(A), jax.grad(g)(A), rtol=2e-6, atol=1e-7)


def test_random_gamma_grad_matches_lax():
    a = np.array([0.1, 0.5, 1.0, 3.0, 10.0, 0.0, -1.0, 2.0], np.float32)
    x = np.array([0.01, 0.7, 2.0, 5.0, 8.0, 1.0, 1.0, 0.0], np.float32)
    got, want = np.asarray(random_gamma_grad(a, x)), np.asarray(jax.lax.random_gamma_grad(a, x))
    np.testing.assert_allclose(got, want, rtol=2e-6)
    with pytest.raises(TypeError, match="one shape and dtype"):
        random_gamma_grad(a, x[:3])


@pytest.mark.x64  # 64-bit on both sides (tests/conftest.py)
def test_gamma_x64():
    tk, jk = _keys(4)
    _same(tr.gamma(tk, 2.5, (4,)), jax.random.gamma(jk, 2.5, (4,)))


def test_errors():
    tk, jk = _keys(0)
    with pytest.raises(ValueError, match="must be a float dtype"):
        tr.gamma(tk, 1.0, (2,), "int32")
    with pytest.raises(ValueError, match="broadcast"):
        tr.gamma(tk, A, (3,))
    with pytest.raises(ValueError, match="alpha.ndim >= 1"):
        tr.dirichlet(tk, 1.0)
    with pytest.raises(ValueError, match="accepts a single key"):
        tr.gamma(tr.split(tk, 2), 1.0)
    with pytest.raises(toolkit.core.dtypes.TypePromotionError, match="cannot safely cast"):
        tr.beta(tk, np.float32(1), np.float32(2), (2,), "float16")
