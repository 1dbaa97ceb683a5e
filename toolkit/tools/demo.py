"""The whole pipeline on a small MLP: ``python -m toolkit.tools.demo``.

Prints each stage — the traced program, the StableHLO module, the module
after the pass pipeline, the compiled cost analysis — and checks the result
against numpy.
"""

from __future__ import annotations

import sys

import numpy as np
from jaxlib.mlir import ir

import toolkit
import toolkit.numpy as tnp
from toolkit import passes


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns 0 when toolkit's result matches numpy's."""

    def mlp(params, x):
        for w, b in params[:-1]:
            x = tnp.tanh(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    rng = np.random.default_rng(0)
    sizes = [8, 16, 16, 4]
    params = [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((2, 8)).astype(np.float32)

    def section(title):
        print(f"\n=== {title} " + "=" * max(0, 60 - len(title)))

    f = toolkit.jit(mlp)

    traced = f.trace(params, x)
    section("1. traced program (toolkit's typed IR)")
    print(traced.as_text(source_info=True))

    lowered = traced.lower()
    section("2. StableHLO (Lowered.as_text())")
    print(lowered.as_text())

    section("3. after the pass pipeline (toolkit-simplify, cse, toolkit-op-stats)")
    module = lowered.compiler_ir("stablehlo")
    with module.context:
        copy = ir.Module.parse(lowered.as_text())
    passes.run_pipeline(copy, "builtin.module(toolkit-simplify, cse, toolkit-op-stats)")
    print(copy.operation.get_asm())

    compiled = lowered.compile()
    section("4. compiled: cost analysis")
    for key in ("flops", "transcendentals", "bytes accessed"):
        print(f"  {key:>16}: {compiled.cost_analysis().get(key, 0):g}")
    stats = compiled.memory_analysis()
    print(f"  {'argument bytes':>16}: {stats.argument_size_in_bytes}")
    print(f"  {'output bytes':>16}: {stats.output_size_in_bytes}")

    section("5. result")
    result = np.asarray(compiled(params, x))
    expected = x
    for w, b in params[:-1]:
        expected = np.tanh(expected @ w + b)
    expected = expected @ params[-1][0] + params[-1][1]
    print(result)
    error = float(np.max(np.abs(result - expected)))
    print(f"max |toolkit - numpy| = {error:.2e}")
    return 0 if error < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
