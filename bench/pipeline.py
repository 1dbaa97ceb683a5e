"""Trace, lower, compile and call times of toolkit's pipeline, against JAX in the same run.

    python bench/pipeline.py [--quick]

Prints, per reference program (toolkit/examples/reference_programs.py): trace,
lower, compile and steady-state call time, for toolkit and — when jax is
installed — for ``jax.jit`` on the same code, with the ratio toolkit/JAX.
Then: per-op cost of tracing and lowering a 1000-op chain, the call overhead
of ``x + 1`` on a small array, and memory (RSS growth over 1,000 distinct
jitted functions; peak RSS).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import toolkit  # noqa: E402
from toolkit.examples.reference_programs import PROGRAMS  # noqa: E402

try:
    import jax
except ImportError:  # the comparison columns are left empty
    jax = None


def median_time(fn, repeat: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def calls_per_second_time(fn, seconds: float = 0.3) -> float:
    """Median of several batches of back-to-back calls: the steady-state per-call time."""
    fn()
    batch = 1
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        if time.perf_counter() - start > 0.02:
            break
        batch *= 2
    samples = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(samples) < 5:
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - start) / batch)
    return statistics.median(samples)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:9.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:9.2f} µs"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:6.2f}x" if a and b else "     -"


def stage_times(lib, program, args, repeat):
    """Median trace/lower/compile times (a fresh function each time, so no cache answers) and call time."""
    jit = toolkit.jit if lib is toolkit else jax.jit
    block = toolkit.block_until_ready if lib is toolkit else jax.block_until_ready
    def fresh():
        return jit(program.build(lib))

    trace = median_time(lambda: fresh().trace(*args), repeat)
    lower = median_time(lambda: fresh().trace(*args).lower(), repeat) - trace
    compile_ = median_time(lambda: fresh().trace(*args).lower().compile(), max(3, repeat // 4)) - trace - lower
    compiled = fresh().trace(*args).lower().compile()
    device_args = toolkit.device_put(args) if lib is toolkit else jax.device_put(args)
    call = calls_per_second_time(lambda: block(compiled(*device_args)))
    return trace, lower, compile_, call


def chain(lib, n):
    jnp_ = lib.numpy

    def f(x):
        for i in range(n // 2):
            x = jnp_.sin(x) * 1.0001
        return x
    return f


def stage_rows(programs: list[str], repeat: int) -> list[tuple[str, float, float | None]]:
    """(``"<stage> <program>"``, toolkit s, JAX s or None) for trace, lower, compile and call of each program."""
    rng = np.random.default_rng(0)
    rows = []
    for name in programs:
        program = PROGRAMS[name]
        args = program.make_inputs(rng)
        ours = stage_times(toolkit, program, args, repeat)
        theirs = stage_times(jax, program, args, repeat) if jax else (None,) * 4
        for stage, a, b in zip(("trace", "lower", "compile", "call"), ours, theirs):
            rows.append((f"{stage} {name}", a, b))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (for CI smoke runs)")
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated reference programs")
    options = parser.parse_args()
    repeat = 5 if options.quick else 20
    rng = np.random.default_rng(0)
    print(f"toolkit {toolkit.__version__}; jax {jax.__version__ if jax else 'not installed'}; "
          f"{os.cpu_count()} cores\n")

    header = f"{'program':12} {'stage':8} {'toolkit':>12} {'jax':>12} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for name in options.programs.split(","):
        program = PROGRAMS[name]
        args = program.make_inputs(rng)
        ours = stage_times(toolkit, program, args, repeat)
        theirs = stage_times(jax, program, args, repeat) if jax else (None,) * 4
        for stage, a, b in zip(("trace", "lower", "compile", "call"), ours, theirs):
            print(f"{name:12} {stage:8} {fmt(a):>12} {fmt(b):>12} {ratio(a, b):>7}")

    print("\n1000-op chain (per op)")
    x = np.ones((8,), np.float32)
    for label, lib in (("toolkit", toolkit), ("jax", jax)):
        if lib is None:
            continue
        jit = toolkit.jit if lib is toolkit else jax.jit
        trace = median_time(lambda: jit(chain(lib, 1000)).trace(x), max(3, repeat // 4))
        lower = median_time(lambda: jit(chain(lib, 1000)).trace(x).lower(), max(3, repeat // 4)) - trace
        print(f"  {label:8} trace {fmt(trace / 1000)}/op   lower {fmt(lower / 1000)}/op")

    print("\nsteady-state call overhead: x + 1 on f32[8]")
    f = toolkit.jit(lambda a: a + 1)
    a = toolkit.device_put(np.ones(8, np.float32))
    ours = calls_per_second_time(lambda: f(a))
    theirs = None
    if jax:
        g = jax.jit(lambda a: a + 1)
        b = jax.device_put(np.ones(8, np.float32))
        theirs = calls_per_second_time(lambda: g(b))
    print(f"  toolkit {fmt(ours)}   jax {fmt(theirs)}   ratio {ratio(ours, theirs)}")

    print("\nmemory")
    gc.collect()
    before = rss_mb()
    small = np.ones((4,), np.float32)
    for i in range(1000):
        fun = toolkit.jit(lambda v, i=i: v * float(i) + 1.0)
        fun(small)
        del fun
    gc.collect()
    after = rss_mb()
    print(f"  RSS growth over 1000 distinct jitted functions: {after - before:.1f} MB")
    print(f"  peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB")


if __name__ == "__main__":
    main()
