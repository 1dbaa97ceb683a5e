"""Three zoo programs written with toolkit (``toolkit.numpy``, ``toolkit.lax``, ``toolkit.nn``), exported by toolkit.

Each takes the same flat inputs as its JAX original in the zoo (the weights
by the names Flax/Equinox gave them) and computes the same function, so the
checksums JAX recorded for the original check these too:

* ``mlp_mixer`` — Flax's MLP-Mixer (``scripts/make_zoo.py``), the patch
  convolution written as a reshape and a matmul;
* ``lstm_scan`` — Equinox's ``LSTMCell`` over ``toolkit.lax.scan``, batched by
  matmuls instead of ``vmap``;
* ``gpt2_decode_kv`` — one KV-cache decode step of the GPT-2-style decoder,
  with Flax's decode-mode attention spelled out (cache written at ``index``
  with ``dynamic_update_slice``, positions after ``index`` masked).

:func:`export_program` exports one of them for the zoo's input specs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np

import toolkit
import toolkit.lax as lax
import toolkit.nn as tnn
import toolkit.numpy as tnp
from toolkit import export as _export

if TYPE_CHECKING:
    from toolkit.lab.zoo import InputSpec

__all__ = ["BUILDERS", "export_program"]

Params = Mapping[str, Any]

FLAX_LAYER_NORM_EPSILON = 1e-6
EQUINOX_LAYER_NORM_EPSILON = 1e-5


def _layer_norm(x: Any, scale: Any, bias: Any, epsilon: float = FLAX_LAYER_NORM_EPSILON) -> Any:
    # Flax's fast variance: E[x^2] - E[x]^2, clipped at zero.
    mean = tnp.mean(x, axis=-1, keepdims=True)
    var = tnp.maximum(tnp.mean(x * x, axis=-1, keepdims=True) - mean * mean, 0.0)
    return (x - mean) * lax.rsqrt(var + epsilon) * scale + bias


def _dense(p: Params, prefix: str, x: Any) -> Any:
    return x @ p[f"{prefix}/kernel"] + p[f"{prefix}/bias"]


def mlp_mixer(p: Params) -> dict[str, Any]:
    """The MLP-Mixer: images (B, H, W, C) -> logits (B, 10); weights named as Flax names them."""
    images = p["images"]
    kernel = p["params/stem/kernel"]
    size = kernel.shape[0]
    b, h, w, c = images.shape
    patches = images.reshape(b, h // size, size, w // size, size, c).transpose(0, 1, 3, 2, 4, 5)
    x = patches.reshape(b, (h // size) * (w // size), size * size * c) @ kernel.reshape(-1, kernel.shape[-1])
    x = x + p["params/stem/bias"]
    for i in range(2):
        block = f"params/block_{i}"
        y = _layer_norm(x, p[f"{block}/token_norm/scale"], p[f"{block}/token_norm/bias"]).swapaxes(1, 2)
        y = tnn.gelu(_dense(p, f"{block}/token_mlp_in", y))
        x = x + _dense(p, f"{block}/token_mlp_out", y).swapaxes(1, 2)
        y = _layer_norm(x, p[f"{block}/channel_norm/scale"], p[f"{block}/channel_norm/bias"])
        x = x + _dense(p, f"{block}/channel_mlp_out", tnn.gelu(_dense(p, f"{block}/channel_mlp_in", y)))
    pooled = _layer_norm(x, p["params/norm/scale"], p["params/norm/bias"]).mean(axis=1)
    return {"out": _dense(p, "params/head", pooled)}


def lstm_scan(p: Params) -> dict[str, Any]:
    """The LSTM: xs (B, T, F) -> per-step read-outs (B, T, 4) and the final h and c (B, hidden)."""
    xs = p["xs"]
    w_ih, w_hh, bias = p["params/cell/weight_ih"], p["params/cell/weight_hh"], p["params/cell/bias"]
    hidden = w_hh.shape[1]

    def step(state: tuple[Any, Any], x: Any) -> tuple[tuple[Any, Any], Any]:
        h, c = state
        lin = x @ w_ih.T + h @ w_hh.T + bias
        i, f, g, o = (lin[:, k * hidden:(k + 1) * hidden] for k in range(4))
        c = tnn.sigmoid(f) * c + tnn.sigmoid(i) * tnp.tanh(g)
        h = tnn.sigmoid(o) * tnp.tanh(c)
        return (h, c), h @ p["params/out/weight"].T + p["params/out/bias"]

    zeros = tnp.zeros((xs.shape[0], hidden), xs.dtype)
    (h, c), ys = lax.scan(step, (zeros, zeros), xs.swapaxes(0, 1))
    return {"out/c": c, "out/h": h, "out/outputs": ys.swapaxes(0, 1)}


def gpt2_decode_kv(p: Params) -> dict[str, Any]:
    """One decode step: tokens (B, 1) at position ``index`` with the caches -> logits and updated caches."""
    tokens, index = p["tokens"], p["index"]
    wte = p["params/wte/embedding"]
    x = tnp.take(wte, tokens, axis=0) + tnp.take(p["params/wpe/embedding"], tnp.broadcast_to(index, tokens.shape),
                                                 axis=0)
    out: dict[str, Any] = {}
    layer = 0
    while f"params/h_{layer}/ln_1/scale" in p:
        prefix = f"params/h_{layer}"
        h = _layer_norm(x, p[f"{prefix}/ln_1/scale"], p[f"{prefix}/ln_1/bias"])

        def project(name: str, h: Any = h, prefix: str = prefix) -> Any:
            return tnp.einsum("bqd,dhk->bqhk", h, p[f"{prefix}/attn/{name}/kernel"]) + p[f"{prefix}/attn/{name}/bias"]

        q, k, v = project("query"), project("key"), project("value")
        zero = tnp.zeros((), index.dtype)
        start = (zero, index, zero, zero)
        keys = lax.dynamic_update_slice(p[f"cache/h_{layer}/cached_key"], k, start)
        values = lax.dynamic_update_slice(p[f"cache/h_{layer}/cached_value"], v, start)
        out[f"out/cache/h_{layer}/cached_key"], out[f"out/cache/h_{layer}/cached_value"] = keys, values
        q = q / math.sqrt(q.shape[-1])
        scores = tnp.einsum("bqhd,bkhd->bhqk", q, keys)
        visible = tnp.arange(keys.shape[1]) <= index
        scores = tnp.where(visible, scores, np.finfo(np.float32).min)
        attended = tnp.einsum("bhqk,bkhd->bqhd", tnn.softmax(scores, axis=-1), values)
        x = x + tnp.einsum("bqhk,hkd->bqd", attended, p[f"{prefix}/attn/out/kernel"]) + p[f"{prefix}/attn/out/bias"]
        h = _layer_norm(x, p[f"{prefix}/ln_2/scale"], p[f"{prefix}/ln_2/bias"])
        x = x + _dense(p, f"{prefix}/proj", tnn.gelu(_dense(p, f"{prefix}/fc", h)))
        layer += 1
    if layer == 0:
        raise ValueError("gpt2_decode_kv: no layer weights (params/h_0/...) among the inputs")
    out["out/logits"] = _layer_norm(x, p["params/ln_f/scale"], p["params/ln_f/bias"]) @ wte.T
    return out


#: The toolkit-written programs by builder name (the ``builder`` field of their zoo JSON).
BUILDERS: dict[str, Callable[[Params], dict[str, Any]]] = {
    "mlp_mixer": mlp_mixer, "lstm_scan": lstm_scan, "gpt2_decode_kv": gpt2_decode_kv}


def export_program(builder: str, specs: Sequence[InputSpec], dims: Mapping[str, int],
                   output_names: Sequence[str] | None = None) -> _export.Exported:
    """Export the toolkit-written program ``builder`` for flat inputs ``specs`` (named dimensions sized by ``dims``).

    The exported function takes the inputs in ``specs`` order and returns
    the outputs in ``output_names`` order (default: sorted by name, as JAX
    flattens a dict). ValueError for an unknown builder, KeyError naming an
    input or output the program lacks.
    """
    if builder not in BUILDERS:
        raise ValueError(f"no toolkit-written zoo program {builder!r}; there are: {', '.join(BUILDERS)}")
    fn = BUILDERS[builder]
    names = [s.name for s in specs]

    def flat(*args: Any) -> tuple[Any, ...]:
        outputs = fn(dict(zip(names, args)))
        order = list(output_names) if output_names is not None else sorted(outputs)
        missing = [n for n in order if n not in outputs]
        if missing:
            raise KeyError(f"toolkit-written zoo program {builder!r} has no outputs {missing}")
        return tuple(outputs[n] for n in order)

    arg_specs = [toolkit.ShapeDtypeStruct(s.concrete_shape(dims), np.dtype(getattr(ml_dtypes, s.dtype, s.dtype)))
                 for s in specs]
    return _export.export(toolkit.jit(flat))(*arg_specs)
