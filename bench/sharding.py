"""Sharded MLP on 8 CPU devices vs 1 device: compile time and call latency (and JAX's, if installed).

Two programs:

* a hand-written StableHLO MLP annotated by ``toolkit-sharding-annotate``
  (data parallel: batch sharded, weights replicated) compiled through the
  runtime directly, so it measures the sharding + SPMD path independent of
  the tracer;
* a data-parallel MLP *training step* written with ``shard_map`` + ``pmean``
  of the gradients (``sdy.manual_computation`` + ``all_reduce``), the same
  Python for toolkit and JAX: first call (trace, lower, compile, run) and
  steady-state call time, with toolkit/JAX ratios from the same run.

Run: python bench/sharding.py [--batch 256 --width 512 --repeats 50]
"""

import argparse
import os
import statistics
import sys
import time

os.environ["TOOLKIT_NUM_CPU_DEVICES"] = "8"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402

from toolkit.core.avals import ShapedArray  # noqa: E402
from toolkit.ir.context import make_context  # noqa: E402
from toolkit.passes.sharding_annotate import annotate_shardings  # noqa: E402
from toolkit.runtime import arrays as runtime_arrays  # noqa: E402
from toolkit.runtime import executable as runtime_executable  # noqa: E402
from toolkit.runtime.client import devices  # noqa: E402
from toolkit.shard import Mesh, NamedSharding, P, SingleDeviceSharding, device_put_sharded, host_array  # noqa: E402


def mlp_text(b: int, w: int) -> str:
    return f"""
func.func public @main(%x: tensor<{b}x{w}xf32>, %w1: tensor<{w}x{w}xf32>, %w2: tensor<{w}x{w}xf32>) -> tensor<{b}x{w}xf32> {{
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<{b}x{w}xf32>, tensor<{w}x{w}xf32>) -> tensor<{b}x{w}xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<{b}x{w}xf32>
  %r = stablehlo.maximum %h, %zero : tensor<{b}x{w}xf32>
  %y = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : (tensor<{b}x{w}xf32>, tensor<{w}x{w}xf32>) -> tensor<{b}x{w}xf32>
  return %y : tensor<{b}x{w}xf32>
}}
"""


def median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def toolkit_case(b, w, inputs, in_shardings, out_sharding, repeats):
    devs = list(in_shardings[0]._device_assignment)
    start = time.perf_counter()
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(mlp_text(b, w))
        if len(devs) > 1:
            annotate_shardings(module, in_shardings, [out_sharding], mode="shardy")
        text = str(module)
    exe = runtime_executable.compile_module(text, devs, num_partitions=len(devs), spmd=len(devs) > 1,
                                            use_shardy=True)
    compile_ms = (time.perf_counter() - start) * 1e3
    args = [device_put_sharded(a, s) for a, s in zip(inputs, in_shardings)]
    handler = runtime_arrays.result_handler(ShapedArray((b, w), np.float32), out_sharding._runtime_sharding(2))

    def call():
        [out] = runtime_executable.execute(exe, args, [handler])
        out.block_until_ready()
        return out

    out = call()
    return compile_ms, median_ms(call, repeats), host_array(out)


def jax_case(b, w, inputs, n, repeats):
    import jax
    from jax.sharding import Mesh as JMesh, NamedSharding as JNamed, PartitionSpec as JP
    mesh = JMesh(np.array(jax.devices("cpu")[:n]), ("batch",))
    shardings = (JNamed(mesh, JP("batch")), JNamed(mesh, JP()), JNamed(mesh, JP()))

    def mlp(x, w1, w2):
        return jax.numpy.maximum(x @ w1, 0) @ w2

    f = jax.jit(mlp, in_shardings=shardings, out_shardings=shardings[0])
    args = [jax.device_put(a, s) for a, s in zip(inputs, shardings)]
    start = time.perf_counter()
    compiled = f.lower(*args).compile()
    compile_ms = (time.perf_counter() - start) * 1e3
    return compile_ms, median_ms(lambda: compiled(*args).block_until_ready(), repeats)


def make_training_step(jit, shard_map, grad, np_module, pmean, tree_map, mesh, spec):
    """One SGD step of a 2-layer MLP, data parallel: gradients averaged over the batch axis with ``pmean``."""
    def loss(params, x, y):
        w1, w2 = params
        prediction = np_module.maximum(x @ w1, 0) @ w2
        return np_module.mean((prediction - y) ** 2)

    def local_step(params, x, y):
        grads = tree_map(lambda g: pmean(g, "batch"), grad(loss)(params, x, y))
        return tree_map(lambda p, g: p - 0.1 * g, params, grads)

    return jit(shard_map(local_step, mesh=mesh, in_specs=(spec(), spec("batch"), spec("batch")), out_specs=spec()))


def time_training_step(step, args, repeats, block):
    start = time.perf_counter()
    out = step(*args)
    block(out)
    first_ms = (time.perf_counter() - start) * 1e3
    return first_ms, median_ms(lambda: block(step(*args)), repeats), out


def training_step_rows(b, w, repeats):
    import toolkit
    import toolkit.numpy as tnp
    from toolkit import lax, tree_util
    rng = np.random.default_rng(1)
    params = ((rng.standard_normal((w, w)) / np.sqrt(w)).astype(np.float32),
              (rng.standard_normal((w, 16)) / np.sqrt(w)).astype(np.float32))
    x = rng.standard_normal((b, w)).astype(np.float32)
    y = rng.standard_normal((b, 16)).astype(np.float32)
    mesh = Mesh(np.array(devices()), ("batch",))
    step = make_training_step(toolkit.jit, toolkit.shard_map, toolkit.grad, tnp, lax.pmean, tree_util.tree_map,
                              mesh, P)
    ours = time_training_step(step, (params, x, y), repeats, toolkit.block_until_ready)
    rows = [("toolkit shard_map step, 8 devices", ours[0], ours[1])]
    try:
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh as JMesh, PartitionSpec as JP
    except ImportError:
        return rows, None
    jax_mesh = JMesh(np.array(jax.devices("cpu")[:8]), ("batch",))
    jax_step = make_training_step(jax.jit, jax.shard_map, jax.grad, jnp, jax.lax.pmean, jax.tree_util.tree_map,
                                  jax_mesh, JP)
    theirs = time_training_step(jax_step, (params, x, y), repeats, jax.block_until_ready)
    for a, b_ in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b_), rtol=2e-4, atol=2e-5)
    rows.append(("jax shard_map step, 8 devices", theirs[0], theirs[1]))
    return rows, (ours[0] / theirs[0], ours[1] / theirs[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=50)
    options = parser.parse_args()
    b, w = options.batch, options.width
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal(s) / np.sqrt(w)).astype(np.float32) for s in [(b, w), (w, w), (w, w)]]
    reference = np.maximum(inputs[0] @ inputs[1], 0) @ inputs[2]

    rows = []
    one = SingleDeviceSharding(devices()[0])
    c1, l1, out1 = toolkit_case(b, w, inputs, [one] * 3, one, options.repeats)
    rows.append(("toolkit, 1 device", c1, l1))
    mesh = Mesh(np.array(devices()), ("batch",))
    batch, replicated = NamedSharding(mesh, P("batch")), NamedSharding(mesh, P())
    c8, l8, out8 = toolkit_case(b, w, inputs, [batch, replicated, replicated], batch, options.repeats)
    rows.append(("toolkit, 8 devices (batch sharded)", c8, l8))
    for out in (out1, out8):
        np.testing.assert_allclose(out, reference, rtol=2e-4, atol=2e-4)
    try:
        import jax  # noqa: F401
        for n in (1, 8):
            c, lat = jax_case(b, w, inputs, n, options.repeats)
            rows.append((f"jax, {n} device{'s' if n > 1 else ''}", c, lat))
    except ImportError:
        print("(jax not installed: toolkit only)", file=sys.stderr)
    print(f"MLP {b}x{w} -> {w} -> {w}, f32, median of {options.repeats} calls")
    print(f"{'case':<38}{'compile ms':>12}{'call ms':>10}")
    for name, c, lat in rows:
        print(f"{name:<38}{c:>12.1f}{lat:>10.3f}")
    step_rows, ratios = training_step_rows(b, w, options.repeats)
    print(f"\nshard_map training step (MLP {w} -> {w} -> 16, batch {b} over 8 devices, pmean of the gradients)")
    print(f"{'case':<38}{'first call ms':>14}{'call ms':>10}")
    for name, first, lat in step_rows:
        print(f"{name:<38}{first:>14.1f}{lat:>10.3f}")
    if ratios is not None:
        print(f"{'toolkit / jax':<38}{ratios[0]:>13.2f}x{ratios[1]:>9.2f}x")


if __name__ == "__main__":
    main()
