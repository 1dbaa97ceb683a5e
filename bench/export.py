"""Export, serialize, deserialize and first-call cost, and blob size: toolkit vs ``jax.export``, same run.

Functions (float32):

* ``elementwise`` — ``sin(x) * 2 + y`` on ``[1024]``;
* ``mlp``         — 3 dense layers of 512 with tanh, batch 64 (weights as arguments);
* ``transformer`` — the reference transformer block (``toolkit/examples/reference_programs.py``:
  layer norms, 4-head attention, GELU MLP; batch 2, sequence 16, width 64);
* ``chain1000``   — 1000 alternating ``sin``/``cos`` ops on ``[16]``.

Rows: ``export`` (trace + lower + wrap + serialize the module of a function
neither library has seen: each export gets a *new function object* with the
same code, because ``jax.jit`` caches traces and lowerings by the Python
function — a fresh ``jax.jit`` of the same function skips tracing and
lowering), ``export (warm)`` (the same function object each time, a fresh
jit: both JAX and toolkit reuse the trace and lowering they cached by the
function, so this is mostly serialization), ``serialize`` (``Exported.serialize()``),
``deserialize`` (``deserialize(blob)``), ``call`` (first ``Exported.call`` of
a freshly deserialized object, after one warm-up call of the same blob: both
then reuse the compiled code of the equal export, so this is the
cached-call path; cold compiles are dominated by XLA), the blob size and the
module (portable artifact) size.

Toolkit and JAX are timed in alternating runs (so load from other processes
falls on both alike); each time is the median of ``--repeat`` runs.

    python bench/export.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import types
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def fresh(fun: Callable) -> Callable:
    """A new function object with ``fun``'s code: what no jit cache keyed by the function has seen."""
    copy = types.FunctionType(fun.__code__, fun.__globals__, fun.__name__, fun.__defaults__, fun.__closure__)
    copy.__kwdefaults__ = fun.__kwdefaults__
    return copy


def _functions(lib: Any) -> dict[str, tuple[Callable, tuple]]:
    from toolkit.examples.reference_programs import PROGRAMS

    np_mod = lib.numpy
    rng = np.random.default_rng(0)
    f32 = np.float32

    def elementwise(x, y):
        return np_mod.sin(x) * 2 + y

    def mlp(x, w1, w2, w3):
        h = np_mod.tanh(x @ w1)
        h = np_mod.tanh(h @ w2)
        return h @ w3

    def chain1000(x):
        for i in range(500):
            x = np_mod.sin(x)
            x = np_mod.cos(x)
        return x

    transformer = PROGRAMS["transformer"]
    return {
        "elementwise": (elementwise, (rng.standard_normal(1024).astype(f32), rng.standard_normal(1024).astype(f32))),
        "mlp": (mlp, (rng.standard_normal((64, 512)).astype(f32),
                      *(rng.standard_normal((512, 512)).astype(f32) * 0.05 for _ in range(3)))),
        "transformer": (transformer.build(lib), transformer.make_inputs(np.random.default_rng(0))),
        "chain1000": (chain1000, (rng.standard_normal(16).astype(f32),)),
    }


def _paired_ms(fns: list[Callable[[], Any]], repeat: int) -> list[float]:
    """Median ms of each function, run in alternation ``repeat`` times (after one warm-up each)."""
    for fn in fns:
        fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, samples):
            start = time.perf_counter()
            fn()
            out.append((time.perf_counter() - start) * 1e3)
    return [statistics.median(s) for s in samples]


class _Side:
    """One library's export API, uniformly."""

    def __init__(self, name: str):
        self.name = name
        if name == "toolkit":
            import toolkit
            from toolkit.export import deserialize, export
            self.lib, self.jit, self.export, self.deserialize = toolkit, toolkit.jit, export, deserialize
        else:
            import jax
            from jax import export as jexport
            self.lib, self.jit, self.export, self.deserialize = jax, jax.jit, jexport.export, jexport.deserialize


def measure(repeat: int) -> dict[str, dict[str, tuple[float, float | None]]]:
    """function -> metric -> (toolkit, JAX or None)."""
    sides = [_Side("toolkit")]
    try:
        sides.append(_Side("jax"))
    except ImportError:
        pass
    funcs = [_functions(side.lib) for side in sides]
    rows: dict[str, dict[str, tuple[float, float | None]]] = {}
    for name in funcs[0]:
        per_side = []
        for side, fs in zip(sides, funcs):
            fun, args = fs[name]
            exp = side.export(side.jit(fun))(*args)
            blob = bytes(exp.serialize())
            per_side.append((side, fun, args, exp, blob))

        def timed(make: Callable[[tuple], Callable[[], Any]], reps: int = repeat) -> tuple[float, float | None]:
            times = _paired_ms([make(entry) for entry in per_side], reps)
            return times[0], (times[1] if len(times) > 1 else None)

        row: dict[str, tuple[float, float | None]] = {}
        row["export"] = timed(lambda e: lambda: e[0].export(e[0].jit(fresh(e[1])))(*e[2]))
        row["export (warm)"] = timed(lambda e: lambda: e[0].export(e[0].jit(e[1]))(*e[2]))
        row["serialize"] = timed(lambda e: lambda: bytes(e[3].serialize()), repeat * 5)
        row["deserialize"] = timed(lambda e: lambda: e[0].deserialize(e[4]), repeat * 5)
        for e in per_side:
            np.asarray(e[0].deserialize(e[4]).call(*e[2]))  # warm-up: backend start, first-compile costs
        row["call"] = timed(lambda e: lambda: np.asarray(e[0].deserialize(e[4]).call(*e[2])), max(3, repeat // 2))
        row["blob"] = tuple(float(len(e[4])) for e in per_side) + ((None,) if len(per_side) == 1 else ())
        row["module"] = tuple(float(len(e[3].mlir_module_serialized)) for e in per_side) + \
            ((None,) if len(per_side) == 1 else ())
        rows[name] = row
    return rows


def main(argv: list[str] | None = None) -> list[tuple[str, float, float | None]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    measured = measure(args.repeat)
    header = f"{'function':<12} {'metric':<14} {'toolkit':>12} {'jax.export':>12} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    out = []
    for name, row in measured.items():
        for metric, (ours, other) in row.items():
            unit = "B" if metric in ("blob", "module") else "ms"
            ratio = ours / other if other else float("nan")

            def fmt(v: float | None) -> str:
                if v is None:
                    return f"{'-':>12}"
                return f"{v:>10.0f} {unit}" if unit == "B" else f"{v:>9.3f} {unit}"

            print(f"{name:<12} {metric:<14} {fmt(ours)} {fmt(other)} {ratio:>7.2f}")
            if unit == "ms":
                out.append((f"{metric} {name}", ours / 1e3, other / 1e3 if other else None))
    return out


if __name__ == "__main__":
    main()
