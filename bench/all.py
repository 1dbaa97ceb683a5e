"""Run every benchmark and print one table of ratios, toolkit / JAX (or the stated baseline).

    python bench/all.py [--quick] [--plot docs/performance-scaling.png] [--no-extra]

In-process, each contributing rows of (what, toolkit seconds, baseline seconds):

* ``bench/pipeline.py`` — trace, lower, compile and steady-state call of the reference programs;
* ``bench/dispatch.py`` — dispatch of a compiled call (``x+1``, a 10-leaf pytree, a
  shape-polymorphic executable at a seen shape against the static call);
* ``bench/export.py``   — export (cold and warm), serialize, deserialize, call of an export;
* ``bench/refine.py``   — ``toolkit-refine-shapes`` against jaxlib's C++ ``refine_polymorphic_shapes``;
* ``bench/scaling.py``  — per-op cost against module size (trace, lower, refine, serialize),
  and with ``--plot`` the PNG ``docs/performance.md`` shows.

Then, unless ``--no-extra``, the benchmarks that are not toolkit-vs-JAX ratios run as
subprocesses and their output follows the table: ``bench/passes.py`` (pass machinery,
Python vs C++), ``bench/rss.py`` (leak check) and ``bench/sharding.py`` (8 virtual CPU
devices, so it needs its own process).

Ratios below 1 mean toolkit is faster. The machine is shared and small (2 cores):
each benchmark takes medians and times toolkit and JAX in alternation where it can,
but single ratios move by ±20% between runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.2f} µs"


def main(argv: list[str] | None = None) -> list[tuple[str, str, float, float | None]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and sizes (a smoke run)")
    parser.add_argument("--plot", default=None, help="write the scaling plot (PNG) here")
    parser.add_argument("--no-extra", action="store_true", help="skip passes.py, rss.py and sharding.py")
    args = parser.parse_args(argv)

    import dispatch
    import export
    import pipeline
    import refine
    import scaling

    started = time.time()
    table: list[tuple[str, str, float, float | None]] = []

    def section(name: str, rows) -> None:
        print(f"\n=== {name} ===", flush=True)
        table.extend((name, what, ours, theirs) for what, ours, theirs in rows)

    repeat = 3 if args.quick else 7
    section("pipeline", pipeline.stage_rows(list(pipeline.PROGRAMS), 5 if args.quick else 20))
    section("dispatch", dispatch.main(["--seconds", "0.1" if args.quick else "0.3"]))
    section("export", export.main(["--repeat", str(repeat)]))
    section("refine", refine.main(["--sizes", "1000,10000" if args.quick else "1000,10000,30000",
                                   "--repeat", "3" if args.quick else "5"]))
    scaling_args = ["--sizes", "300,1000" if args.quick else "300,1000,3000,10000",
                    "--refine-sizes", "1000,3000" if args.quick else "1000,3000,10000,30000",
                    "--repeat", "2" if args.quick else "3"]
    if args.plot:
        scaling_args += ["--plot", args.plot]
    data = scaling.main(scaling_args)
    rows = []
    for stage, sides in data.items():
        theirs = dict(sides.get("jax", []))
        rows += [(f"{stage} per op, {ops} ops", ours, theirs.get(ops)) for ops, ours in sides["toolkit"]]
    section("scaling", rows)

    print(f"\n=== all benchmarks: toolkit / baseline (JAX unless stated), {time.time() - started:.0f} s ===")
    width = max(len(what) for _, what, _, _ in table) + 2
    print(f"{'bench':<10} {'what':<{width}} {'toolkit':>12} {'baseline':>12} {'ratio':>7}")
    for bench, what, ours, theirs in table:
        ratio = f"{ours / theirs:7.2f}" if theirs else "      -"
        print(f"{bench:<10} {what:<{width}} {_fmt(ours):>12} {_fmt(theirs):>12} {ratio}")

    if not args.no_extra:
        for script, extra in (("passes.py", ["--repeat", "3"]), ("rss.py", ["--cycles", "300", "--warmup", "50"]),
                              ("sharding.py", ["--repeats", "10"])):
            print(f"\n=== {script} (subprocess) ===", flush=True)
            subprocess.run([sys.executable, os.path.join(HERE, script), *extra], check=False)
    return table


if __name__ == "__main__":
    main()
