"""Cost of the pass machinery, per op, on 1k- and 10k-op modules.

Rows (each on a fresh copy of the same module, median of several runs):

* ``bare walk``             — ``op.walk`` with a Python callback reading each op's name
                              (the floor for any Python pass in these bindings);
* ``empty Python pass``     — the same walk inside a registered ModulePass, run with
                              ``Pipeline.run`` (PassManager, probes, verifier);
* ``pattern pass (greedy)`` — a one-pattern PatternPass (x * 1 -> x) that fires on half the ops;
* ``pattern pass (walk)``   — the same pattern with the walk driver;
* ``C++ cse`` / ``C++ canonicalize`` — through ``Pipeline.run`` too (which verifies
  after every C++ pass; MLIR's own manager skips that when a pass changed nothing),
  with ``verify=False``, and through a bare jaxlib ``PassManager`` for reference.

The overhead column compares the empty pass with the bare walk.

    python bench/passes.py [--sizes 1000 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import statistics
import time
from typing import Any, Callable, ClassVar

from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.passes import ModulePass, PatternPass, parse_pipeline, register_pass
from toolkit.passes.simplify import multiply_one


@register_pass
@dataclasses.dataclass(frozen=True)
class EmptyVisitPass(ModulePass):
    name: ClassVar[str] = "bench-empty-visit"
    description: ClassVar[str] = "Visits every op and does nothing."
    modifies_ir: ClassVar[bool] = False

    def apply(self, op: ir.Operation) -> None:
        op.walk(_visit)


def _visit(op: ir.Operation) -> ir.WalkResult:
    op.name
    return ir.WalkResult.ADVANCE


@register_pass
@dataclasses.dataclass(frozen=True)
class OnePatternPass(PatternPass):
    name: ClassVar[str] = "bench-one-pattern"

    def patterns(self):
        return [multiply_one]


@register_pass
@dataclasses.dataclass(frozen=True)
class OnePatternWalkPass(PatternPass):
    name: ClassVar[str] = "bench-one-pattern-walk"
    driver: ClassVar[str] = "walk"

    def patterns(self):
        return [multiply_one]


def _bare_pass_manager(module: ir.Module, pipeline: str) -> None:
    from jaxlib.mlir import passmanager

    with module.context:
        pm = passmanager.PassManager.parse(f"builtin.module({pipeline})")
        pm.run(module.operation)


def module_text(num_ops: int) -> str:
    """One function: alternating add(prev, x) and multiply(prev, 1), ``num_ops`` ops total."""
    lines = ["func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {",
             "  %one = stablehlo.constant dense<1.0> : tensor<8xf32>"]
    previous = "%x"
    body_ops = num_ops - 3  # func, constant, return
    for i in range(body_ops):
        op = "add" if i % 2 == 0 else "multiply"
        other = "%x" if op == "add" else "%one"
        lines.append(f"  %v{i} = stablehlo.{op} {previous}, {other} : tensor<8xf32>")
        previous = f"%v{i}"
    lines += [f"  return {previous} : tensor<8xf32>", "}"]
    return "\n".join(lines)


def _bytecode(module: ir.Module) -> bytes:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def measure(bytecode: bytes, action: Callable[[ir.Module], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        context = make_context()
        module = ir.Module.parse(bytecode, context)
        start = time.perf_counter()
        action(module)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    pipelines = {name: parse_pipeline(name) for name in
                 ("bench-empty-visit", "bench-one-pattern", "bench-one-pattern-walk", "cse", "canonicalize")}
    rows = [
        ("bare walk (no pass manager)", lambda m: m.operation.walk(_visit)),
        ("empty Python pass", lambda m: pipelines["bench-empty-visit"].run(m)),
        ("pattern pass x*1->x (greedy)", lambda m: pipelines["bench-one-pattern"].run(m)),
        ("pattern pass x*1->x (walk)", lambda m: pipelines["bench-one-pattern-walk"].run(m)),
        ("C++ cse", lambda m: pipelines["cse"].run(m)),
        ("C++ cse (verify=False)", lambda m: pipelines["cse"].run(m, verify=False)),
        ("C++ cse (bare jaxlib PassManager)", lambda m: _bare_pass_manager(m, "cse")),
        ("C++ canonicalize", lambda m: pipelines["canonicalize"].run(m)),
        ("C++ canonicalize (bare jaxlib PM)", lambda m: _bare_pass_manager(m, "canonicalize")),
    ]
    print(f"{'pass':<36}" + "".join(f"{f'{n} ops µs/op':>16}" for n in args.sizes))
    results: dict[str, list[float]] = {}
    for size in args.sizes:
        context = make_context()
        module = ir.Module.parse(module_text(size), context)
        count = []
        module.operation.walk(lambda op: (count.append(1), ir.WalkResult.ADVANCE)[1])
        bytecode = _bytecode(module)
        for label, action in rows:
            seconds = measure(bytecode, action, args.repeat)
            results.setdefault(label, []).append(seconds / len(count) * 1e6)
    for label, _ in rows:
        print(f"{label:<36}" + "".join(f"{v:16.3f}" for v in results[label]))
    bare, empty = results[rows[0][0]], results[rows[1][0]]
    print(f"{'empty pass overhead vs bare walk':<36}" +
          "".join(f"{100 * (e - b) / b:15.1f}%" for b, e in zip(bare, empty)))


if __name__ == "__main__":
    main()
