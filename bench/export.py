"""Export, serialize, deserialize and first-call cost, and blob size: toolkit vs ``jax.export``, same run.

Functions (float32):

* ``elementwise`` — ``sin(x) * 2 + y`` on ``[1024]``;
* ``mlp``         — 3 dense layers of 512 with tanh, batch 64 (weights as arguments);
* ``chain1000``   — 1000 alternating ``sin``/``cos`` ops on ``[16]``.

Rows: ``export`` (trace + lower + wrap + serialize the module; a fresh
``jit`` each time so nothing is cached), ``serialize`` (``Exported.serialize()``),
``deserialize`` (``deserialize(blob)``), ``call`` (first ``Exported.call`` of a
freshly deserialized object, after one warm-up call of the same blob: both
toolkit and JAX then reuse the compiled code of the equal export, so this
is the cached-call path; cold compiles are dominated by XLA), the blob size
and the module (portable artifact) size. Medians of ``--repeat`` runs.

    python bench/export.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np


def _median_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), result


def _functions(np_mod: Any) -> dict[str, tuple[Callable, tuple]]:
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

    return {
        "elementwise": (elementwise, (rng.standard_normal(1024).astype(f32), rng.standard_normal(1024).astype(f32))),
        "mlp": (mlp, (rng.standard_normal((64, 512)).astype(f32),
                      *(rng.standard_normal((512, 512)).astype(f32) * 0.05 for _ in range(3)))),
        "chain1000": (chain1000, (rng.standard_normal(16).astype(f32),)),
    }


def bench_toolkit(repeat: int) -> dict[str, dict[str, float]]:
    import toolkit
    import toolkit.numpy as tnp
    from toolkit.export import deserialize, export

    rows = {}
    for name, (fun, args) in _functions(tnp).items():
        t_export, exp = _median_ms(lambda: export(toolkit.jit(fun))(*args), repeat)
        t_ser, blob = _median_ms(lambda: bytes(exp.serialize()), repeat)
        t_de, _ = _median_ms(lambda: deserialize(blob), repeat)
        np.asarray(deserialize(blob).call(*args))  # warm-up: backend start, first-compile costs
        t_call, _ = _median_ms(lambda: np.asarray(deserialize(blob).call(*args)), max(1, repeat // 2))
        rows[name] = dict(export=t_export, serialize=t_ser, deserialize=t_de, call=t_call, blob=len(blob),
                          module=len(exp.mlir_module_serialized))
    return rows


def bench_jax(repeat: int) -> dict[str, dict[str, float]] | None:
    try:
        import jax
        import jax.numpy as jnp
        from jax import export as jexport
    except ImportError:
        return None
    rows = {}
    for name, (fun, args) in _functions(jnp).items():
        t_export, exp = _median_ms(lambda: jexport.export(jax.jit(fun))(*args), repeat)
        t_ser, blob = _median_ms(lambda: bytes(exp.serialize()), repeat)
        t_de, _ = _median_ms(lambda: jexport.deserialize(blob), repeat)
        np.asarray(jexport.deserialize(blob).call(*args))  # warm-up
        t_call, _ = _median_ms(lambda: np.asarray(jexport.deserialize(blob).call(*args)), max(1, repeat // 2))
        rows[name] = dict(export=t_export, serialize=t_ser, deserialize=t_de, call=t_call, blob=len(blob),
                          module=len(exp.mlir_module_serialized))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ours = bench_toolkit(args.repeat)
    theirs = bench_jax(args.repeat)
    header = f"{'function':<12} {'metric':<12} {'toolkit':>12} {'jax.export':>12} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for name, row in ours.items():
        for metric, value in row.items():
            unit = "B" if metric in ("blob", "module") else "ms"
            other = theirs[name][metric] if theirs else float("nan")
            ratio = value / other if theirs and other else float("nan")
            fmt = (lambda v: f"{v:>10.0f} {unit}") if unit == "B" else (lambda v: f"{v:>9.3f} {unit}")
            print(f"{name:<12} {metric:<12} {fmt(value)} {fmt(other)} {ratio:>7.2f}")


if __name__ == "__main__":
    main()
