"""A checked flatbuffer reader: decodes a whole buffer into Python values, verifying as it reads.

flatbuffers' Python library reads without checks (a bad offset surfaces as
an ``IndexError`` or ``struct.error``, and on a truncated buffer a string
silently comes back short), and the C++ ``Verifier`` is not reachable from
Python. :class:`Reader` decodes every table a schema reaches, in one pass
with precompiled ``struct`` readers, and checks, as it reads, what the C++
``Verifier`` checks:

* tables: the offset to the vtable lands inside the buffer; the vtable is
  2-aligned, lies in the buffer and its size is even and at least 4; the
  table's size is at least 4 and the table lies in the buffer;
* fields: every field the schema knows that is present lies inside its table;
* offsets (to tables, strings, vectors): they point to a 4-aligned position
  inside the buffer;
* strings and vectors: their length fits in the buffer;
* nesting: at most ``max_depth`` tables deep;
* work: a table or vector of offsets that several offsets share is decoded
  once (and is the same object each time); at most ``len(data) + 64`` units
  are spent, one per table and per element of a vector of strings or tables,
  one per 16 bytes copied out of a string or scalar vector. A well-formed
  buffer spends at most about a quarter of that, and offsets that share
  objects cannot make the reader do, or allocate, more than a bounded
  multiple of the buffer's size.

Not checked: strings' trailing zero and their UTF-8 (strings decode to
``bytes``), enum ranges, vtable entries past the schema's fields (unknown
fields are skipped, as every flatbuffers reader does).

Every failure raises :class:`FlatbufferError` (a ``ValueError``) naming the
field path (``Exported.in_avals[2].shape``) and the byte offset.

Decoded values: a table is a ``dict`` from field name to value, with the
default for a missing field (``0``, ``None`` for ``= null`` scalars, strings,
vectors and tables); scalars are ``int`` (``float`` for ``float``/``double``);
strings and vectors of 1-byte scalars are ``bytes``; other scalar vectors are
tuples; vectors of strings or tables are lists. What the buffer shares is
shared in the result: treat it as read-only.

Example::

    >>> reader = Reader({"Pair": (("a", "uint16"), ("name", "string"))}, "Pair")
    >>> reader.decode(blob)                             # doctest: +SKIP
    {'a': 7, 'name': b'seven'}
"""

from __future__ import annotations

import struct
from typing import Any

__all__ = ["FlatbufferError", "Reader"]

# Scalar type names of the flatbuffers schema language -> struct code.
_SCALAR_CODES = {
    "bool": "B", "byte": "b", "ubyte": "B", "int8": "b", "uint8": "B",
    "short": "h", "ushort": "H", "int16": "h", "uint16": "H",
    "int": "i", "uint": "I", "int32": "i", "uint32": "I",
    "long": "q", "ulong": "Q", "int64": "q", "uint64": "Q",
    "float": "f", "double": "d", "float32": "f", "float64": "d",
}

# Field categories.
_SCALAR, _STRING, _TABLE, _BYTES, _SCALARS, _STRINGS, _TABLES = range(7)

_u32 = struct.Struct("<I").unpack_from
_i32 = struct.Struct("<i").unpack_from
_vtable_header = struct.Struct("<HH").unpack_from
# Unpackers of the first n vtable entries, made on demand.
_VTABLE_ENTRIES: dict[int, Any] = {}

_TOO_MUCH = "the blob references more objects than it can contain (shared or cyclic offsets)"


class FlatbufferError(ValueError):
    """A structural error in a buffer. ``str(e)`` is the message with the field path filled in.

    Raised with the innermost field; each enclosing table adds its field name
    on the way out (``_path``, innermost first), and the reader adds the root
    table's name, so paths cost nothing unless something is wrong.
    """

    def __init__(self, message: str, *path: str):
        super().__init__(message)
        self.message = message
        self._path = list(path)

    @property
    def path(self) -> str:
        """The field path, e.g. ``Exported.in_avals[2].shape`` (long paths keep their ends)."""
        parts = self._path[::-1]
        if len(parts) > 12:
            return f"{'.'.join(parts[:6])}...({len(parts) - 10} more)...{'.'.join(parts[-4:])}"
        return ".".join(parts)

    def __str__(self) -> str:
        return self.message.replace("{path}", self.path)


class _Table:
    """One table type of the schema, compiled: its fields as ``(slot, name, category, width, extra)``."""

    __slots__ = ("name", "fields", "defaults")

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: tuple[tuple[int, str, int, int, Any], ...] = ()
        self.defaults: dict[str, Any] = {}


class Reader:
    """A decoder for buffers of one schema, with ``root`` as the root table type.

    ``schema`` maps each table name to its fields in field-id order, as
    ``(name, type)``; a type is a scalar type name of the flatbuffers schema
    language (``"uint16"``, ``"byte"``, ... -- for an enum field, its
    underlying type), optionally followed by ``" = null"`` (an optional
    scalar: ``None`` when absent), ``"string"``, a table name, or one of these
    in brackets for a vector (``"[uint32]"``, ``"[string]"``, ``"[PyTreeDef]"``).
    ``ValueError`` for a type it does not know.
    """

    def __init__(self, schema: dict[str, tuple[tuple[str, str], ...]], root: str, max_depth: int = 256):
        if root not in schema:
            raise ValueError(f"the root table {root!r} is not in the schema")
        self.root = root
        self.max_depth = max_depth
        self._tables = {name: _Table(name) for name in schema}
        for name, fields in schema.items():
            self._compile(self._tables[name], fields)

    def _compile(self, table: _Table, fields: tuple[tuple[str, str], ...]) -> None:
        compiled: list[tuple[int, str, int, int, Any]] = []
        defaults: dict[str, Any] = {}
        for slot, (name, kind) in enumerate(fields):
            vector = kind.startswith("[") and kind.endswith("]")
            base = kind[1:-1] if vector else kind
            optional = base.endswith(" = null")
            if optional:
                base = base[:-len(" = null")]
                if vector:
                    raise ValueError(f"field {table.name}.{name}: only scalars can be '= null'")
            code = _SCALAR_CODES.get(base)
            if code is not None:
                size = struct.calcsize(code)
                if not vector:
                    compiled.append((slot, name, _SCALAR, size, struct.Struct("<" + code).unpack_from))
                    defaults[name] = None if optional else 0.0 if code in "fd" else 0
                    continue
                compiled.append((slot, name, _BYTES, 4, None) if size == 1 else
                                (slot, name, _SCALARS, 4, (size, code)))
            elif base == "string":
                compiled.append((slot, name, _STRINGS if vector else _STRING, 4, None))
            elif base in self._tables:
                compiled.append((slot, name, _TABLES if vector else _TABLE, 4, self._tables[base]))
            else:
                raise ValueError(f"field {table.name}.{name} has unknown type {kind!r}")
            defaults[name] = None
        table.fields = tuple(compiled)
        table.defaults = defaults

    def decode(self, data: bytes, pos: int | None = None) -> dict[str, Any]:
        """The root table of ``data`` (at ``pos``, or where the buffer's first word points), decoded and checked.

        ``data`` must be ``bytes`` (slices of it become the strings).
        Raises :class:`FlatbufferError` for anything out of bounds or inconsistent.
        """
        size = len(data)
        if pos is None:
            if size < 4:
                raise FlatbufferError(f"a {size}-byte buffer has no root offset")
            pos = _u32(data, 0)[0]
            if pos % 4 or pos + 4 > size:
                raise FlatbufferError(f"the root table offset {pos} is outside the {size}-byte buffer")
        budget = size + 64
        max_depth = self.max_depth
        # (vtable position, table type) -> (table size, present fields as (name, offset, category, extra)).
        plans: dict[tuple[int, _Table], tuple[int, list[tuple[str, int, int, Any]]]] = {}
        # Tables and vectors of offsets already decoded, by (position, type): a shared one is decoded once.
        tables: dict[tuple[int, _Table], dict[str, Any]] = {}
        vectors: dict[tuple[int, _Table | None], list[Any]] = {}

        def plan(vt: int, spec: _Table) -> tuple[int, list[tuple[str, int, int, Any]]]:
            """Check a vtable once (tables of one type share it) and list its fields' offsets."""
            if vt < 0 or vt + 4 > size:
                raise FlatbufferError(f"the vtable of {{path}} at byte {vt} is outside the {size}-byte buffer")
            vt_size, table_size = _vtable_header(data, vt)
            if vt % 2 or vt_size < 4 or vt_size % 2 or vt + vt_size > size or table_size < 4:
                raise FlatbufferError(f"{{path}} has a corrupted vtable at byte {vt} (vtable size {vt_size}, "
                                      f"table size {table_size}, buffer size {size})")
            n = min(len(spec.fields), (vt_size - 4) // 2)
            unpack = _VTABLE_ENTRIES.get(n)
            if unpack is None:
                unpack = _VTABLE_ENTRIES[n] = struct.Struct(f"<{n}H").unpack_from
            present = []
            for offset, (_, name, category, width, extra) in zip(unpack(data, vt + 4), spec.fields):
                if not offset:
                    continue
                if offset < 4 or offset + width > table_size:
                    raise FlatbufferError(f"{{path}} lies outside its table (bytes {offset}..{offset + width} "
                                          f"of {table_size})", name)
                present.append((name, offset, category, extra))
            result = plans[vt, spec] = (table_size, present)
            return result

        # Errors, made only when something is wrong (``path``: the field, innermost first).
        def misaligned(target: int, *path: str) -> FlatbufferError:
            return FlatbufferError(f"{{path}} points to byte {target}, not an aligned position inside the "
                                   f"{size}-byte buffer", *path)

        def too_long(what: str, n: int, start: int, *path: str) -> FlatbufferError:
            return FlatbufferError(f"{{path}} claims {n} {what} at byte {start}, past the end of the "
                                   f"{size}-byte buffer", *path)

        def table(pos: int, spec: _Table, depth: int) -> dict[str, Any]:
            nonlocal budget
            values = tables.get((pos, spec))
            if values is not None:
                return values
            budget -= 1
            if budget < 0:
                raise FlatbufferError(_TOO_MUCH)
            if depth > max_depth:
                raise FlatbufferError(f"{{path}} nests more than {max_depth} tables deep")
            # pos is 4-aligned with pos + 4 <= size (checked by whoever followed the offset here).
            vt = pos - _i32(data, pos)[0]
            known = plans.get((vt, spec))
            table_size, present = known if known is not None else plan(vt, spec)
            if pos + table_size > size:
                raise FlatbufferError(f"{{path}} at byte {pos} has {table_size} bytes, past the end of the "
                                      f"{size}-byte buffer")
            values = spec.defaults.copy()
            for name, offset, category, extra in present:
                at = pos + offset  # inside the table, so inside the buffer
                if category == _SCALAR:
                    values[name] = extra(data, at)[0]
                    continue
                # Every other field is an offset to a table, or to the 32-bit length of a string or vector.
                target = at + _u32(data, at)[0]
                if target & 3 or target + 4 > size:
                    raise misaligned(target, name)
                if category == _TABLE:
                    try:
                        values[name] = table(target, extra, depth + 1)
                    except FlatbufferError as e:
                        e._path.append(name)
                        raise
                    continue
                n = _u32(data, target)[0]
                start = target + 4
                if category == _STRING or category == _BYTES:
                    end = start + n
                    if end > size:
                        raise too_long("bytes" if category == _STRING else "elements", n, target, name)
                    budget -= n >> 4
                    values[name] = data[start:end]
                elif category == _SCALARS:
                    width, code = extra
                    if start + n * width > size:
                        raise too_long("elements", n, target, name)
                    budget -= (n * width) >> 4
                    values[name] = struct.unpack_from(f"<{n}{code}", data, start)
                else:
                    end = start + 4 * n
                    if end > size:
                        raise too_long("elements", n, target, name)
                    items = vectors.get((target, extra))
                    if items is None:
                        budget -= n
                        items = vectors[target, extra] = []
                        if category == _STRINGS:
                            for at in range(start, end, 4):
                                s = at + _u32(data, at)[0]
                                if s & 3 or s + 4 > size:
                                    raise misaligned(s, f"{name}[{(at - start) // 4}]")
                                s_end = s + 4 + _u32(data, s)[0]
                                if s_end > size:
                                    raise too_long("bytes", s_end - s - 4, s, f"{name}[{(at - start) // 4}]")
                                budget -= (s_end - s) >> 4
                                if budget < 0:
                                    raise FlatbufferError(_TOO_MUCH)
                                items.append(data[s + 4:s_end])
                        else:
                            for at in range(start, end, 4):
                                child = at + _u32(data, at)[0]
                                if child & 3 or child + 4 > size:
                                    raise misaligned(child, f"{name}[{(at - start) // 4}]")
                                try:
                                    items.append(table(child, extra, depth + 1))
                                except FlatbufferError as e:
                                    e._path.append(f"{name}[{(at - start) // 4}]")
                                    raise
                    values[name] = items
            if budget < 0:
                raise FlatbufferError(_TOO_MUCH)
            tables[pos, spec] = values
            return values

        try:
            return table(pos, self._tables[self.root], 0)
        except FlatbufferError as e:
            e._path.append(self.root)
            raise
