"""The checked flatbuffer reader (toolkit/export/flatbuffer_reader.py) and deserialize's use of it.

* a small schema and hand-built buffers: values, defaults, and every error
  (truncated buffers, offsets out of bounds or misaligned, bad vtables,
  fields outside their table, lengths past the end, wrong-typed vectors,
  nesting, shared objects) is a FlatbufferError naming the field path;
* the Exported schema the reader uses matches ``schema/exported.fbs``;
* on real exports (toolkit-written, JAX-written, and JAX's own poly harness
  blobs in ../shared when present) the reader decodes exactly what
  flatbuffers' generated accessors read -- the reader ``deserialize`` used
  before -- field by field, and ``deserialize`` gives equal ``Exported`` s.
"""

from __future__ import annotations

import collections
import os
import re
import struct
import time

import flatbuffers
import numpy as np
import pytest

from _exported_helpers import artifact, make_exported
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray
from toolkit.core.shape_poly import symbolic_shape
from toolkit.export import (
    DisabledSafetyCheck,
    Effect,
    ExportedAbstractMesh,
    ExportedNamedSharding,
    deserialize,
    serialization,
)
from toolkit.export.flatbuffer_reader import FlatbufferError, Reader
from toolkit.export.schema import exported_generated

SCHEMA = {
    "Root": (("a", "uint16"), ("name", "string"), ("child", "Child"), ("items", "[Child]"), ("nums", "[uint32]"),
             ("raw", "[ubyte]"), ("words", "[string]"), ("opt", "uint32 = null"), ("flag", "bool"), ("s8", "byte")),
    "Child": (("x", "int"), ("next", "Child")),
}
READER = Reader(SCHEMA, "Root")


def _child(b: flatbuffers.Builder, x: int, next_: int | None = None) -> int:
    b.StartObject(2)
    b.PrependInt32Slot(0, x, 0)
    if next_ is not None:
        b.PrependUOffsetTRelativeSlot(1, next_, 0)
    return b.EndObject()


def _offsets_vector(b: flatbuffers.Builder, offsets: list[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _root(*, a=7, name="seven", child=True, items=(1, 2), nums=(3, 4, 5), raw=b"\x01\xff", words=("p", "q"),
          opt=None, flag=True, s8=-2) -> bytes:
    b = flatbuffers.Builder(256)
    name_off = b.CreateString(name) if name is not None else None
    child_off = _child(b, 10, _child(b, 11)) if child else None
    items_off = _offsets_vector(b, [_child(b, x) for x in items]) if items is not None else None
    nums_off = None
    if nums is not None:
        b.StartVector(4, len(nums), 4)
        for n in reversed(nums):
            b.PrependUint32(n)
        nums_off = b.EndVector()
    raw_off = b.CreateByteVector(raw) if raw is not None else None
    words_off = _offsets_vector(b, [b.CreateString(w) for w in words]) if words is not None else None
    b.StartObject(10)
    b.PrependUint16Slot(0, a, 0)
    for slot, off in ((1, name_off), (2, child_off), (3, items_off), (4, nums_off), (5, raw_off), (6, words_off)):
        if off is not None:
            b.PrependUOffsetTRelativeSlot(slot, off, 0)
    if opt is not None:
        b.PrependUint32Slot(7, opt, 1)  # default 1: written even when 0
    b.PrependBoolSlot(8, flag, False)
    b.PrependInt8Slot(9, s8, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def _error(data: bytes) -> str:
    with pytest.raises(FlatbufferError) as info:
        READER.decode(data)
    return str(info.value)


def _root_pos(data: bytes) -> int:
    return struct.unpack_from("<I", data, 0)[0]


def _field_pos(data: bytes, table: int, slot: int) -> int:
    """Where field ``slot`` of the table at ``table`` is stored (0 when absent)."""
    vtable = table - struct.unpack_from("<i", data, table)[0]
    offset = struct.unpack_from("<H", data, vtable + 4 + 2 * slot)[0]
    return table + offset if offset else 0


def _target(data: bytes, at: int) -> int:
    return at + struct.unpack_from("<I", data, at)[0]


def _patch(data: bytes, at: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


# -- values -----------------------------------------------------------------------


def test_decodes_every_kind_of_field():
    got = READER.decode(_root(opt=0))
    assert got == {
        "a": 7, "name": b"seven", "child": {"x": 10, "next": {"x": 11, "next": None}},
        "items": [{"x": 1, "next": None}, {"x": 2, "next": None}], "nums": (3, 4, 5), "raw": b"\x01\xff",
        "words": [b"p", b"q"], "opt": 0, "flag": 1, "s8": -2}


def test_absent_fields_take_their_defaults():
    got = READER.decode(_root(a=0, name=None, child=False, items=None, nums=None, raw=None, words=None, flag=False,
                              s8=0))
    assert got == {"a": 0, "name": None, "child": None, "items": None, "nums": None, "raw": None, "words": None,
                   "opt": None, "flag": 0, "s8": 0}
    empty = READER.decode(_root(items=(), nums=(), raw=b"", words=(), name=""))
    assert (empty["items"], empty["nums"], empty["raw"], empty["words"], empty["name"]) == ([], (), b"", [], b"")


def test_short_and_long_vtables():
    """A writer that knew fewer fields (older schema) or more (newer schema): missing ones default, extra ones
    are skipped."""
    older = Reader({"Root": SCHEMA["Root"] + (("later", "uint32"),), "Child": SCHEMA["Child"]}, "Root")
    assert older.decode(_root())["later"] == 0
    newer = Reader({"Root": SCHEMA["Root"][:2], "Child": SCHEMA["Child"]}, "Root")
    assert newer.decode(_root()) == {"a": 7, "name": b"seven"}


def test_shared_objects_are_decoded_once():
    """A DAG whose expansion is 2**40 tables: each shared table and vector is decoded once, and is one object."""
    b = flatbuffers.Builder(1024)
    b.StartObject(10)
    node = b.EndObject()
    for depth in range(40):
        vec = _offsets_vector(b, [node, node])
        b.StartObject(10)
        b.PrependUOffsetTRelativeSlot(3, vec, 0)
        b.PrependUint16Slot(0, depth, 0)
        node = b.EndObject()
    b.Finish(node)
    started = time.perf_counter()
    schema = {"Root": SCHEMA["Root"][:3] + (("items", "[Root]"),) + SCHEMA["Root"][4:], "Child": SCHEMA["Child"]}
    root = Reader(schema, "Root").decode(bytes(b.Output()))
    assert time.perf_counter() - started < 5
    assert root["a"] == 39 and root["items"][0] is root["items"][1]


# -- errors -----------------------------------------------------------------------


def test_every_truncation_fails_cleanly():
    """Cutting off anything the buffer refers to fails; only the last string's terminator and padding may go."""
    data = _root()
    assert data.endswith(b"seven\x00\x00\x00")
    full = READER.decode(data)
    for cut in range(len(data)):
        try:
            got = READER.decode(data[:cut])
        except FlatbufferError:
            continue
        assert cut >= len(data) - 3 and got == full, cut


def test_root_offset_out_of_bounds():
    assert "root table offset 4096 is outside the" in _error(_patch(_root(), 0, "<I", 4096))
    assert "has no root offset" in _error(b"\x00")


def test_offset_out_of_bounds_names_the_field():
    data = _root()
    at = _field_pos(data, _root_pos(data), 1)
    message = _error(_patch(data, at, "<I", 4 * len(data)))
    assert re.fullmatch(r"Root\.name points to byte \d+, not an aligned position inside the \d+-byte buffer",
                        message), message


def test_misaligned_offset():
    data = _root()
    at = _field_pos(data, _root_pos(data), 2)
    message = _error(_patch(data, at, "<I", struct.unpack_from("<I", data, at)[0] + 2))
    assert message.startswith("Root.child points to byte") and "not an aligned position" in message


def test_offset_inside_a_vector_names_the_element():
    data = _root()
    items = _target(data, _field_pos(data, _root_pos(data), 3))
    assert _error(_patch(data, items + 8, "<I", 2**31)).startswith("Root.items[1] points to byte")
    words = _target(data, _field_pos(data, _root_pos(data), 6))
    assert _error(_patch(data, words + 4, "<I", 2**31)).startswith("Root.words[0] points to byte")


def test_vtable_outside_the_buffer():
    data = _root()
    assert re.fullmatch(r"the vtable of Root at byte -?\d+ is outside the \d+-byte buffer",
                        _error(_patch(data, _root_pos(data), "<i", -4 * len(data))))


@pytest.mark.parametrize("entry, value, message", [
    (0, 3, "has a corrupted vtable"),        # odd vtable size
    (0, 2, "has a corrupted vtable"),        # smaller than its header
    (0, 0xFFFE, "has a corrupted vtable"),   # past the end of the buffer
    (1, 2, "has a corrupted vtable"),        # table smaller than its vtable offset
    (1, 0xFFF0, "has 65520 bytes, past the end"),
])
def test_bad_vtable_header(entry, value, message):
    data = _root()
    root = _root_pos(data)
    vtable = root - struct.unpack_from("<i", data, root)[0]
    got = _error(_patch(data, vtable + 2 * entry, "<H", value))
    assert got.startswith("Root ") and message in got, got


def test_field_outside_its_table():
    data = _root()
    root = _root_pos(data)
    vtable = root - struct.unpack_from("<i", data, root)[0]
    table_size = struct.unpack_from("<H", data, vtable + 2)[0]
    got = _error(_patch(data, vtable + 4 + 2 * 0, "<H", table_size - 1))  # a 2-byte field 1 byte from the end
    assert got == f"Root.a lies outside its table (bytes {table_size - 1}..{table_size + 1} of {table_size})"


def test_lengths_past_the_end():
    data = _root()
    root = _root_pos(data)
    name = _target(data, _field_pos(data, root, 1))
    assert re.fullmatch(r"Root\.name claims 99999 bytes at byte \d+, past the end of the \d+-byte buffer",
                        _error(_patch(data, name, "<I", 99999)))
    nums = _target(data, _field_pos(data, root, 4))
    assert _error(_patch(data, nums, "<I", 2**30)).startswith("Root.nums claims 1073741824 elements")
    items = _target(data, _field_pos(data, root, 3))
    assert _error(_patch(data, items, "<I", 2**32 - 1)).startswith("Root.items claims 4294967295 elements")
    word = _target(data, _target(data, _field_pos(data, root, 6)) + 4)
    assert _error(_patch(data, word, "<I", 2**20)).startswith("Root.words[0] claims 1048576 bytes")


def test_errors_deep_inside_name_the_whole_path():
    data = _root()
    child = _target(data, _field_pos(data, _root_pos(data), 2))
    grandchild = _field_pos(data, child, 1)
    got = _error(_patch(data, grandchild, "<I", 2**31))
    assert got.startswith("Root.child.next points to byte"), got


def test_wrong_typed_vector():
    """A field declared as a vector of tables that holds bytes: its 'offsets' are nonsense, and are refused."""
    wrong = Reader({"Root": SCHEMA["Root"][:5] + (("raw", "[Child]"),) + SCHEMA["Root"][6:],
                    "Child": SCHEMA["Child"]}, "Root")
    for raw in (b"\x01\x00\x00\x00", b"\xff\xff\xff\x7f"):  # misaligned, outside
        with pytest.raises(FlatbufferError, match=r"^Root\.raw\[0\] points to byte \d+, not an aligned position"):
            wrong.decode(_root(raw=raw))
    # Strings read as tables: a table's first word (its vtable's distance) is then the string's length.
    as_tables = Reader({"Root": SCHEMA["Root"][:6] + (("words", "[Child]"),) + SCHEMA["Root"][7:],
                        "Child": SCHEMA["Child"]}, "Root")
    with pytest.raises(FlatbufferError, match=r"^the vtable of Root\.words\[0\] at byte -\d+ is outside"):
        as_tables.decode(_root(words=("x" * 5000,)))


def test_nesting_limit():
    b = flatbuffers.Builder(1024)
    node = _child(b, 0)
    for i in range(300):
        node = _child(b, i, node)
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(2, node, 0)
    b.Finish(b.EndObject())
    with pytest.raises(FlatbufferError) as info:
        Reader(SCHEMA, "Root", max_depth=50).decode(bytes(b.Output()))
    message = str(info.value)
    assert message.startswith("Root.child.next.next.next.next...(") and "more)...next.next.next.next " in message
    assert message.endswith("nests more than 50 tables deep") and len(message) < 200
    assert Reader(SCHEMA, "Root", max_depth=400).decode(bytes(b.Output()))["child"]["x"] == 299


def test_copies_of_one_shared_string_are_bounded():
    """Many vector entries naming one long string: copying it for each would allocate far more than the blob."""
    b = flatbuffers.Builder(1 << 16)
    long_string = b.CreateString("x" * 20000)
    words = _offsets_vector(b, [long_string] * 2000)
    b.StartObject(10)
    b.PrependUOffsetTRelativeSlot(6, words, 0)
    b.Finish(b.EndObject())
    with pytest.raises(FlatbufferError, match="references more objects than it can contain"):
        READER.decode(bytes(b.Output()))


def test_schema_errors():
    with pytest.raises(ValueError, match="unknown type 'Nope'"):
        Reader({"Root": (("a", "Nope"),)}, "Root")
    with pytest.raises(ValueError, match="only scalars"):
        Reader({"Root": (("a", "[uint32 = null]"),)}, "Root")
    with pytest.raises(ValueError, match="not in the schema"):
        Reader({"Root": ()}, "Other")


# -- the Exported schema ----------------------------------------------------------------------


def _fbs_tables() -> dict[str, tuple[tuple[str, str], ...]]:
    """schema/exported.fbs with enum fields resolved to their underlying type, as the reader's schema writes them."""
    path = os.path.join(os.path.dirname(exported_generated.__file__), "exported.fbs")
    text = re.sub(r"//[^\n]*", "", open(path).read())
    enums = dict(re.findall(r"enum\s+(\w+)\s*:\s*(\w+)", text))
    tables = {}
    for name, body in re.findall(r"table\s+(\w+)\s*\{([^}]*)\}", text):
        fields = []
        for field, kind, default in re.findall(r"(\w+)\s*:\s*([\w\[\]]+)\s*(?:=\s*(\w+))?\s*;", body):
            vector = kind.startswith("[")
            base = kind.strip("[]")
            base = enums.get(base, base) + (" = null" if default == "null" else "")
            fields.append((field, f"[{base}]" if vector else base))
        tables[name] = tuple(fields)
    return tables


def test_exported_schema_matches_the_fbs():
    assert serialization._SCHEMA == _fbs_tables()


# -- against the generated accessors, on real exports ------------------------------------------------


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _same_as_accessors(decoded: dict, obj, table: str, path: str) -> None:
    """Every field of ``decoded`` equals what flatbuffers' generated accessors read from ``obj``."""
    for name, kind in serialization._SCHEMA[table]:
        value, get, where = decoded[name], getattr(obj, _camel(name)), f"{path}.{name}"
        base = kind.strip("[]").removesuffix(" = null")
        if not kind.startswith("["):
            if base == "string" or base in serialization._SCHEMA:
                other = get()
                assert (value is None) == (other is None), where
                if base == "string":
                    assert value == other, where
                elif other is not None:
                    _same_as_accessors(value, other, base, where)
            else:
                assert value == get(), where
            continue
        if getattr(obj, _camel(name) + "IsNone")():
            assert value is None, where
            continue
        n = getattr(obj, _camel(name) + "Length")()
        assert len(value) == n, where
        if base == "byte":
            assert value == getattr(obj, _camel(name) + "AsNumpy")().tobytes(), where
        elif base in serialization._SCHEMA:
            for i in range(n):
                _same_as_accessors(value[i], get(i), base, f"{where}[{i}]")
        else:
            assert list(value) == [get(i) for i in range(n)], where


def _check_blob(blob: bytes) -> None:
    blob = bytes(blob)
    root = serialization._FLATBUFFER_READER.decode(blob)
    _same_as_accessors(root, exported_generated.Exported.GetRootAs(blob, 0), "Exported", "Exported")


def _rich_exported():
    a, b = symbolic_shape("a, b")
    mesh = ExportedAbstractMesh((2, 4), ("x", "y"), ("Explicit", "Auto"))
    explicit = ExportedAbstractMesh((2, 4), ("x", "y"), ("Explicit", "Explicit"))
    tree = ((collections.OrderedDict([("p", 1), ("q", None)]), [2]), {"k": 3})
    in_avals = (ShapedArray((a, 8), np.float32), ShapedArray((8, b), np.int32), ShapedArray((), np.bool_))
    vjp = make_exported(fun_name="vjp", ordered_effects=(Effect("tests.export.E"),))
    return make_exported(
        in_tree=pytrees.tree_structure(tree), in_avals=in_avals, out_avals=in_avals[:2],
        out_tree=pytrees.tree_structure((1, 2)), module_kept_var_idx=(0, 2), nr_devices=8,
        platforms=("cpu", "cuda"), uses_global_constants=True, unordered_effects=(Effect("tests.export.U"),),
        disabled_safety_checks=(DisabledSafetyCheck.custom_call("t"), DisabledSafetyCheck.platform()),
        _in_named_shardings=(ExportedNamedSharding(mesh, ("x", "y")), ExportedNamedSharding(mesh, (("x", "y"),)),
                             None),
        _out_named_shardings=(ExportedNamedSharding(explicit, ("x",), unreduced=frozenset({"y"})),
                              ExportedNamedSharding(explicit, (None, "x"), reduced=frozenset({"y"}))),
        _get_vjp=lambda e: vjp)


def test_toolkit_blobs_decode_as_the_accessors_read_them():
    for exp, order in ((make_exported(), 0), (_rich_exported(), 1)):
        blob = exp.serialize(vjp_order=order)
        _check_blob(blob)
        again = deserialize(blob)
        assert again == exp
        if order:
            assert again.vjp() == exp.vjp()


def test_jax_blobs_decode_as_the_accessors_read_them():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from jax import export as jexport

    def f(x, y):
        return {"s": jnp.sin(x) * 2 + y, "t": (x @ y.T,)}

    x = jax.ShapeDtypeStruct((4, 3), np.float32)
    for args in ((x, x), jexport.symbolic_args_specs((x, x), ("b, 3", "b, 3"))):
        blob = jexport.export(jax.jit(f))(*args).serialize(vjp_order=1)
        _check_blob(blob)
        exp = deserialize(blob)
        theirs = jexport.deserialize(blob)
        assert exp.fun_name == theirs.fun_name and str(exp.in_tree) == str(theirs.in_tree)
        assert str(exp.out_tree) == str(theirs.out_tree)
        for ours, jaxs in ((exp.in_avals, theirs.in_avals), (exp.out_avals, theirs.out_avals)):
            assert [(tuple(str(d) for d in a.shape), a.dtype) for a in ours] == \
                [(tuple(str(d) for d in a.shape), a.dtype) for a in jaxs]
        assert exp.mlir_module_serialized == theirs.mlir_module_serialized
        assert exp.module_kept_var_idx == tuple(theirs.module_kept_var_idx)
        assert exp.vjp().fun_name == theirs.vjp().fun_name


CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpora", "jax_poly_harness")


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="needs ../shared/corpora/jax_poly_harness")
def test_jax_poly_harness_blobs_decode_as_the_accessors_read_them():
    names = sorted(n for n in os.listdir(CORPUS) if n.endswith(".bin"))[::50]
    assert len(names) >= 30
    for name in names:
        with open(os.path.join(CORPUS, name), "rb") as f:
            blob = f.read()
        _check_blob(blob)
        exp = deserialize(blob)
        assert deserialize(exp.serialize()) == exp, name


# -- deserialize ---------------------------------------------------------------------------


def test_deserialize_errors_name_the_field():
    blob = bytes(_rich_exported().serialize())
    root = _root_pos(blob)
    unique_avals = _target(blob, _field_pos(blob, root, 19))
    aval = _target(blob, unique_avals + 4)
    shape = _target(blob, _field_pos(blob, aval, 1))
    with pytest.raises(ValueError, match=r"^Not a serialized Exported: Exported\.unique_avals\[0\]\.shape claims "
                                         r"1000000 elements at byte \d+, past the end of the \d+-byte buffer\.$"):
        deserialize(_patch(blob, shape, "<I", 1000000))


def test_deserialize_reads_shared_unused_fields():
    """A blob whose (unused, since version 10) inline in_avals repeat one table many times still reads."""
    exp = make_exported()
    blob = bytearray(exp.serialize())
    root = _root_pos(blob)
    in_avals = _target(blob, _field_pos(blob, root, 3))
    first = _target(blob, in_avals + 4)
    struct.pack_into("<I", blob, in_avals + 8, first - (in_avals + 8))  # in_avals[1] is in_avals[0]
    assert deserialize(bytes(blob)) == exp


def test_deserialize_refuses_exponential_pytrees():
    """A pytree whose nodes share children: 2**30 nodes from a few hundred bytes."""
    b = flatbuffers.Builder(1024)
    name = b.CreateString("f")
    module = b.CreateByteVector(artifact())
    exported_generated.PyTreeDefStart(b)
    exported_generated.PyTreeDefAddKind(b, exported_generated.PyTreeDefKind.none)
    node = exported_generated.PyTreeDefEnd(b)
    for _ in range(30):
        children = _offsets_vector(b, [node, node])
        exported_generated.PyTreeDefStart(b)
        exported_generated.PyTreeDefAddKind(b, exported_generated.PyTreeDefKind.tuple)
        exported_generated.PyTreeDefAddChildren(b, children)
        node = exported_generated.PyTreeDefEnd(b)
    exported_generated.ExportedStart(b)
    exported_generated.ExportedAddSerializationVersion(b, 3)
    exported_generated.ExportedAddFunctionName(b, name)
    exported_generated.ExportedAddMlirModuleSerialized(b, module)
    exported_generated.ExportedAddInTree(b, node)
    exported_generated.ExportedAddOutTree(b, node)
    exported_generated.ExportedAddNrDevices(b, 1)
    b.Finish(exported_generated.ExportedEnd(b))
    started = time.perf_counter()
    with pytest.raises(ValueError, match="references more objects than it can contain"):
        deserialize(bytes(b.Output()))
    assert time.perf_counter() - started < 5
