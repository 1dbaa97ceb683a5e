"""Back-compatibility: the golden records in ``tests/compat/records`` still read, call and convert.

Each record (written by ``tests/compat/generate.py``) is read back: the blob
deserializes with its stored fields, its module text is unchanged, toolkit's
``Exported.call`` and ``toolkit export run``'s route (the plain module) give
the recorded outputs, and JAX 0.10.2 (when importable) calls it too.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from toolkit import export
from toolkit.core import pytrees
from toolkit.export import provenance
from toolkit.export.runner import run_exported

RECORDS = Path(__file__).resolve().parent / "records"
NAMES = sorted(p.name for p in RECORDS.iterdir() if (p / "record.json").exists()) if RECORDS.exists() else []


def _arrays(path: Path) -> list[np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return [z[f"a{i}"] for i in range(len(z.files))]


def test_there_are_records():
    assert set(NAMES) >= {"mlp", "transformer", "convnet", "newton", "rnn"}


@pytest.mark.parametrize("name", NAMES)
def test_record_reads_back(name):
    folder = RECORDS / name
    record = json.loads((folder / "record.json").read_text())
    blob = (folder / "exported.bin").read_bytes()
    exp = export.deserialize(blob)
    assert [a.str_short() for a in exp.in_avals] == record["in_avals"]
    assert [a.str_short() for a in exp.out_avals] == record["out_avals"]
    assert exp.calling_convention_version == record["calling_convention_version"]
    assert provenance.get(exp) == record["provenance"]
    assert exp.mlir_module() == (folder / "module.mlir").read_text()
    inputs, outputs = _arrays(folder / "inputs.npz"), _arrays(folder / "outputs.npz")
    args, kwargs = pytrees.tree_unflatten(exp.in_tree, inputs)
    called = [np.asarray(o) for o in pytrees.tree_leaves(exp.call(*args, **kwargs))]
    for got, want in zip(called, outputs):
        np.testing.assert_allclose(got, want, rtol=record["rtol"], atol=record["atol"])
    for got, want in zip(run_exported(exp, inputs), outputs):
        np.testing.assert_allclose(got, want, rtol=record["rtol"], atol=record["atol"])
    try:
        from jax import export as jexport
    except ImportError:
        return
    theirs = jexport.deserialize(blob)
    for got, want in zip(pytrees.tree_leaves(theirs.call(*args, **kwargs)), outputs):
        np.testing.assert_allclose(np.asarray(got), want, rtol=record["rtol"], atol=record["atol"])
