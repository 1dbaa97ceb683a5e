"""Shape refinement cost: toolkit-refine-shapes (Python) vs jaxlib's C++, same run.

Modules: polymorphic chains written by ``jax.export`` (``x: f32[b, 8]``, each
step ``tanh(x) * 1.01 + ones(x.shape)`` so every step carries a dynamic
broadcast and dimension arithmetic) when jax is importable, otherwise the
same chain as hand-written StableHLO text. Sizes ~1k, 3k, 10k, 30k and 100k ops
(per-op cost should stay flat as the module grows). Each
is bound to ``b = 16`` with ``stablehlo-refine-arguments`` first.

Timed (median of ``--repeat`` runs, the three alternating, process CPU time
by default — other work on the machine distorts wall time — parse excluded
where possible):

* ``toolkit``: ``toolkit-refine-shapes`` (mode=jax) through ``run_pipeline``;
* ``C++ entry``: ``jaxlib._jax.mlir.refine_polymorphic_shapes`` (what
  ``jax.export`` calls; takes and returns bytecode, so it includes a
  bytecode parse and write);
* ``C++ pass``: ``stablehlo-refine-shapes`` alone in a PassManager (it does
  not canonicalize dynamic ops or check assertions, so it does less work).

    python bench/refine.py [--sizes 1000,3000,10000,30000,100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jaxlib.mlir import ir, passmanager  # noqa: E402

from toolkit.ir.context import make_context  # noqa: E402
from toolkit.passes import run_pipeline  # noqa: E402


def _jax_module(steps: int) -> str | None:
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax import export
    except ImportError:
        return None

    def chain(x):
        for _ in range(steps):
            x = jnp.tanh(x) * np.float32(1.01) + jnp.ones(x.shape, x.dtype)
        return x

    shape = export.symbolic_shape("b, 8")
    return export.export(jax.jit(chain))(jax.ShapeDtypeStruct(shape, np.float32)).mlir_module()


def _text_module(steps: int) -> str:
    lines = [
        "func.func public @main(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {",
        "  %one = stablehlo.constant dense<1.0> : tensor<f32>",
        "  %k = stablehlo.constant dense<1.01> : tensor<f32>",
        "  %eight = stablehlo.constant dense<8> : tensor<1xi32>",
    ]
    for i in range(steps):
        x, y = f"%x{i}", f"%x{i + 1}"
        lines += [
            f"  %d{i} = stablehlo.get_dimension_size {x}, dim = 0 : (tensor<?x8xf32>) -> tensor<i32>",
            f"  %r{i} = stablehlo.reshape %d{i} : (tensor<i32>) -> tensor<1xi32>",
            f"  %s{i} = stablehlo.concatenate %r{i}, %eight, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>",
            f"  %t{i} = stablehlo.tanh {x} : tensor<?x8xf32>",
            f"  %kb{i} = stablehlo.dynamic_broadcast_in_dim %k, %s{i}, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x8xf32>",
            f"  %m{i} = stablehlo.multiply %t{i}, %kb{i} : tensor<?x8xf32>",
            f"  %ob{i} = stablehlo.dynamic_broadcast_in_dim %one, %s{i}, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x8xf32>",
            f"  {y} = stablehlo.add %m{i}, %ob{i} : tensor<?x8xf32>",
        ]
    lines += [f"  return %x{steps} : tensor<?x8xf32>", "}"]
    return "\n".join(lines)


def _count_ops(module: ir.Module) -> int:
    count = 0

    def visit(op):
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count


def _bound_bytecode(text: str) -> bytes:
    context = make_context()
    with context:
        module = ir.Module.parse(text)
        passmanager.PassManager.parse(
            "builtin.module(stablehlo-refine-arguments{types=tensor<16x8xf32>})").run(module.operation)
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def _parse(bytecode: bytes) -> ir.Module:
    with make_context():
        return ir.Module.parse(bytecode)


_clock = time.process_time


def _median_time(setup, run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        state = setup()
        gc.collect()
        start = _clock()
        run(state)
        times.append(_clock() - start)
    return statistics.median(times)


def measure_sizes(sizes: list[int], repeat: int, text: bool = False) -> list[tuple[int, float, float, float]]:
    """Per target size: (ops, toolkit s, C++ entry s, C++ pass s), medians of ``repeat`` runs."""
    from jaxlib import _jax

    rows = []
    for target in sizes:
        # ~9 ops per step in both generators; start there and adjust once.
        steps = max(1, target // 9)
        make = (lambda n: _text_module(n)) if text else (lambda n: _jax_module(n) or _text_module(n))
        text_module = make(steps)
        bytecode = _bound_bytecode(text_module)
        ops = _count_ops(_parse(bytecode))
        steps = max(1, round(steps * target / ops))
        text_module = make(steps)
        bytecode = _bound_bytecode(text_module)
        ops = _count_ops(_parse(bytecode))

        def cxx_pass(module: ir.Module) -> None:
            with module.context:
                passmanager.PassManager.parse("builtin.module(stablehlo-refine-shapes)").run(module.operation)

        # The three alternate, one run each per round, so load from other processes (which on this
        # machine slows even CPU time: the cores are shared) falls on all of them alike.
        times: list[list[float]] = [[], [], []]
        for _ in range(repeat):
            times[0].append(_median_time(
                lambda: _parse(bytecode),
                lambda m: run_pipeline(m, "builtin.module(toolkit-refine-shapes)", verify=False), 1))
            times[1].append(_median_time(lambda: None, lambda _: _jax.mlir.refine_polymorphic_shapes(
                bytecode, enable_shape_assertions=True, validate_static_shapes=True), 1))
            times[2].append(_median_time(lambda: _parse(bytecode), cxx_pass, 1))
        ours, entry, cpass = (statistics.median(t) for t in times)
        rows.append((ops, ours, entry, cpass))
    return rows


def main(argv: list[str] | None = None) -> list[tuple[str, float, float | None]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,3000,10000,30000,100000", help="target op counts")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--text", action="store_true", help="hand-written modules even if jax is importable")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="cpu: process time (robust on a loaded machine; default), wall: perf_counter")
    args = parser.parse_args(argv)
    global _clock
    _clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rows = measure_sizes([int(s) for s in args.sizes.split(",")], args.repeat, args.text)
    source = "hand-written text" if args.text or _jax_module(1) is None else "jax.export"
    print(f"shape refinement, modules from {source}, bound to b=16; median of {args.repeat}, "
          f"{args.clock} time")
    print(f"{'ops':>7} {'toolkit ms':>11} {'µs/op':>7} {'C++ entry ms':>13} {'µs/op':>7} "
          f"{'ratio':>6} {'C++ pass ms':>12} {'µs/op':>7} {'ratio':>6}")
    for ops, ours, entry, cpass in rows:
        print(f"{ops:>7} {ours * 1e3:>11.2f} {ours / ops * 1e6:>7.2f} {entry * 1e3:>13.2f} "
              f"{entry / ops * 1e6:>7.2f} {ours / entry:>6.1f} {cpass * 1e3:>12.2f} "
              f"{cpass / ops * 1e6:>7.2f} {ours / cpass:>6.1f}")
    return [(f"refine {ops} ops (vs C++ entry)", ours, entry) for ops, ours, entry, _ in rows]


if __name__ == "__main__":
    main()
