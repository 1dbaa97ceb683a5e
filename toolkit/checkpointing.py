"""Sharded checkpoints of pytrees of arrays, written with tensorstore (zarr), one writer per shard.

Every process calls the same functions with the same arguments (the
multi-controller rule). :func:`save` writes each array as one zarr array whose
chunks are the array's shards; each process writes only the shards its own
devices hold (one copy of each: replicated shards are written by the first
device holding them), so no process ever gathers the whole array. Process 0
then writes ``checkpoint.json`` — the tree's key paths, shapes and dtypes —
after every process finished writing: a step directory without it is an
unfinished save (a process died) and is ignored by :func:`latest_step` and
refused by :func:`restore`.

:func:`restore` reads into any sharding of any mesh: each process reads the
index ranges its devices need (``make_array_from_callback``), whatever mesh
wrote them — a checkpoint written on an 8×1 mesh restores onto 4×2.

On disk (plain JSON and zarr; no pickle)::

    <directory>/step_00000004/checkpoint.json
    <directory>/step_00000004/leaf_00000/.zarray, 0.0, 1.0, ...

Several hosts need a file system every process sees at the same path.
tensorstore is an optional dependency: ``pip install toolkit[checkpoint]``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from toolkit.array import Array
from toolkit.core import pytrees
from toolkit.global_arrays import make_array_from_callback, process_index
from toolkit.runtime import coordination

_ts: Any
try:
    import tensorstore as _ts
except ImportError:  # an optional dependency: the error is raised when a checkpoint is used
    _ts = None

__all__ = ["save", "restore", "latest_step", "all_steps", "step_directory"]

FORMAT = "toolkit-checkpoint"
VERSION = 1
#: Seconds a process waits for the others at a checkpoint's barriers.
BARRIER_TIMEOUT = 300
_STEP = re.compile(r"^step_(\d{8})$")


def _tensorstore() -> Any:
    if _ts is None:
        raise ImportError("toolkit.checkpointing needs tensorstore: pip install 'toolkit[checkpoint]' "
                          "(or pip install tensorstore)")
    return _ts


def step_directory(directory: str | os.PathLike, step: int) -> Path:
    """Where step ``step``'s checkpoint lives under ``directory``."""
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"checkpoint step must be an int >= 0, got {step!r}")
    return Path(directory) / f"step_{step:08d}"


def all_steps(directory: str | os.PathLike) -> list[int]:
    """The steps under ``directory`` whose save finished (``checkpoint.json`` present), ascending."""
    root = Path(directory)
    if not root.is_dir():
        return []
    steps = []
    for entry in root.iterdir():
        match = _STEP.match(entry.name)
        if match and (entry / "checkpoint.json").is_file():
            steps.append(int(match.group(1)))
    return sorted(steps)


def latest_step(directory: str | os.PathLike) -> int | None:
    """The newest finished step under ``directory``, or None when there is none."""
    steps = all_steps(directory)
    return steps[-1] if steps else None


def _spec(path: Path, dtype: np.dtype | None = None, shape: tuple[int, ...] | None = None,
          chunks: tuple[int, ...] | None = None) -> dict:
    spec: dict[str, Any] = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(path)}}
    if shape is not None:
        spec["metadata"] = {"shape": list(shape), "chunks": [max(c, 1) for c in chunks or shape],
                            "dtype": np.dtype(dtype).str if np.dtype(dtype).name != "bfloat16" else "bfloat16",
                            "compressor": None}
    return spec


def _owned_pieces(array: Array) -> list[tuple[tuple, Any]]:
    """(index, device) of each distinct piece this process writes: the first device holding it writes it."""
    mine, seen = [], set()
    me = process_index()
    for device, index in array.sharding.devices_indices_map(array.shape).items():
        key = tuple((s.start, s.stop) for s in index)
        if key in seen:
            continue
        seen.add(key)
        if getattr(device, "process_index", 0) == me:
            mine.append((index, device))
    return mine


def _leaves(tree: Any, what: str) -> tuple[list[tuple[str, Any]], Any]:
    pairs, treedef = pytrees.tree_flatten_with_path(tree)
    if not pairs:
        raise ValueError(f"{what}: the tree has no leaves")
    return [(pytrees.keystr(path), leaf) for path, leaf in pairs], treedef


def save(directory: str | os.PathLike, step: int, tree: Any) -> Path:
    """Save ``tree`` (a pytree of ``toolkit.Array``) as step ``step`` under ``directory``; returns its directory.

    Call in every process with the same tree structure. Each process writes
    its devices' shards; process 0 writes ``checkpoint.json`` once all have
    written, then every process returns. Raises ``FileExistsError`` when the
    step was already saved, ``TypeError`` naming the leaf that is not a
    ``toolkit.Array``, and ``ImportError`` without tensorstore.
    """
    ts = _tensorstore()
    target = step_directory(directory, step)
    leaves, _ = _leaves(tree, "toolkit.checkpointing.save")
    for name, leaf in leaves:
        if not isinstance(leaf, Array):
            raise TypeError(f"toolkit.checkpointing.save: leaf {name or '<root>'} is a {type(leaf).__name__}, "
                            "not a toolkit.Array (device_put it first)")
    if (target / "checkpoint.json").exists():
        raise FileExistsError(f"toolkit.checkpointing.save: step {step} is already saved in {target}")
    if process_index() == 0:
        target.mkdir(parents=True, exist_ok=True)
        for i, (_, leaf) in enumerate(leaves):
            chunks = leaf.sharding.shard_shape(leaf.shape)
            ts.open(_spec(target / f"leaf_{i:05d}", leaf.dtype, leaf.shape, chunks), create=True,
                    delete_existing=True).result()
    coordination.barrier(f"checkpoint-{step}-created", BARRIER_TIMEOUT)
    for i, (_, leaf) in enumerate(leaves):
        store = ts.open(_spec(target / f"leaf_{i:05d}"), open=True).result()
        pieces = {tuple((s.start, s.stop) for s in shard.index): shard.data for shard in leaf.addressable_shards}
        writes = [store[index].write(np.asarray(pieces[tuple((s.start, s.stop) for s in index)]))
                  for index, _ in _owned_pieces(leaf)]
        for write in writes:
            write.result()
    coordination.barrier(f"checkpoint-{step}-written", BARRIER_TIMEOUT)
    if process_index() == 0:
        record = {"format": FORMAT, "version": VERSION, "step": step,
                  "leaves": [{"path": name, "file": f"leaf_{i:05d}", "shape": list(leaf.shape),
                              "dtype": np.dtype(leaf.dtype).name} for i, (name, leaf) in enumerate(leaves)]}
        temporary = target / "checkpoint.json.tmp"
        temporary.write_text(json.dumps(record, indent=1))
        os.replace(temporary, target / "checkpoint.json")  # atomic: a reader sees all of it or none
    coordination.barrier(f"checkpoint-{step}-committed", BARRIER_TIMEOUT)
    return target


def _read_record(target: Path) -> dict:
    path = target / "checkpoint.json"
    if not path.is_file():
        raise FileNotFoundError(f"toolkit.checkpointing.restore: {target} has no finished checkpoint "
                                "(no checkpoint.json: never saved, or a process died while saving)")
    record = json.loads(path.read_text())
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("version") != VERSION:
        raise ValueError(f"toolkit.checkpointing.restore: {path} is not a {FORMAT} version {VERSION} record")
    return record


def _reader(store: Any) -> Any:
    def read(index: tuple) -> np.ndarray:
        return np.asarray(store[index].read().result())
    return read


def restore(directory: str | os.PathLike, target: Any, step: int | None = None) -> Any:
    """Read step ``step`` (default: the latest finished one) into the shardings of ``target``.

    ``target`` is a pytree with the saved tree's structure whose leaves are
    shardings (``NamedSharding`` on any mesh) or arrays (their ``.sharding``
    is used). Each process reads only the pieces its devices need. Raises
    ``FileNotFoundError`` when there is no finished checkpoint, and
    ``ValueError`` naming the leaf when the tree's key paths differ from the
    saved ones or a sharding does not divide a saved shape.
    """
    ts = _tensorstore()
    if step is None:
        step = latest_step(directory)
        if step is None:
            raise FileNotFoundError(f"toolkit.checkpointing.restore: no finished checkpoint in {directory}")
    where = step_directory(directory, step)
    record = _read_record(where)
    leaves, treedef = _leaves(target, "toolkit.checkpointing.restore")
    saved = [entry["path"] for entry in record["leaves"]]
    if [name for name, _ in leaves] != saved:
        raise ValueError(f"toolkit.checkpointing.restore: the target tree's leaves {[n for n, _ in leaves]} "
                         f"differ from those saved at step {step}: {saved}")
    arrays = []
    for (name, leaf), entry in zip(leaves, record["leaves"]):
        sharding = leaf.sharding if isinstance(leaf, Array) else leaf
        shape = tuple(entry["shape"])
        store = ts.open(_spec(where / entry["file"]), open=True).result()
        if tuple(store.shape) != shape:
            raise ValueError(f"toolkit.checkpointing.restore: {name}: zarr array has shape {tuple(store.shape)}, "
                             f"checkpoint.json says {shape}")
        try:
            arrays.append(make_array_from_callback(shape, sharding, _reader(store)))
        except ValueError as error:
            raise ValueError(f"toolkit.checkpointing.restore: {name}: {error}") from None
    return pytrees.tree_unflatten(treedef, arrays)
