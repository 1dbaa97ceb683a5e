"""Per-op cost against module size: trace, lower, refine and serialize, toolkit beside JAX.

For each size N (ops), same run, medians of ``--repeat`` runs (process CPU time
for refine, as ``bench/refine.py``; wall time otherwise), each after a full
garbage collection (so one left by earlier benchmarks falls on neither side):

* ``trace``     — tracing a chain of N/2 ``sin`` and N/2 ``cos`` on f32[16]
  (``jit(f).trace(x)``, a new function object each run so no cache answers);
* ``lower``     — lowering that trace to StableHLO (``.lower()`` minus the trace);
* ``refine``    — ``toolkit-refine-shapes`` against jaxlib's C++
  ``refine_polymorphic_shapes`` on the shape-polymorphic chain of
  ``bench/refine.py`` (~N ops, bound to b=16);
* ``serialize`` — the module as a StableHLO portable artifact, as each writes it
  for an export (toolkit: ``serialize_module``; JAX: bytecode +
  ``serialize_portable_artifact``, what ``jax.export`` calls).

    python bench/scaling.py [--sizes 300,1000,3000,10000] [--refine-sizes 1000,3000,10000,30000]
                            [--plot docs/performance-scaling.png]

``measure()`` returns ``{stage: {"toolkit"|"jax": [(ops, seconds per op), ...]}}``;
``plot()`` draws it (matplotlib, the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import statistics
import sys
import time
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _chain(lib, n: int):
    jnp = lib.numpy

    def chain(x):
        for _ in range(n // 2):
            x = jnp.cos(jnp.sin(x))
        return x
    return chain


def _fresh(fun):
    return types.FunctionType(fun.__code__, fun.__globals__, fun.__name__, fun.__defaults__, fun.__closure__)


def _median(fn, repeat: int, clock=time.perf_counter) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = clock()
        fn()
        samples.append(clock() - start)
    return statistics.median(samples)


def measure(sizes: list[int], refine_sizes: list[int], repeat: int = 3) -> dict:
    import toolkit
    from toolkit.export.exporting import portable_artifact_target, serialize_module
    try:
        import jax
        from jaxlib import _jax
    except ImportError:
        jax = None
    libs = [("toolkit", toolkit)] + ([("jax", jax)] if jax else [])
    out: dict = {stage: {name: [] for name, _ in libs} for stage in ("trace", "lower", "refine", "serialize")}
    x = np.ones(16, np.float32)
    target = portable_artifact_target()
    for n in sizes:
        for name, lib in libs:
            fun = _chain(lib, n)
            traces, lowers = [], []
            for i in range(repeat + 1):
                # A full collection of what the earlier benchmarks left (bench/all.py runs them in this process)
                # would fall inside whichever library's trace crosses CPython's threshold: start both from none.
                gc.collect()
                start = time.perf_counter()
                traced = lib.jit(_fresh(fun)).trace(x)
                middle = time.perf_counter()
                traced.lower()
                end = time.perf_counter()
                if i:  # the first run warms up
                    traces.append(middle - start)
                    lowers.append(end - middle)
            trace, lower = statistics.median(traces), statistics.median(lowers)
            lowered = lib.jit(_fresh(fun)).trace(x).lower()
            if name == "toolkit":
                module = lowered._module
                serialize = _median(lambda: serialize_module(module), repeat)
            else:
                module = lowered.compiler_ir()

                def jax_serialize(module=module):
                    buffer = io.BytesIO()
                    module.operation.write_bytecode(buffer)
                    return _jax.mlir.serialize_portable_artifact(buffer.getvalue(), target, False)
                serialize = _median(jax_serialize, repeat)
            out["trace"][name].append((n, trace / n))
            out["lower"][name].append((n, lower / n))
            out["serialize"][name].append((n, serialize / n))
    import refine as refine_bench
    for n in refine_sizes:
        rows = refine_bench.measure_sizes([n], repeat)
        ops, ours, entry, _ = rows[0]
        out["refine"]["toolkit"].append((ops, ours / ops))
        if jax:
            out["refine"]["jax"].append((ops, entry / ops))
    return out


def plot(data: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = ["trace", "lower", "refine", "serialize"]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, stage in zip(axes, stages):
        for name, style in (("toolkit", "o-"), ("jax", "s--")):
            points = data[stage].get(name) or []
            if not points:
                continue
            label = name if stage != "refine" else ("toolkit (Python pass)" if name == "toolkit"
                                                     else "jaxlib C++ refine_polymorphic_shapes")
            ax.plot([p[0] for p in points], [p[1] * 1e6 for p in points], style, label=label)
        ax.set_xscale("log")
        ax.set_title(stage)
        ax.set_xlabel("ops in module")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("µs per op")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.suptitle("per-op cost against module size (2-core machine, medians)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,1000,3000,10000")
    parser.add_argument("--refine-sizes", default="1000,3000,10000,30000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plot", default=None, help="write the plot (PNG) here")
    args = parser.parse_args(argv)
    data = measure([int(s) for s in args.sizes.split(",")], [int(s) for s in args.refine_sizes.split(",")],
                   args.repeat)
    print(f"{'stage':<10} {'ops':>7} {'toolkit µs/op':>14} {'jax µs/op':>10} {'ratio':>6}")
    for stage, sides in data.items():
        theirs = dict(sides.get("jax", []))
        for ops, ours in sides["toolkit"]:
            other = theirs.get(ops)
            ratio = f"{ours / other:6.2f}" if other else "     -"
            print(f"{stage:<10} {ops:>7} {ours * 1e6:>14.2f} {other * 1e6 if other else float('nan'):>10.2f} {ratio}")
    if args.plot:
        plot(data, args.plot)
        print(f"plot written to {args.plot}")
    return data


if __name__ == "__main__":
    main()
