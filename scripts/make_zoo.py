#!/usr/bin/env python
"""Regenerate the pass lab's zoo (toolkit/lab/zoo/): real programs exported with ``jax.export``.

Usage: ``python scripts/make_zoo.py [--out DIR] [--only NAME ...]``

Every program is written with the ecosystem's libraries (Flax, Equinox, Optax,
from the ``interop`` extra), made to take its weights and data as FLAT
positional arguments, and exported with ``jax.export``; the script writes
``<name>.bin`` (the serialized bytes) and ``<name>.json`` (description,
library versions, device count, the flat input specs with how each input is
made from a seed, and a checksum of JAX's outputs for seed 0 on the inputs
``toolkit.lab.zoo`` makes). It also writes the JSON of the toolkit-written
versions (``toolkit.lab.zoo.toolkit_models``), which take the same inputs as
their JAX originals and so share their checksums. Deterministic: the same
versions write the same files. Prints each file's size and the total.
"""

from __future__ import annotations

import os

# jax reads these when its backend starts: 8 host devices for the data-parallel program.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import equinox as eqx  # noqa: E402
import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from toolkit.lab import zoo  # noqa: E402

F32 = jnp.float32
VERSIONS = {name: importlib.metadata.version(name) for name in ("jax", "jaxlib", "flax", "equinox", "optax", "numpy")}
MAX_BYTES = 5 * 1024 * 1024


# ---------------------------------------------------------------------------------------------------------------
# Flat arguments: named groups of pytrees, each leaf one input with its kind and how it is made.

@dataclasses.dataclass
class Group:
    """A named pytree of example arrays; every leaf becomes one flat input of ``kind``.

    ``init(path, shape)`` says how a leaf is made (default: by its name, see
    ``weight_init``); ``range`` is the [low, high) of integer leaves.
    """

    name: str
    tree: Any
    kind: str
    init: Callable[[str, tuple[int, ...]], dict] | dict | None = None
    range: tuple[int, int] | None = None


def _key_name(entry: Any) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return str(entry)


def _fan_in_flax(shape: tuple[int, ...]) -> int:
    return math.prod(shape[:-1]) or 1  # flax kernels are (..., in, out)


def _fan_in_equinox(shape: tuple[int, ...]) -> int:
    return math.prod(shape[1:]) or 1  # equinox weights are (out, in, ...)


def weight_init(fan_in: Callable[[tuple[int, ...]], int]) -> Callable[[str, tuple[int, ...]], dict]:
    """Init by name: norm scales and running variances ones; running means and optimizer moments zeros; biases
    normal * 0.1; kernels normal / sqrt(fan_in); embeddings and class tokens normal * 0.02."""
    def init(path: str, shape: tuple[int, ...]) -> dict:
        leaf = path.rsplit("/", 1)[-1]
        if leaf in ("scale", "var") or (leaf == "weight" and "norm" in path.lower()):
            return {"type": "ones"}
        if leaf == "bias":  # not zeros: a pass that drops a bias must change the results
            return {"type": "normal", "scale": 0.1}
        if leaf == "mean" or len(shape) <= 1:
            return {"type": "zeros"}
        if leaf in ("embedding", "cls", "pos", "pos_embedding"):
            return {"type": "normal", "scale": 0.02}
        return {"type": "normal", "scale": 1.0 / math.sqrt(fan_in(shape))}
    return init


def optimizer_state_init(path: str, shape: tuple[int, ...]) -> dict:
    """An optimizer part-way through training: a step count in the group's range, small first moments (and
    momentum traces), second moments in [1e-6, 1e-5) (never zero, where Adam's update is ill-conditioned)."""
    parts = path.split("/")
    if parts[-1] == "count":
        return {"type": "randint"}
    if "nu" in parts:
        return {"type": "uniform", "low": 1e-6, "high": 1e-5}
    if "mu" in parts or "trace" in parts:
        return {"type": "normal", "scale": 1e-3}
    return {"type": "zeros"}


def flatten_groups(groups: list[Group]) -> tuple[list[zoo.InputSpec], list[Any], Any]:
    """The flat input specs, the example leaves and the treedef of the groups' trees."""
    specs, leaves = [], []
    for g in groups:
        for path, leaf in jax.tree_util.tree_flatten_with_path(g.tree)[0]:
            name = "/".join([g.name] + [_key_name(e) for e in path])
            shape = tuple(leaf.shape)
            if callable(g.init):
                init = g.init(name, shape)
            elif g.init is not None:
                init = dict(g.init)
            elif g.kind in ("index", "label"):
                init = {"type": "randint"}
            else:
                init = {"type": "normal", "scale": 1.0}
            # Integer leaves among weights (an optimizer's step count) are indices: made in their range.
            kind = "index" if g.kind == "weight" and np.issubdtype(leaf.dtype, np.integer) else g.kind
            spec = zoo.InputSpec(name=name, shape=shape, dtype=str(np.dtype(leaf.dtype)), kind=kind, init=init,
                                 range=g.range if init["type"] == "randint" else None)
            spec.validate()
            specs.append(spec)
            leaves.append(leaf)
    treedef = jax.tree_util.tree_structure(tuple(g.tree for g in groups))
    return specs, leaves, treedef


@dataclasses.dataclass
class Program:
    name: str
    description: str
    frontend: str
    groups: list[Group]
    fn: Callable[..., Any]  # takes the groups' trees in order, returns a pytree of arrays
    num_devices: int = 1
    in_shardings: Callable[[Mesh, list[zoo.InputSpec]], list[Any]] | None = None
    out_sharding: Callable[[Mesh], Any] | None = None
    poly: dict[str, tuple[str, int]] | None = None  # input name -> (symbolic spec of its shape, default size)
    mirrors: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # (name, builder, description)


def export_program(prog: Program) -> tuple[bytes, list[zoo.InputSpec], dict, list[str], Any]:
    """Export ``prog`` with flat arguments; returns the bytes, the specs, default dims, output names, Exported."""
    specs, leaves, treedef = flatten_groups(prog.groups)

    def flat_fn(*flat):
        out = prog.fn(*jax.tree_util.tree_unflatten(treedef, flat))
        return tuple(jax.tree_util.tree_leaves(out))

    out_paths = jax.tree_util.tree_flatten_with_path(jax.eval_shape(
        lambda *flat: prog.fn(*jax.tree_util.tree_unflatten(treedef, flat)), *leaves))[0]
    out_names = ["/".join(["out"] + [_key_name(e) for e in path]) for path, _ in out_paths]
    default_dims: dict[str, int] = {}
    arg_specs = []
    scope = jax.export.SymbolicScope()
    for i, leaf in enumerate(leaves):
        if prog.poly and specs[i].name in prog.poly:
            text, size = prog.poly[specs[i].name]
            names = [d.strip() for d in text.split(",")]
            default_dims.update({d: size for d in names if d.isidentifier()})
            specs[i] = dataclasses.replace(specs[i], shape=tuple(d if d.isidentifier() else int(d) for d in names))
            arg_specs.append(jax.ShapeDtypeStruct(jax.export.symbolic_shape(text, scope=scope), leaf.dtype))
        else:
            arg_specs.append(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype))
    if prog.num_devices > 1:
        if prog.in_shardings is None or prog.out_sharding is None:
            raise SystemExit(f"{prog.name}: a program on {prog.num_devices} devices needs its shardings")
        mesh = Mesh(np.array(jax.devices()[:prog.num_devices]), ("data",))
        jitted = jax.jit(flat_fn, in_shardings=tuple(prog.in_shardings(mesh, specs)),
                         out_shardings=prog.out_sharding(mesh))
    else:
        jitted = jax.jit(flat_fn)
    exp = jax.export.export(jitted)(*arg_specs)
    return bytes(exp.serialize()), specs, default_dims, out_names, exp


def write_program(prog: Program, out_dir: pathlib.Path) -> list[pathlib.Path]:
    blob, specs, default_dims, out_names, exp = export_program(prog)
    inputs = [zoo.make_input(s, i, seed=0, dims=default_dims) for i, s in enumerate(specs)]
    if prog.num_devices > 1:  # JAX calls a sharded export under a jit placing the arguments as exported
        mesh = Mesh(np.array(jax.devices()[:prog.num_devices]), ("data",))
        results = jax.jit(exp.call, in_shardings=exp.in_shardings_jax(mesh),
                          out_shardings=exp.out_shardings_jax(mesh))(*inputs)
    else:
        results = exp.call(*inputs)
    sums = zoo.checksum([np.asarray(r) for r in results])
    outputs = [{"name": n, **s} for n, s in zip(out_names, sums)]
    for o in outputs:
        if not all(math.isfinite(v) for v in [o["sum"], *o["first"]]):
            raise SystemExit(f"{prog.name}: output {o['name']} is not finite for seed 0")
    common = {"num_devices": prog.num_devices, "polymorphic": bool(default_dims), "default_dims": default_dims,
              "inputs": [s.to_json() for s in specs], "outputs": outputs}
    record = {"name": prog.name, "description": prog.description, "frontend": prog.frontend,
              "versions": VERSIONS, "source": f"scripts/make_zoo.py ({prog.name})", "artifact": f"{prog.name}.bin",
              **common}
    paths = [out_dir / f"{prog.name}.bin", out_dir / f"{prog.name}.json"]
    paths[0].write_bytes(blob)
    paths[1].write_text(json.dumps(record, indent=1) + "\n")
    for name, builder, description in prog.mirrors:
        mirror = {"name": name, "description": description, "frontend": "toolkit",
                  "versions": {"toolkit": "exported at run time", "checksums_from": VERSIONS},
                  "source": f"toolkit/lab/zoo/toolkit_models.py ({builder})", "builder": builder,
                  "mirror_of": prog.name, "artifact": None, **common}
        paths.append(out_dir / f"{name}.json")
        paths[-1].write_text(json.dumps(mirror, indent=1) + "\n")
    return paths


def _init_flax(module: nn.Module, *args: Any, **kwargs: Any) -> Any:
    return jax.eval_shape(lambda *a: module.init(jax.random.key(0), *a, **kwargs), *args)


def _sds(shape: tuple[int, ...], dtype: Any = F32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


# ---------------------------------------------------------------------------------------------------------------
# ResNet-style CNN with batch norm: one SGD-with-momentum training step, batch norm in train mode (flax).

class ResBlock(nn.Module):
    features: int
    strides: int = 1

    @nn.compact
    def __call__(self, x: Any, train: bool) -> Any:
        bn = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9)  # noqa: E731
        y = nn.Conv(self.features, (3, 3), self.strides, use_bias=False)(x)
        y = nn.relu(bn()(y))
        y = bn()(nn.Conv(self.features, (3, 3), use_bias=False)(y))
        if x.shape != y.shape:
            x = bn()(nn.Conv(self.features, (1, 1), self.strides, use_bias=False)(x))
        return nn.relu(x + y)


class ResNet(nn.Module):
    classes: int = 10

    @nn.compact
    def __call__(self, x: Any, train: bool) -> Any:
        x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9)(
            nn.Conv(16, (3, 3), use_bias=False)(x)))
        x = ResBlock(16)(x, train)
        x = ResBlock(32, 2)(x, train)
        return nn.Dense(self.classes)(x.mean(axis=(1, 2)))


def resnet_bn_train() -> Program:
    model, tx = ResNet(), optax.sgd(0.05, momentum=0.9)
    images, labels = _sds((8, 16, 16, 3)), _sds((8,), jnp.int32)
    variables = _init_flax(model, images, train=False)
    opt_state = jax.eval_shape(tx.init, variables["params"])

    def step(params, batch_stats, opt_state, batch):
        def loss_fn(p):
            logits, updates = model.apply({"params": p, "batch_stats": batch_stats}, batch["images"], train=True,
                                          mutable=["batch_stats"])
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, batch["labels"]).mean()
            return loss, updates["batch_stats"]
        (loss, new_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return {"loss": loss, "params": optax.apply_updates(params, updates), "batch_stats": new_stats,
                "opt_state": opt_state}

    init = weight_init(_fan_in_flax)
    return Program(
        "resnet_bn_train",
        "ResNet-style CNN (3 conv stages, 2 residual blocks, batch norm in train mode, 16x16x3 images, batch 8, "
        "10 classes): one training step, softmax cross-entropy, SGD with momentum (Optax); returns loss, new "
        "params, new batch statistics, new optimizer state.",
        "flax",
        [Group("params", variables["params"], "weight", init), Group("batch_stats", variables["batch_stats"],
                                                                         "weight", init),
         Group("opt_state", opt_state, "weight", optimizer_state_init),
         Group("batch", {"images": images}, "data"), Group("batch", {"labels": labels}, "label", range=(0, 10))],
        lambda params, stats, opt, images, labels: step(params, stats, opt, {**images, **labels}))


# ---------------------------------------------------------------------------------------------------------------
# GPT-2-style decoder (flax): a training step with AdamW, and one KV-cache decode step.

GPT = {"vocab": 64, "width": 32, "heads": 2, "layers": 2, "max_len": 32}


class GPTBlock(nn.Module):
    decode: bool = False

    @nn.compact
    def __call__(self, x: Any) -> Any:
        h = nn.LayerNorm(name="ln_1")(x)
        mask = None if self.decode else nn.make_causal_mask(jnp.ones(x.shape[:2], jnp.int32))
        h = nn.MultiHeadDotProductAttention(GPT["heads"], decode=self.decode, name="attn")(h, h, mask=mask)
        x = x + h
        h = nn.LayerNorm(name="ln_2")(x)
        h = nn.Dense(4 * GPT["width"], name="fc")(h)
        h = nn.Dense(GPT["width"], name="proj")(nn.gelu(h))
        return x + h


class GPT2(nn.Module):
    decode: bool = False

    @nn.compact
    def __call__(self, tokens: Any, positions: Any) -> Any:
        wte = nn.Embed(GPT["vocab"], GPT["width"], name="wte")
        x = wte(tokens) + nn.Embed(GPT["max_len"], GPT["width"], name="wpe")(positions)
        for i in range(GPT["layers"]):
            x = GPTBlock(self.decode, name=f"h_{i}")(x)
        return wte.attend(nn.LayerNorm(name="ln_f")(x))  # tied output embedding, as GPT-2


def gpt2_train_adam() -> Program:
    model, tx = GPT2(), optax.adamw(1e-3, weight_decay=0.01)
    batch, seq = 2, 16
    tokens = _sds((batch, seq + 1), jnp.int32)
    params = _init_flax(model, _sds((batch, seq), jnp.int32), jnp.arange(seq)[None])["params"]
    opt_state = jax.eval_shape(tx.init, params)

    def step(params, opt_state, tokens):
        def loss_fn(p):
            logits = model.apply({"params": p}, tokens[:, :-1], jnp.arange(seq)[None])
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return {"loss": loss, "params": optax.apply_updates(params, updates), "opt_state": opt_state}

    return Program(
        "gpt2_train_adam",
        f"GPT-2-style decoder ({GPT['layers']} layers, width {GPT['width']}, {GPT['heads']} heads, vocabulary "
        f"{GPT['vocab']}, tied embeddings, batch {batch} x {seq} tokens): one training step, next-token "
        "cross-entropy, AdamW (Optax); returns loss, new params, new optimizer state.",
        "flax",
        [Group("params", params, "weight", weight_init(_fan_in_flax)),
         Group("opt_state", opt_state, "weight", optimizer_state_init, range=(0, 100)),
         Group("tokens", tokens, "index", range=(0, GPT["vocab"]))],
        step)


def gpt2_decode_kv() -> Program:
    model = GPT2(decode=True)
    batch = 2
    variables = _init_flax(model, _sds((batch, GPT["max_len"]), jnp.int32), jnp.arange(GPT["max_len"])[None])
    caches = {layer: {"cached_key": c["attn"]["cached_key"], "cached_value": c["attn"]["cached_value"]}
              for layer, c in variables["cache"].items()}

    def step(params, caches, index, tokens):
        cache = {layer: {"attn": {**kv, "cache_index": index}} for layer, kv in caches.items()}
        logits, mutated = model.apply({"params": params, "cache": cache}, tokens,
                                      jnp.broadcast_to(index, tokens.shape), mutable=["cache"])
        new = {layer: {k: c["attn"][k] for k in ("cached_key", "cached_value")}
               for layer, c in mutated["cache"].items()}
        return {"logits": logits, "cache": new}

    return Program(
        "gpt2_decode_kv",
        "GPT-2-style decoder (same model as gpt2_train_adam; Flax's attention in decode mode): one KV-cache decode "
        f"step for batch {batch}: the token at position `index` attends to the cache (max length "
        f"{GPT['max_len']}), which is updated in place with dynamic_update_slice; returns logits and the caches.",
        "flax",
        [Group("params", variables["params"], "weight", weight_init(_fan_in_flax)),
         Group("cache", caches, "data"),
         Group("index", _sds((), jnp.int32), "index", range=(0, GPT["max_len"])),
         Group("tokens", _sds((batch, 1), jnp.int32), "index", range=(0, GPT["vocab"]))],
        step,
        mirrors=[("gpt2_decode_kv_toolkit", "gpt2_decode_kv",
                  "The gpt2_decode_kv step written with toolkit.numpy/lax/nn (the same flat inputs and math as "
                  "Flax's decode-mode attention), exported by toolkit at run time.")])


# ---------------------------------------------------------------------------------------------------------------
# ViT (equinox): patch embedding, class token, 2 pre-norm transformer blocks, classification head; inference.

class ViTBlock(eqx.Module):
    norm1: eqx.nn.LayerNorm
    attn: eqx.nn.MultiheadAttention
    norm2: eqx.nn.LayerNorm
    fc1: eqx.nn.Linear
    fc2: eqx.nn.Linear

    def __init__(self, width: int, heads: int, key: Any):
        k1, k2, k3 = jax.random.split(key, 3)
        self.norm1, self.norm2 = eqx.nn.LayerNorm(width), eqx.nn.LayerNorm(width)
        self.attn = eqx.nn.MultiheadAttention(heads, width, key=k1)
        self.fc1, self.fc2 = eqx.nn.Linear(width, 2 * width, key=k2), eqx.nn.Linear(2 * width, width, key=k3)

    def __call__(self, x: Any) -> Any:
        h = jax.vmap(self.norm1)(x)
        x = x + self.attn(h, h, h)
        h = jax.vmap(self.norm2)(x)
        return x + jax.vmap(self.fc2)(jax.nn.gelu(jax.vmap(self.fc1)(h)))


class ViT(eqx.Module):
    patch: eqx.nn.Conv2d
    cls: jax.Array
    pos: jax.Array
    blocks: list
    norm: eqx.nn.LayerNorm
    head: eqx.nn.Linear

    def __init__(self, key: Any, width: int = 32, patch: int = 4, size: int = 16, classes: int = 10):
        keys = jax.random.split(key, 6)
        self.patch = eqx.nn.Conv2d(3, width, patch, stride=patch, key=keys[0])
        self.cls = jnp.zeros((1, width))
        self.pos = jnp.zeros(((size // patch) ** 2 + 1, width))
        self.blocks = [ViTBlock(width, 2, keys[1]), ViTBlock(width, 2, keys[2])]
        self.norm = eqx.nn.LayerNorm(width)
        self.head = eqx.nn.Linear(width, classes, key=keys[3])

    def __call__(self, image: Any) -> Any:  # image: (3, H, W), equinox's channel-first layout
        x = self.patch(image)
        x = x.reshape(x.shape[0], -1).T
        x = jnp.concatenate([self.cls, x]) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[0]))


def _equinox_params(model: eqx.Module) -> tuple[Any, Any]:
    params, static = eqx.partition(model, eqx.is_array)
    return jax.tree_util.tree_map(lambda x: _sds(x.shape, x.dtype), params), static


def vit() -> Program:
    params, static = _equinox_params(ViT(jax.random.key(0)))
    images = _sds((4, 3, 16, 16))

    def run(params, images):
        model = eqx.combine(params, static)
        return jax.nn.log_softmax(jax.vmap(model)(images))

    return Program(
        "vit",
        "Vision transformer (Equinox): 4x4 patches of 16x16x3 images (channel first), class token, learned "
        "positions, 2 pre-norm blocks (2-head attention, GELU MLP), width 32, batch 4; inference, returns "
        "log-probabilities of 10 classes.",
        "equinox",
        [Group("params", params, "weight", weight_init(_fan_in_equinox)), Group("images", images, "data")],
        run)


# ---------------------------------------------------------------------------------------------------------------
# U-Net (flax): 2 down and 2 up levels with skip connections, group norm, transposed convolutions; inference.

class ConvBlock(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x: Any) -> Any:
        for _ in range(2):
            x = nn.silu(nn.GroupNorm(num_groups=4)(nn.Conv(self.features, (3, 3))(x)))
        return x


class UNet(nn.Module):
    out_channels: int = 3

    @nn.compact
    def __call__(self, x: Any) -> Any:
        skips = []
        for features in (8, 16):
            x = ConvBlock(features)(x)
            skips.append(x)
            x = nn.max_pool(x, (2, 2), (2, 2))
        x = ConvBlock(32)(x)
        for features, skip in zip((16, 8), reversed(skips)):
            x = nn.ConvTranspose(features, (2, 2), (2, 2))(x)
            x = ConvBlock(features)(jnp.concatenate([x, skip], axis=-1))
        return nn.Conv(self.out_channels, (1, 1))(x)


def unet() -> Program:
    model = UNet()
    images = _sds((2, 16, 16, 3))
    params = _init_flax(model, images)["params"]
    return Program(
        "unet",
        "U-Net (Flax): two down levels (conv-GroupNorm-SiLU x2, max pool) with 8 and 16 channels, a 32-channel "
        "bottleneck, two up levels (transposed convolution, skip concatenation), 1x1 output conv; 16x16x3 images, "
        "batch 2; inference, returns a 16x16x3 map.",
        "flax",
        [Group("params", params, "weight", weight_init(_fan_in_flax)), Group("images", images, "data")],
        lambda params, images: model.apply({"params": params}, images))


# ---------------------------------------------------------------------------------------------------------------
# LSTM over lax.scan (equinox's LSTMCell), a linear read-out of every step.

class LSTMModel(eqx.Module):
    cell: eqx.nn.LSTMCell
    out: eqx.nn.Linear

    def __init__(self, key: Any, features: int = 8, hidden: int = 32, outputs: int = 4):
        k1, k2 = jax.random.split(key)
        self.cell = eqx.nn.LSTMCell(features, hidden, key=k1)
        self.out = eqx.nn.Linear(hidden, outputs, key=k2)

    def __call__(self, xs: Any) -> Any:  # xs: (time, features)
        def step(state, x):
            state = self.cell(x, state)
            return state, self.out(state[0])
        zeros = jnp.zeros((self.cell.hidden_size,))
        (h, c), ys = jax.lax.scan(step, (zeros, zeros), xs)
        return {"outputs": ys, "h": h, "c": c}


def lstm_scan() -> Program:
    params, static = _equinox_params(LSTMModel(jax.random.key(0)))
    xs = _sds((4, 16, 8))

    def run(params, xs):
        return jax.vmap(eqx.combine(params, static))(xs)

    return Program(
        "lstm_scan",
        "LSTM (Equinox's LSTMCell, hidden 32) over lax.scan: 16 steps of 8 features, batch 4 (vmap), a linear "
        "read-out of 4 values per step; returns the outputs and the final hidden and cell states.",
        "equinox",
        [Group("params", params, "weight", weight_init(_fan_in_equinox)), Group("xs", xs, "data")],
        run,
        mirrors=[("lstm_scan_toolkit", "lstm_scan",
                  "The lstm_scan program written with toolkit.numpy/lax/nn (toolkit.lax.scan over the same cell), "
                  "exported by toolkit at run time; same flat inputs as lstm_scan.")])


# ---------------------------------------------------------------------------------------------------------------
# MLP-Mixer (flax).

class MixerBlock(nn.Module):
    tokens_mlp: int
    channels_mlp: int

    @nn.compact
    def __call__(self, x: Any) -> Any:
        y = nn.LayerNorm(name="token_norm")(x).swapaxes(1, 2)
        y = nn.gelu(nn.Dense(self.tokens_mlp, name="token_mlp_in")(y))
        x = x + nn.Dense(x.shape[1], name="token_mlp_out")(y).swapaxes(1, 2)
        y = nn.LayerNorm(name="channel_norm")(x)
        y = nn.gelu(nn.Dense(self.channels_mlp, name="channel_mlp_in")(y))
        return x + nn.Dense(x.shape[2], name="channel_mlp_out")(y)


class Mixer(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        x = nn.Conv(32, (4, 4), (4, 4), padding="VALID", name="stem")(x)
        x = x.reshape(x.shape[0], -1, x.shape[-1])
        for i in range(2):
            x = MixerBlock(32, 64, name=f"block_{i}")(x)
        return nn.Dense(10, name="head")(nn.LayerNorm(name="norm")(x).mean(axis=1))


def mlp_mixer() -> Program:
    model = Mixer()
    images = _sds((4, 16, 16, 3))
    params = _init_flax(model, images)["params"]
    return Program(
        "mlp_mixer",
        "MLP-Mixer (Flax): 4x4 patches of 16x16x3 images (16 tokens, 32 channels), 2 mixer blocks (token MLP 32, "
        "channel MLP 64, GELU, layer norm), mean pooling, 10-class head; batch 4, inference (logits).",
        "flax",
        [Group("params", params, "weight", weight_init(_fan_in_flax)), Group("images", images, "data")],
        lambda params, images: model.apply({"params": params}, images),
        mirrors=[("mlp_mixer_toolkit", "mlp_mixer",
                  "The mlp_mixer program written with toolkit.numpy/lax/nn (the patch convolution as a reshape and "
                  "a matmul), exported by toolkit at run time; same flat inputs as mlp_mixer.")])


# ---------------------------------------------------------------------------------------------------------------
# Diffusion: one DDPM ancestral sampling step with a small MLP denoiser (equinox).

STEPS = 100


class Denoiser(eqx.Module):
    mlp: eqx.nn.MLP

    def __init__(self, key: Any, features: int = 64, width: int = 128, time_features: int = 16):
        self.mlp = eqx.nn.MLP(features + time_features, features, width, 3, activation=jax.nn.silu, key=key)

    def __call__(self, x: Any, t: Any) -> Any:
        freqs = jnp.exp(-math.log(1000.0) * jnp.arange(8) / 8)
        angles = t.astype(F32) * freqs
        return self.mlp(jnp.concatenate([x, jnp.sin(angles), jnp.cos(angles)]))


def diffusion_ddpm_step() -> Program:
    params, static = _equinox_params(Denoiser(jax.random.key(0)))
    betas = np.linspace(1e-4, 0.02, STEPS, dtype=np.float64)
    alphas = 1.0 - betas
    alpha_bars = np.cumprod(alphas)

    def step(params, x_t, noise, t):
        model = eqx.combine(params, static)
        eps = jax.vmap(model, in_axes=(0, None))(x_t, t)
        beta, alpha, alpha_bar = (jnp.asarray(a.astype(np.float32))[t] for a in (betas, alphas, alpha_bars))
        mean = (x_t - beta / jnp.sqrt(1.0 - alpha_bar) * eps) / jnp.sqrt(alpha)
        return {"x_prev": mean + jnp.where(t > 0, jnp.sqrt(beta), 0.0) * noise, "eps": eps}

    return Program(
        "diffusion_ddpm_step",
        f"Diffusion sampling step (Equinox): an MLP denoiser (3 SiLU layers of 128, sinusoidal time features) "
        f"predicts the noise of a batch of 4 flattened 8x8 samples at step t (of {STEPS}, linear beta schedule), "
        "then one DDPM ancestral update x_t -> x_{t-1}; returns x_{t-1} and the predicted noise.",
        "equinox",
        [Group("params", params, "weight", weight_init(_fan_in_equinox)), Group("x_t", _sds((4, 64)), "data"),
         Group("noise", _sds((4, 64)), "data"), Group("t", _sds((), jnp.int32), "index", range=(0, STEPS))],
        step)


# ---------------------------------------------------------------------------------------------------------------
# Data-parallel training step on 8 devices: shard_map over the batch, gradients averaged with pmean (Adam, optax).

def dp_train_shard_map() -> Program:
    devices = 8
    tx = optax.adam(1e-2)
    sizes = [(16, 64), (64, 64), (64, 4)]
    params = [{"w": _sds(s), "b": _sds(s[1:])} for s in sizes]
    opt_state = jax.eval_shape(tx.init, params)
    x, y = _sds((64, 16)), _sds((64,), jnp.int32)

    def loss_fn(params, x, y):
        for layer in params[:-1]:
            x = jax.nn.relu(x @ layer["w"] + layer["b"])
        logits = x @ params[-1]["w"] + params[-1]["b"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def local_step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.lax.pmean(grads, "data")
        updates, opt_state = tx.update(grads, opt_state, params)
        return {"loss": jax.lax.pmean(loss, "data"), "params": optax.apply_updates(params, updates),
                "opt_state": opt_state}

    mesh = Mesh(np.array(jax.devices()[:devices]), ("data",))
    step = jax.shard_map(local_step, mesh=mesh, in_specs=(P(), P(), P("data"), P("data")), out_specs=P())

    def in_shardings(mesh: Mesh, specs: list[zoo.InputSpec]) -> list[Any]:
        return [NamedSharding(mesh, P("data") if s.name.split("/")[0] in ("x", "y") else P()) for s in specs]

    return Program(
        "dp_train_shard_map",
        f"Data-parallel training step on {devices} devices (JAX shard_map + Optax Adam): a 3-layer ReLU MLP "
        "(16-64-64-4), the batch of 64 split over the mesh axis 'data', gradients and loss averaged with pmean, "
        "parameters and optimizer state replicated; returns loss, new params, new optimizer state.",
        "jax",
        [Group("params", params, "weight", weight_init(_fan_in_flax)),
         Group("opt_state", opt_state, "weight", optimizer_state_init, range=(0, 100)),
         Group("x", x, "data"), Group("y", y, "label", range=(0, 4))],
        step, num_devices=devices, in_shardings=in_shardings, out_sharding=lambda mesh: NamedSharding(mesh, P()))


# ---------------------------------------------------------------------------------------------------------------
# Shape-polymorphic inference: a small CNN classifier (flax, batch norm with running statistics), batch "b".

class SmallCNN(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        x = nn.relu(nn.BatchNorm(use_running_average=True)(nn.Conv(8, (3, 3))(x)))
        x = nn.avg_pool(x, (2, 2), (2, 2))
        x = nn.relu(nn.Conv(16, (3, 3))(x)).mean(axis=(1, 2))
        return jax.nn.log_softmax(nn.Dense(10)(x))


def cnn_poly_batch() -> Program:
    model = SmallCNN()
    images = _sds((4, 8, 8, 3))
    variables = _init_flax(model, images)
    return Program(
        "cnn_poly_batch",
        "Shape-polymorphic inference (Flax): a small CNN classifier (conv-BatchNorm-ReLU, average pool, conv, mean, "
        "dense, log-softmax) on 8x8x3 images with a symbolic batch size b (jax.export.symbolic_shape), batch norm "
        "with running statistics; run at any batch (default 4).",
        "flax",
        [Group("params", variables["params"], "weight", weight_init(_fan_in_flax)),
         Group("batch_stats", variables["batch_stats"], "weight", weight_init(_fan_in_flax)),
         Group("images", images, "data")],
        lambda params, stats, images: model.apply({"params": params, "batch_stats": stats}, images),
        poly={"images": ("b, 8, 8, 3", 4)})


BUILDERS = [resnet_bn_train, gpt2_train_adam, gpt2_decode_kv, vit, unet, lstm_scan, mlp_mixer, diffusion_ddpm_step,
            dp_train_shard_map, cnn_poly_batch]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "toolkit" / "lab" / "zoo"), help="where to write the files")
    parser.add_argument("--only", nargs="*", default=None, help="regenerate only these programs")
    args = parser.parse_args(argv)
    if jax.device_count() < 8:
        raise SystemExit("needs 8 host devices: XLA_FLAGS must be set before jax starts (run this script directly)")
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[pathlib.Path] = []
    for builder in BUILDERS:
        if args.only and builder.__name__ not in args.only:
            continue
        written += write_program(builder(), out_dir)
    total = 0
    for path in sorted(out_dir.glob("*.bin")) + sorted(out_dir.glob("*.json")):
        size = path.stat().st_size
        total += size
        print(f"{size:>9,}  {path.name}{'' if path in written else '  (kept)'}")
    print(f"{total:>9,}  total ({total / MAX_BYTES:.1%} of 5 MB)")
    if total > MAX_BYTES:
        raise SystemExit("the zoo is over 5 MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
