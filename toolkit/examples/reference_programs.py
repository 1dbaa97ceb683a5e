"""Reference programs used by the tests and benchmarks.

Each program is written once against a *library* ``lib`` that has ``numpy``,
``lax`` and ``nn`` attributes — ``toolkit`` itself, or ``jax`` (the benches
run the very same code under ``jax.jit`` to compare). ``make_inputs(rng)``
returns float32 arguments; ``reference(...)`` computes the expected result
with plain numpy.

Example::

    import toolkit
    program = PROGRAMS["mlp"]
    args = program.make_inputs(np.random.default_rng(0))
    out = toolkit.jit(program.build(toolkit))(*args)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class ReferenceProgram:
    name: str
    build: Callable[[Any], Callable[..., Any]]  # lib -> function
    make_inputs: Callable[[np.random.Generator], tuple]
    reference: Callable[..., np.ndarray]
    rtol: float  # float32 tolerance against the numpy reference


# --- a 3-layer MLP -----------------------------------------------------------------

def _mlp(lib):
    jnp = lib.numpy

    def mlp(params, x):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return x @ w + b
    return mlp


def _mlp_inputs(rng, sizes=(512, 512, 512, 512), batch=64):
    params = [((rng.standard_normal((m, n)) / math.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    return params, rng.standard_normal((batch, sizes[0])).astype(np.float32)


def _mlp_reference(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


# --- a transformer block -----------------------------------------------------------

def _transformer(lib):
    jnp, nn = lib.numpy, lib.nn

    def layer_norm(x, scale, bias):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * scale + bias

    def block(params, x):
        heads = 4
        batch, seq, dim = x.shape
        h = layer_norm(x, params["ln1_scale"], params["ln1_bias"])
        qkv = h @ params["w_qkv"]
        q, k, v = qkv[..., :dim], qkv[..., dim:2 * dim], qkv[..., 2 * dim:]
        def split(t):
            return jnp.transpose(t.reshape(batch, seq, heads, dim // heads), (0, 2, 1, 3))

        q, k, v = split(q), split(k), split(v)
        scores = (q @ jnp.swapaxes(k, -1, -2)) / math.sqrt(dim // heads)
        attention = nn.softmax(scores, axis=-1) @ v
        attention = jnp.transpose(attention, (0, 2, 1, 3)).reshape(batch, seq, dim)
        x = x + attention @ params["w_out"]
        h = layer_norm(x, params["ln2_scale"], params["ln2_bias"])
        return x + nn.gelu(h @ params["w_up"], approximate=True) @ params["w_down"]
    return block


def _transformer_inputs(rng, batch=2, seq=16, dim=64):
    def w(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[0])).astype(np.float32)
    params = {"ln1_scale": np.ones(dim, np.float32), "ln1_bias": np.zeros(dim, np.float32),
              "ln2_scale": np.ones(dim, np.float32), "ln2_bias": np.zeros(dim, np.float32),
              "w_qkv": w(dim, 3 * dim), "w_out": w(dim, dim), "w_up": w(dim, 4 * dim), "w_down": w(4 * dim, dim)}
    return params, rng.standard_normal((batch, seq, dim)).astype(np.float32)


def _transformer_reference(params, x):
    def layer_norm(x, scale, bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * scale + bias

    def softmax(s):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def gelu(u):
        return 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))

    batch, seq, dim = x.shape
    heads = 4
    h = layer_norm(x, params["ln1_scale"], params["ln1_bias"])
    qkv = h @ params["w_qkv"]
    q, k, v = qkv[..., :dim], qkv[..., dim:2 * dim], qkv[..., 2 * dim:]
    def split(t):
        return t.reshape(batch, seq, heads, dim // heads).transpose(0, 2, 1, 3)

    q, k, v = split(q), split(k), split(v)
    attention = softmax(q @ k.swapaxes(-1, -2) / math.sqrt(dim // heads)) @ v
    x = x + attention.transpose(0, 2, 1, 3).reshape(batch, seq, dim) @ params["w_out"]
    h = layer_norm(x, params["ln2_scale"], params["ln2_bias"])
    return x + gelu(h @ params["w_up"]) @ params["w_down"]


# --- a small convolutional net ------------------------------------------------------

def _convnet(lib):
    jnp, lax, nn = lib.numpy, lib.lax, lib.nn

    def convnet(params, images):  # NHWC images, HWIO kernels
        dn = ("NHWC", "HWIO", "NHWC")
        x = nn.relu(lax.conv_general_dilated(images, params["k1"], (1, 1), "SAME", dimension_numbers=dn))
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        x = nn.relu(lax.conv_general_dilated(x, params["k2"], (1, 1), "SAME", dimension_numbers=dn))
        x = jnp.mean(x, axis=(1, 2))
        return x @ params["dense"]
    return convnet


def _convnet_inputs(rng, batch=4, size=16):
    return ({"k1": (rng.standard_normal((3, 3, 3, 8)) / 5).astype(np.float32),
             "k2": (rng.standard_normal((3, 3, 8, 16)) / 8).astype(np.float32),
             "dense": (rng.standard_normal((16, 10)) / 4).astype(np.float32)},
            rng.standard_normal((batch, size, size, 3)).astype(np.float32))


def _conv_same(x, k):
    kh, kw = k.shape[:2]
    padded = np.pad(x, ((0, 0), (kh // 2, kh - 1 - kh // 2), (kw // 2, kw - 1 - kw // 2), (0, 0)))
    out = np.zeros(x.shape[:3] + (k.shape[3],), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += padded[:, i:i + x.shape[1], j:j + x.shape[2], :] @ k[i, j]
    return out


def _convnet_reference(params, images):
    x = np.maximum(_conv_same(images, params["k1"]), 0)
    n, h, w, c = x.shape
    x = x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))
    x = np.maximum(_conv_same(x, params["k2"]), 0)
    return x.mean(axis=(1, 2)) @ params["dense"]


# --- a while_loop: Newton's method for square roots ---------------------------------

def _newton(lib):
    jnp, lax = lib.numpy, lib.lax

    def newton_sqrt(a):
        def cond(state):
            x, step = state
            return jnp.logical_and(jnp.max(jnp.abs(x * x - a)) > 1e-5 * jnp.max(a), step < 100)

        def body(state):
            x, step = state
            return 0.5 * (x + a / x), step + 1

        x, _ = lax.while_loop(cond, body, (jnp.maximum(a, 1.0), 0))
        return x
    return newton_sqrt


def _newton_inputs(rng):
    return (rng.uniform(0.5, 100.0, size=(256,)).astype(np.float32),)


# --- a scan: a cumulative RNN ------------------------------------------------------

def _rnn(lib):
    jnp, lax = lib.numpy, lib.lax

    def rnn(params, xs):
        w_h, w_x = params

        def step(h, x):
            h = jnp.tanh(h @ w_h + x @ w_x)
            return h, h

        h0 = jnp.zeros((xs.shape[1], w_h.shape[0]), xs.dtype)
        _, hs = lax.scan(step, h0, xs)
        return hs
    return rnn


def _rnn_inputs(rng, steps=20, batch=4, hidden=32, features=8):
    return ((((rng.standard_normal((hidden, hidden)) / math.sqrt(hidden)).astype(np.float32)),
             ((rng.standard_normal((features, hidden)) / math.sqrt(features)).astype(np.float32))),
            rng.standard_normal((steps, batch, features)).astype(np.float32))


def _rnn_reference(params, xs):
    w_h, w_x = params
    h = np.zeros((xs.shape[1], w_h.shape[0]))
    out = []
    for x in xs:
        h = np.tanh(h @ w_h + x @ w_x)
        out.append(h)
    return np.stack(out)


PROGRAMS: dict[str, ReferenceProgram] = {
    "mlp": ReferenceProgram("mlp", _mlp, _mlp_inputs, _mlp_reference, 1e-4),
    "transformer": ReferenceProgram("transformer", _transformer, _transformer_inputs, _transformer_reference, 1e-4),
    "convnet": ReferenceProgram("convnet", _convnet, _convnet_inputs, _convnet_reference, 1e-4),
    "newton": ReferenceProgram("newton", _newton, _newton_inputs, lambda a: np.sqrt(a.astype(np.float64)), 1e-5),
    "rnn": ReferenceProgram("rnn", _rnn, _rnn_inputs, _rnn_reference, 1e-4),
}
