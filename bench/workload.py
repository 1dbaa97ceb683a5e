"""Real training steps, toolkit beside JAX: where a researcher waits, phase by phase.

The workloads of issue 25, each written once against a library namespace
(``toolkit`` or ``jax``: ``lib.numpy``, ``lib.lax``, ``lib.nn``, ``lib.grad``,
``lib.vmap``, ``lib.tree``) with the same parameters drawn from numpy's
generator, so both compute the same loss:

* ``transformer-L{n}`` — a decoder-only transformer (d=128, 4 heads, MLP 4×,
  batch 8 × 64 tokens, vocabulary 256) and one Adam step, for each layer count;
* ``lstm`` — an LSTM (hidden 128) over ``lax.scan`` with 128 steps, one SGD step;
* ``per-example`` — per-example gradients of an MLP with ``vmap(grad(...))``.

Each (workload, library) pair runs in a fresh process, so that the first call
is cold, peak RSS is the process's own and nothing is cached between them
(no persistent compilation cache: it would measure the disk). Repetitions are
interleaved (toolkit, JAX, toolkit, ...) and the tables show medians. Phases:

* ``trace+lower`` — ``jit(step).trace(*args).lower()`` of a new function object;
* ``compile``     — ``.compile()`` of that lowering (XLA, and for toolkit the pass pipeline);
* ``first call``  — the first ``jit(step)(*args)`` in a fresh process, to the result being ready
  (measured before the phases above, so it is cold);
* ``step``        — median of ``--steps`` steady calls;
* ``peak RSS``    — the process's peak resident memory over the first call, minus its RSS before it;
* ``compile CPU``, ``step CPU`` — the process's CPU time (all threads) of the compile and per steady step:
  steadier than wall times on a shared machine, where those also measure the other processes.

    python bench/workload.py [--layers 2,8] [--repeat 3] [--steps 20] [--only transformer-L2,lstm]
                             [--plot docs/performance-compile-layers.png --plot-layers 2,4,8,16]

``measure()`` returns the rows; the losses of toolkit and JAX must agree to 1e-4
(a row whose losses differ is marked and makes the exit status 1).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
import types
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ----------------------------------------------------------------------------------------------------------------
# The workloads, written once against a library namespace.
# ----------------------------------------------------------------------------------------------------------------

D_MODEL, HEADS, VOCAB, BATCH, SEQ = 128, 4, 256, 8, 64


def _transformer_params(layers: int, rng: np.random.Generator) -> dict[str, Any]:
    def dense(n_in: int, n_out: int) -> np.ndarray:
        return (rng.standard_normal((n_in, n_out)) / math.sqrt(n_in)).astype(np.float32)

    blocks = []
    for _ in range(layers):
        blocks.append({
            "ln1": np.ones(D_MODEL, np.float32), "ln2": np.ones(D_MODEL, np.float32),
            "qkv": dense(D_MODEL, 3 * D_MODEL), "out": dense(D_MODEL, D_MODEL),
            "up": dense(D_MODEL, 4 * D_MODEL), "down": dense(4 * D_MODEL, D_MODEL),
        })
    return {"embed": (rng.standard_normal((VOCAB, D_MODEL)) * 0.02).astype(np.float32),
            "pos": (rng.standard_normal((SEQ, D_MODEL)) * 0.02).astype(np.float32),
            "blocks": blocks, "ln_f": np.ones(D_MODEL, np.float32)}


def _transformer_step(lib: Any) -> Callable[..., Any]:
    jnp, nn = lib.numpy, lib.nn

    def layer_norm(x, scale):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * lib.lax.rsqrt(var + 1e-5) * scale

    def attention(x, block):
        b, t, d = x.shape
        qkv = x @ block["qkv"]
        q, k, v = jnp.split(qkv, 3, axis=-1)

        def heads(z):
            return z.reshape(b, t, HEADS, d // HEADS).transpose(0, 2, 1, 3)
        q, k, v = heads(q), heads(k), heads(v)
        scores = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(d // HEADS)
        mask = jnp.tril(jnp.ones((t, t), bool))
        scores = jnp.where(mask, scores, -1e9)
        out = nn.softmax(scores, axis=-1) @ v
        return out.transpose(0, 2, 1, 3).reshape(b, t, d) @ block["out"]

    def loss_fn(params, tokens, targets):
        x = params["embed"][tokens] + params["pos"]
        for block in params["blocks"]:
            x = x + attention(layer_norm(x, block["ln1"]), block)
            x = x + nn.gelu(layer_norm(x, block["ln2"]) @ block["up"]) @ block["down"]
        logits = layer_norm(x, params["ln_f"]) @ params["embed"].T
        logp = nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def step(params, m, v, count, tokens, targets):
        loss, grads = lib.value_and_grad(loss_fn)(params, tokens, targets)
        count = count + 1
        b1, b2, lr = 0.9, 0.999, 1e-3
        m = lib.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = lib.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        c1, c2 = 1 - b1 ** count, 1 - b2 ** count
        params = lib.tree.map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + 1e-8), params, m, v)
        return loss, params, m, v, count
    return step


def _transformer_args(layers: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(0)
    params = _transformer_params(layers, rng)
    zeros = _tree_zeros(params)
    tokens = rng.integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)
    targets = np.roll(tokens, -1, axis=1)
    return params, zeros, _tree_zeros(params), np.float32(0), tokens, targets


LSTM_HIDDEN, LSTM_INPUT, LSTM_STEPS, LSTM_BATCH = 128, 32, 128, 16


def _lstm_step(lib: Any) -> Callable[..., Any]:
    jnp, nn = lib.numpy, lib.nn

    def loss_fn(params, xs, ys):
        def cell(carry, x):
            h, c = carry
            gates = x @ params["wx"] + h @ params["wh"] + params["b"]
            i, f, g, o = jnp.split(gates, 4, axis=-1)
            c = nn.sigmoid(f) * c + nn.sigmoid(i) * jnp.tanh(g)
            h = nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        h0 = jnp.zeros((LSTM_BATCH, LSTM_HIDDEN), jnp.float32)
        (h, _), _ = lib.lax.scan(cell, (h0, h0), xs)
        return jnp.mean(jnp.square(h @ params["head"] - ys))

    def step(params, xs, ys):
        loss, grads = lib.value_and_grad(loss_fn)(params, xs, ys)
        return loss, lib.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    return step


def _lstm_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(1)
    params = {"wx": (rng.standard_normal((LSTM_INPUT, 4 * LSTM_HIDDEN)) * 0.1).astype(np.float32),
              "wh": (rng.standard_normal((LSTM_HIDDEN, 4 * LSTM_HIDDEN)) * 0.1).astype(np.float32),
              "b": np.zeros(4 * LSTM_HIDDEN, np.float32),
              "head": (rng.standard_normal((LSTM_HIDDEN, 1)) * 0.1).astype(np.float32)}
    xs = rng.standard_normal((LSTM_STEPS, LSTM_BATCH, LSTM_INPUT)).astype(np.float32)
    ys = rng.standard_normal((LSTM_BATCH, 1)).astype(np.float32)
    return params, xs, ys


PE_BATCH, PE_WIDTH = 64, 256


def _per_example_step(lib: Any) -> Callable[..., Any]:
    jnp = lib.numpy

    def loss_fn(params, x, y):
        h = x
        for w, b in params:
            h = jnp.tanh(h @ w + b)
        return jnp.sum(jnp.square(h - y))

    def step(params, xs, ys):
        grads = lib.vmap(lib.grad(loss_fn), in_axes=(None, 0, 0))(params, xs, ys)
        norms = sum(jnp.sum(jnp.square(g), axis=tuple(range(1, g.ndim))) for g in lib.tree.leaves(grads))
        return jnp.mean(norms), grads
    return step


def _per_example_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(2)
    params = [((rng.standard_normal((PE_WIDTH, PE_WIDTH)) / 16).astype(np.float32),
               np.zeros(PE_WIDTH, np.float32)) for _ in range(4)]
    xs = rng.standard_normal((PE_BATCH, PE_WIDTH)).astype(np.float32)
    ys = rng.standard_normal((PE_BATCH, PE_WIDTH)).astype(np.float32)
    return params, xs, ys


def _tree_zeros(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _tree_zeros(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_tree_zeros(v) for v in tree)
    return np.zeros_like(tree)


def workload(name: str, lib: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The step function written against ``lib`` and its arguments (numpy, the same for every library)."""
    if name.startswith("transformer-L"):
        layers = int(name.removeprefix("transformer-L"))
        return _transformer_step(lib), _transformer_args(layers)
    if name == "lstm":
        return _lstm_step(lib), _lstm_args()
    if name == "per-example":
        return _per_example_step(lib), _per_example_args()
    raise SystemExit(f"workload.py: unknown workload {name!r}")


# ----------------------------------------------------------------------------------------------------------------
# One (workload, library) measurement, in a fresh process.
# ----------------------------------------------------------------------------------------------------------------

def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _fresh(fun: Callable[..., Any]) -> Callable[..., Any]:
    """The same function as a new object: no trace or executable cache keyed by the function answers."""
    return types.FunctionType(fun.__code__, fun.__globals__, fun.__name__, fun.__defaults__, fun.__closure__)


def _child(library: str, name: str, steps: int) -> dict[str, Any]:
    if library == "jax":
        import jax as lib
    else:
        sys.path.insert(0, ROOT)
        import toolkit as lib  # type: ignore[no-redef]
    step, args = workload(name, lib)
    lib.block_until_ready(lib.numpy.ones(4) + 1)  # the backend exists before anything is timed

    def ready(out: Any) -> Any:
        return lib.block_until_ready(out)

    rss_before = _rss_bytes()
    start = time.perf_counter()
    out = ready(lib.jit(step)(*args))
    first_call = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    loss = float(np.asarray(out[0]))

    fresh = lib.jit(_fresh(step))
    start = time.perf_counter()
    lowered = fresh.trace(*args).lower()
    trace_lower = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    compiled = lowered.compile()
    compile_time, compile_cpu = time.perf_counter() - start, time.process_time() - cpu
    ready(compiled(*args))
    times = []
    cpu = time.process_time()
    for _ in range(steps):
        start = time.perf_counter()
        ready(compiled(*args))
        times.append(time.perf_counter() - start)
    step_cpu = (time.process_time() - cpu) / steps
    return {"trace+lower": trace_lower, "compile": compile_time, "first call": first_call,
            "step": statistics.median(times), "peak RSS": peak, "compile CPU": compile_cpu, "step CPU": step_cpu,
            "loss": loss, "xla": xla_counts(compiled.as_text())}


# What XLA made of a step: its optimized HLO counted (toolkit.lab.xla_program). XLA CPU's compile time follows the
# number of kernels it generates code for, so equal counts mean equal work for XLA, whoever lowered the step.
XLA_COUNTS = ("kernels", "loop_fusions", "custom_fusions", "dots", "custom_calls", "copies", "loops", "instructions")


def xla_counts(hlo: str) -> dict[str, int]:
    """``toolkit.lab.xla_program.XlaCounts`` of an optimized HLO module (toolkit's or JAX's), as a dict."""
    sys.path.insert(0, ROOT)
    from toolkit.lab.xla_program import XlaCounts  # the parser only: no tracing module, so no JAX process pays it
    return XlaCounts.of(hlo).to_dict()


def _run_child(library: str, name: str, steps: int, timeout: float) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TOOLKIT_COMPILATION_CACHE_DIR", None)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", library, name, "--steps", str(steps)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{library} {name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# The CPU time of the process (all its threads) for the compile and per step: on a shared machine, where wall
# times also measure the other processes, what the compile or the step itself cost.
PHASES = ("trace+lower", "compile", "first call", "step", "peak RSS", "compile CPU", "step CPU")


def measure(names: list[str], repeat: int = 3, steps: int = 20, timeout: float = 900.0,
            libraries: tuple[str, ...] = ("toolkit", "jax")) -> list[dict[str, Any]]:
    """One row per workload: the median of each phase per library, and the losses."""
    samples: dict[tuple[str, str], list[dict[str, Any]]] = {(n, lib): [] for n in names for lib in libraries}
    for rep in range(repeat):
        for name in names:
            for library in (libraries if rep % 2 == 0 else tuple(reversed(libraries))):  # interleaved
                samples[name, library].append(_run_child(library, name, steps, timeout))
                print(f"  {name:16} {library:8} rep {rep + 1}/{repeat}", file=sys.stderr, flush=True)
    rows = []
    for name in names:
        row: dict[str, Any] = {"workload": name}
        for library in libraries:
            runs = samples[name, library]
            row[library] = {phase: statistics.median(r[phase] for r in runs) for phase in PHASES}
            row[library]["spread"] = {phase: (min(r[phase] for r in runs), max(r[phase] for r in runs))
                                      for phase in PHASES}
            row[library]["loss"] = runs[0]["loss"]
            row[library]["xla"] = runs[0]["xla"]  # the same program every repetition
        rows.append(row)
    return rows


def _fmt(phase: str, value: float) -> str:
    if phase == "peak RSS":
        return f"{value / 2**20:.1f} MB"
    return f"{value * 1e3:.2f} ms" if value < 1 else f"{value:.2f} s"


def _spread(row: dict[str, Any], library: str, phase: str) -> str:
    """The range of the repetitions (min–max), to judge a median on a shared machine."""
    low, high = row[library].get("spread", {}).get(phase, (float("nan"), float("nan")))
    return f"{_fmt(phase, low)}–{_fmt(phase, high)}"


def table(rows: list[dict[str, Any]]) -> tuple[str, bool]:
    """One table per phase (toolkit, JAX, ratio; geometric mean last) and whether every loss agreed to 1e-4."""
    lines, agree = [], True
    for phase in PHASES:
        lines += [f"\n{phase}", f"{'workload':18} {'toolkit':>12} {'jax':>12} {'ratio':>7}   range toolkit / jax"]
        ratios = []
        for row in rows:
            if "jax" not in row:
                lines.append(f"{row['workload']:18} {_fmt(phase, row['toolkit'][phase]):>12}")
                continue
            t, j = row["toolkit"][phase], row["jax"][phase]
            ratio = t / j if j > 0 else float("nan")
            if j > 0 and t > 0:
                ratios.append(ratio)
            lines.append(f"{row['workload']:18} {_fmt(phase, t):>12} {_fmt(phase, j):>12} {ratio:>6.2f}×"
                         f"   {_spread(row, 'toolkit', phase)} / {_spread(row, 'jax', phase)}")
        if ratios:
            lines.append(f"{'geometric mean':18} {'':>12} {'':>12} "
                         f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):>6.2f}×")
    lines += ["\nloss", f"{'workload':18} {'toolkit':>14} {'jax':>14}"]
    for row in rows:
        t = row["toolkit"]["loss"]
        j = row.get("jax", {}).get("loss", float("nan"))
        same = "jax" not in row or abs(t - j) <= 1e-4 * max(1.0, abs(j))
        agree &= same
        lines.append(f"{row['workload']:18} {t:>14.7f} {j:>14.7f}{'' if same else '   DIFFERENT'}")
    lines += ["\nwhat XLA made of the step (optimized HLO; toolkit / jax)",
              f"{'workload':18} " + " ".join(f"{c:>15}" for c in XLA_COUNTS)]
    for row in rows:
        t, j = row["toolkit"]["xla"], row.get("jax", {}).get("xla", {})
        lines.append(f"{row['workload']:18} " + " ".join(f"{str(t[c]) + ' / ' + str(j.get(c, '-')):>15}"
                                                         for c in XLA_COUNTS))
    return "\n".join(lines), agree


def plot(rows: list[dict[str, Any]], path: str) -> None:
    """Compile time against layer count, toolkit and JAX (the ``bench`` extra's matplotlib)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    layers = [int(r["workload"].removeprefix("transformer-L")) for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    for library, style in (("toolkit", "o-"), ("jax", "s--")):
        ax.plot(layers, [r[library]["compile"] for r in rows], style, label=library)
    ax.set_xlabel("transformer layers (Adam training step)")
    ax.set_ylabel("compile time (s)")
    ax.set_title("XLA CPU compile time of one training step")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", default="2,8", help="transformer layer counts (comma-separated)")
    parser.add_argument("--only", default=None, help="comma-separated workload names")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--plot", default=None, help="write the compile-time-against-layers plot here")
    parser.add_argument("--plot-layers", default="2,4,8,16")
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], args.child[1], args.steps)))
        return 0
    names = [f"transformer-L{n}" for n in args.layers.split(",") if n] + ["lstm", "per-example"]
    if args.only:
        names = args.only.split(",")
    try:
        import jax  # noqa: F401  (the oracle: the bench extra)
        libraries: tuple[str, ...] = ("toolkit", "jax")
    except ImportError:
        libraries = ("toolkit",)
        print("workload.py: jax is not installed (the bench extra); toolkit only", file=sys.stderr)
    rows = measure(names, args.repeat, args.steps, libraries=libraries)
    text, agree = table(rows)
    print(json.dumps(rows, indent=1) if args.json else text)
    if args.plot:
        layer_rows = measure([f"transformer-L{n}" for n in args.plot_layers.split(",")], 1, 3,
                             libraries=libraries)
        plot(layer_rows, args.plot)
        print(f"\nplot: {args.plot}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
