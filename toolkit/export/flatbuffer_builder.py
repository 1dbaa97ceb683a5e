"""A flatbuffers ``Builder`` whose hot writers make the library's bytes with fewer Python calls.

flatbuffers' Python builder writes every vector element, string and table
field with an alignment ``Prep`` (a method call, padding, a range check)
and a ``Place`` (another check and a ``struct`` call): a small ``Exported``
makes tens of thousands of such calls, and JAX's ``serialize`` and toolkit's
spent their time there. :class:`Builder` keeps the library (``Finish``,
``StartObject``/``EndObject``, buffer growth, the vtable de-duplication key)
and replaces what ``serialize`` does most by methods that do the library's
arithmetic once per object and write its bytes in one ``struct.pack_into``
or slice assignment. The bytes are the library's, byte for byte:
``tests/export/test_serialization_builder.py`` compares them with the stock
builder on random sequences of operations and on real exports.

The read side is :mod:`toolkit.export.flatbuffer_reader`.
"""

from __future__ import annotations

import operator
import struct
from typing import Any, Callable, Iterable, Sequence

import flatbuffers
from flatbuffers import number_types as N

_ZEROS = bytes(8)  # padding is at most 7 bytes (Prep aligns to at most 8 here)
_UOFFSET = struct.Struct("<I")
_SOFFSET = struct.Struct("<i")
_FORMATS = 72  # struct formats made once for vectors and vtables of up to 71 entries
_UINT32_FORMATS = tuple(f"<{n}I" for n in range(_FORMATS))
_UINT16_FORMATS = tuple(f"<{n}H" for n in range(_FORMATS))


def _scalar_slot(flags: Any) -> Callable[[Builder, int, Any, Any], None]:
    """A quick ``Prepend<Type>Slot(o, x, d)`` for ``flags``' type: the library's range checks and default
    elision, then ``Prep(size, 0)``, ``Place`` and ``Slot(o)`` done as one pad and one pack.

    The library's method passes ``flags`` on to ``PrependSlot``, which calls
    ``enforce_number`` twice, ``Prepend`` (``Prep`` and ``Place``, which
    checks the range again) and ``Slot``; here the type's size, range and
    packer are bound once.
    """
    size, lo, hi, name = flags.bytewidth, flags.min_val, flags.max_val, flags.name
    pack_into = flags.packer_type.pack_into

    def prepend_slot(self: Builder, o: int, x: Any, d: Any) -> None:
        if lo is not None:
            if x is not None and not lo <= x <= hi:
                raise TypeError(f"bad number {x} for type {name}")
            if d is not None and not lo <= d <= hi:
                raise TypeError(f"bad number {d} for type {name}")
        if x != d or (self.forceDefaults and d is not None):
            start = self._prep(size, 0, size) - size
            buf = self.Bytes
            pack_into(buf, start, x)
            self.head = start
            if not self.nested:
                raise flatbuffers.builder.IsNotNestedError()
            # nested: an object is open, so its vtable is a list (no assert: this runs per field).
            self.current_vtable[o] = len(buf) - start  # type: ignore[index]

    return prepend_slot


class Builder(flatbuffers.Builder):
    """flatbuffers' builder with quicker writers for what ``serialize`` does most: the same bytes, fewer calls.

    The library writes every element with an alignment ``Prep`` (a method
    call, a pad, a range check) and a ``Place`` (another range check and a
    ``struct`` call); a small ``Exported`` makes tens of thousands of those
    calls. Each override or method below aligns once (``_prep``, the
    library's ``Prep`` for the whole object), does the arithmetic of the
    library's sequence once and writes its bytes with one ``struct.pack_into``
    (or one slice assignment), leaving the builder in the state the library
    leaves it in: ``head``, ``minalign``, ``nested``, ``vectorNumElems`` and
    ``current_vtable`` (``Finish`` and ``StartObject``/``EndObject`` stay the
    library's; vtables are de-duplicated under the library's key). Padding is
    written as zeros as ``Prep`` writes it, and the buffer grows as ``Prep``
    grows it.
    ``tests/export/test_serialization_builder.py`` checks the bytes against
    the stock builder on random sequences of operations.
    """

    # The library's state that the methods below use (flatbuffers is untyped). ``current_vtable`` is the open
    # object's vtable, None between objects.
    head: int
    minalign: int
    current_vtable: list[int] | None

    def _room(self, needed: int) -> int:
        """Grow the buffer as ``Prep`` does until ``needed`` bytes fit below ``head``; the new ``head``."""
        head = self.head
        while head < needed:
            old_size = len(self.Bytes)
            self.GrowByteBuffer()
            head += len(self.Bytes) - old_size
        self.head = head
        return head

    def _prep(self, alignment: int, extra: int, room: int) -> int:
        """The library's ``Prep``: zero padding so that ``extra`` more bytes end ``alignment``-aligned, after
        growing the buffer so ``room`` bytes fit below the padding, and ``minalign`` raised; the new ``head``."""
        if alignment > self.minalign:
            self.minalign = alignment
        head = self.head
        pad = (head - len(self.Bytes) - extra) & (alignment - 1)
        if head < pad + room:
            head = self._room(pad + room)
        if pad:
            head -= pad
            self.Bytes[head:head + pad] = _ZEROS[:pad]
            self.head = head
        return head

    def WriteVtable(self) -> int:  # noqa: N802 - flatbuffers' name
        """The library's ``WriteVtable``, with the vtable written in one piece.

        The library writes a new vtable one 2-byte entry at a time (an
        alignment check and a pack per entry); the ``Exported`` table's vtable
        has 64 entries once the provenance record (field 63) is present.
        Entries are 2-byte values after a 4-byte aligned offset, so no padding
        falls between them (the library's ``Prep(2, size - 2)`` pads nothing),
        so one room check and one ``pack_into`` write them all. The object's leading soffset is reserved (4-aligned, as
        ``PrependSOffsetTRelative(0)`` does) and written once its value, the
        distance to the (new or equal earlier) vtable, is known. The
        de-duplication key is the library's.
        """
        object_start = self.head = self._prep(4, 0, 4) - 4
        buf = self.Bytes
        object_offset = len(buf) - object_start
        vtable = self.current_vtable
        assert vtable is not None  # EndObject, the only caller, checks that an object is open
        last = len(vtable) - 1
        while last >= 0 and vtable[last] == 0:
            last -= 1
        fields = [0 if e == 0 else object_offset - e for e in vtable[:last + 1]]
        object_size = object_offset - self.objectEnd
        key = (*reversed(fields), object_size)  # the library's key
        existing = self.vtables.get(key)
        if existing is None:
            count = len(fields) + 2
            size = 2 * count
            # Prep(2, size - 2) pads nothing (the soffset is 4-aligned, size is even): only room is needed.
            if object_start < size:
                object_start = self._room(size)
                buf = self.Bytes
            start = object_start - size
            struct.pack_into(_UINT16_FORMATS[count] if count < _FORMATS else f"<{count}H", buf, start,
                             size, object_size, *fields)
            self.head = start
            existing = len(buf) - start
            self.vtables[key] = existing
        _SOFFSET.pack_into(buf, object_start, existing - object_offset)
        self.current_vtable = None
        return object_offset

    def CreateString(self, s: str | bytes, encoding: str = "utf-8", errors: str = "strict") -> int:  # noqa: N802
        """The library's ``CreateString`` (length, bytes, a 0 terminator, zero padding) in one alignment and one write.

        The library calls ``Prep(4, n + 1)``, ``Place`` for the terminator,
        copies the bytes and ``EndVector`` places the length: the padding
        makes the 4-byte length aligned once the ``n + 1`` bytes are written,
        so the string is ``<u32 n><bytes><0><padding>`` with the padding
        computed from the current offset exactly as ``Prep`` computes it.
        """
        if self.nested:
            raise flatbuffers.builder.IsNestedError()
        if isinstance(s, str):
            data = s.encode(encoding, errors)
        elif isinstance(s, (bytes, bytearray)):
            data = s
        else:
            raise TypeError("non-string passed to CreateString")
        n = len(data)
        head = self._prep(4, n + 1, n + 5)
        start = head - n - 5
        buf = self.Bytes
        buf[start:head] = _UOFFSET.pack(n) + data + b"\0"
        self.head = start
        self.vectorNumElems = None
        return len(buf) - start

    def CreateOffsetVector(self, offsets: Sequence[int]) -> int:  # noqa: N802 - flatbuffers' naming
        """A vector of table/string offsets: ``StartVector(4, n, 4)``, ``PrependUOffsetTRelative`` of each offset
        from the last to the first, ``EndVector()``, in one write.

        ``StartVector`` pads so the ``n`` 4-byte elements and the length end
        4-aligned; each element holds its target's offset relative to its own
        position: element ``k`` sits at offset ``end - 4 * k`` from the buffer's
        end (``end`` is element 0's), so it holds ``end - 4 * k - offsets[k]``.
        The library's check (the target was written before the element) is
        that this is at least 4.
        """
        if self.nested:
            raise flatbuffers.builder.IsNestedError()
        n = len(offsets)
        head = self._prep(4, 0, 4 * n + 4)  # 4 * n bytes do not change the alignment
        end = len(self.Bytes) - head + 4 * n
        values = list(map(operator.sub, range(end, end - 4 * n, -4), offsets))
        if n and min(values) < 4:
            raise flatbuffers.builder.OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
        return self._write_vector(head, 4 * n, _UINT32_FORMATS[n + 1] if n < _FORMATS - 1 else f"<{n + 1}I",
                                  n, values)

    def CreateStringVector(self, strings: Iterable[str | bytes]) -> int:  # noqa: N802 - flatbuffers' naming
        """Each string (``CreateString``, in order), then the vector of their offsets (``CreateOffsetVector``)."""
        return self.CreateOffsetVector([self.CreateString(s) for s in strings])

    def CreateUint32Vector(self, values: Sequence[int]) -> int:  # noqa: N802 - flatbuffers' naming
        """``CreateNumpyVector(np.array(values, dtype=np.uint32))`` without numpy: the same bytes.

        ``StartVector(4, n, 4)`` pads as for an offset vector; the elements
        follow in order, then the length.
        """
        if self.nested:
            raise flatbuffers.builder.IsNestedError()
        n = len(values)
        head = self._prep(4, 0, 4 * n + 4)
        return self._write_vector(head, 4 * n, _UINT32_FORMATS[n + 1] if n < _FORMATS - 1 else f"<{n + 1}I",
                                  n, values)

    def CreateUint16Vector(self, values: Sequence[int]) -> int:  # noqa: N802 - flatbuffers' naming
        """``CreateNumpyVector(np.array(values, dtype=np.uint16))`` without numpy: the same bytes.

        ``StartVector(2, n, 2)`` first pads so the length (4-aligned) follows
        the ``2 * n`` bytes of elements; 2-alignment then holds already.
        """
        if self.nested:
            raise flatbuffers.builder.IsNestedError()
        n = len(values)
        head = self._prep(4, 2 * n, 2 * n + 4)
        return self._write_vector(head, 2 * n, f"<I{n}H", n, values)

    def _write_vector(self, head: int, size: int, fmt: str, n: int, values: Sequence[int]) -> int:
        """Write a vector's length ``n`` and its ``size`` bytes of ``values`` (``fmt``) below ``head``; its offset."""
        start = head - size - 4
        buf = self.Bytes
        struct.pack_into(fmt, buf, start, n, *values)
        self.head = start
        self.vectorNumElems = None
        return len(buf) - start

    PrependBoolSlot = _scalar_slot(N.BoolFlags)
    PrependByteSlot = _scalar_slot(N.Uint8Flags)
    PrependUint8Slot = _scalar_slot(N.Uint8Flags)
    PrependUint16Slot = _scalar_slot(N.Uint16Flags)
    PrependUint32Slot = _scalar_slot(N.Uint32Flags)
    PrependUint64Slot = _scalar_slot(N.Uint64Flags)
    PrependInt8Slot = _scalar_slot(N.Int8Flags)
    PrependInt16Slot = _scalar_slot(N.Int16Flags)
    PrependInt32Slot = _scalar_slot(N.Int32Flags)
    PrependInt64Slot = _scalar_slot(N.Int64Flags)
    PrependFloat32Slot = _scalar_slot(N.Float32Flags)
    PrependFloat64Slot = _scalar_slot(N.Float64Flags)

    def PrependUOffsetTRelativeSlot(self, o: int, x: int, d: int) -> None:  # noqa: N802 - flatbuffers' name
        """The library's offset slot add: ``PrependUOffsetTRelative(x)`` (pad to 4, the offset relative to its
        own position) and ``Slot(o)``, inlined into one pad and one pack; skipped when ``x == d`` (unless
        forced)."""
        if x != d or self.forceDefaults:
            head = self._prep(4, 0, 4)
            buf = self.Bytes
            end = len(buf) - head + 4  # the offset once the uoffset is written
            if not x <= end - 4:
                raise flatbuffers.builder.OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
            start = head - 4
            _UOFFSET.pack_into(buf, start, end - x)
            self.head = start
            if not self.nested:
                raise flatbuffers.builder.IsNotNestedError()
            # nested: an object is open, so its vtable is a list (no assert: this runs per field).
            self.current_vtable[o] = end  # type: ignore[index]
