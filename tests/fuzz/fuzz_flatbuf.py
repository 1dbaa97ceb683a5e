"""Structure-aware mutation of serialized exports, driven by the flatbuffers schema.

``Schema.load()`` reads ``toolkit/export/schema/exported.fbs`` (tables, enums,
field ids and types). ``decode(blob)`` turns a well-formed blob into a tree of
:class:`Table` objects (field name -> value; strings are ``bytes``, byte
vectors ``bytearray``, other vectors ``list``); ``encode(tree)`` writes it back
with ``flatbuffers.Builder`` and records where every offset, length and
table header landed. :func:`mutate_export` applies random schema-level edits
(enum codes out of range, vectors shortened or lengthened, strings swapped or
made invalid, tables removed, shared, replaced by another type, VJPs nested,
pytrees deepened) and then, sometimes, low-level edits of the recorded offsets
and lengths, or a truncation. Every choice comes from a ``random.Random``, so
the same code serves hypothesis (``st.randoms()``) and the standing run.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import signal
import struct
import sys
import traceback
from typing import Any

import flatbuffers
from flatbuffers import number_types as N

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCHEMA_PATH = os.path.join(REPO, "toolkit", "export", "schema", "exported.fbs")

# scalar type -> (struct format, flatbuffers flags, min, max)
SCALARS: dict[str, tuple[str, Any, int | float, int | float]] = {
    "bool": ("<B", N.BoolFlags, 0, 1),
    "byte": ("<b", N.Int8Flags, -128, 127),
    "ubyte": ("<B", N.Uint8Flags, 0, 255),
    "int8": ("<b", N.Int8Flags, -128, 127),
    "uint8": ("<B", N.Uint8Flags, 0, 255),
    "short": ("<h", N.Int16Flags, -2**15, 2**15 - 1),
    "int16": ("<h", N.Int16Flags, -2**15, 2**15 - 1),
    "ushort": ("<H", N.Uint16Flags, 0, 2**16 - 1),
    "uint16": ("<H", N.Uint16Flags, 0, 2**16 - 1),
    "int": ("<i", N.Int32Flags, -2**31, 2**31 - 1),
    "int32": ("<i", N.Int32Flags, -2**31, 2**31 - 1),
    "uint": ("<I", N.Uint32Flags, 0, 2**32 - 1),
    "uint32": ("<I", N.Uint32Flags, 0, 2**32 - 1),
    "long": ("<q", N.Int64Flags, -2**63, 2**63 - 1),
    "int64": ("<q", N.Int64Flags, -2**63, 2**63 - 1),
    "ulong": ("<Q", N.Uint64Flags, 0, 2**64 - 1),
    "uint64": ("<Q", N.Uint64Flags, 0, 2**64 - 1),
    "float": ("<f", N.Float32Flags, float("-inf"), float("inf")),
    "double": ("<d", N.Float64Flags, float("-inf"), float("inf")),
}


@dataclasses.dataclass(frozen=True)
class FieldType:
    """``base`` is a scalar name, an enum name, ``string`` or a table name; ``vector`` for ``[base]``."""

    base: str
    vector: bool = False


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    id: int
    type: FieldType


@dataclasses.dataclass
class Schema:
    enums: dict[str, tuple[str, dict[str, int]]]  # name -> (underlying scalar, values)
    tables: dict[str, list[Field]]
    root: str

    @classmethod
    def load(cls, path: str = SCHEMA_PATH) -> "Schema":
        text = re.sub(r"//[^\n]*", "", open(path).read())
        enums = {}
        for name, base, body in re.findall(r"enum\s+(\w+)\s*:\s*(\w+)\s*\{([^}]*)\}", text):
            values = {}
            for item in filter(None, (s.strip() for s in body.split(","))):
                key, _, value = item.partition("=")
                values[key.strip()] = int(value) if value.strip() else (max(values.values()) + 1 if values else 0)
            enums[name] = (base, values)
        tables = {}
        for name, body in re.findall(r"table\s+(\w+)\s*\{([^}]*)\}", text):
            fields = []
            for item in filter(None, (s.strip() for s in body.split(";"))):
                match = re.match(r"(\w+)\s*:\s*(\[?)\s*(\w+)\s*\]?", item)
                if not match:
                    raise ValueError(f"cannot read field {item!r} of table {name}")
                fields.append(Field(match.group(1), len(fields), FieldType(match.group(3), bool(match.group(2)))))
            tables[name] = fields
        root = re.search(r"root_type\s+(\w+)", text).group(1)
        return cls(enums, tables, root)

    def field(self, table: str, name: str) -> Field:
        for f in self.tables[table]:
            if f.name == name:
                return f
        raise KeyError(f"{table}.{name}")

    def scalar_of(self, base: str) -> str | None:
        """The scalar type behind ``base`` (itself, or an enum's underlying type); None for strings/tables."""
        if base in SCALARS:
            return base
        if base in self.enums:
            return self.enums[base][0]
        return None


@dataclasses.dataclass(eq=False)
class Table:
    """A decoded table: ``fields`` in schema order, absent fields omitted."""

    type: str
    fields: dict[str, Any]

    def __repr__(self) -> str:
        return f"Table({self.type}, {list(self.fields)})"


# --------------------------------------------------------------------------
# Decoding a well-formed blob
# --------------------------------------------------------------------------


def decode(schema: Schema, blob: bytes) -> Table:
    """The tree of a (well-formed) blob; byte vectors come back as ``bytearray``."""
    buf = bytes(blob)

    def u32(p: int) -> int:
        return struct.unpack_from("<I", buf, p)[0]

    def read_table(pos: int, type_name: str) -> Table:
        vtable = pos - struct.unpack_from("<i", buf, pos)[0]
        vt_len = struct.unpack_from("<H", buf, vtable)[0]
        fields = {}
        for f in schema.tables[type_name]:
            slot = 4 + 2 * f.id
            if slot >= vt_len:
                continue
            off = struct.unpack_from("<H", buf, vtable + slot)[0]
            if off:
                fields[f.name] = read_value(pos + off, f.type)
        return Table(type_name, fields)

    def read_string(p: int) -> bytes:
        start = p + u32(p)
        return buf[start + 4:start + 4 + u32(start)]

    def read_value(p: int, ftype: FieldType) -> Any:
        scalar = schema.scalar_of(ftype.base)
        if not ftype.vector:
            if scalar is not None:
                return struct.unpack_from(SCALARS[scalar][0], buf, p)[0]
            if ftype.base == "string":
                return read_string(p)
            return read_table(p + u32(p), ftype.base)
        start = p + u32(p)
        n = u32(start)
        items = start + 4
        if scalar is not None:
            fmt = SCALARS[scalar][0]
            size = struct.calcsize(fmt)
            if size == 1 and scalar in ("byte", "ubyte", "int8", "uint8"):
                return bytearray(buf[items:items + n])
            return [struct.unpack_from(fmt, buf, items + i * size)[0] for i in range(n)]
        if ftype.base == "string":
            return [read_string(items + 4 * i) for i in range(n)]
        return [read_table(items + 4 * i + u32(items + 4 * i), ftype.base) for i in range(n)]

    return read_table(u32(0), schema.root)


# --------------------------------------------------------------------------
# Encoding, with a map of where offsets and lengths are
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Encoded:
    """A finished blob and the absolute positions of its structural words."""

    blob: bytes
    uoffsets: list[int]  # 32-bit offsets to tables, strings, vectors (fields and vector elements)
    lengths: list[int]  # 32-bit lengths of vectors and strings
    tables: list[int]  # table starts (their 32-bit signed offset to the vtable)

    def vtable_entries(self) -> list[int]:
        """Positions of the 16-bit words of every vtable (size, table size, field offsets)."""
        positions = set()
        for t in self.tables:
            vt = t - struct.unpack_from("<i", self.blob, t)[0]
            if 0 <= vt <= len(self.blob) - 4:
                size = struct.unpack_from("<H", self.blob, vt)[0]
                positions.update(range(vt, min(vt + size, len(self.blob) - 1), 2))
        return sorted(positions)


class CycleError(ValueError):
    """The tree has a cycle (mutations shared a table into itself): flatbuffers cannot hold it."""


def encode(schema: Schema, root: Table) -> Encoded:
    """Write ``root``; the same Python object reached twice is written once (a shared subtree)."""
    builder = flatbuffers.Builder(4096)
    uoffsets: list[int] = []
    lengths: list[int] = []
    tables: list[int] = []
    done: dict[int, int] = {}
    in_progress: set[int] = set()

    def put_offset(offset: int) -> None:
        builder.PrependUOffsetTRelative(offset)
        uoffsets.append(builder.Offset())

    def offset_of(value: Any, ftype: FieldType | None) -> int:
        key = id(value)
        if key in done:
            return done[key]
        if key in in_progress:
            raise CycleError("a table contains itself")
        if isinstance(value, Table):
            in_progress.add(key)
            result = write_table(value)
        elif isinstance(value, bytes):
            result = builder.CreateString(value)
            lengths.append(result)
        elif isinstance(value, bytearray):
            result = builder.CreateByteVector(bytes(value))
            lengths.append(result)
        elif isinstance(value, list):
            result = write_vector(value, ftype)
        else:
            raise TypeError(f"not an offset value: {value!r}")
        done[key] = result
        return result

    def write_vector(items: list, ftype: FieldType | None) -> int:
        scalar = schema.scalar_of(ftype.base) if ftype is not None else None
        if any(not isinstance(x, (int, float)) for x in items):
            element = FieldType(ftype.base) if ftype else None
            # A scalar among offsets (after type-confusing edits) is written as a raw word.
            entries = [x if isinstance(x, (int, float)) else ("offset", offset_of(x, element)) for x in items]
            builder.StartVector(4, len(entries), 4)
            for entry in reversed(entries):
                if isinstance(entry, tuple):
                    put_offset(entry[1])
                else:
                    builder.PrependUint32(clamp(entry, 0, 2**32 - 1, N.Uint32Flags))
        else:
            fmt, flags, lo, hi = SCALARS[scalar or "uint32"]
            size = struct.calcsize(fmt)
            builder.StartVector(size, len(items), size)
            for x in reversed(items):
                builder.Prepend(flags, clamp(x, lo, hi, flags))
        result = builder.EndVector()
        lengths.append(result)
        return result

    def write_table(table: Table) -> int:
        fields = {f.name: f for f in schema.tables[table.type]}
        prepared = {}
        for name, value in table.fields.items():
            if isinstance(value, (Table, bytes, bytearray, list)):
                prepared[name] = offset_of(value, fields[name].type)
        builder.StartObject(len(fields))
        for name, value in table.fields.items():
            f = fields[name]
            if name in prepared:
                builder.PrependUOffsetTRelativeSlot(f.id, prepared[name], None)
                uoffsets.append(builder.Offset())
            else:
                scalar = schema.scalar_of(f.type.base) or "uint32"  # a scalar where an offset belongs: raw word
                _, flags, lo, hi = SCALARS[scalar]
                builder.PrependSlot(flags, f.id, clamp(value, lo, hi, flags), None)
        result = builder.EndObject()
        tables.append(result)
        return result

    builder.Finish(offset_of(root, None))
    blob = bytes(builder.Output())
    size = len(blob)
    return Encoded(blob, [size - o for o in uoffsets], [size - o for o in lengths], [size - o for o in tables])


def clamp(x: Any, lo: Any, hi: Any, flags: Any) -> Any:
    if flags in (N.Float32Flags, N.Float64Flags):
        return float(x)
    return max(lo, min(hi, int(x)))


# --------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------

# Strings that stress the readers behind a field: shape dimensions go through
# the symbolic-shape parser, names through registries, everything through UTF-8.
HOSTILE_STRINGS = [
    b"", b"\xff\xfe", b"\xc3", b"a\x00b", "\u00e9\u4e2d\U0001f600".encode(), b" ", b"-1", b"0", b"-0",
    b"99999999999999999999999", b"9" * 5000, b"1e3", b"0x10", b"+3", b"3 ", b"a", b"b", b"a*", b"2*a+",
    b"a + b", b"a, b", b"floordiv(a, 0)", b"mod(a, 0)", b"floordiv(", b"max(a,", b"non_negative(a)",
    b"a >= 3", b"(((((((((((((((((((((a)))))))))))))))))))))", b"a*" * 2000 + b"a", b"_", b"a.b",
    b"cpu", b"cuda", b"rocm", b"tpu", b"CPU", b"collections.OrderedDict", b"unknown.Node",
    b"<class 'jax._src.debugging.OrderedDebugEffect'>", b"<class 'nope'>", b"main", b"x", b"y",
    b'["a", "b"]', b"[]", b"{}", b'["a"', b"null", b"x" * 100_000,
]

# Strings that mean something to the reader of one kind of field (by the end of its path).
FIELD_STRINGS: dict[str, list[bytes]] = {
    "shape": [b"a", b"b", b"2*a", b"a + 1", b"floordiv(a, 2)", b"mod(b, 3)", b"max(a, b)", b"-a", b"a - 2",
              b"0", b"1", b"9223372036854775807", b"9223372036854775808", b"-1", b"a*b*c", b"non_negative(a - 5)",
              b"a >= 2", b"core_max(a, 1)", b"1_000", b"0x10", b"9" * 30],
    "platforms": [b"cpu", b"cuda", b"rocm", b"tpu", b"CPU", b"", b"metal"],
    "custom_name": [b"collections.OrderedDict", b"unknown.Node", b""],
    "children_names": [b"a", b"a", b"", b"\x00"],
    "type_name": [b"<class 'jax._src.debugging.OrderedDebugEffect'>",
                  b"<class 'jax._src.debugging.DebugEffect'>", b"<class 'x'>"],
    "axis_names": [b"x", b"y", b"x", b""], "axes": [b"x", b"y", b"z", b""], "reduced": [b"x", b"q"],
    "unreduced": [b"y", b"q"], "device_kind": [b"cpu", b"TPU v4", b"NVIDIA H100", b"mystery"],
    "platform": [b"cpu", b"gpu", b"tpu", b""], "memory_kind": [b"device", b"pinned_host", b""],
    "custom_call_target": [b"", b"tpu_custom_call", b"x" * 300], "function_name": [b"", b"main", b"f" * 1000],
}


def _field_strings(path: str) -> list[bytes]:
    last = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
    return FIELD_STRINGS.get(last, [])


# Values for scalar fields beyond each enum's range and at each type's bounds.
def interesting_ints(schema: Schema, base: str) -> list[int]:
    scalar = schema.scalar_of(base) or "uint32"
    _, _, lo, hi = SCALARS[scalar]
    values = [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 16, 17, lo, hi, hi - 1, lo + 1, -1, 127, 128, 255, 256,
              2**15, 2**16 - 1, 2**31 - 1, 2**32 - 1]
    if base in schema.enums:
        top = max(schema.enums[base][1].values())
        values += [top, top + 1, top + 7, -2]
    return [max(lo, min(hi, v)) for v in values]


@dataclasses.dataclass
class Site:
    """A slot in the tree: ``parent[key]`` (a table field, present or absent, or a vector element)."""

    parent: Any
    key: Any
    type: FieldType  # the schema type of the slot (a vector element: its element type)
    path: str
    ancestors: frozenset = frozenset()  # ids of the tables above the slot (sharing them would make a cycle)

    def get(self) -> Any:
        if isinstance(self.parent, Table):
            return self.parent.fields.get(self.key)
        return self.parent[self.key]

    def set(self, value: Any) -> None:
        if isinstance(self.parent, Table):
            # Keep schema order so the builder lays fields out as a writer would.
            self.parent.fields[self.key] = value
        else:
            self.parent[self.key] = value

    def delete(self) -> None:
        if isinstance(self.parent, Table):
            self.parent.fields.pop(self.key, None)
        else:
            del self.parent[self.key]


def sites(schema: Schema, root: Table) -> list[Site]:
    """Every field slot (present or absent) and vector element of the tree, depth first."""
    out: list[Site] = []
    seen: set[int] = set()

    def walk(table: Table, path: str, above: frozenset) -> None:
        if id(table) in seen:
            return
        seen.add(id(table))
        above = above | {id(table)}
        for f in schema.tables.get(table.type, []):
            here = f"{path}.{f.name}"
            out.append(Site(table, f.name, f.type, here, above))
            value = table.fields.get(f.name)
            if isinstance(value, Table):
                walk(value, here, above)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    out.append(Site(value, i, FieldType(f.type.base), f"{here}[{i}]", above))
                    if isinstance(item, Table):
                        walk(item, f"{here}[{i}]", above)

    walk(root, root.type, frozenset())
    return out


def tables_of(schema: Schema, root: Table) -> dict[str, list[Table]]:
    """Every table in the tree by type (for swaps, sharing and type confusion)."""
    found: dict[str, list[Table]] = {}
    for site in sites(schema, root):
        value = site.get()
        if isinstance(value, Table):
            found.setdefault(value.type, []).append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Table):
                    found.setdefault(item.type, []).append(item)
    found.setdefault(root.type, []).append(root)
    return found


def strings_of(root_sites: list[Site]) -> list[bytes]:
    out = []
    for site in root_sites:
        value = site.get()
        if isinstance(value, bytes):
            out.append(value)
    return out


def _new_value(schema: Schema, rng: Any, ftype: FieldType, root: Table, pool: list[bytes]) -> Any:
    """A plausible-or-hostile value for an empty slot of type ``ftype``."""
    scalar = schema.scalar_of(ftype.base)
    if ftype.vector:
        n = rng.choice([0, 1, 2, 3, 17])
        element = FieldType(ftype.base)
        if scalar in ("byte", "ubyte", "int8", "uint8"):
            return bytearray(rng.randrange(256) for _ in range(n))
        return [_new_value(schema, rng, element, root, pool) for _ in range(n)]
    if scalar is not None:
        return rng.choice(interesting_ints(schema, ftype.base))
    if ftype.base == "string":
        return rng.choice(HOSTILE_STRINGS + pool) if pool else rng.choice(HOSTILE_STRINGS)
    same = tables_of(schema, root).get(ftype.base)
    if same and rng.random() < 0.7:
        return copy.deepcopy(rng.choice(same))
    return Table(ftype.base, {})


def mutate_tree(schema: Schema, root: Table, rng: Any) -> str:
    """One random structural edit of ``root`` in place; returns what it did."""
    all_sites = sites(schema, root)
    site = rng.choice(all_sites)
    value = site.get()
    ftype = site.type
    pool = strings_of(all_sites)
    what = rng.random()
    if value is None:  # an absent field
        site.set(_new_value(schema, rng, ftype, root, pool))
        return f"add {site.path}"
    if what < 0.12 and isinstance(site.parent, Table):
        site.delete()
        return f"remove {site.path}"
    if isinstance(value, (int, float)) and not isinstance(value, bool) or isinstance(value, bool):
        site.set(rng.choice(interesting_ints(schema, ftype.base)) if rng.random() < 0.8
                 else rng.randrange(-2**31, 2**31))
        return f"scalar {site.path}={site.get()}"
    if isinstance(value, bytes):
        choice = rng.random()
        specific = _field_strings(site.path)
        if choice < 0.4 and specific:
            site.set(rng.choice(specific))
        elif choice < 0.6:
            site.set(rng.choice(HOSTILE_STRINGS))
        elif choice < 0.8 and pool:
            site.set(rng.choice(pool))
        else:
            data = bytearray(value or b"a")
            data[rng.randrange(len(data))] = rng.randrange(256)
            site.set(bytes(data))
        return f"string {site.path}"
    if isinstance(value, bytearray):
        choice = rng.random()
        if choice < 0.3:
            site.set(bytearray(value[:rng.randrange(len(value) + 1)]))
        elif choice < 0.6 and value:
            data = bytearray(value)
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            site.set(data)
        elif choice < 0.8:
            site.set(bytearray(value) + bytearray(rng.randrange(256) for _ in range(rng.choice([1, 3, 100]))))
        else:
            site.set(bytearray(b"[1, 2]" if rng.random() < 0.5 else b"\xff"))
        return f"bytes {site.path}"
    if isinstance(value, list):
        return f"vector {site.path}: " + _mutate_vector(schema, rng, site, value, root, pool)
    if isinstance(value, Table):
        return f"table {site.path}: " + _mutate_table(schema, rng, site, value, root)
    raise AssertionError(value)


def _mutate_vector(schema: Schema, rng: Any, site: Site, items: list, root: Table, pool: list[bytes]) -> str:
    choice = rng.random()
    element = FieldType(site.type.base)
    if choice < 0.15:
        site.set([])
        return "empty"
    if choice < 0.35 and items:
        kept = list(items)
        for _ in range(rng.randint(1, max(1, len(kept)))):
            if kept:
                del kept[rng.randrange(len(kept))]
        site.set(kept)
        return "shorten"
    if choice < 0.55:
        grown = list(items)
        for _ in range(rng.choice([1, 1, 2, 5, 40])):
            if grown and rng.random() < 0.6:
                grown.insert(rng.randrange(len(grown) + 1), copy.deepcopy(rng.choice(grown)))
            else:
                grown.append(_new_value(schema, rng, element, root, pool))
        site.set(grown)
        return "lengthen"
    if choice < 0.62 and items:
        site.set([items[0]] * rng.choice([2, 100, 5000]))  # one shared element many times
        return "repeat-shared"
    if choice < 0.75 and len(items) > 1:
        shuffled = list(items)
        rng.shuffle(shuffled)
        site.set(shuffled)
        return "shuffle"
    if choice < 0.85 and schema.scalar_of(element.base) is not None:
        site.set([rng.choice(interesting_ints(schema, element.base)) for _ in items or [0]])
        return "hostile-indices"
    if choice < 0.92:
        # Type confusion: a vector of the wrong kind of thing.
        other = rng.choice([[b"x", b"y"], [Table("Effect", {"type_name": b"e"})], [0, 1, 2], bytearray(b"ab")])
        site.set(other)
        return "wrong-element-type"
    if items:
        i = rng.randrange(len(items))
        sub = Site(items, i, element, f"{site.path}[{i}]")
        sub.set(_new_value(schema, rng, element, root, pool))
        return f"replace element {i}"
    return "noop"


def _mutate_table(schema: Schema, rng: Any, site: Site, value: Table, root: Table) -> str:
    choice = rng.random()
    # Sharing a table above the slot would make a cycle, which no flatbuffer can hold.
    everything = {kind: [t for t in ts if id(t) not in site.ancestors]
                  for kind, ts in tables_of(schema, root).items()}
    if choice < 0.2:
        site.set(Table(value.type, {}))
        return "empty table"
    if choice < 0.4 and len(everything.get(value.type, [])) > 1:
        site.set(rng.choice(everything[value.type]))  # shared, not copied
        return "share with another"
    if choice < 0.55:
        others = [t for kind, ts in everything.items() if kind != value.type for t in ts]
        if others:
            site.set(rng.choice(others))  # type confusion
            return "other table type"
    if choice < 0.7:
        site.set(rng.choice([b"not a table", [1, 2, 3], bytearray(b"\x00" * 12)]))
        return "not a table"
    if choice < 0.85 and value.type == "PyTreeDef":
        depth = rng.choice([1, 2, 50, 399, 401, 450])
        node: Table = copy.deepcopy(value)
        for _ in range(depth):
            node = Table("PyTreeDef", {"kind": 2, "children": [node]})
        site.set(node)
        return f"nest pytree {depth}"
    mutate_tree(schema, value, rng)
    return "inner edit"


def nest_vjp(root: Table, rng: Any) -> str:
    depth = rng.choice([1, 2, 3, 15, 16, 17, 40])
    inner = root
    for _ in range(depth):
        inner.fields.pop("vjp", None)
        inner = copy.deepcopy(inner)
    node = inner
    for _ in range(depth):
        outer = copy.deepcopy(root) if rng.random() < 0.3 else Table(root.type, dict(root.fields))
        outer.fields["vjp"] = node
        node = outer
    root.fields.clear()
    root.fields.update(node.fields)
    return f"nest vjp {depth}"


def corrupt_words(encoded: Encoded, rng: Any) -> tuple[bytes, str]:
    """Overwrite one structural word (offset, length, vtable link or entry, root) with a hostile value."""
    blob = bytearray(encoded.blob)
    size = len(blob)
    kinds = [k for k, positions in (("uoffset", encoded.uoffsets), ("length", encoded.lengths),
                                    ("vtable-link", encoded.tables), ("vtable-entry", [0]), ("root", [0]))
             if positions]
    kind = rng.choice(kinds)
    if kind == "vtable-entry":
        entries = encoded.vtable_entries()
        if not entries:
            return bytes(blob), "noop"
        pos = rng.choice(entries)
        value = rng.choice([0, 1, 2, 3, 4, 6, 8, 0xFF, 0x7FFF, 0xFFFF, size & 0xFFFF, rng.randrange(0x10000)])
        struct.pack_into("<H", blob, pos, value)
        return bytes(blob), f"vtable-entry@{pos}={value}"
    pos = 0 if kind == "root" else rng.choice(getattr(encoded, {"uoffset": "uoffsets", "length": "lengths",
                                                                  "vtable-link": "tables"}[kind]))
    current = struct.unpack_from("<I", blob, pos)[0]
    targets = encoded.tables + encoded.lengths
    candidates = [0, 1, 2, 3, 4, 8, current + 1, current - 1, current + 4, current * 2, size, size - pos,
                  size - pos - 4, size - pos + 4, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFC,
                  rng.randrange(2**32)]
    if targets:  # point at another structure (a table where a string belongs, ...)
        candidates.append((rng.choice(targets) - pos) % 2**32)
    if kind == "vtable-link":  # signed: vtables before or after
        candidates += [(-4) % 2**32, (pos - size) % 2**32, (pos - rng.choice(encoded.tables)) % 2**32]
    value = rng.choice(candidates) % 2**32
    struct.pack_into("<I", blob, pos, value)
    return bytes(blob), f"{kind}@{pos}={value:#x}"


def mutate_export(schema: Schema, base: Table, rng: Any) -> tuple[bytes, list[str]]:
    """A mutated blob from the decoded ``base`` (not modified) and the list of edits made."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # deep pytrees: deepcopy and the encoder recurse
    try:
        for _ in range(5):
            try:
                return _mutate_export(schema, base, rng)
            except CycleError:
                continue
        return encode(schema, base).blob, ["unmutated (mutations kept making cycles)"]
    finally:
        sys.setrecursionlimit(limit)


def _mutate_export(schema: Schema, base: Table, rng: Any) -> tuple[bytes, list[str]]:
    root = copy.deepcopy(base)
    log = []
    if rng.random() < 0.1:
        log.append(nest_vjp(root, rng))
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
        log.append(mutate_tree(schema, root, rng))
    encoded = encode(schema, root)
    blob = encoded.blob
    choice = rng.random()
    if choice < 0.25:
        blob, what = corrupt_words(encoded, rng)
        log.append(what)
    elif choice < 0.32:
        cut = rng.randrange(len(blob))
        if rng.random() < 0.7:
            cut -= cut % 4
        blob = blob[:cut]
        log.append(f"truncate {cut}")
    elif choice < 0.36:
        pos = rng.randrange(len(blob))
        flipped = bytearray(blob)
        flipped[pos] = rng.randrange(256)
        blob = bytes(flipped)
        log.append(f"byte@{pos}")
    return blob, log


# --------------------------------------------------------------------------
# The contract of deserialize
# --------------------------------------------------------------------------


class _Timeout(Exception):
    pass


def _same_export(original: Any, again: Any) -> bool:
    """Equal, except that a blob with HloSharding protos only is written back with named shardings.

    (docs/export-wire-format.md: old blobs keep ``_in/_out_named_shardings = None``
    and are written as the equivalent named shardings.)
    """
    if original == again:
        return True
    if original._in_named_shardings is None or original._out_named_shardings is None:
        return dataclasses.replace(again, _in_named_shardings=original._in_named_shardings,
                                   _out_named_shardings=original._out_named_shardings) == original
    return False


def check_deserialize(blob: bytes, timeout: float = 30.0) -> tuple[str, str]:
    """(outcome, detail) of ``deserialize(blob)`` in this process, with the documented contract."""
    from toolkit.export import deserialize

    def alarm(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        try:
            exp = deserialize(blob)
        except ValueError as e:
            message = str(e)
            if not message.startswith("Not a serialized Exported: "):
                return "unclean", f"ValueError not in the documented form: {message[:500]}"
            if "corrupted or truncated data (" in message:  # the catch-all: an unvalidated read failed
                return "unclean", f"a vague catch-all error: {message[:500]}"
            if "\n" in message.strip():
                return "unclean", f"a multi-line message: {message[:500]}"
            return "clean-error", ""
        except _Timeout:
            return "hang", f"deserialize took over {timeout} s"
        except Exception:  # noqa: BLE001
            return "unclean", traceback.format_exc()[-3000:]
        try:
            chain = [exp]
            while chain[-1].has_vjp():
                chain.append(chain[-1].vjp())
            again = deserialize(exp.serialize(vjp_order=len(chain) - 1))
            for level, original in enumerate(chain):
                if not _same_export(original, again):
                    return "unclean", f"a blob read back but re-serializes to a different Exported (VJP level {level})"
                again = again.vjp() if level + 1 < len(chain) else again
        except _Timeout:
            return "hang", f"re-serializing took over {timeout} s"
        except Exception:  # noqa: BLE001
            return "unclean", "a blob read back but does not re-serialize:\n" + traceback.format_exc()[-3000:]
        return "output", ""
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
