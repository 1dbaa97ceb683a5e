"""Reverse mode of ``scan`` saves each step's products for the backward loop (toolkit/ad/rules/control_flow.py):
gradients equal JAX's in the same run, the backward loop computes no forward product again, and a ys output
nobody differentiates is not stacked as zeros."""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(0)
W_X = (RNG.standard_normal((4, 12)) * 0.3).astype(np.float32)
W_H = (RNG.standard_normal((3, 12)) * 0.3).astype(np.float32)
XS = RNG.standard_normal((6, 2, 4)).astype(np.float32)


def _lstm_loss(lib, np_mod, *, reverse=False, use_ys=False):
    def loss(params, xs):
        def cell(carry, x):
            h, c = carry
            gates = x @ params["wx"] + h @ params["wh"]
            i, f, g, o = np_mod.split(gates, 4, axis=-1)
            c = lib.nn.sigmoid(f) * c + lib.nn.sigmoid(i) * np_mod.tanh(g)
            h = lib.nn.sigmoid(o) * np_mod.tanh(c)
            return (h, c), h * 2.0
        h0 = np_mod.zeros((2, 3), np.float32)
        (h, _), hs = lib.lax.scan(cell, (h0, h0), xs, reverse=reverse)
        return np_mod.sum(h ** 2) + (np_mod.sum(np_mod.sin(hs)) if use_ys else 0.0)
    return loss


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("use_ys", [False, True])
def test_lstm_gradients_match_jax(reverse, use_ys):
    params = {"wx": W_X, "wh": W_H}
    ours = toolkit.jit(toolkit.grad(_lstm_loss(toolkit, tnp, reverse=reverse, use_ys=use_ys), argnums=(0, 1)))(
        params, XS)
    theirs = jax.jit(jax.grad(_lstm_loss(jax, jnp, reverse=reverse, use_ys=use_ys), argnums=(0, 1)))(params, XS)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_backward_loop_reads_saved_products():
    loss = _lstm_loss(toolkit, tnp)
    text = toolkit.jit(toolkit.grad(loss)).trace({"wx": W_X, "wh": W_H}, XS).lower().as_text()
    # 2 forward products; 3 transposes in the backward loop (wx, wh and h's cotangent); none computed twice.
    assert text.count("stablehlo.dot_general") == 5
    theirs = jax.jit(jax.grad(_lstm_loss(jax, jnp))).lower({"wx": W_X, "wh": W_H}, XS).as_text()
    assert theirs.count("stablehlo.dot_general") == 5
    # The backward loop reads h, c, x and the two products; the dropped ys add no stacked zeros to read.
    backward = text[text.rindex("stablehlo.while"):]
    assert backward.count("stablehlo.dynamic_slice") == 5


def test_products_of_constants_and_nested_scans():
    # `w @ w` is loop-invariant (not stacked); an inner scan's products are saved by the inner rule.
    w = (RNG.standard_normal((3, 3)) * 0.4).astype(np.float32)
    xs = RNG.standard_normal((4, 5, 3)).astype(np.float32)

    def make(lib, np_mod):
        def loss(w, xs):
            def outer(h, row):
                def inner(g, x):
                    return np_mod.tanh(g @ w + x + (w @ w)[0]), g
                g, _ = lib.lax.scan(inner, h, row)
                return g, None
            h, _ = lib.lax.scan(outer, np_mod.ones((3,), np.float32), xs)
            return np_mod.sum(h)
        return loss

    ours = toolkit.grad(make(toolkit, tnp), argnums=(0, 1))(w, xs)
    theirs = jax.grad(make(jax, jnp), argnums=(0, 1))(w, xs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    text = toolkit.jit(toolkit.grad(make(toolkit, tnp))).trace(w, xs).lower().as_text()
    # The saved product stacks have the inner step's shape (3,) under the inner length 5 (and outer 4).
    assert re.search(r"tensor<5x3xf32>", text)


def test_integer_carry_and_conv_product():
    # A conv product is saved too; an integer carry (a counter) has no cotangent.
    ker = (RNG.standard_normal((2, 2, 3)) * 0.5).astype(np.float32)
    xs = RNG.standard_normal((3, 1, 2, 6)).astype(np.float32)

    def make(lib, np_mod):
        def loss(k, xs):
            def step(carry, x):
                n, acc = carry
                y = lib.lax.conv_general_dilated(x, k, (1,), "SAME")
                return (n + 1, acc + np_mod.sum(np_mod.tanh(y)) * n), None
            (n, acc), _ = lib.lax.scan(step, (np.int32(0), np.float32(0)), xs)
            return acc
        return loss

    ours = toolkit.grad(make(toolkit, tnp))(ker, xs)
    theirs = jax.grad(make(jax, jnp))(ker, xs)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)


def test_vjp_of_scan_with_explicit_zero_and_nonzero_ys_cotangents():
    def f(w, xs):
        return lax.scan(lambda h, x: (tnp.tanh(h @ w + x), (h, h * 3.0)), tnp.zeros((3,), np.float32), xs)

    def g(w, xs):
        return jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x), (h, h * 3.0)), jnp.zeros((3,), np.float32), xs)

    w = (RNG.standard_normal((3, 3)) * 0.4).astype(np.float32)
    xs = RNG.standard_normal((5, 3)).astype(np.float32)
    ct = (np.ones(3, np.float32), (np.zeros((5, 3), np.float32), np.full((5, 3), 0.5, np.float32)))
    _, back = toolkit.vjp(f, w, xs)
    _, back_jax = jax.vjp(g, w, xs)
    for a, b in zip(back(ct), back_jax(ct)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_checkpointed_body_keeps_recomputing():
    # A body wrapped in checkpoint asks for recomputation: its products are not stacked (only the carry is).
    w = (RNG.standard_normal((3, 3)) * 0.4).astype(np.float32)
    xs = RNG.standard_normal((5, 2, 3)).astype(np.float32)

    def loss(w, xs, remat):
        cell = lambda h, x: (tnp.tanh(h @ w + x), None)  # noqa: E731
        h, _ = lax.scan(toolkit.checkpoint(cell) if remat else cell, tnp.zeros((2, 3), np.float32), xs)
        return tnp.sum(h)

    saved = toolkit.jit(toolkit.grad(lambda w, xs: loss(w, xs, False))).trace(w, xs).lower().as_text()
    remat = toolkit.jit(toolkit.grad(lambda w, xs: loss(w, xs, True))).trace(w, xs).lower().as_text()
    assert saved.count("stablehlo.dynamic_update_slice") == 2  # the carry and the product
    assert remat.count("stablehlo.dynamic_update_slice") == 1  # the carry
    np.testing.assert_allclose(np.asarray(toolkit.grad(lambda w, xs: loss(w, xs, True))(w, xs)),
                               np.asarray(toolkit.grad(lambda w, xs: loss(w, xs, False))(w, xs)), rtol=1e-6)
