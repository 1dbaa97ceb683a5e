"""toolkit.random's continuous samplers beyond uniform/normal against jax.random, bitwise.

pareto, lognormal, t, chisquare, f, maxwell, double_sided_maxwell, weibull_min, rayleigh, wald,
triangular, generalized_normal, ball, multivariate_normal (cholesky, eigh, svd), orthogonal; x64; errors.
"""

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from toolkit import random as tr  # noqa: E402

COV = np.array([[2., .5, 0.], [.5, 1., .2], [0., .2, 1.5]], np.float32)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert (np.atleast_1d(a).view(np.uint8) == np.atleast_1d(b).view(np.uint8)).all(), (a, b)


CASES = {
    "pareto": lambda m, k: m.pareto(k, 3.0, (5,)),
    "lognormal": lambda m, k: m.lognormal(k, np.float32([0.5, 2.0]), (3, 2)),
    "t": lambda m, k: m.t(k, 3.0, (5,)),
    "chisquare": lambda m, k: m.chisquare(k, 3.0, (5,)),
    "f": lambda m, k: m.f(k, 3.0, 4.0, (5,)),
    "maxwell": lambda m, k: m.maxwell(k, (5,)),
    "double_sided_maxwell": lambda m, k: m.double_sided_maxwell(k, 1.0, 2.0, (5,)),
    "weibull_min": lambda m, k: m.weibull_min(k, 1.5, 2.0, (5,)),
    "rayleigh": lambda m, k: m.rayleigh(k, 2.0, (5,)),
    "wald": lambda m, k: m.wald(k, np.float32([0.5, 2.0, 9.0])),
    "triangular": lambda m, k: m.triangular(k, 0., 0.3, 1., (5,)),
    "generalized_normal": lambda m, k: m.generalized_normal(k, 1.5, (5,)),
    "ball": lambda m, k: m.ball(k, 3, 2, (4,)),
    "mvn_cholesky": lambda m, k: m.multivariate_normal(k, np.zeros(3, np.float32), COV, (4,)),
    "mvn_eigh": lambda m, k: m.multivariate_normal(k, np.ones(3, np.float32), COV, (2,), method="eigh"),
    "mvn_svd": lambda m, k: m.multivariate_normal(k, np.ones(3, np.float32), COV, method="svd"),
    "orthogonal": lambda m, k: m.orthogonal(k, 4, (2,)),
    "orthogonal_wide": lambda m, k: m.orthogonal(k, 3, (), m=5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bitwise(name):
    _same(CASES[name](tr, tr.key(7)), CASES[name](jax.random, jax.random.key(7)))


def test_low_precision_dtypes():
    k, jk = tr.PRNGKey(2), jax.random.PRNGKey(2)
    _same(tr.pareto(k, 2.0, (4,), "bfloat16"), jax.random.pareto(jk, 2.0, (4,), "bfloat16"))
    _same(tr.rayleigh(k, 1.0, (4,), "float16"), jax.random.rayleigh(jk, 1.0, (4,), "float16"))


def test_gumbel_highest_float32():
    for seed in (0, 5):
        _same(tr.gumbel(tr.PRNGKey(seed), (3, 7), mode="highest"),
              jax.random.gumbel(jax.random.PRNGKey(seed), (3, 7), mode="highest"))


def test_key_dtype():
    assert str(tr.key_dtype()) == str(jax.random.key_dtype()) == "key<fry>"
    assert tr.key_dtype("threefry2x32") == tr.key(0).dtype
    assert str(tr.key_dtype("rbg")) == str(jax.random.key_dtype("rbg")) == "key<rbg>"
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        tr.key_dtype("rbg2")


def test_orthogonal_is_orthogonal():
    q = np.asarray(tr.orthogonal(tr.key(0), 5))
    np.testing.assert_allclose(q @ q.T, np.eye(5), atol=1e-5)


@pytest.mark.x64  # 64-bit on both sides (tests/conftest.py)
def test_x64():
    k, jk = tr.PRNGKey(1), jax.random.PRNGKey(1)
    _same(tr.lognormal(k, 0.5, (3,)), jax.random.lognormal(jk, 0.5, (3,)))
    _same(tr.multivariate_normal(k, np.zeros(3), COV.astype(np.float64)),
          jax.random.multivariate_normal(jk, np.zeros(3), COV.astype(np.float64)))


def test_errors():
    k = tr.key(0)
    with pytest.raises(ValueError, match="must be a float dtype"):
        tr.pareto(k, 2.0, (2,), "int32")
    with pytest.raises(ValueError, match="method must be one of"):
        tr.multivariate_normal(k, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match="cov.shape == \\(..., n, n\\)"):
        tr.multivariate_normal(k, np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="mean.ndim >= 1"):
        tr.multivariate_normal(k, 0., np.eye(2))
    with pytest.raises(TypeError, match="concrete integer"):
        tr.ball(k, 2.5)
    with pytest.raises(ValueError, match="broadcast"):
        tr.rayleigh(k, np.ones(3, np.float32), (2,))
    with pytest.raises(TypeError, match="invalid PRNG key data"):
        tr.wald("key", 1.0)
