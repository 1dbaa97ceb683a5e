"""flatbuffer_builder.Builder's quick writers give the stock flatbuffers.Builder's bytes.

``Builder`` overrides or adds methods that do the library's sequence of
``Prep``/``Place`` calls in one write. ``_LibraryBuilder`` below is the stock
builder with the added methods spelled the library's way; every test builds
the same thing with both and compares the bytes.
"""

from __future__ import annotations

import collections
from typing import Any, Sequence

import flatbuffers
import numpy as np
import pytest
from flatbuffers import number_types as N
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolkit
from _exported_helpers import make_exported
from toolkit.core.avals import ShapedArray
from toolkit.export import ExportedAbstractDevice, ExportedAbstractMesh, ExportedNamedSharding, flatbuffer_builder, serialization


class _LibraryBuilder(flatbuffers.Builder):
    """The stock builder, with ``Builder``'s added methods written with the library's own calls."""

    def CreateOffsetVector(self, offsets: Sequence[int]) -> int:  # noqa: N802
        self.StartVector(4, len(offsets), 4)
        for off in reversed(offsets):
            self.PrependUOffsetTRelative(off)
        return self.EndVector()

    def CreateStringVector(self, strings: Sequence[str | bytes]) -> int:  # noqa: N802
        return self.CreateOffsetVector([self.CreateString(s) for s in strings])

    def CreateUint32Vector(self, values: Sequence[int]) -> int:  # noqa: N802
        return self.CreateNumpyVector(np.array(values, dtype=np.uint32))

    def CreateUint16Vector(self, values: Sequence[int]) -> int:  # noqa: N802
        return self.CreateNumpyVector(np.array(values, dtype=np.uint16))


# ---------------------------------------------------------------------------
# Random sequences of builder operations
# ---------------------------------------------------------------------------

_SCALARS: dict[str, Any] = {  # Prepend*Slot name -> flags
    "Bool": N.BoolFlags, "Byte": N.Uint8Flags, "Uint8": N.Uint8Flags, "Uint16": N.Uint16Flags,
    "Uint32": N.Uint32Flags, "Uint64": N.Uint64Flags, "Int8": N.Int8Flags, "Int16": N.Int16Flags,
    "Int32": N.Int32Flags, "Int64": N.Int64Flags, "Float32": N.Float32Flags, "Float64": N.Float64Flags,
}


def _scalar_values(kind: str) -> st.SearchStrategy:
    flags = _SCALARS[kind]
    if kind == "Bool":
        return st.sampled_from([False, True, 0, 1])
    if kind == "Float32":
        return st.floats(width=32, allow_nan=False) | st.just(0.0)
    if kind == "Float64":
        return st.floats(allow_nan=False) | st.just(0.0)
    return st.integers(flags.min_val, flags.max_val) | st.sampled_from([0, flags.min_val, flags.max_val])


_text = st.text(max_size=12) | st.sampled_from(["", "0", "512", "ünï", "日本語", "a" * 9])


@st.composite
def _scalar_field(draw: Any) -> tuple:
    kind = draw(st.sampled_from(sorted(_SCALARS)))
    value = draw(_scalar_values(kind))
    default = draw(st.sampled_from([0, value]) | _scalar_values(kind))
    return ("scalar", kind, value, default)


_ops = st.one_of(
    st.tuples(st.just("string"), _text | st.binary(max_size=12)),
    st.tuples(st.just("strings"), st.lists(_text | st.binary(max_size=6), max_size=6)),
    st.tuples(st.just("offsets"), st.lists(st.integers(0, 1000), max_size=9)),  # indices into what exists
    st.tuples(st.just("bytes"), st.binary(max_size=20)),
    st.tuples(st.just("u32"), st.lists(st.integers(0, 2**32 - 1), max_size=7)),
    st.tuples(st.just("u16"), st.lists(st.integers(0, 2**16 - 1), max_size=7)),
    st.tuples(st.just("numpy"), st.sampled_from(["int8", "uint16", "int32", "int64", "float32", "float64", "bool"]),
              st.lists(st.integers(0, 100), max_size=6)),
    st.tuples(st.just("table"), st.integers(1, 70),
              st.lists(st.tuples(st.integers(0, 69), _scalar_field() | st.tuples(st.just("offset"), st.integers(0, 1000))),
                       max_size=8)),
)


def _run(builder: flatbuffers.Builder, ops: list[tuple], force_defaults: bool) -> bytes:
    builder.ForceDefaults(force_defaults)
    made: list[int] = []  # offsets of everything written so far

    def pick(i: int) -> int:
        return made[i % len(made)] if made else 0

    for op in ops:
        kind = op[0]
        if kind == "string":
            made.append(builder.CreateString(op[1]))
        elif kind == "strings":
            made.append(builder.CreateStringVector(op[1]))
        elif kind == "offsets":
            made.append(builder.CreateOffsetVector([pick(i) for i in op[1]]))
        elif kind == "bytes":
            made.append(builder.CreateByteVector(op[1]))
        elif kind == "u32":
            made.append(builder.CreateUint32Vector(op[1]))
        elif kind == "u16":
            made.append(builder.CreateUint16Vector(op[1]))
        elif kind == "numpy":
            made.append(builder.CreateNumpyVector(np.array(op[2], dtype=op[1])))
        else:
            numfields, fields = op[1], op[2]
            builder.StartObject(numfields)
            for slot, field in fields:
                slot %= numfields
                if field[0] == "scalar":
                    _, scalar_kind, value, default = field
                    getattr(builder, f"Prepend{scalar_kind}Slot")(slot, value, default)
                else:
                    builder.PrependUOffsetTRelativeSlot(slot, pick(field[1]), 0)
            made.append(builder.EndObject())
    root = made[-1] if made else builder.CreateString("")
    builder.Finish(root)
    return bytes(builder.Output())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_ops, max_size=25), initial_size=st.integers(0, 128), force_defaults=st.booleans())
def test_random_operations_give_the_library_bytes(ops, initial_size, force_defaults):
    fast = _run(flatbuffer_builder.Builder(initial_size), ops, force_defaults)
    assert fast == _run(_LibraryBuilder(initial_size), ops, force_defaults)


def test_fast_methods_keep_the_library_state_and_errors():
    fast, stock = flatbuffer_builder.Builder(16), _LibraryBuilder(16)
    for b in (fast, stock):
        b.CreateString("abc")
        b.CreateOffsetVector([b.CreateString("x"), b.CreateStringVector(["1", "22"])])
        b.StartObject(3)
        b.PrependInt64Slot(0, 5, 0)
    for attr in ("head", "minalign", "nested", "vectorNumElems", "current_vtable"):
        assert getattr(fast, attr) == getattr(stock, attr), attr
    assert fast.Bytes[fast.head:] == stock.Bytes[stock.head:]
    for b in (fast, stock):  # inside a table: strings and vectors may not start
        with pytest.raises(flatbuffers.builder.IsNestedError):
            b.CreateString("no")
        with pytest.raises(flatbuffers.builder.IsNestedError):
            b.CreateOffsetVector([])
        with pytest.raises(TypeError):
            b.PrependInt8Slot(1, 300, 0)
        with pytest.raises(flatbuffers.builder.OffsetArithmeticError):
            b.PrependUOffsetTRelativeSlot(1, b.Offset() + 100, 0)
    for b in (fast, stock):
        b.EndObject()
    # (after a failed call the library's builder is left mid-vector: one error per fresh builder)
    for b in (flatbuffer_builder.Builder(16), _LibraryBuilder(16)):
        with pytest.raises(TypeError):
            b.CreateString(3)  # type: ignore[arg-type]
    for b in (flatbuffer_builder.Builder(16), _LibraryBuilder(16)):
        with pytest.raises(flatbuffers.builder.OffsetArithmeticError):
            b.CreateOffsetVector([b.Offset() + 100])


# ---------------------------------------------------------------------------
# serialize() of real Exporteds: Builder against the library
# ---------------------------------------------------------------------------


def _serialize_both(monkeypatch: pytest.MonkeyPatch, exp: Any, vjp_order: int = 0) -> tuple[bytes, bytes]:
    """``exp.serialize(vjp_order)`` with ``Builder``, then with the library's builder.

    Both from the same line: ``exp.vjp()`` traces anew at each call and the
    module records Python source locations, the caller's included.
    """
    blobs = []
    for builder in (flatbuffer_builder.Builder, _LibraryBuilder):
        with monkeypatch.context() as m:
            m.setattr(flatbuffer_builder, "Builder", builder)
            blobs.append(bytes(exp.serialize(vjp_order=vjp_order)))
    return blobs[0], blobs[1]


def _exported_pytree() -> Any:
    def f(x, params):
        h = toolkit.numpy.tanh(x @ params["w"] + params["b"])
        return {"out": h, "aux": [h.sum(), (x * 2,)]}, None

    x = toolkit.ShapeDtypeStruct((4, 8), np.float32)
    params = collections.OrderedDict(w=toolkit.ShapeDtypeStruct((8, 16), np.float32),
                                     b=toolkit.ShapeDtypeStruct((16,), np.float32))
    return toolkit.export.export(toolkit.jit(f))(x, params)


def _exported_symbolic() -> Any:
    def f(x, y):
        return toolkit.numpy.sin(x) * 2 + y, x[:, :2]

    b4 = toolkit.export.symbolic_shape("b, 4")
    return toolkit.export.export(toolkit.jit(f))(toolkit.ShapeDtypeStruct(b4, np.float32),
                                                 toolkit.ShapeDtypeStruct(b4, np.float32))


def _exported_sharded() -> Any:
    device = ExportedAbstractDevice("cpu", None, "cpu")
    mesh = ExportedAbstractMesh((2, 4), ("x", "y"), ("Explicit", "Auto"), device)
    mesh2 = ExportedAbstractMesh((2, 4), ("d", "e"))
    avals = (ShapedArray((8, 8), np.float32), ShapedArray((8,), np.int32))
    return make_exported(
        in_avals=avals, out_avals=avals, nr_devices=8, platforms=("cpu", "cuda"),
        _in_named_shardings=(ExportedNamedSharding(mesh, ("x", "y"), memory_kind="device"),
                             ExportedNamedSharding(mesh2, ("d",), reduced=frozenset({"e"}))),
        _out_named_shardings=(None, ExportedNamedSharding(mesh, (("x", "y"),), unreduced=frozenset())))


@pytest.mark.parametrize("make, vjp_order", [
    (_exported_pytree, 0), (_exported_pytree, 1), (_exported_symbolic, 0), (_exported_symbolic, 1),
    (_exported_sharded, 0), (make_exported, 0),
])
def test_serialize_gives_the_library_bytes(monkeypatch, make, vjp_order):
    fast, stock = _serialize_both(monkeypatch, make(), vjp_order)
    assert fast == stock
    assert serialization.deserialize(fast).fun_name
