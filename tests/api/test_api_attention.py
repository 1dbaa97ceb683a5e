"""toolkit.nn.dot_product_attention beside jax.nn.dot_product_attention (its "xla" implementation)."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.nn as tnn

jax = pytest.importorskip("jax")

RNG = np.random.default_rng(0)
Q = RNG.normal(size=(2, 5, 4, 8)).astype(np.float32)
K = RNG.normal(size=(2, 7, 2, 8)).astype(np.float32)
V = RNG.normal(size=(2, 7, 2, 8)).astype(np.float32)
BIAS = RNG.normal(size=(2, 4, 5, 7)).astype(np.float32)
MASK = RNG.random((2, 1, 5, 7)) > 0.3

CASES = {
    "plain_xla_scale": dict(implementation="xla", scale=0.5),
    "causal_residual": dict(return_residual=True, is_causal=True),
    "bias_mask": dict(bias=BIAS, mask=MASK),
    "bias_one_head_window_int": dict(bias=BIAS[:, :1], local_window_size=1),
    "lengths_window": dict(query_seq_lengths=np.array([3, 5], np.int32),
                           key_value_seq_lengths=np.array([7, 4], np.int32), local_window_size=(2, 1)),
}


def _pair(out):
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("name", CASES)
def test_values_match_jax(name):
    kw = CASES[name]
    # Jitted on both sides: one compilation each instead of one per eager op (the file stays fast).
    got = _pair(toolkit.jit(lambda q, k, v: tnn.dot_product_attention(q, k, v, **kw))(Q, K, V))
    want = _pair(jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, **kw))(Q, K, V))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_three_dim_bfloat16_inputs_match_jax():
    import ml_dtypes

    q, k, v = (a[0].astype(ml_dtypes.bfloat16) for a in (Q, K, V))  # (T, N, H): no batch dimension
    got = toolkit.jit(tnn.dot_product_attention)(q, k, v)
    want = jax.jit(jax.nn.dot_product_attention)(q, k, v)
    assert got.shape == want.shape == q.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=2e-2, atol=2e-2)


def test_gradient_matches_jax():
    def loss(nn_module, np_module):
        return lambda q: np_module.sum(nn_module.dot_product_attention(q, K, V, is_causal=True) ** 2)

    got = toolkit.jit(toolkit.grad(loss(tnn, toolkit.numpy)))(Q)
    want = jax.jit(jax.grad(loss(jax.nn, jax.numpy)))(Q)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("args,kw,error,match", [
    ((Q, K, V[:, :, :1]), {}, ValueError, "value shape"),
    ((Q[..., :4], K, V), {}, ValueError, "query shape"),
    ((Q, K, V.astype(np.float16)), {}, ValueError, "value dtype"),
    ((Q[:, :, :3], K, V), {}, ValueError, "multiple of key/value heads"),
    ((Q, K, V), dict(mask=MASK.astype(np.int32)), ValueError, "mask dtype"),
    ((Q, K, V), dict(query_seq_lengths=np.array([1, 2], np.float32)), ValueError, "query_seq_lengths"),
    ((Q, K, V), dict(implementation="flash"), ValueError, "Unsupported implementation"),
    ((Q, K, V), dict(implementation="cudnn"), NotImplementedError, "cudnn"),
])
def test_errors_as_jax(args, kw, error, match):
    with pytest.raises(error, match=match):
        tnn.dot_product_attention(*args, **kw)
    if error is ValueError:
        with pytest.raises(ValueError):
            jax.nn.dot_product_attention(*args, **kw)
