"""The whole pipeline on a small MLP: ``python -m toolkit.tools.demo``.

Prints each stage on stdout — the traced program, the StableHLO module, what
the pass pipeline changed (patterns fired, op counts before and after, a diff)
and the module after it, the cost analysis of the executable compiled with
those passes — and checks the result against numpy.
"""

from __future__ import annotations

import difflib
import sys
from collections import Counter

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit import passes
from toolkit.ir import parse_module
from toolkit.passes.op_stats import count_ops


#: The passes section 3 shows and section 4 compiles with (after jit's own pipeline, empty by default).
PIPELINE = "builtin.module(toolkit-simplify, cse)"


def _op_count_table(before: Counter, after: Counter) -> str:
    """``op  before  after`` rows for every op in either count, then the totals."""
    names = sorted(set(before) | set(after))
    width = max([len(name) for name in names] + [len("Operation")])
    lines = [f"  {'Operation':<{width}}  before  after", "  " + "-" * (width + 15)]
    for name in names:
        mark = "" if before[name] == after[name] else "  <- changed"
        lines.append(f"  {name:<{width}}  {before[name]:6d}  {after[name]:5d}{mark}")
    lines.append(f"  {'Total':<{width}}  {sum(before.values()):6d}  {sum(after.values()):5d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the demo, printing every section on stdout; returns 0 when toolkit's result matches numpy's."""

    def mlp(params, x):
        for w, b in params[:-1]:
            x = tnp.tanh(x @ w + b)
        w, b = params[-1]
        # A redundant pair for the pass pipeline to remove (section 3): (w.T).T is w.
        return x @ w.T.T + b

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
    before_text = lowered.as_text()
    print(before_text)

    section(f"3. after the pass pipeline {PIPELINE}")
    # run_pipeline changes a module in place: run it on a copy, so section 2's module stays as lowered.
    module = parse_module(before_text)
    report = passes.run_pipeline(module, PIPELINE)
    after_text = module.operation.get_asm()
    print("What each pass did (rewrite patterns that fired):")
    for record in report.records:
        fired = ", ".join(f"{name} x{count}" for name, count in sorted(record.statistics.items()) if count)
        print(f"  {record.label}: {fired or 'nothing'}")
    print("\nOperation counts (toolkit-op-stats' count_ops):")
    print(_op_count_table(count_ops(parse_module(before_text).operation), count_ops(module.operation)))
    print("\nWhat the pipeline changed (unified diff of section 2's module):")
    diff = list(difflib.unified_diff(before_text.splitlines(), after_text.splitlines(),
                                     "before", "after", lineterm="", n=1))
    print("\n".join(diff) if diff else "  (nothing: the module is unchanged)")
    print("\nThe module after the pipeline:")
    print(after_text)

    # The same passes, run by compile on its own copy: what section 4 measures is section 3's module.
    compiled = lowered.compile(pipeline=PIPELINE)
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
