"""RSS growth over many jit + export + serialize + deserialize + call cycles (a leak check).

    python bench/rss.py [--cycles 2000] [--warmup 200] [--mode same|distinct] [--check]

One cycle: ``toolkit.jit(f)`` (a new ``Wrapped``), ``toolkit.export.export``
(trace, lower, portable artifact), ``Exported.serialize()``,
``toolkit.export.deserialize``, ``Exported.call`` on fresh numpy inputs, and
a check of the result.

* ``--mode same`` (default; the number the < 100 KB/cycle target is about):
  the same Python function every cycle, so in steady state nothing new needs
  to be kept (the compiled code of the equal module is reused) and any
  growth is a leak;
* ``--mode distinct``: a new closure (a different constant) every cycle, so
  every cycle compiles new code; growth here includes what caches keep on
  purpose.

``--peak WORKLOAD`` (a ``bench/workload.py`` name, e.g. ``transformer-L2``)
measures something else: the peak memory of one training step's first call,
phase by phase (trace, lower, compile, call), for toolkit and JAX, each in a
fresh process (``VmRSS`` and ``VmHWM`` from ``/proc/self/status``, minus the
RSS once the backend exists), ``--repeat`` times interleaved, medians.

RSS is read from ``/proc/self/statm`` after ``--warmup`` cycles, then every
``--every`` cycles (after ``gc.collect()``); the per-cycle growth is the
least-squares slope over those samples (the end-to-end difference is printed
too). ``--check`` exits 1 if the slope is over ``--target-kb`` (100).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit.export import deserialize, export  # noqa: E402

PHASES = ("traced", "lowered", "compiled", "called")


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_child(library: str, name: str) -> dict[str, float]:
    """In this (fresh) process: RSS and high-water mark after each phase of ``name``'s first call, MB above base."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import workload  # bench/workload.py: the step functions and their numpy arguments
    if library == "jax":
        import jax as lib
    else:
        lib = toolkit
    step, args = workload.workload(name, lib)
    lib.block_until_ready(lib.numpy.ones(4) + 1)  # the backend exists before the base is read
    base = _status_mb("VmRSS")
    rows: dict[str, float] = {}

    def sample(phase: str) -> None:
        rows[phase + " RSS"] = _status_mb("VmRSS") - base
        rows[phase + " HWM"] = _status_mb("VmHWM") - base
    traced = lib.jit(step).trace(*args)
    sample("traced")
    lowered = traced.lower()
    sample("lowered")
    compiled = lowered.compile()
    sample("compiled")
    lib.block_until_ready(compiled(*args))
    sample("called")
    return rows


def peak(name: str, repeat: int) -> int:
    """Run :func:`peak_child` for toolkit and JAX in fresh processes, interleaved; print medians and ratios."""
    runs: dict[str, list[dict[str, float]]] = {"toolkit": [], "jax": []}
    for rep in range(repeat):
        for library in ("toolkit", "jax") if rep % 2 == 0 else ("jax", "toolkit"):
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--peak-child", library, name],
                                  capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                raise SystemExit(f"{library} {name} failed:\n{done.stderr[-3000:]}")
            runs[library].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{name}: MB above the RSS once the backend exists (median of {repeat})")
    print(f"{'after':<10} {'toolkit RSS':>12} {'JAX RSS':>9} {'toolkit HWM':>12} {'JAX HWM':>9} {'HWM ratio':>10}")
    for phase in PHASES:
        med = {(lib, kind): statistics.median(r[f"{phase} {kind}"] for r in runs[lib])
               for lib in runs for kind in ("RSS", "HWM")}
        ratio = med["toolkit", "HWM"] / med["jax", "HWM"] if med["jax", "HWM"] > 0 else float("nan")
        print(f"{phase:<10} {med['toolkit', 'RSS']:>12.1f} {med['jax', 'RSS']:>9.1f} "
              f"{med['toolkit', 'HWM']:>12.1f} {med['jax', 'HWM']:>9.1f} {ratio:>10.2f}")
    return 0

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def make_function(mode: str, cycle: int):
    if mode == "same":
        return _same
    scale = 1.0 + cycle * 1e-3

    def distinct(x, w):
        return tnp.tanh(x @ w) * scale + 1.0

    return distinct


def _same(x, w):
    return tnp.tanh(x @ w) * 2.0 + 1.0


def one_cycle(mode: str, cycle: int, rng: np.random.Generator) -> int:
    fun = make_function(mode, cycle)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    exp = export(toolkit.jit(fun))(x, w)
    blob = bytes(exp.serialize())
    again = deserialize(blob)
    out = np.asarray(again.call(x, w))
    scale = 2.0 if mode == "same" else 1.0 + cycle * 1e-3
    expected = np.tanh(x @ w) * scale + 1.0
    if not np.allclose(out, expected, rtol=1e-4, atol=1e-5):
        raise AssertionError(f"cycle {cycle}: wrong result")
    return len(blob)


def slope(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--every", type=int, default=100, help="cycles between RSS samples")
    parser.add_argument("--mode", choices=["same", "distinct"], default="same")
    parser.add_argument("--target-kb", type=float, default=100.0)
    parser.add_argument("--check", action="store_true", help="exit 1 when the growth is over the target")
    parser.add_argument("--peak", metavar="WORKLOAD", help="peak memory of a bench/workload.py first call instead")
    parser.add_argument("--repeat", type=int, default=3, help="processes per library with --peak")
    parser.add_argument("--peak-child", nargs=2, metavar=("LIBRARY", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_child:
        print(json.dumps(peak_child(*args.peak_child)))
        return 0
    if args.peak:
        return peak(args.peak, args.repeat)

    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for i in range(args.warmup):
        one_cycle(args.mode, -1 - i, rng)
    gc.collect()
    base = rss_bytes()
    print(f"mode {args.mode}: {args.warmup} warm-up cycles in {time.perf_counter() - start:.1f} s, "
          f"RSS {base / 2**20:.1f} MB")
    xs, ys = [0.0], [float(base)]
    start = time.perf_counter()
    blob_size = 0
    for i in range(1, args.cycles + 1):
        blob_size = one_cycle(args.mode, i, rng)
        if i % args.every == 0 or i == args.cycles:
            gc.collect()
            rss = rss_bytes()
            xs.append(float(i))
            ys.append(float(rss))
            print(f"  cycle {i:>6}: RSS {rss / 2**20:8.1f} MB  ({(rss - base) / 2**10:+9.0f} KB)", flush=True)
    seconds = time.perf_counter() - start
    per_cycle = slope(xs, ys) / 1024
    total = (ys[-1] - ys[0]) / 1024
    print(f"{args.cycles} cycles of jit+export+serialize+deserialize+call ({args.mode} function, "
          f"{blob_size}-byte blob) in {seconds:.1f} s ({seconds / args.cycles * 1e3:.1f} ms/cycle)")
    print(f"RSS growth: {total:+.0f} KB end to end, {total / args.cycles:+.1f} KB/cycle; "
          f"fitted slope {per_cycle:+.1f} KB/cycle (target < {args.target_kb:.0f} KB/cycle): "
          f"{'OK' if per_cycle < args.target_kb else 'OVER TARGET'}")
    return 1 if args.check and per_cycle >= args.target_kb else 0


if __name__ == "__main__":
    sys.exit(main())
