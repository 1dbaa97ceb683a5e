"""Structure-aware mutations of serialized exports through ``deserialize`` and ``toolkit export inspect``.

The blobs are decoded with the flatbuffers schema (``toolkit/export/schema/exported.fbs``)
into tables, edited field by field (enum codes out of range, vectors
shortened and lengthened, strings swapped or made invalid, tables removed,
shared or of the wrong type, VJPs nested, pytrees deepened), re-encoded, and
sometimes have an offset, a length or a vtable entry overwritten, or are
truncated (:mod:`fuzz_flatbuf`). ``deserialize`` must raise
``ValueError("Not a serialized Exported: <what is wrong>")`` -- never another
exception type, never the vague catch-all message -- or return an
``Exported`` that re-serializes to an equal one.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fuzz_corpus
import fuzz_flatbuf
from fuzz_settings import fuzz_settings
from toolkit.export import deserialize
from toolkit.export import serialization

SCHEMA = fuzz_flatbuf.Schema.load()


@pytest.fixture(scope="module")
def seeds():
    return [(name, fuzz_flatbuf.decode(SCHEMA, blob)) for name, blob in fuzz_corpus.export_blobs()]


def _check(blob: bytes, what: str) -> None:
    outcome, detail = fuzz_flatbuf.check_deserialize(blob)
    assert outcome in ("output", "clean-error"), f"{what}: {outcome}: {detail}"


def test_reader_layout_matches_the_schema():
    """serialization._LAYOUT (what deserialize verifies) names every field of exported.fbs with its type."""
    width = {"bool": "1", "byte": "1", "ubyte": "1", "short": "2", "ushort": "2", "uint16": "2",
             "int": "4", "uint": "4", "uint32": "4"}

    def kind(t: fuzz_flatbuf.FieldType) -> str:
        scalar = SCHEMA.scalar_of(t.base)
        base = width[scalar] if scalar else "str" if t.base == "string" else t.base
        return f"[{base}]" if t.vector else base

    expected = {name: tuple((f.name, kind(f.type)) for f in fields) for name, fields in SCHEMA.tables.items()}
    assert serialization._LAYOUT == expected


def test_seeds_decode_and_encode_to_equal_exports(seeds):
    assert len(seeds) >= 7
    for name, tree in seeds:
        blob = dict(fuzz_corpus.export_blobs())[name]
        again = deserialize(fuzz_flatbuf.encode(SCHEMA, tree).blob)
        assert again == deserialize(blob), name


@fuzz_settings(120)
@given(rng=st.randoms(use_true_random=False))
def test_structured_mutations(seeds, rng):
    name, tree = rng.choice(seeds)
    blob, edits = fuzz_flatbuf.mutate_export(SCHEMA, tree, rng)
    _check(blob, f"{name} with {edits}")


@fuzz_settings(30)
@given(rng=st.randoms(use_true_random=False))
def test_nested_vjps_and_deep_pytrees(seeds, rng):
    name, tree = rng.choice(seeds)
    root = copy.deepcopy(tree)
    edits = [fuzz_flatbuf.nest_vjp(root, rng)]
    for _ in range(rng.randint(0, 2)):
        edits.append(fuzz_flatbuf.mutate_tree(SCHEMA, root, rng))
    _check(fuzz_flatbuf.encode(SCHEMA, root).blob, f"{name} with {edits}")


@pytest.mark.parametrize("depth, ok", [(16, True), (17, False), (100, True), (101, False)])
def test_nesting_limits_are_clean(seeds, depth, ok):
    """VJP chains up to 16 and pytrees up to 100 levels read (and re-serialize); one more is refused."""
    name, tree = next((n, t) for n, t in seeds if n == "add")
    root = copy.deepcopy(tree)
    if depth in (16, 17):
        node = copy.deepcopy(root)
        for _ in range(depth):
            node = fuzz_flatbuf.Table("Exported", dict(root.fields, vjp=node))
        root = node
    else:
        leaf = root.fields["in_tree"].fields["children"][0]  # the args tuple
        for _ in range(depth - 2):
            leaf = fuzz_flatbuf.Table("PyTreeDef", {"kind": 2, "children": [leaf]})
        root.fields["in_tree"].fields["children"][0] = leaf
    outcome, detail = fuzz_flatbuf.check_deserialize(fuzz_flatbuf.encode(SCHEMA, root).blob)
    assert outcome == ("output" if ok else "clean-error"), detail


@fuzz_settings(15)
@given(rng=st.randoms(use_true_random=False))
def test_inspect_on_structured_mutations(worker, seeds, rng):
    """``toolkit export inspect``/``mlir`` print, or fail with exit 1 and one error line (they parse the module)."""
    name, tree = rng.choice(seeds)
    blob, edits = fuzz_flatbuf.mutate_export(SCHEMA, tree, rng)
    action = rng.choice(["inspect", "inspect", "mlir"])
    result = worker.inspect(blob, action)
    assert not result.bad, f"toolkit export {action} on {name} with {edits}: {result.summary()}"
