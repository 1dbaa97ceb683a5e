"""The persistent compilation cache: a fresh process's first call with the cache cold, then warm; toolkit and JAX.

The program is an L-layer transformer training step with Adam (the reference
transformer block of ``toolkit/examples/reference_programs.py`` stacked L times:
layer norms, 4-head attention, GELU MLP; batch 2, sequence 16, width 64; the loss
the mean square of the output; gradients by ``value_and_grad``; Adam's update by
hand), the same code under ``toolkit.jit`` and ``jax.jit``.

Each measurement is its own Python process (imports are not timed), so nothing
is cached in memory: for each library, one process with an empty cache folder
(``cold``: compiles and writes the entry), then one with the folder it left
(``warm``: loads the executable). Each reports trace + lower, compile (``.lower().compile()``,
which is where a persistent cache answers in both libraries), the first
execution, their sum (the first call), and its loss (cold and warm must agree).
Thresholds are 0 in both libraries so every executable is written. Not timed: imports,
and a first host read of an array (in toolkit it imports jax, through jaxlib's conversion). With
``--repeat`` > 1, toolkit's and JAX's process pairs alternate and medians are shown.

    python bench/compilation_cache.py [--layers 8] [--repeat 1] [--no-jax]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)


def training_step(lib: Any, layers: int) -> tuple[Any, tuple]:
    """An Adam training step of an ``layers``-layer transformer in ``lib`` (toolkit or jax), and its arguments."""
    from toolkit.examples.reference_programs import PROGRAMS  # numpy-only inputs, and the block's code for lib

    program = PROGRAMS["transformer"]
    block = program.build(lib)
    rng = np.random.default_rng(0)
    params = []
    for _ in range(layers):
        layer, x = program.make_inputs(rng)
        params.append(layer)
    tree_map = lib.tree_util.tree_map
    jnp = lib.numpy

    def loss_fn(params, x):
        for layer in params:
            x = block(layer, x)
        return jnp.mean(x * x)

    def step(params, m, v, t, x):
        loss, grads = lib.value_and_grad(loss_fn)(params, x)
        b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
        m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        params = tree_map(lambda p, m, v: p - lr * (m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + eps),
                          params, m, v)
        return params, m, v, loss

    zeros = [{k: np.zeros_like(a) for k, a in layer.items()} for layer in params]
    return step, (params, zeros, [dict(z) for z in zeros], np.float32(1.0), x)


def child(library: str, directory: str, layers: int) -> dict[str, Any]:
    """One process's measurement (run by the parent with ``--child``)."""
    lib: Any
    if library == "toolkit":
        import toolkit as lib
        from toolkit.core.config import config

        config.update("jax_compilation_cache_dir", directory)
        config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    else:
        import jax as lib  # type: ignore[no-redef]

        lib.config.update("jax_compilation_cache_dir", directory)
        lib.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        lib.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    step, args = training_step(lib, layers)
    # Not timed, as imports are not: toolkit's first read of an array on the host imports jax (through
    # jaxlib's conversion), ~1-3 s here, which has nothing to do with compiling.
    np.asarray(lib.device_put(np.zeros(1, np.float32)))
    start = time.perf_counter()
    lowered = lib.jit(step).lower(*args)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    out = compiled(*args)
    loss = float(np.asarray(out[-1]))
    done = time.perf_counter()
    result: dict[str, Any] = {"trace+lower": lowered_at - start, "compile": compiled_at - lowered_at,
              "execute": done - compiled_at, "first call": done - start, "loss": loss}
    if library == "toolkit":
        result["stats"] = lib.compilation_cache.statistics()
    return result


def _run_child(library: str, directory: str, layers: int) -> dict[str, Any]:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("TOOLKIT_COMPILATION_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, __file__, "--child", library, directory, str(layers)],
                          capture_output=True, text=True, env=env, timeout=1800, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{library} child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(layers: int, repeat: int, libraries: list[str]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``{library: {"cold": [runs], "warm": [runs]}}``; toolkit's and JAX's pairs alternate."""
    results: dict[str, dict[str, list[dict[str, Any]]]] = {lib: {"cold": [], "warm": []} for lib in libraries}
    for _ in range(repeat):
        for library in libraries:
            directory = tempfile.mkdtemp(prefix=f"cache-bench-{library}-")
            try:
                results[library]["cold"].append(_run_child(library, directory, layers))
                results[library]["warm"].append(_run_child(library, directory, layers))
            finally:
                shutil.rmtree(directory, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-jax", action="store_true", help="toolkit only")
    parser.add_argument("--child", nargs=3, metavar=("LIBRARY", "DIR", "LAYERS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], int(args.child[2]))))
        return {}
    libraries = ["toolkit"] if args.no_jax else ["toolkit", "jax"]
    results = measure(args.layers, args.repeat, libraries)
    print(f"{args.layers}-layer transformer training step (Adam), first call in a fresh process; "
          f"medians of {args.repeat}, seconds")
    phases = ["trace+lower", "compile", "execute", "first call"]
    print(f"{'':22}" + "".join(f"{p:>13}" for p in phases) + f"{'loss':>14}")
    summary: dict[str, Any] = {}
    for library in libraries:
        for state in ("cold", "warm"):
            runs = results[library][state]
            medians = {p: statistics.median(r[p] for r in runs) for p in phases}
            summary[f"{library} {state}"] = medians
            print(f"{library + ' ' + state:22}" + "".join(f"{medians[p]:13.3f}" for p in phases)
                  + f"{runs[0]['loss']:14.7g}")
        cold, warm = summary[f"{library} cold"], summary[f"{library} warm"]
        print(f"{library + ' warm/cold':22}" + "".join(f"{warm[p] / cold[p]:13.3f}" for p in phases))
        losses = {r["loss"] for state in ("cold", "warm") for r in results[library][state]}
        if len(losses) != 1:
            print(f"  {library}: losses differ between runs: {sorted(losses)}")
    if "jax" in libraries:
        ratio = summary["toolkit warm"]["first call"] / summary["jax warm"]["first call"]
        saved_toolkit = summary["toolkit cold"]["compile"] - summary["toolkit warm"]["compile"]
        saved_jax = summary["jax cold"]["compile"] - summary["jax warm"]["compile"]
        print(f"compile time saved: toolkit {saved_toolkit:.3f} s, JAX {saved_jax:.3f} s; "
              f"warm first call toolkit/JAX {ratio:.3f}")
    return summary


if __name__ == "__main__":
    main()
