"""Dispatch cost of a compiled call: toolkit vs ``jax.jit``, same run.

Calls timed (steady state, after warm-up: median of several batches of
back-to-back calls, so each number is one call's cost):

* ``x+1``      — ``f(x) = x + 1`` on f32[8] (one argument, one result);
* ``pytree10`` — ``f(params)`` with ``params`` a dict of 10 f32[8] arrays,
  returning a dict of 10 (ten leaves flattened, looked up, executed, rebuilt);
* ``fresh jit`` — ``jit(inc)(x)`` with a new jit object of a function called
  before each time: both libraries find the trace, lowering and executable
  they cached by the function (JAX's C++ fast path is per jit object, so
  this is its Python path);
* ``eager x+1`` — ``x + 1`` outside ``jit`` (op-by-op dispatch) on f32[8];
* ``compiled x+1``, ``compiled tree10`` — ``jit(f).lower(...).compile()`` called
  directly (the stages API: ``Compiled.__call__``) with ``x+1``'s and
  ``pytree10``'s arguments;
* ``static``, ``keyword``, ``scalar`` — ``jit(f)`` called with a static argument
  (``f(x, 3)``, ``static_argnums=1``), a keyword argument (``f(x, by=x)``), a
  Python float (``f(x, 2.0)``);
* ``eager mean``, ``eager clip`` — ``numpy.mean(x)`` and ``numpy.clip(x, 0, 1)``
  outside ``jit``: JAX jits both whole (``mean`` through its ``_mean`` helper);
* ``eager x+numpy``, ``eager sin(numpy)``, ``eager sum(numpy)`` — the same
  ops on a numpy f32[8] argument (put on the device on every call);
* ``eager scan``, ``eager vmap(jit)``, ``eager vmap(scan)``, ``eager grad(pct)``
  — outside ``jit``: ``lax.scan`` with the same body function each call,
  ``vmap`` of the same jitted function, ``vmap`` of a function calling
  ``lax.scan``, ``grad`` of ``numpy.percentile`` (both libraries find their
  executables again: toolkit traced and compiled the first three on every call
  before ``toolkit.core.eager_functions`` and ``toolkit.lax.body_traces``);
* ``eager jvp(scan)``, ``eager hessian(cond)``, ``eager jvp(new branches)`` —
  outside ``jit``: ``jvp`` of a function scanning the same step, ``hessian``
  of a function whose ``cond`` has the same branches each call, ``jvp`` of a
  ``cond`` whose branches are lambdas made on every call (JAX compiles all
  three on every call; toolkit finds the first two's derived programs again,
  and the third's executable by its module: ``toolkit.executables_by_module``);
* ``state{n}`` — an Adam-like step on a training state of ``n`` leaves (300,
  600, 1,200: a dict of params and two moment dicts of ``n/3`` f32[4] each,
  two levels deep), fed back as its next input; ``state{n}+ready`` adds
  ``block_until_ready`` of the result;
* ``poly``     — the ``x+1`` function compiled once for ``f32[n]``
  (``jit(f).trace(ShapeDtypeStruct(symbolic_shape("n"), f32)).lower().compile()``)
  and called at a shape it has already specialized for, against the static
  ``Compiled`` of ``x+1`` called directly (toolkit only: JAX has no
  shape-polymorphic ``Compiled``; the ratio is poly / static).

    python bench/dispatch.py [--seconds 0.3] [--repeat 5]

Toolkit and its baseline are timed in alternating batches (``paired``), so
load from other processes falls on both alike. Prints µs per call and
ratios toolkit / baseline (wall time, and CPU time of the process, which
load from other processes disturbs less); with ``--repeat`` the median
ratio over the repetitions and their spread (min-max), and the load
average. ``main()`` returns the rows for ``bench/all.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def per_call(fn, seconds: float = 0.3) -> float:
    """Median over batches of back-to-back calls of the time of one call (s)."""
    return paired([fn], seconds)[0]


#: Per-call CPU times (process time: every thread of this process, XLA's included) of the last ``paired`` call,
#: in the order of its functions. On a loaded machine wall times swing with the other processes; CPU times
#: count only the work done here.
LAST_CPU: list[float] = []


def paired(fns, seconds: float = 0.3) -> list[float]:
    """Per-call times of several functions measured in interleaved batches (s each).

    Batches of ``fns[0]``, ``fns[1]``, ... alternate, so load from other
    processes on the machine falls on all of them alike; each result is the
    median over its batches. The CPU times of the same batches are left in
    :data:`LAST_CPU`.
    """
    for fn in fns:
        for _ in range(50):
            fn()
    batch = 1
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            fns[0]()
        if time.perf_counter() - start > 0.005:
            break
        batch *= 2
    samples: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    deadline = time.perf_counter() + seconds * len(fns)
    while time.perf_counter() < deadline or len(samples[0]) < 9:
        for fn, out, out_cpu in zip(fns, samples, cpu):
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(batch):
                fn()
            out_cpu.append((time.process_time() - start_cpu) / batch)
            out.append((time.perf_counter() - start) / batch)
    LAST_CPU[:] = [statistics.median(out) for out in cpu]
    return [statistics.median(out) for out in samples]


STATE_LEAVES = (300, 600, 1200)


def training_state(lib, leaves: int) -> dict:
    """``leaves`` arrays as a training state: params and Adam moments, each a dict of ``leaves/3`` layers."""
    layers = leaves // 3

    def tree(fill):
        return {f"layer{i}": {"w": lib.device_put(np.full(4, fill(i), np.float32))} for i in range(layers)}
    return {"params": tree(float), "m": tree(lambda i: 0.0), "v": tree(lambda i: 1.0)}


def adam_like(state):
    """One step's shape of work on a training state: every leaf read, params and moments rebuilt."""
    params, m, v = state["params"], state["m"], state["v"]
    return {"params": {k: {"w": p["w"] - 0.01 * m[k]["w"]} for k, p in params.items()},
            "m": {k: {"w": 0.9 * m[k]["w"] + 0.1} for k in m}, "v": {k: {"w": 0.99 * v[k]["w"]} for k in v}}


#: name -> (toolkit, baseline) per-call CPU times of the last :func:`measure` (JAX rows and ``poly``).
CPU_ROWS: dict[str, tuple[float, float]] = {}


def measure(seconds: float) -> dict[str, tuple[float, float | None]]:
    """name -> (toolkit s/call, JAX s/call or the static baseline for ``poly``); CPU times in :data:`CPU_ROWS`."""
    import toolkit
    from toolkit import export as texport

    def inc(a):
        return a + 1

    def inc_tree(p):
        return {k: v + 1 for k, v in p.items()}

    def scan_body(c, a):
        return c + a, c * a

    def scale(a, n):
        return a * n

    def scale_by(a, *, by):
        return a * by

    x = toolkit.device_put(np.ones(8, np.float32))
    tree = {f"w{i}": toolkit.device_put(np.full(8, i, np.float32)) for i in range(10)}
    f = toolkit.jit(inc)
    g = toolkit.jit(inc_tree)
    spec = toolkit.ShapeDtypeStruct(texport.symbolic_shape("n"), np.float32)
    poly = toolkit.jit(inc).trace(spec).lower().compile()
    poly(x)
    try:
        import jax
    except ImportError:
        jax = None
    rows: dict[str, tuple[float, float | None]] = {}
    if jax is not None:
        jx = jax.device_put(np.ones(8, np.float32))
        jtree = {f"w{i}": jax.device_put(np.full(8, i, np.float32)) for i in range(10)}
        jf, jg = jax.jit(inc), jax.jit(inc_tree)
        rows["x+1"] = tuple(paired([lambda: f(x), lambda: jf(jx)], seconds))
        CPU_ROWS["x+1"] = (LAST_CPU[0], LAST_CPU[1])
        rows["pytree10"] = tuple(paired([lambda: g(tree), lambda: jg(jtree)], seconds))
        CPU_ROWS["pytree10"] = (LAST_CPU[0], LAST_CPU[1])
        rows["fresh jit"] = tuple(paired([lambda: toolkit.jit(inc)(x), lambda: jax.jit(inc)(jx)], seconds))
        CPU_ROWS["fresh jit"] = (LAST_CPU[0], LAST_CPU[1])
        rows["eager x+1"] = tuple(paired([lambda: x + 1, lambda: jx + 1], seconds))
        CPU_ROWS["eager x+1"] = (LAST_CPU[0], LAST_CPU[1])
        # Calls with a static argument, a keyword, a Python scalar; eager library calls JAX jits whole.
        vf, jvf = toolkit.vmap(toolkit.jit(inc)), jax.vmap(jax.jit(inc))
        vs = toolkit.vmap(lambda a: toolkit.lax.scan(scan_body, a, a))
        jvs = jax.vmap(lambda a: jax.lax.scan(scan_body, a, a))
        gp = toolkit.grad(lambda a: toolkit.numpy.percentile(a, 30.0))
        jgp = jax.grad(lambda a: jax.numpy.percentile(a, 30.0))
        sin_t, cos_t, sin_j, cos_j = toolkit.numpy.sin, toolkit.numpy.cos, jax.numpy.sin, jax.numpy.cos

        def scanned(lib):
            return lambda a: lib.lax.scan(scan_body, a[0], a)[0]

        def branchy(lib, sin, cos):  # the same branch functions on every call
            return lambda a: lib.lax.cond(a[0] > 0, sin, cos, a).sum()

        def new_branches(lib, np_):
            return lambda a: lib.lax.cond(a[0] > 0, lambda b: np_.sin(b) * 2, lambda b: np_.cos(b), a).sum()
        fs, js_ = toolkit.jit(scale, static_argnums=1), jax.jit(scale, static_argnums=1)
        fk, jk = toolkit.jit(scale_by), jax.jit(scale_by)
        fn, jn = toolkit.jit(scale), jax.jit(scale)
        tnp, jnp = toolkit.numpy, jax.numpy
        host = np.asarray(x)
        fc, jc = toolkit.jit(inc).lower(x).compile(), jax.jit(inc).lower(jx).compile()
        gc_, jgc = toolkit.jit(inc_tree).lower(tree).compile(), jax.jit(inc_tree).lower(jtree).compile()
        for name, ours, theirs in [
                ("compiled x+1", lambda: fc(x), lambda: jc(jx)),
                ("compiled tree10", lambda: gc_(tree), lambda: jgc(jtree)),
                ("static", lambda: fs(x, 3), lambda: js_(jx, 3)),
                ("keyword", lambda: fk(x, by=x), lambda: jk(jx, by=jx)),
                ("scalar", lambda: fn(x, 2.0), lambda: jn(jx, 2.0)),
                ("eager mean", lambda: tnp.mean(x), lambda: jnp.mean(jx)),
                ("eager clip", lambda: tnp.clip(x, 0, 1), lambda: jnp.clip(jx, 0, 1)),
                # Eager ops on numpy arguments: each call puts the numpy value on the device first.
                ("eager x+numpy", lambda: x + host, lambda: jx + host),
                ("eager sin(numpy)", lambda: tnp.sin(host), lambda: jnp.sin(host)),
                ("eager sum(numpy)", lambda: tnp.sum(host), lambda: jnp.sum(host)),
                ("eager scan", lambda: toolkit.lax.scan(scan_body, x, x), lambda: jax.lax.scan(scan_body, jx, jx)),
                ("eager vmap(jit)", lambda: vf(x[None]), lambda: jvf(jx[None])),
                ("eager vmap(scan)", lambda: vs(x[None]), lambda: jvs(jx[None])),
                ("eager grad(pct)", lambda: gp(x), lambda: jgp(jx)),
                ("eager jvp(scan)", lambda: toolkit.jvp(scanned(toolkit), (x,), (x,)),
                 lambda: jax.jvp(scanned(jax), (jx,), (jx,))),
                ("eager hessian(cond)", lambda: toolkit.hessian(branchy(toolkit, sin_t, cos_t))(x),
                 lambda: jax.hessian(branchy(jax, sin_j, cos_j))(jx)),
                ("eager jvp(new branches)", lambda: toolkit.jvp(new_branches(toolkit, tnp), (x,), (x,)),
                 lambda: jax.jvp(new_branches(jax, jnp), (jx,), (jx,)))]:
            rows[name] = tuple(paired([ours, theirs], seconds))
            CPU_ROWS[name] = (LAST_CPU[0], LAST_CPU[1])
        for leaves in STATE_LEAVES:
            ts, js = [training_state(toolkit, leaves)], [training_state(jax, leaves)]
            ts_f, js_f = toolkit.jit(adam_like), jax.jit(adam_like)

            def ts_step(ready=False, ts=ts, ts_f=ts_f):  # fed back: the state a training loop carries
                ts[0] = ts_f(ts[0])
                if ready:
                    toolkit.block_until_ready(ts[0])

            def js_step(ready=False, js=js, js_f=js_f):
                js[0] = js_f(js[0])
                if ready:
                    jax.block_until_ready(js[0])
            rows[f"state{leaves}"] = tuple(paired([ts_step, js_step], seconds))
            CPU_ROWS[f"state{leaves}"] = (LAST_CPU[0], LAST_CPU[1])
            rows[f"state{leaves}+ready"] = tuple(paired([lambda: ts_step(True), lambda: js_step(True)], seconds))
            CPU_ROWS[f"state{leaves}+ready"] = (LAST_CPU[0], LAST_CPU[1])
    else:
        rows["x+1"] = (per_call(lambda: f(x), seconds), None)
        rows["pytree10"] = (per_call(lambda: g(tree), seconds), None)
        rows["fresh jit"] = (per_call(lambda: toolkit.jit(inc)(x), seconds), None)
    rows["poly"] = tuple(paired([lambda: poly(x), lambda: f(x)], seconds))
    CPU_ROWS["poly"] = (LAST_CPU[0], LAST_CPU[1])
    return rows


def main(argv: list[str] | None = None) -> list[tuple[str, float, float | None]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="sampling time per measurement")
    parser.add_argument("--repeat", type=int, default=1,
                        help="measure everything this many times; print median ratios and their spread")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    runs, cpu_runs = [], []
    for _ in range(max(1, args.repeat)):
        runs.append(measure(args.seconds))
        cpu_runs.append(dict(CPU_ROWS))
    load_after = os.getloadavg()[0]
    rows = []
    print(f"{'call':<24} {'toolkit µs':>11} {'baseline µs':>12} {'ratio':>6} {'spread':>11} {'cpu ratio':>10} "
          f"{'spread':>11}  baseline")
    for name in runs[0]:
        ours = statistics.median(run[name][0] for run in runs)
        other = statistics.median(run[name][1] for run in runs) if runs[0][name][1] else None
        label = "static jit call of x+1" if name == "poly" else "JAX eager" if name.startswith("eager") else "jax.jit"
        rows.append((f"dispatch {name}" + (" (vs static)" if name == "poly" else ""), ours, other))
        ratios = [run[name][0] / run[name][1] for run in runs if run[name][1]]
        cpu = [c[name][0] / c[name][1] for c in cpu_runs if name in c]
        ratio = f"{statistics.median(ratios):6.2f} {min(ratios):5.2f}-{max(ratios):<5.2f}" if ratios else "     -" + " " * 12
        cpu_ratio = f"{statistics.median(cpu):10.2f} {min(cpu):5.2f}-{max(cpu):<5.2f}" if cpu else " " * 22
        print(f"{name:<24} {ours * 1e6:>11.2f} {other * 1e6 if other else float('nan'):>12.2f} {ratio} {cpu_ratio}"
              f"  {label}")
    print(f"load average (1 min) {load_before:.1f} before, {load_after:.1f} after; {os.cpu_count()} cores")
    return rows


if __name__ == "__main__":
    main()
