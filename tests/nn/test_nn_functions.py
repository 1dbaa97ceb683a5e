"""toolkit.nn vs numpy formulas, under jit and eagerly; dtypes; errors."""

import math

import ml_dtypes
import numpy as np
import pytest

import toolkit
import toolkit.nn as nn

RNG = np.random.default_rng(3)
X = (RNG.standard_normal((3, 5)) * 3).astype(np.float32)
XD = X.astype(np.float64)
_erf = np.vectorize(math.erf)


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


REFERENCES = {
    "relu": lambda v: np.maximum(v, 0),
    "relu6": lambda v: np.clip(v, 0, 6),
    "sigmoid": _sigmoid,
    "log_sigmoid": lambda v: -np.logaddexp(0, -v),
    "softplus": lambda v: np.logaddexp(v, 0),
    "soft_sign": lambda v: v / (np.abs(v) + 1),
    "silu": lambda v: v * _sigmoid(v),
    "swish": lambda v: v * _sigmoid(v),
    "elu": lambda v: np.where(v > 0, v, np.expm1(np.minimum(v, 0))),
    "celu": lambda v: np.maximum(v, 0) + np.expm1(np.minimum(v, 0)),
    "selu": lambda v: 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * np.expm1(np.minimum(v, 0))),
    "leaky_relu": lambda v: np.where(v >= 0, v, 0.01 * v),
    "hard_tanh": lambda v: np.clip(v, -1, 1),
    "hard_sigmoid": lambda v: np.clip(v + 3, 0, 6) / 6,
    "hard_swish": lambda v: v * np.clip(v + 3, 0, 6) / 6,
    "gelu": lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_matches_numpy(name):
    fn = getattr(nn, name)
    out = toolkit.jit(fn)(X)
    assert out.dtype == np.float32 and out.shape == X.shape
    np.testing.assert_allclose(out, REFERENCES[name](XD), rtol=1e-5, atol=1e-6)


def test_gelu_exact():
    np.testing.assert_allclose(nn.gelu(X, approximate=False), 0.5 * XD * (1 + _erf(XD / np.sqrt(2))), rtol=1e-5,
                               atol=1e-6)


def test_glu():
    np.testing.assert_allclose(nn.glu(X[:, :4]), XD[:, :2] * _sigmoid(XD[:, 2:4]), rtol=1e-5)
    with pytest.raises(ValueError, match="even size"):
        nn.glu(X)


def _softmax(v, axis):
    e = np.exp(v - v.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_softmax_and_log_softmax(axis):
    np.testing.assert_allclose(toolkit.jit(lambda v: nn.softmax(v, axis=axis))(X), _softmax(XD, axis), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(nn.log_softmax(X, axis=axis), np.log(_softmax(XD, axis)), rtol=1e-5, atol=1e-5)


def test_softmax_stable_for_large_inputs_and_where_mask():
    big = np.array([1000.0, 1001.0], np.float32)
    np.testing.assert_allclose(nn.softmax(big), _softmax(big.astype(np.float64), -1), rtol=1e-6)
    mask = np.array([[True, False, True, True, False]] * 3)
    out = np.asarray(nn.softmax(X, where=mask))
    assert np.all(out[~mask] == 0)
    np.testing.assert_allclose(out.sum(-1), 1, rtol=1e-6)
    assert np.all(np.asarray(nn.log_softmax(X, where=mask))[~mask] == -np.inf)


def test_logsumexp():
    np.testing.assert_allclose(nn.logsumexp(X, axis=1), np.log(np.exp(XD).sum(1)), rtol=1e-6)
    np.testing.assert_allclose(nn.logsumexp(X), np.log(np.exp(XD).sum()), rtol=1e-6)
    assert nn.logsumexp(X, axis=0, keepdims=True).shape == (1, 5)
    assert abs(float(nn.logsumexp(np.array([1000.0, 1000.0], np.float32))) - (1000 + math.log(2))) < 1e-3
    b = RNG.standard_normal((3, 5)).astype(np.float32)
    total = (b * np.exp(XD)).sum(1)
    value, sign = nn.logsumexp(X, axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(value, np.log(np.abs(total)), rtol=1e-5)
    np.testing.assert_array_equal(sign, np.sign(total))
    plain = np.asarray(nn.logsumexp(X, axis=1, b=b))
    np.testing.assert_array_equal(np.isnan(plain), total < 0)


def test_one_hot():
    idx = np.array([[0, 2], [3, 1]], np.int32)
    out = toolkit.jit(lambda i: nn.one_hot(i, 3))(idx)
    assert out.dtype == np.float32 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out, np.eye(3, dtype=np.float32)[np.clip(idx, 0, 2)] * (idx < 3)[..., None])
    out0 = nn.one_hot(idx, 4, axis=0, dtype=np.int32)
    assert out0.shape == (4, 2, 2) and out0.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out0).argmax(0), idx)
    with pytest.raises(ValueError, match="non-negative"):
        nn.one_hot(idx, -1)


def test_standardize_is_layer_norm():
    want = (XD - XD.mean(-1, keepdims=True)) / np.sqrt(XD.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.standardize(X), want, rtol=1e-4, atol=1e-5)


def test_integer_input_and_bfloat16_as_jax():
    # As jax.nn.sigmoid (lax.logistic): integers are refused, not converted.
    with pytest.raises(TypeError, match="logistic requires a floating or complex operand, got int32"):
        nn.sigmoid(np.array([0, 1], np.int32))
    assert nn.relu6(np.array([0, 9], np.int32)).dtype == np.float32  # min(max(x, 0), 6.0)
    xb = X.astype(ml_dtypes.bfloat16)
    for fn in (nn.gelu, nn.softmax, nn.silu, nn.log_softmax):
        out = fn(xb)
        assert out.dtype == ml_dtypes.bfloat16


def test_transformer_style_block_under_jit():
    """layernorm -> attention with softmax -> GELU MLP, vs numpy."""
    d, t = 8, 4
    x = RNG.standard_normal((t, d)).astype(np.float32)
    wq, wk, wv, w1, w2 = (RNG.standard_normal((d, d)).astype(np.float32) * 0.3 for _ in range(5))

    def block(x, wq, wk, wv, w1, w2):
        h = nn.standardize(x)
        q, k, v = h @ wq, h @ wk, h @ wv
        att = nn.softmax(q @ k.T / np.sqrt(d).astype(np.float32), axis=-1)
        h = x + att @ v
        return h + nn.gelu(nn.standardize(h) @ w1) @ w2

    def ref(x, wq, wk, wv, w1, w2):
        ln = lambda v: (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-5)
        h = ln(x)
        att = _softmax((h @ wq) @ (h @ wk).T / np.sqrt(d), -1)
        h = x + att @ (h @ wv)
        return h + REFERENCES["gelu"](ln(h) @ w1) @ w2

    args = (x, wq, wk, wv, w1, w2)
    np.testing.assert_allclose(toolkit.jit(block)(*args), ref(*[a.astype(np.float64) for a in args]), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("shape", [(0, 3), (2, 0)])
def test_softmax_and_logsumexp_of_empty_arrays_are_jaxs(shape):
    # JAX's maxima start at -inf: an empty array's softmax is empty and its logsumexp -inf (toolkit raised
    # numpy's zero-size reduction error).
    pytest.importorskip("jax")
    import jax
    import jax.scipy.special  # noqa: F401 - read below
    import toolkit.scipy.special  # noqa: F401
    empty = np.zeros(shape, np.float32)
    for call in (lambda L: L.nn.softmax(empty, axis=None), lambda L: L.nn.softmax(empty),
                 lambda L: L.nn.log_softmax(empty, axis=0), lambda L: L.nn.logsumexp(empty),
                 lambda L: L.nn.logsumexp(empty, axis=1), lambda L: L.scipy.special.softmax(empty),
                 lambda L: L.scipy.special.logsumexp(empty, axis=0, b=np.ones_like(empty))):
        ours, theirs = np.asarray(call(toolkit)), np.asarray(call(jax))
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
