"""Seed inputs for the fuzzers: lit MLIR chunks, their bytecode, and serialized exports.

MLIR text comes from ``test/lit/**/*.mlir`` and, when the shared corpora are
checked out next to the repository (``../shared/corpora``), from
``stablehlo_lit``; each file is split at ``// -----`` like
``--split-input-file`` does. Bytecode seeds are MLIR bytecode and VHLO
artifacts written from the chunks that parse, plus the upstream ``.mlir.bc``
compatibility artifacts. Export seeds are toolkit exports of a few functions
(pytrees, symbolic shapes, shardings, multi-platform, VJPs) and, when present,
a sample of the JAX-written blobs in ``../shared/corpora/jax_poly_harness``.
Everything is computed once per process.
"""

from __future__ import annotations

import functools
import glob
import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.join(REPO, "..", "shared", "corpora")
SPLIT = re.compile(r"^// -----.*$", re.MULTILINE)


def _mlir_files() -> list[str]:
    files = sorted(glob.glob(os.path.join(REPO, "test", "lit", "**", "*.mlir"), recursive=True))
    stablehlo_lit = os.path.join(SHARED, "stablehlo_lit")
    if os.path.isdir(stablehlo_lit):
        files += sorted(glob.glob(os.path.join(stablehlo_lit, "**", "*.mlir"), recursive=True))
    return files


def quiet_context():
    """A fresh MLIR context whose diagnostics are swallowed (the seeds that fail to parse are skipped)."""
    from toolkit.ir.context import make_context

    context = make_context()
    context.attach_diagnostic_handler(lambda diagnostic: True)
    return context


@functools.lru_cache(maxsize=None)
def text_inputs(max_chars: int = 40_000) -> tuple[tuple[str, str], ...]:
    """``(name, text)`` chunks; chunks over ``max_chars`` are cut at a function boundary to stay fast."""
    chunks = []
    for path in _mlir_files():
        rel = os.path.relpath(path, os.path.join(REPO, ".."))
        text = open(path, encoding="utf-8").read()
        for i, chunk in enumerate(SPLIT.split(text)):
            if not chunk.strip():
                continue
            if len(chunk) > max_chars:
                cut = chunk.rfind("\n  func.func", 0, max_chars)
                chunk = chunk[:cut] + "\n}\n" if cut > 0 else chunk[:max_chars]
            chunks.append((f"{rel}#{i}", chunk))
    return tuple(chunks)


@functools.lru_cache(maxsize=None)
def parsing_text_inputs() -> tuple[tuple[str, str], ...]:
    """The chunks that parse as they are (the seeds of pipeline fuzzing and of bytecode)."""
    from toolkit.ir.serialization import read_module

    out = []
    for name, text in text_inputs():
        try:
            read_module(text, quiet_context())
        except Exception:  # noqa: BLE001 - chunks that expect a parse error
            continue
        out.append((name, text))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def tokens() -> tuple[str, ...]:
    """Tokens of the corpus (SSA names, symbols, op names, types, numbers) for splicing mutations."""
    pattern = re.compile(r"%[\w.#:]+|@[\w.$]+|\b[a-z_]+\.[a-z_.]+\b|tensor<[^<>\n]*>|#[\w.]+<[^<>\n]*>|"
                         r"-?\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b|\b\w+\b|[{}()<>\[\]:,=\"]")
    seen: dict[str, None] = {}
    for _, text in text_inputs():
        for match in pattern.finditer(text):
            seen.setdefault(match.group(0))
            if len(seen) >= 20_000:
                return tuple(seen)
    return tuple(seen)


@functools.lru_cache(maxsize=None)
def bytecode_inputs(max_modules: int = 60) -> tuple[tuple[str, bytes], ...]:
    """``(name, bytes)``: MLIR bytecode and VHLO of parsing chunks, and the upstream ``.mlir.bc`` files."""
    from toolkit.ir.serialization import read_module, write_module

    out = []
    for name, text in parsing_text_inputs()[:max_modules]:
        try:
            module = read_module(text, quiet_context())
            out.append((name + ".mlirbc", write_module(module, "bytecode")))
            if "stablehlo." in text and len(out) % 3 == 0:
                out.append((name + ".vhlo", write_module(module, "vhlo", target_version="1.15.0")))
        except Exception:  # noqa: BLE001 - not every module converts to VHLO
            continue
    for path in sorted(glob.glob(os.path.join(SHARED, "stablehlo_lit", "**", "*.mlir.bc"), recursive=True))[::3]:
        out.append((os.path.relpath(path, os.path.join(REPO, "..")), open(path, "rb").read()))
    return tuple(out)


# --------------------------------------------------------------------------
# Serialized exports
# --------------------------------------------------------------------------


def _toolkit_exports() -> list[tuple[str, bytes]]:
    import collections

    import numpy as np

    import toolkit
    import toolkit.numpy as tnp
    from toolkit.export import export, symbolic_shape

    f32 = np.float32
    out = []

    def add(name, fun, *args, vjp_order=0, **kwargs):
        exp = export(toolkit.jit(fun), **kwargs)(*args)
        out.append((name, bytes(exp.serialize(vjp_order=vjp_order))))

    add("add", lambda x, y: x + y, np.ones(3, f32), np.ones(3, f32))
    add("tree", lambda d, xs: {"s": d["a"] * 2, "t": [x + 1 for x in xs], "n": None},
        {"a": np.ones((2, 3), f32), "b": np.ones(4, np.int32)}, [np.ones(2, f32), np.ones((), f32)])
    add("ordered", lambda d: tuple(d.values()), collections.OrderedDict([("p", np.ones(2, f32)),
                                                                        ("q", np.ones(3, np.int8))]))
    a, b = symbolic_shape("a, b")
    from toolkit.core.avals import ShapeDtypeStruct

    add("symbolic", lambda x, y: (tnp.sin(x) @ y, x.sum()), ShapeDtypeStruct((a, 8), f32),
        ShapeDtypeStruct((8, b), f32))
    add("vjp1", lambda x: tnp.sin(x) * x, np.ones(4, f32), vjp_order=1)
    add("vjp2", lambda x, w: tnp.tanh(x @ w).sum(), np.ones((2, 3), f32), np.ones((3, 4), f32), vjp_order=2)
    add("platforms", lambda x: x * 2, np.ones(5, f32), platforms=("cpu", "cuda"))
    try:
        from toolkit import shard
        from toolkit.runtime import client

        devices = client.devices()
        if len(devices) >= 8:
            mesh = shard.Mesh(np.array(devices[:8]).reshape(2, 4), ("x", "y"))
            ns = lambda *spec: shard.NamedSharding(mesh, shard.P(*spec))  # noqa: E731
            fun = toolkit.jit(lambda p, q: (p @ q, p.sum()), in_shardings=(ns("x", "y"), ns("y", None)),
                              out_shardings=(ns("x"), ns()))
            exp = export(fun)(np.ones((8, 8), f32), np.ones((8, 4), f32))
            out.append(("sharded", bytes(exp.serialize())))
    except Exception:  # noqa: BLE001 - no multi-device backend in this process
        pass
    return out


def _jax_blobs(limit: int) -> list[tuple[str, bytes]]:
    folder = os.path.join(SHARED, "jax_poly_harness")
    paths = sorted(glob.glob(os.path.join(folder, "*.bin")))
    if not paths:
        return []
    step = max(1, len(paths) // limit)
    return [("jax:" + os.path.basename(p), open(p, "rb").read()) for p in paths[::step][:limit]]


@functools.lru_cache(maxsize=None)
def export_blobs(jax_limit: int = 24) -> tuple[tuple[str, bytes], ...]:
    """``(name, blob)`` seeds: toolkit-written exports, then a sample of JAX-written ones."""
    return tuple(_toolkit_exports() + _jax_blobs(jax_limit))
