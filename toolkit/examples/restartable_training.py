"""Data-parallel training across processes that survives a restart: ``python -m toolkit.examples.restartable_training``.

Run it in every process of a multi-process run (``toolkit.distributed.initialize()``
finds the run from the launcher's variables: ``srun``, ``mpirun`` or the
``TOOLKIT_*`` ones). A two-layer regression model is trained with Adam on a
global batch split over every device (mesh axis ``data``); parameters and
optimizer state are sharded over the same axis (each device holds a slice of
every weight, as in fully sharded data parallelism) and saved with
``toolkit.checkpointing`` every ``--checkpoint-every`` steps, each process
writing its own shards. Started again with the same ``--directory``, it
resumes from the newest finished checkpoint; the batches depend only on the
step number, so a run killed and restarted ends with the parameters of an
uninterrupted run, bit for bit.

``--restore-only --mesh 4x2`` reads the newest checkpoint onto another mesh
(``data`` × ``model``) and prints it: the values do not depend on the mesh.

Prints one JSON line at the end: ``start`` (the step it resumed from),
``steps``, ``loss`` and ``params`` (each leaf as hex of its float32 bytes).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Sequence

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit import checkpointing, multihost
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P

IN, HIDDEN, OUT, BATCH = 8, 16, 4, 32
B1, B2, EPS, LEARNING_RATE = 0.9, 0.999, 1e-8, 1e-2


def initial_params() -> dict[str, np.ndarray]:
    """The model's starting parameters (the same in every process: a fixed seed)."""
    rng = np.random.default_rng(0)
    return {"w1": rng.normal(size=(HIDDEN, IN)).astype(np.float32) / np.sqrt(IN),
            "b1": np.zeros(HIDDEN, np.float32),
            "w2": rng.normal(size=(HIDDEN, OUT)).astype(np.float32) / np.sqrt(HIDDEN),
            "b2": np.zeros(OUT, np.float32)}


def batch(step: int) -> tuple[np.ndarray, np.ndarray]:
    """Step ``step``'s global batch: a function of the step only, so a resumed run sees the same data."""
    rng = np.random.default_rng(1000 + step)
    x = rng.normal(size=(BATCH, IN)).astype(np.float32)
    y = np.tanh(x[:, :OUT] * 2.0) + 0.1 * x[:, OUT:]
    return x, y.astype(np.float32)


def loss_fn(params: dict[str, Any], x: Any, y: Any) -> Any:
    """Mean squared error of the two-layer model."""
    h = tnp.tanh(params["w1"] @ x.T + params["b1"][:, None])
    prediction = h.T @ params["w2"] + params["b2"]
    return tnp.mean((prediction - y) ** 2)


def train_step(state: dict[str, Any], x: Any, y: Any) -> tuple[dict[str, Any], Any]:
    """One Adam step; ``state`` holds ``params``, moments ``m`` and ``v`` and the step ``count``."""
    loss, grads = toolkit.value_and_grad(loss_fn)(state["params"], x, y)
    count = state["count"] + 1
    m = {k: B1 * state["m"][k] + (1 - B1) * g for k, g in grads.items()}
    v = {k: B2 * state["v"][k] + (1 - B2) * g * g for k, g in grads.items()}
    scale = LEARNING_RATE * tnp.sqrt(1 - B2 ** count) / (1 - B1 ** count)
    params = {k: p - scale * m[k] / (tnp.sqrt(v[k]) + EPS) for k, p in state["params"].items()}
    return {"params": params, "m": m, "v": v, "count": count}, loss


def shardings(mesh: Mesh) -> dict[str, Any]:
    """Where each part of the training state lives: weights split over every mesh axis, the count replicated."""
    leaf = {"w1": NamedSharding(mesh, P("data", "model")), "b1": NamedSharding(mesh, P(("data", "model"))),
            "w2": NamedSharding(mesh, P("data", "model")), "b2": NamedSharding(mesh, P("model"))}
    return {"params": leaf, "m": dict(leaf), "v": dict(leaf), "count": NamedSharding(mesh, P())}


def initial_state(mesh: Mesh) -> dict[str, Any]:
    """Step 0's state laid out on ``mesh``."""
    params = initial_params()
    host = {"params": params, "m": {k: np.zeros_like(p) for k, p in params.items()},
            "v": {k: np.zeros_like(p) for k, p in params.items()}, "count": np.zeros((), np.float32)}
    def put(value: np.ndarray, sharding: NamedSharding) -> Any:
        return toolkit.make_array_from_callback(value.shape, sharding, lambda index: value[index])
    return toolkit.tree.map(put, host, shardings(mesh))


def _hex(tree: Any) -> dict[str, str]:
    return {k: np.asarray(multihost.process_allgather(v, tiled=True), np.float32).tobytes().hex()
            for k, v in tree.items()}


def make_mesh(shape: str) -> Mesh:
    """A ``data`` × ``model`` mesh over every device of every process, e.g. ``8x1`` or ``4x2``."""
    rows, cols = (int(n) for n in shape.lower().split("x"))
    devices = toolkit.devices()
    if rows * cols != len(devices):
        raise SystemExit(f"--mesh {shape} needs {rows * cols} devices; the run has {len(devices)}")
    return Mesh(np.array(devices).reshape(rows, cols), ("data", "model"))


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train (or, with ``--restore-only``, restore) and print the JSON summary; returns it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", required=True, help="checkpoint directory, shared by every process")
    parser.add_argument("--steps", type=int, default=12, help="train until this step")
    parser.add_argument("--checkpoint-every", type=int, default=4, help="save after every N steps (and the last)")
    parser.add_argument("--mesh", default=None, help="data x model mesh, e.g. 4x2 (default: all devices x 1)")
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds to sleep after each step")
    parser.add_argument("--heartbeat-timeout", type=int, default=10,
                        help="seconds before a silent process is declared dead and the others end")
    parser.add_argument("--restore-only", action="store_true", help="print the newest checkpoint and stop")
    args = parser.parse_args(argv)
    toolkit.distributed.initialize(heartbeat_timeout=args.heartbeat_timeout, shutdown_timeout=60)
    mesh = make_mesh(args.mesh or f"{toolkit.device_count()}x1")
    start = checkpointing.latest_step(args.directory)
    if args.restore_only:
        state = checkpointing.restore(args.directory, shardings(mesh))
        summary: dict[str, Any] = {"start": start, "steps": start, "loss": None, "params": _hex(state["params"])}
        print(json.dumps(summary), flush=True)
        return summary
    state = initial_state(mesh) if start is None else checkpointing.restore(args.directory, shardings(mesh))
    start = start or 0
    data = NamedSharding(mesh, P("data"))
    step_fn = toolkit.jit(train_step, in_shardings=(shardings(mesh), data, data),
                          out_shardings=(shardings(mesh), NamedSharding(mesh, P())))
    loss = None
    for step in range(start, args.steps):
        x, y = batch(step)
        state, loss = step_fn(state, toolkit.make_array_from_callback(x.shape, data, lambda i: x[i]),
                              toolkit.make_array_from_callback(y.shape, data, lambda i: y[i]))
        done = step + 1
        if done % args.checkpoint_every == 0 or done == args.steps:
            checkpointing.save(args.directory, done, state)
            print(f"process {toolkit.process_index()}: saved step {done}", flush=True)
        if args.step_delay:
            time.sleep(args.step_delay)
    summary = {"start": start, "steps": args.steps, "loss": None if loss is None else float(np.asarray(loss)),
               "params": _hex(state["params"])}
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
