"""The JAX-compatible wire format of ``Exported``: a flatbuffer (schema in ``schema/exported.fbs``).

``serialize(exp)`` writes the layout of JAX 0.10.2's serialization version 11
(field for field and in the same order, so equal inputs give equal bytes);
``deserialize(blob)`` reads every layout JAX 0.10.2 reads (versions 1 to 11).
The format carries no checksum: ``deserialize`` checks structure, bounds,
enums, counts and the portable-artifact magic of the module, and turns every
failure into a ``ValueError``; it never unpickles or evaluates anything.
See ``docs/export-wire-format.md``.

Example::

    >>> blob = exp.serialize()                    # doctest: +SKIP
    >>> deserialize(blob) == exp                   # doctest: +SKIP
    True

Why one module of ~1,000 lines: writing and reading are the two halves of one
layout, table by table (effects, shardings, avals, the module, the VJP), and
each half must change with the other when a field or version is added; kept
side by side, a reader and its writer are a screen apart. The generic
flatbuffer machinery is already elsewhere (``flatbuffer_builder.py``,
``flatbuffer_reader.py``).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import struct
from typing import Any, Callable, Iterable, Sequence, TypeVar, cast

import ml_dtypes
import numpy as np

from toolkit.core import dtypes, pytrees, shape_poly
from toolkit.core.avals import ShapedArray
from toolkit.core.pytrees import NodeKind, PyTreeDef
from toolkit.export import exported as _exported
from toolkit.export import flatbuffer_builder, flatbuffer_reader, provenance
from toolkit.export.exported import DisabledSafetyCheck, Effect, Exported
from toolkit.export.memory_spaces import MemorySpace, memory_space_of, memory_space_to_kind, with_memory_space
from toolkit.export.schema import exported_generated
from toolkit.export.shardings import (
    ExportedAbstractDevice,
    ExportedAbstractMesh,
    ExportedNamedSharding,
    hlo_to_named_sharding,
)
from toolkit.runtime.shardings import hlo_sharding_from_proto_bytes

__all__ = [
    "serialize",
    "deserialize",
    "register_pytree_node_serialization",
    "register_namedtuple_serialization",
]

T = TypeVar("T")

# ---------------------------------------------------------------------------
# Custom pytree node registry (same semantics as jax.export's)
# ---------------------------------------------------------------------------

# nodetype -> (serialized_name, serialize_auxdata)
_serialization_registry: dict[type, tuple[str, Callable[[Any], bytes]]] = {}
# serialized_name -> (nodetype, deserialize_auxdata, from_children)
_deserialization_registry: dict[str, tuple[type, Callable[[bytes], Any], Callable[[Any, Sequence[Any]], Any]]] = {}


def register_pytree_node_serialization(
    nodetype: type[T],
    *,
    serialized_name: str,
    serialize_auxdata: Callable[[Any], bytes],
    deserialize_auxdata: Callable[[bytes], Any],
    from_children: Callable[[Any, Sequence[Any]], Any] | None = None,
) -> type[T]:
    """Make pytree nodes of ``nodetype`` serializable in ``in_tree``/``out_tree``.

    ``serialized_name`` is what the blob stores (it must match the name JAX
    registered for a blob to move between them); ``serialize_auxdata(aux)``
    must return ``bytes``; ``deserialize_auxdata(bytes)`` inverts it;
    ``from_children(aux, children)`` builds a node (defaults to the
    ``tree_util`` registration's unflatten, so register the node type with
    ``toolkit.tree_util.register_pytree_node`` first). Each type and each name
    registers once (``ValueError`` otherwise). Returns ``nodetype`` (usable as
    a decorator).

    >>> register_pytree_node_serialization(                 # doctest: +SKIP
    ...     MyPair, serialized_name="my.MyPair",
    ...     serialize_auxdata=lambda aux: b"", deserialize_auxdata=lambda b: None)
    """
    if not isinstance(serialized_name, str) or not serialized_name:
        raise ValueError(f"serialized_name must be a non-empty string, got {serialized_name!r}.")
    if nodetype in _serialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. "
            f"Previous registration was with serialized_name `{_serialization_registry[nodetype][0]}`.")
    if serialized_name in _deserialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for serialized_name `{serialized_name}`. "
            f"Previous registration was for type `{_deserialization_registry[serialized_name][0]}`.")
    if from_children is None:
        try:
            PyTreeDef.from_node(NodeKind.CUSTOM, nodetype, None, ())
        except ValueError:
            raise ValueError(
                f"If `from_children` is not present, you must first register `{nodetype}` with "
                "`toolkit.tree_util.register_pytree_node`.") from None

        def from_children(aux: Any, children: Sequence[Any]) -> Any:
            leaf = PyTreeDef.from_node(NodeKind.LEAF)
            return PyTreeDef.from_node(NodeKind.CUSTOM, nodetype, aux, [leaf] * len(children)).unflatten(
                list(children))

    _serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    _deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def _is_namedtuple(nodetype: Any) -> bool:
    fields = getattr(nodetype, "_fields", None)
    return (isinstance(nodetype, type) and issubclass(nodetype, tuple) and isinstance(fields, Sequence)
            and all(isinstance(f, str) for f in fields))


def register_namedtuple_serialization(nodetype: type[T], *, serialized_name: str) -> type[T]:
    """Make a ``collections.namedtuple`` type serializable; its field names go in the blob (as JSON).

    On deserialization the type must still have the serialized field names.

    >>> Point = collections.namedtuple("Point", ["x", "y"])   # doctest: +SKIP
    >>> register_namedtuple_serialization(Point, serialized_name="my.Point")  # doctest: +SKIP
    """
    if not _is_namedtuple(nodetype):
        raise ValueError("Use `toolkit.export.register_pytree_node_serialization` for types other "
                         "than `collections.namedtuple`.")

    def serialize_auxdata(aux: Any) -> bytes:
        del aux
        return json.dumps(cast(Any, nodetype)._fields).encode("utf-8")  # a namedtuple (checked above)

    def deserialize_auxdata(data: bytes) -> Any:
        keys = json.loads(data.decode("utf-8"))
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ValueError(f"namedtuple auxdata must be a JSON list of field names, got {keys!r}")
        return keys

    def from_children(aux: Any, children: Sequence[Any]) -> Any:
        if len(aux) != len(children):
            raise ValueError(f"namedtuple `{serialized_name}` has {len(aux)} serialized fields but "
                             f"{len(children)} children")
        return nodetype(**dict(zip(aux, children)))

    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=serialize_auxdata,
        deserialize_auxdata=deserialize_auxdata, from_children=from_children)


def _serialize_ordereddict_keys(keys: Any) -> bytes:
    if isinstance(keys, Sequence) and all(isinstance(k, str) for k in keys):
        return json.dumps(keys).encode("utf-8")
    raise ValueError(f"Serialization of collections.OrderedDict is supported only when the keys are strings. "
                     f"Found keys: {keys}.")


def _deserialize_ordereddict_keys(data: bytes) -> Any:
    keys = json.loads(data.decode("utf-8"))
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError(f"OrderedDict auxdata must be a JSON list of string keys, got {keys!r}")
    return keys


def _ordereddict_from_children(keys: Any, children: Sequence[Any]) -> Any:
    if len(keys) != len(children):
        raise ValueError(f"OrderedDict has {len(keys)} keys but {len(children)} children")
    return collections.OrderedDict(zip(keys, children))


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_serialize_ordereddict_keys, deserialize_auxdata=_deserialize_ordereddict_keys,
    from_children=_ordereddict_from_children)

# ---------------------------------------------------------------------------
# Enum tables
# ---------------------------------------------------------------------------

_DTYPE_TO_KIND: dict[np.dtype, int] = {
    np.dtype("bool"): exported_generated.DType.bool,
    np.dtype("int8"): exported_generated.DType.i8,
    np.dtype("int16"): exported_generated.DType.i16,
    np.dtype("int32"): exported_generated.DType.i32,
    np.dtype("int64"): exported_generated.DType.i64,
    np.dtype("uint8"): exported_generated.DType.ui8,
    np.dtype("uint16"): exported_generated.DType.ui16,
    np.dtype("uint32"): exported_generated.DType.ui32,
    np.dtype("uint64"): exported_generated.DType.ui64,
    np.dtype("float16"): exported_generated.DType.f16,
    np.dtype("float32"): exported_generated.DType.f32,
    np.dtype("float64"): exported_generated.DType.f64,
    np.dtype("complex64"): exported_generated.DType.c64,
    np.dtype("complex128"): exported_generated.DType.c128,
    np.dtype(ml_dtypes.bfloat16): exported_generated.DType.bf16,
    np.dtype(ml_dtypes.int4): exported_generated.DType.i4,
    np.dtype(ml_dtypes.uint4): exported_generated.DType.ui4,
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): exported_generated.DType.f8_e4m3b11fnuz,
    np.dtype(ml_dtypes.float8_e4m3fn): exported_generated.DType.f8_e4m3fn,
    np.dtype(ml_dtypes.float8_e4m3fnuz): exported_generated.DType.f8_e4m3fnuz,
    np.dtype(ml_dtypes.float8_e5m2): exported_generated.DType.f8_e5m2,
    np.dtype(ml_dtypes.float8_e5m2fnuz): exported_generated.DType.f8_e5m2fnuz,
    np.dtype(ml_dtypes.float8_e3m4): exported_generated.DType.f8_e3m4,
    np.dtype(ml_dtypes.float8_e4m3): exported_generated.DType.f8_e4m3,
    np.dtype(ml_dtypes.float8_e8m0fnu): exported_generated.DType.f8_e8m0fnu,
    np.dtype(ml_dtypes.float4_e2m1fn): exported_generated.DType.f4_e2m1fn,
}
_KIND_TO_DTYPE = {kind: dtype for dtype, kind in _DTYPE_TO_KIND.items()}
_DTYPE_TO_KIND[dtypes.float0] = exported_generated.DType.f0
_KIND_TO_DTYPE[exported_generated.DType.f0] = dtypes.float0
_UNSUPPORTED_DTYPE_KINDS = {exported_generated.DType.key_fry: "PRNG key<fry>",
                            exported_generated.DType.key_rbg: "PRNG key<rbg>", exported_generated.DType.key_unsafe_rbg: "PRNG key<unsafe_rbg>"}

_AXIS_TYPE_TO_KIND = {"Auto": exported_generated.AxisType.Auto, "Explicit": exported_generated.AxisType.Explicit, "Manual": exported_generated.AxisType.Manual}
_KIND_TO_AXIS_TYPE = {kind: name for name, kind in _AXIS_TYPE_TO_KIND.items()}

_CHECK_KIND_TO_CHECK = {
    exported_generated.DisabledSafetyCheckKind.platform: DisabledSafetyCheck.platform,
    exported_generated.DisabledSafetyCheckKind.shape_assertions: DisabledSafetyCheck.shape_assertions,
}

# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def serialize(exp: Exported, vjp_order: int = 0) -> bytearray:
    """The flatbuffer bytes of ``exp`` (JAX serialization version 11 layout).

    ``vjp_order > 0`` also stores that many levels of ``exp.vjp()``; it needs
    ``exp.has_vjp()`` (``ValueError`` otherwise). Raises ``ValueError`` for
    content the format cannot carry (non-string dict keys, unregistered
    custom nodes, effects that are not Effect values, HloShardings with no named equivalent).
    """
    if not isinstance(exp, Exported):
        raise TypeError(f"serialize expects a toolkit.export.Exported, got {type(exp).__name__}.")
    if not isinstance(vjp_order, int) or vjp_order < 0:
        raise ValueError(f"vjp_order must be a non-negative integer, got {vjp_order!r}.")
    builder = flatbuffer_builder.Builder(65536)
    builder.Finish(_write_exported(builder, exp, vjp_order))
    return builder.Output()


class _Uniques:
    """De-duplicated avals, meshes and shardings (serialization version 10), in first-seen order."""

    def __init__(self) -> None:
        self.avals: list[ShapedArray] = []
        self.aval_index: dict[Any, int] = {}
        self.meshes: list[ExportedAbstractMesh] = []
        self.mesh_index: dict[ExportedAbstractMesh, int] = {}
        self.shardings: list[ExportedNamedSharding] = []
        self.sharding_index: dict[ExportedNamedSharding, int] = {}

    def add_aval(self, key: Any, aval: ShapedArray) -> None:
        if key not in self.aval_index:
            self.aval_index[key] = len(self.avals)
            self.avals.append(aval)

    def add_sharding(self, s: ExportedNamedSharding | None) -> None:
        if s is None:
            return
        if s.mesh not in self.mesh_index:
            self.mesh_index[s.mesh] = len(self.meshes)
            self.meshes.append(s.mesh)
        if s not in self.sharding_index:
            self.sharding_index[s] = len(self.shardings)
            self.shardings.append(s)


def _named_shardings_for_writing(exp: Exported, side: str) -> tuple[ExportedNamedSharding | None, ...]:
    named = getattr(exp, f"_{side}_named_shardings")
    if named is not None:
        return named
    avals = getattr(exp, f"{side}_avals")
    hlo = getattr(exp, f"{side}_shardings_hlo") or (None,) * len(avals)
    # A host aval's sharding says so (its memory kind decides the memory space when read back, as in JAX).
    return tuple(None if h is None else _in_memory_of(hlo_to_named_sharding(h, a.ndim), a) for h, a in zip(hlo, avals))


def _in_memory_of(sharding: ExportedNamedSharding, aval: ShapedArray) -> ExportedNamedSharding:
    space = memory_space_of(aval)
    if space is MemorySpace.Device:
        return sharding
    return dataclasses.replace(sharding, memory_kind=memory_space_to_kind(space))


def _aval_key(aval: ShapedArray, sharding: ExportedNamedSharding | None) -> Any:
    # JAX de-duplicates avals that carry a sharding "type": the mesh and the
    # spec restricted to Explicit axes (Auto and Manual axes read as None).
    # Mirror that so the same Exported de-duplicates, and so serializes to
    # the same bytes, on both sides.
    if sharding is None:
        return (aval, None)
    assert sharding.mesh.axis_types is not None  # ExportedAbstractMesh.__post_init__ fills it in
    explicit = {n for n, t in zip(sharding.mesh.axis_names, sharding.mesh.axis_types) if t == "Explicit"}
    spec = []
    for entry in sharding.partitions + (None,) * (aval.ndim - len(sharding.partitions)):
        axes = tuple(a for a in ((entry,) if isinstance(entry, str) else entry or ()) if a in explicit)
        spec.append(axes or None)
    return (aval, sharding.mesh, tuple(spec))


def _write_exported(builder: flatbuffer_builder.Builder, exp: Exported, vjp_order: int) -> int:
    in_named = _named_shardings_for_writing(exp, "in")
    out_named = _named_shardings_for_writing(exp, "out")
    uniques = _Uniques()
    in_keys = [_aval_key(a, s) for a, s in zip(exp.in_avals, in_named)]
    out_keys = [_aval_key(a, s) for a, s in zip(exp.out_avals, out_named)]
    for key, aval in zip(in_keys + out_keys, exp.in_avals + exp.out_avals):
        uniques.add_aval(key, aval)
    for s in in_named + out_named:
        uniques.add_sharding(s)

    # Bottom-up, in the order JAX writes, so the bytes match JAX's.
    fun_name = builder.CreateString(exp.fun_name)
    in_tree = _write_pytreedef(builder, exp.in_tree)
    in_avals = _write_array(builder, _write_aval, exp.in_avals)
    out_tree = _write_pytreedef(builder, exp.out_tree)
    out_avals = _write_array(builder, _write_aval, exp.out_avals)
    in_shardings = _write_array(builder, lambda b, s: _write_sharding(b, s, uniques), in_named)
    out_shardings = _write_array(builder, lambda b, s: _write_sharding(b, s, uniques), out_named)
    ordered_effects = _write_array(builder, _write_effect, exp.ordered_effects)
    unordered_effects = _write_array(builder, _write_effect, exp.unordered_effects)
    disabled_checks = _write_array(builder, _write_disabled_check, exp.disabled_safety_checks)
    platforms = builder.CreateStringVector(exp.platforms)
    mlir_module = builder.CreateByteVector(exp.mlir_module_serialized)
    kept_var_idx = builder.CreateUint16Vector(exp.module_kept_var_idx)

    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError(f"Cannot serialize with vjp_order={vjp_order}: the Exported {exp.fun_name!r} "
                             "has no VJP (has_vjp() is False) at some requested order.")
        vjp = _write_exported(builder, exp.vjp(), vjp_order - 1)

    unique_avals = _write_array(builder, _write_aval, uniques.avals)
    unique_meshes = _write_array(builder, _write_abstract_mesh, uniques.meshes)
    unique_shardings = _write_array(builder, lambda b, s: _write_named_sharding(b, s, uniques), uniques.shardings)
    in_avals_idxs = builder.CreateUint32Vector([uniques.aval_index[k] for k in in_keys])
    out_avals_idxs = builder.CreateUint32Vector([uniques.aval_index[k] for k in out_keys])
    in_shardings_idxs = builder.CreateUint32Vector(
        [0 if s is None else 1 + uniques.sharding_index[s] for s in in_named])
    out_shardings_idxs = builder.CreateUint32Vector(
        [0 if s is None else 1 + uniques.sharding_index[s] for s in out_named])

    # toolkit's provenance record: a field JAX's schema does not have (JAX's readers skip it).
    record = provenance.get(exp)
    record_offset = builder.CreateString(provenance.encode(record)) if record is not None else None
    if record_offset is None:
        exported_generated.ExportedStart(builder)
    else:
        builder.StartObject(provenance.PROVENANCE_FIELD + 1)
    exported_generated.ExportedAddSerializationVersion(builder, _exported.serialization_version_stored)
    exported_generated.ExportedAddFunctionName(builder, fun_name)
    exported_generated.ExportedAddInTree(builder, in_tree)
    exported_generated.ExportedAddInAvals(builder, in_avals)
    exported_generated.ExportedAddOutTree(builder, out_tree)
    exported_generated.ExportedAddOutAvals(builder, out_avals)
    exported_generated.ExportedAddNrDevices(builder, exp.nr_devices)
    exported_generated.ExportedAddInShardings(builder, in_shardings)
    exported_generated.ExportedAddOutShardings(builder, out_shardings)
    exported_generated.ExportedAddPlatforms(builder, platforms)
    exported_generated.ExportedAddOrderedEffects(builder, ordered_effects)
    exported_generated.ExportedAddUnorderedEffects(builder, unordered_effects)
    exported_generated.ExportedAddDisabledChecks(builder, disabled_checks)
    exported_generated.ExportedAddMlirModuleSerialized(builder, mlir_module)
    exported_generated.ExportedAddCallingConventionVersion(builder, exp.calling_convention_version)
    exported_generated.ExportedAddModuleKeptVarIdx(builder, kept_var_idx)
    exported_generated.ExportedAddUsesGlobalConstants(builder, exp.uses_global_constants)
    if vjp is not None:
        exported_generated.ExportedAddVjp(builder, vjp)
    exported_generated.ExportedAddUniqueAvals(builder, unique_avals)
    exported_generated.ExportedAddUniqueAbstractMeshes(builder, unique_meshes)
    exported_generated.ExportedAddUniqueNamedShardings(builder, unique_shardings)
    exported_generated.ExportedAddInAvalsIdxs(builder, in_avals_idxs)
    exported_generated.ExportedAddOutAvalsIdxs(builder, out_avals_idxs)
    exported_generated.ExportedAddInShardingsIdxs(builder, in_shardings_idxs)
    exported_generated.ExportedAddOutShardingsIdxs(builder, out_shardings_idxs)
    if record_offset is not None:
        builder.PrependUOffsetTRelativeSlot(provenance.PROVENANCE_FIELD, record_offset, 0)
    return exported_generated.ExportedEnd(builder)


def _write_array(builder: flatbuffer_builder.Builder, write_one: Callable[[flatbuffer_builder.Builder, T], int], elements: Iterable[T]) -> int:
    return builder.CreateOffsetVector([write_one(builder, e) for e in elements])


def _write_pytreedef(builder: flatbuffer_builder.Builder, tree: PyTreeDef) -> int:
    kind = tree.node_kind
    children = tree.children()
    children_offset = _write_array(builder, _write_pytreedef, children) if children else None
    names_offset = custom_name = custom_auxdata = None
    if kind is NodeKind.LEAF:
        fb_kind = exported_generated.PyTreeDefKind.leaf
    elif kind is NodeKind.NONE:
        fb_kind = exported_generated.PyTreeDefKind.none
    elif kind is NodeKind.TUPLE:
        fb_kind = exported_generated.PyTreeDefKind.tuple
    elif kind is NodeKind.LIST:
        fb_kind = exported_generated.PyTreeDefKind.list
    elif kind is NodeKind.DICT:
        fb_kind = exported_generated.PyTreeDefKind.dict
        keys = list(tree.node_aux)
        for key in keys:
            if not isinstance(key, str):
                raise ValueError("Serialization is supported only for dictionaries with string keys. "
                                 f"Found key {key!r} of type {type(key)}.")
        names_offset = builder.CreateStringVector(keys)
    elif tree.node_type in _serialization_registry:
        fb_kind = exported_generated.PyTreeDefKind.custom
        serialized_name, serialize_auxdata = _serialization_registry[tree.node_type]
        custom_name = builder.CreateString(serialized_name)
        data = serialize_auxdata(tree.node_aux)
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError(f"The custom serialization function for `{tree.node_type}` must return a `bytes` "
                             f"object. It returned a {type(data)}.")
        custom_auxdata = builder.CreateByteVector(bytes(data))
    else:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type `{tree.node_type}`. "
                         "Use `toolkit.export.register_pytree_node_serialization` or "
                         "`toolkit.export.register_namedtuple_serialization`.")
    exported_generated.PyTreeDefStart(builder)
    exported_generated.PyTreeDefAddKind(builder, fb_kind)
    if children_offset:
        exported_generated.PyTreeDefAddChildren(builder, children_offset)
    if names_offset:
        exported_generated.PyTreeDefAddChildrenNames(builder, names_offset)
    if custom_name is not None:
        exported_generated.PyTreeDefAddCustomName(builder, custom_name)
    if custom_auxdata is not None:
        exported_generated.PyTreeDefAddCustomAuxdata(builder, custom_auxdata)
    return exported_generated.PyTreeDefEnd(builder)


def _write_aval(builder: flatbuffer_builder.Builder, aval: ShapedArray) -> int:
    kind = _DTYPE_TO_KIND.get(aval.dtype)
    if kind is None:
        raise ValueError(f"Cannot serialize an aval of dtype {aval.dtype}: the wire format has no code for it.")
    shape = builder.CreateStringVector([str(d) for d in aval.shape])
    exported_generated.AbstractValueStart(builder)
    exported_generated.AbstractValueAddKind(builder, exported_generated.AbstractValueKind.shapedArray)
    exported_generated.AbstractValueAddShape(builder, shape)
    exported_generated.AbstractValueAddDtype(builder, kind)
    # The wire codes are MemorySpace's values (Device 1, Host 2, Any 3), as JAX writes them.
    exported_generated.AbstractValueAddMemorySpace(builder, memory_space_of(aval).value)
    return exported_generated.AbstractValueEnd(builder)


def _write_abstract_device(builder: flatbuffer_builder.Builder, device: ExportedAbstractDevice) -> int:
    device_kind = builder.CreateString(device.device_kind)
    platform = builder.CreateString(device.platform or _platform_from_device_kind(device.device_kind))
    exported_generated.AbstractDeviceStart(builder)
    exported_generated.AbstractDeviceAddDeviceKind(builder, device_kind)
    if device.num_cores is not None:
        exported_generated.AbstractDeviceAddNumCores(builder, device.num_cores)
    exported_generated.AbstractDeviceAddPlatform(builder, platform)
    return exported_generated.AbstractDeviceEnd(builder)


def _write_abstract_mesh(builder: flatbuffer_builder.Builder, mesh: ExportedAbstractMesh) -> int:
    axis_sizes = builder.CreateUint32Vector(mesh.axis_sizes)
    axis_names = builder.CreateStringVector(mesh.axis_names)
    # The bytes of StartVector(1, n, 1) and a PrependByte per type.
    assert mesh.axis_types is not None  # ExportedAbstractMesh.__post_init__ fills it in
    axis_types = builder.CreateByteVector(bytes(_AXIS_TYPE_TO_KIND[t] for t in mesh.axis_types))
    device = _write_abstract_device(builder, mesh.abstract_device) if mesh.abstract_device is not None else 0
    exported_generated.AbstractMeshStart(builder)
    exported_generated.AbstractMeshAddAxisSizes(builder, axis_sizes)
    exported_generated.AbstractMeshAddAxisNames(builder, axis_names)
    exported_generated.AbstractMeshAddAxisTypes(builder, axis_types)
    if mesh.abstract_device is not None:
        exported_generated.AbstractMeshAddAbstractDevice(builder, device)
    return exported_generated.AbstractMeshEnd(builder)


def _write_partition_spec(builder: flatbuffer_builder.Builder, s: ExportedNamedSharding) -> int:
    def write_one_axis(b: flatbuffer_builder.Builder, entry: Any) -> int:
        axes = () if entry is None else (entry,) if isinstance(entry, str) else entry
        axes_offset = b.CreateStringVector(axes)
        exported_generated.PartitionSpecOneAxisStart(b)
        exported_generated.PartitionSpecOneAxisAddAxes(b, axes_offset)
        return exported_generated.PartitionSpecOneAxisEnd(b)

    partitions = _write_array(builder, write_one_axis, s.partitions)
    # Sets have no order; sort so the bytes do not depend on hash seeds.
    reduced = builder.CreateStringVector(sorted(s.reduced))
    unreduced = builder.CreateStringVector(sorted(s.unreduced))
    exported_generated.PartitionSpecStart(builder)
    exported_generated.PartitionSpecAddPartitions(builder, partitions)
    exported_generated.PartitionSpecAddReduced(builder, reduced)
    exported_generated.PartitionSpecAddUnreduced(builder, unreduced)
    return exported_generated.PartitionSpecEnd(builder)


def _write_named_sharding(builder: flatbuffer_builder.Builder, s: ExportedNamedSharding, uniques: _Uniques) -> int:
    mesh_idx = uniques.mesh_index[s.mesh]
    # Readers older than version 10 need the full mesh in each sharding.
    mesh = _write_abstract_mesh(builder, s.mesh)
    spec = _write_partition_spec(builder, s)
    memory_kind = builder.CreateString(s.memory_kind) if s.memory_kind is not None else 0
    exported_generated.NamedShardingStart(builder)
    exported_generated.NamedShardingAddMesh(builder, mesh)
    exported_generated.NamedShardingAddSpec(builder, spec)
    if memory_kind != 0:
        exported_generated.NamedShardingAddMemoryKind(builder, memory_kind)
    exported_generated.NamedShardingAddAbstractMeshIdx(builder, mesh_idx)
    return exported_generated.NamedShardingEnd(builder)


def _write_sharding(builder: flatbuffer_builder.Builder, s: ExportedNamedSharding | None, uniques: _Uniques) -> int:
    named = _write_named_sharding(builder, s, uniques) if s is not None else None
    exported_generated.ShardingStart(builder)
    if named is not None:
        exported_generated.ShardingAddNamedSharding(builder, named)
    return exported_generated.ShardingEnd(builder)


def _write_effect(builder: flatbuffer_builder.Builder, effect: Any) -> int:
    if not isinstance(effect, Effect):
        raise ValueError(f"Cannot serialize effect {effect!r}: effects in an Exported must be "
                         "toolkit.export.Effect values.")
    name = builder.CreateString(effect.type_name)
    exported_generated.EffectStart(builder)
    exported_generated.EffectAddTypeName(builder, name)
    return exported_generated.EffectEnd(builder)


def _write_disabled_check(builder: flatbuffer_builder.Builder, check: DisabledSafetyCheck) -> int:
    target_name = check.is_custom_call()
    target = None
    if target_name is not None:
        kind = exported_generated.DisabledSafetyCheckKind.custom_call
        target = builder.CreateString(target_name)
    elif check == DisabledSafetyCheck.platform():
        kind = exported_generated.DisabledSafetyCheckKind.platform
    elif check == DisabledSafetyCheck.shape_assertions():
        kind = exported_generated.DisabledSafetyCheckKind.shape_assertions
    else:
        raise ValueError(f"Cannot serialize DisabledSafetyCheck {check}.")
    exported_generated.DisabledSafetyCheckStart(builder)
    exported_generated.DisabledSafetyCheckAddKind(builder, kind)
    if target is not None:
        exported_generated.DisabledSafetyCheckAddCustomCallTarget(builder, target)
    return exported_generated.DisabledSafetyCheckEnd(builder)


def _platform_from_device_kind(device_kind: str) -> str:
    # Blobs before version 11 have no AbstractDevice.platform: JAX guesses it from the kind.
    kind = device_kind.lower()
    if "cpu" in kind:
        return "cpu"
    if "tpu" in kind:
        return "tpu"
    if any(x in kind for x in ("nvidia", "tesla", "amd")):
        return "gpu"
    raise ValueError(f"Cannot tell the platform of device kind {device_kind!r}.")


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

# How deep vjp chains and pytrees may nest: far beyond real exports, low
# enough that a malicious cycle of offsets fails fast.
_MAX_VJP_DEPTH = 16
# Not deeper than toolkit's own recursive tree code (serialize, PyTreeDef
# printing and equality) handles at Python's default recursion limit.
_MAX_TREE_DEPTH = 100


class _Corrupt(Exception):
    pass


class _Budget:
    """How many more objects turning one blob's decoded tables into an ``Exported`` may visit.

    The reader decodes a table that several offsets share once, but each
    place that refers to it visits it again; a blob of shared subtrees could
    make that walk exponential. Every genuine node, aval, string... occupies
    at least 4 bytes of the blob, so a budget of that many visits stops it.
    """

    def __init__(self, size: int) -> None:
        self.left = size + 64

    def spend(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise _Corrupt("the blob references more objects than it can contain (shared or cyclic offsets)")

    def items(self, vector: Sequence[T] | None) -> Sequence[T]:
        """The elements of a decoded vector of offsets or indices (none when it is absent), paid for."""
        if vector is None:
            return ()
        self.spend(len(vector))
        return vector


# The schema (schema/exported.fbs) as the reader decodes it: per table, ``(field, type)`` in field-id order;
# an enum field has its underlying type. tests/export/test_flatbuffer_reader.py checks it against the .fbs.
_SCHEMA: dict[str, tuple[tuple[str, str], ...]] = {
    "PyTreeDef": (("kind", "byte"), ("children", "[PyTreeDef]"), ("children_names", "[string]"),
                  ("custom_name", "string"), ("custom_auxdata", "[byte]")),
    "AbstractDevice": (("device_kind", "string"), ("num_cores", "uint32 = null"), ("platform", "string")),
    "AbstractMesh": (("axis_sizes", "[uint32]"), ("axis_names", "[string]"), ("axis_types", "[byte]"),
                     ("abstract_device", "AbstractDevice")),
    "PartitionSpecOneAxis": (("axes", "[string]"),),
    "PartitionSpec": (("partitions", "[PartitionSpecOneAxis]"), ("reduced", "[string]"), ("unreduced", "[string]")),
    "NamedSharding": (("mesh", "AbstractMesh"), ("spec", "PartitionSpec"), ("memory_kind", "string"),
                      ("abstract_mesh_idx", "uint32")),
    "AbstractValue": (("kind", "byte"), ("shape", "[string]"), ("dtype", "byte"), ("memory_space", "byte")),
    "Sharding": (("kind", "byte"), ("hlo_sharding_proto", "[byte]"), ("named_sharding", "NamedSharding")),
    "Effect": (("type_name", "string"),),
    "DisabledSafetyCheck": (("kind", "byte"), ("custom_call_target", "string")),
    "Exported": (("serialization_version", "uint16"), ("function_name", "string"), ("in_tree", "PyTreeDef"),
                 ("in_avals", "[AbstractValue]"), ("out_tree", "PyTreeDef"), ("out_avals", "[AbstractValue]"),
                 ("nr_devices_short", "short"), ("in_shardings", "[Sharding]"), ("out_shardings", "[Sharding]"),
                 ("platforms", "[string]"), ("ordered_effects", "[Effect]"), ("unordered_effects", "[Effect]"),
                 ("disabled_checks", "[DisabledSafetyCheck]"), ("mlir_module_serialized", "[byte]"),
                 ("calling_convention_version", "uint16"), ("module_kept_var_idx", "[uint16]"),
                 ("uses_global_constants", "bool"), ("vjp", "Exported"), ("nr_devices", "uint32"),
                 ("unique_avals", "[AbstractValue]"), ("unique_abstract_meshes", "[AbstractMesh]"),
                 ("unique_named_shardings", "[NamedSharding]"), ("in_avals_idxs", "[uint32]"),
                 ("out_avals_idxs", "[uint32]"), ("in_shardings_idxs", "[uint32]"), ("out_shardings_idxs", "[uint32]")),
}


def _layout_kind(kind: str) -> str:
    vector = kind.startswith("[")
    base = (kind[1:-1] if vector else kind).removesuffix(" = null")
    width = {"bool": "1", "byte": "1", "short": "2", "uint16": "2", "uint32": "4"}.get(base)
    base = width or ("str" if base == "string" else base)
    return f"[{base}]" if vector else base


# What deserialize verifies, by width (``"1"``, ``"2"``, ``"4"``), ``"str"``, table name or ``"[kind]"``:
# tests/fuzz/test_fuzz_export.py checks it against schema/exported.fbs.
_LAYOUT: dict[str, tuple[tuple[str, str], ...]] = {
    table: tuple((name, _layout_kind(kind)) for name, kind in fields) for table, fields in _SCHEMA.items()}

# Deep enough for every legitimate nesting (VJP chains of _MAX_VJP_DEPTH, pytrees of _MAX_TREE_DEPTH, a few
# sharding tables), shallow enough for Python's default recursion limit.
_FLATBUFFER_READER = flatbuffer_reader.Reader(_SCHEMA, "Exported", max_depth=256)
_read_u16 = struct.Struct("<H").unpack_from
_read_u32 = struct.Struct("<I").unpack_from
_read_i32 = struct.Struct("<i").unpack_from


def deserialize(blob: bytes | bytearray | memoryview) -> Exported:
    """Read an ``Exported`` from bytes written by ``serialize`` or by ``jax.export``.

    Accepts JAX serialization versions 1 to 11. Raises ``ValueError`` saying
    what is wrong for truncated, corrupted or foreign bytes, for content
    toolkit cannot represent (PRNG-key dtypes,
    unregistered custom pytree nodes, empty effect names), and never executes
    anything from the blob. Only the module's portable-artifact magic is
    checked here; the module itself is parsed when used (``mlir_module()``,
    ``call``).

    The flatbuffer is decoded and verified in one pass (every table, vtable,
    offset, string and vector in bounds, the field path in the error: see
    :mod:`toolkit.export.flatbuffer_reader`), then turned into an ``Exported``.

    >>> deserialize(b"not an export")
    Traceback (most recent call last):
    ...
    ValueError: Not a serialized Exported: ...
    """
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"deserialize expects bytes or bytearray, got {type(blob).__name__}.")
    data = bytes(blob)
    if len(data) < 12:
        raise ValueError(f"Not a serialized Exported: {len(data)} bytes is too short for a flatbuffer.")
    if len(data) % 4:
        # Builders pad the finished buffer to its alignment (at least 4).
        raise ValueError(f"Not a serialized Exported: its length {len(data)} is not a multiple of 4 "
                         "(truncated or padded).")
    root = _read_u32(data, 0)[0]
    if root < 4 or root + 4 > len(data) or root % 4:
        raise ValueError(f"Not a serialized Exported: the root table offset {root} is outside the "
                         f"{len(data)}-byte buffer (truncated, corrupted or not a flatbuffer).")
    try:
        result = _read_exported(_FLATBUFFER_READER.decode(data, root), _Budget(len(data)), depth=0)
    except (_Corrupt, flatbuffer_reader.FlatbufferError) as e:
        raise ValueError(f"Not a serialized Exported: {_printable(str(e))}.") from None
    except (IndexError, struct.error, UnicodeDecodeError, OverflowError, RecursionError, KeyError, MemoryError,
            TypeError, AttributeError, ValueError) as e:
        # A safety net: the reader checks every read, so none of these is expected.
        raise ValueError(f"Not a serialized Exported: corrupted or truncated data "
                         f"({type(e).__name__}: {_printable(str(e))}).") from None
    _read_provenance(data, root, result)
    return result


def _decode(raw: bytes | None, what: str) -> str:
    if raw is None:
        raise _Corrupt(f"the {what} string is missing")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Corrupt(f"the {what} string is not valid UTF-8") from None


def _read_exported(exp: dict[str, Any], budget: _Budget, depth: int) -> Exported:
    """The ``Exported`` of a decoded ``Exported`` table (``exp``: field name -> value)."""
    if depth > _MAX_VJP_DEPTH:
        raise _Corrupt(f"VJP functions nest more than {_MAX_VJP_DEPTH} levels deep")
    budget.spend()
    version = exp["serialization_version"]
    if version == 0:
        raise _Corrupt("it has no serialization_version (foreign flatbuffer?)")
    if not (_exported.minimum_supported_serialization_version <= version
            <= _exported.maximum_supported_serialization_version):
        raise _Corrupt(f"serialization version {version} is not supported; toolkit reads versions "
                       f"{_exported.minimum_supported_serialization_version} to "
                       f"{_exported.maximum_supported_serialization_version}")

    mlir_module_serialized = exp["mlir_module_serialized"]
    if mlir_module_serialized is None:
        raise _Corrupt("it has no mlir_module_serialized")
    if not _exported._is_portable_artifact(mlir_module_serialized):
        raise _Corrupt("mlir_module_serialized is not a StableHLO portable artifact (bad magic)")
    fun_name = _decode(exp["function_name"], "function_name")

    shapes = _Shapes()  # JAX parses the shapes of one Exported in one symbolic scope; a VJP gets its own
    unique_avals = [_read_aval(aval, shapes, budget) for aval in budget.items(exp["unique_avals"])]
    unique_meshes = [_read_abstract_mesh(mesh, budget) for mesh in budget.items(exp["unique_abstract_meshes"])]
    unique_shardings = [_read_named_sharding(s, unique_meshes, budget)
                        for s in budget.items(exp["unique_named_shardings"])]

    nr_devices = exp["nr_devices"] or exp["nr_devices_short"]
    if nr_devices < 1:
        raise _Corrupt(f"nr_devices is {nr_devices}")

    def by_index(kind: str, idx: int, table: list) -> Any:
        if idx >= len(table):
            raise _Corrupt(f"a {kind} index {idx} is out of range (there are {len(table)})")
        return table[idx]

    def read_shardings(side: str) -> list:
        idxs = exp[f"{side}_shardings_idxs"]
        if idxs:
            return [None if k == 0 else by_index("named sharding", k - 1, unique_shardings)
                    for k in budget.items(idxs)]
        return [_read_sharding(s, unique_meshes, budget) for s in budget.items(exp[f"{side}_shardings"])]

    def read_avals(side: str) -> list[ShapedArray]:
        idxs = exp[f"{side}_avals_idxs"]
        if idxs:
            return [by_index("unique aval", k, unique_avals) for k in budget.items(idxs)]
        return [_read_aval(aval, shapes, budget) for aval in budget.items(exp[f"{side}_avals"])]

    in_shardings, out_shardings = read_shardings("in"), read_shardings("out")
    in_avals, out_avals = read_avals("in"), read_avals("out")
    for side, shardings, avals in (("input", in_shardings, in_avals), ("output", out_shardings, out_avals)):
        if not shardings:
            shardings.extend([None] * len(avals))
        elif len(shardings) != len(avals):
            raise _Corrupt(f"there are {len(shardings)} {side} shardings for {len(avals)} {side} avals")

    has_named = not any(_is_hlo_sharding(s) for s in in_shardings + out_shardings)
    in_named: tuple[ExportedNamedSharding | None, ...] | None
    out_named: tuple[ExportedNamedSharding | None, ...] | None
    if has_named:
        in_named, out_named = tuple(in_shardings), tuple(out_shardings)
        in_hlo = tuple(None if s is None else _to_hlo(s, a) for s, a in zip(in_named, in_avals))
        out_hlo = tuple(None if s is None else _to_hlo(s, a) for s, a in zip(out_named, out_avals))
    else:  # blobs from before JAX's named shardings: keep HloShardings only
        in_named = out_named = None
        in_hlo = tuple(s if s is None or _is_hlo_sharding(s) else _to_hlo(s, a) for s, a in zip(in_shardings, in_avals))
        out_hlo = tuple(s if s is None or _is_hlo_sharding(s) else _to_hlo(s, a)
                        for s, a in zip(out_shardings, out_avals))

    in_tree = _read_pytreedef(exp["in_tree"], in_avals, "in_tree", budget)
    out_tree = _read_pytreedef(exp["out_tree"], out_avals, "out_tree", budget)
    platforms = tuple(_decode(p, "platform") for p in budget.items(exp["platforms"]))
    ordered_effects = tuple(_read_effect(e) for e in budget.items(exp["ordered_effects"]))
    unordered_effects = tuple(_read_effect(e) for e in budget.items(exp["unordered_effects"]))
    disabled_checks = tuple(_read_disabled_check(c) for c in budget.items(exp["disabled_checks"]))
    module_kept_var_idx = exp["module_kept_var_idx"] or ()

    get_vjp = None
    if exp["vjp"] is not None:
        # Read eagerly: a bad VJP must fail here, not at first use.
        vjp_exported = _read_exported(exp["vjp"], budget, depth + 1)
        get_vjp = lambda _primal: vjp_exported  # noqa: E731

    try:
        return Exported(
            fun_name=fun_name, in_tree=in_tree, in_avals=tuple(in_avals), out_tree=out_tree,
            out_avals=tuple(out_avals), in_shardings_hlo=in_hlo, out_shardings_hlo=out_hlo,
            nr_devices=nr_devices, platforms=platforms, ordered_effects=ordered_effects,
            unordered_effects=unordered_effects, disabled_safety_checks=disabled_checks,
            mlir_module_serialized=mlir_module_serialized,
            calling_convention_version=exp["calling_convention_version"],
            module_kept_var_idx=module_kept_var_idx, uses_global_constants=bool(exp["uses_global_constants"]),
            _get_vjp=get_vjp, _in_named_shardings=in_named, _out_named_shardings=out_named)
    except (TypeError, ValueError) as e:
        raise _Corrupt(f"inconsistent fields: {e}") from None


def _read_provenance(data: bytes, root: int, result: Exported) -> None:
    """Attach toolkit's provenance record (field ``PROVENANCE_FIELD`` of the root table, a string JAX's schema
    does not have) when the blob has a well-formed one.

    Informational only: a record that is out of bounds or not JSON is ignored. The root table and its vtable
    were verified by the reader; the field itself is outside the schema, so every read here is checked.
    """
    size = len(data)
    vtable = root - _read_i32(data, root)[0]
    slot = 4 + 2 * provenance.PROVENANCE_FIELD
    if slot + 2 > _read_u16(data, vtable)[0]:
        return
    offset = _read_u16(data, vtable + slot)[0]
    if not offset or root + offset + 4 > size:
        return
    start = root + offset + _read_u32(data, root + offset)[0]
    if start + 4 > size:
        return
    length = _read_u32(data, start)[0]
    if start + 4 + length > size:
        return
    try:
        record = provenance.decode(data[start + 4:start + 4 + length])
    except (ValueError, TypeError):
        return
    if record is not None:
        provenance.attach(result, record)


def _is_hlo_sharding(s: Any) -> bool:
    return s is not None and not isinstance(s, ExportedNamedSharding)


def _to_hlo(s: ExportedNamedSharding, aval: ShapedArray) -> Any:
    try:
        return s.to_hlo_sharding(aval.ndim)
    except ValueError as e:
        raise _Corrupt(f"a sharding does not fit its aval {aval}: {e}") from None


def _read_aval(aval: dict[str, Any], shapes: _Shapes, budget: _Budget) -> ShapedArray:
    budget.spend()
    kind = aval["kind"]
    if kind != exported_generated.AbstractValueKind.shapedArray:
        raise _Corrupt(f"abstract value kind {kind} is not supported (only shapedArray)")
    code = aval["dtype"]
    dtype = _KIND_TO_DTYPE.get(code)
    if dtype is None:
        if code in _UNSUPPORTED_DTYPE_KINDS:
            raise _Corrupt(f"dtype {_UNSUPPORTED_DTYPE_KINDS[code]} is not supported by toolkit")
        raise _Corrupt(f"unknown dtype code {code}")
    code = aval["memory_space"]
    if code == exported_generated.MemorySpace.Missing:  # blobs before version 5: device memory (as JAX)
        code = MemorySpace.Device.value
    if code not in MemorySpace._value2member_map_:
        raise _Corrupt(f"unknown memory space code {code}")
    shape = shapes.parse(budget.items(aval["shape"]))
    try:
        # A named sharding's memory kind overrides this when the Exported is built (as JAX).
        return with_memory_space(ShapedArray(shape, dtype), MemorySpace(code))
    except TypeError as e:  # a dtype the wire format has and toolkit's arrays do not (uint4, float8, ...)
        raise _Corrupt(f"an abstract value cannot be represented: {e}") from None


_MAX_DIM = 2**63 - 1  # MLIR dimensions are int64


def _printable(text: str) -> str:
    """``text`` with control characters escaped (``\\n``), so an error naming bad data stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class _Shapes:
    """Parses the shapes of one ``Exported``: integers directly, symbolic ones in one shared scope."""

    def __init__(self) -> None:
        self.scope: Any = None  # made at the first symbolic shape

    def parse(self, raw_dims: Sequence[bytes]) -> tuple:
        if all(d.isdigit() for d in raw_dims):  # ASCII digits only (bytes.isdigit), as JAX writes integers
            sizes: list[int] = []
            for d in raw_dims:
                if len(d) > 19:  # also keeps int() below Python's 4300-digit conversion limit
                    d = d.lstrip(b"0") or b"0"
                    if len(d) > 19:
                        raise _Corrupt(f"dimension {_short(d.decode())} is larger than 2**63 - 1")
                value = int(d)
                if value > _MAX_DIM:
                    raise _Corrupt(f"dimension {d.decode()} is larger than 2**63 - 1")
                sizes.append(value)
            return tuple(sizes)
        dims = [_decode(d, "dimension") for d in raw_dims]
        text = ",".join(dims)
        if self.scope is None:
            self.scope = shape_poly.SymbolicScope(())
        try:
            shape = tuple(shape_poly.symbolic_shape(text, scope=self.scope))
        except Exception as e:  # the parser's own error types
            raise _Corrupt(f"cannot parse shape ({_short(text)}): {_short(str(e), 300)}") from None
        if len(shape) != len(dims) or any(type(d) is int and not 0 <= d <= _MAX_DIM for d in shape):
            raise _Corrupt(f"shape ({_short(text)}) does not parse to {len(dims)} dimensions between 0 and 2**63 - 1")
        return shape


def _read_abstract_mesh(mesh: dict[str, Any] | None, budget: _Budget) -> ExportedAbstractMesh:
    if mesh is None:
        raise _Corrupt("an abstract mesh is missing")
    budget.spend()
    sizes = tuple(budget.items(mesh["axis_sizes"]))
    names = tuple(_decode(n, "axis name") for n in budget.items(mesh["axis_names"]))
    types = []
    for code in mesh["axis_types"] or b"":  # bytes of a signed enum
        name = _KIND_TO_AXIS_TYPE.get(code)
        if name is None:
            raise _Corrupt(f"unknown mesh axis type code {code - 256 if code > 127 else code}")
        types.append(name)
    device = None
    device_table = mesh["abstract_device"]
    if device_table is not None:
        device_kind = _decode(device_table["device_kind"], "device_kind")
        platform = device_table["platform"]
        try:
            platform = _decode(platform, "platform") if platform else _platform_from_device_kind(device_kind)
        except ValueError as e:
            raise _Corrupt(str(e)) from None
        device = ExportedAbstractDevice(device_kind, device_table["num_cores"], platform)
    try:
        return ExportedAbstractMesh(sizes, names, tuple(types), device)
    except ValueError as e:
        raise _Corrupt(f"bad abstract mesh: {e}") from None


def _read_named_sharding(s: dict[str, Any], unique_meshes: list[ExportedAbstractMesh],
                         budget: _Budget) -> ExportedNamedSharding:
    budget.spend()
    if unique_meshes:
        idx = s["abstract_mesh_idx"]
        if idx >= len(unique_meshes):
            raise _Corrupt(f"abstract mesh index {idx} is out of range (there are {len(unique_meshes)})")
        mesh = unique_meshes[idx]
    else:
        mesh = _read_abstract_mesh(s["mesh"], budget)
    spec = s["spec"]
    if spec is None:
        raise _Corrupt("a named sharding has no partition spec")
    partitions = []
    for one_axis in budget.items(spec["partitions"]):
        axes = tuple(_decode(a, "axis") for a in budget.items(one_axis["axes"]))
        partitions.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    reduced = frozenset(_decode(a, "axis") for a in budget.items(spec["reduced"]))
    unreduced = frozenset(_decode(a, "axis") for a in budget.items(spec["unreduced"]))
    memory_kind = s["memory_kind"]
    memory_kind = _decode(memory_kind, "memory_kind") if memory_kind is not None else None
    try:
        return ExportedNamedSharding(mesh, tuple(partitions), reduced, unreduced, memory_kind)
    except ValueError as e:
        raise _Corrupt(f"bad named sharding: {e}") from None


def _read_sharding(s: dict[str, Any], unique_meshes: list[ExportedAbstractMesh], budget: _Budget) -> Any:
    budget.spend()
    named = s["named_sharding"]
    if named is not None:
        return _read_named_sharding(named, unique_meshes, budget)
    proto_bytes = s["hlo_sharding_proto"]
    if proto_bytes is not None:
        try:
            return hlo_sharding_from_proto_bytes(proto_bytes)
        except Exception as e:  # protobuf / XLA parse errors
            raise _Corrupt(f"bad HloSharding proto: {e}") from None
    return None


def _read_effect(effect: dict[str, Any]) -> Effect:
    name = _decode(effect["type_name"], "effect type_name")
    if not name:
        raise _Corrupt("an effect has an empty type name")
    # Effect types toolkit has never seen are kept as opaque effects named by their type string.
    return Effect(name)


def _read_disabled_check(check: dict[str, Any]) -> DisabledSafetyCheck:
    kind = check["kind"]
    if kind == exported_generated.DisabledSafetyCheckKind.custom_call:
        target = _decode(check["custom_call_target"], "custom_call_target")
        if not target:
            raise _Corrupt("a custom_call disabled check has an empty target")
        return DisabledSafetyCheck.custom_call(target)
    if kind in _CHECK_KIND_TO_CHECK:
        return _CHECK_KIND_TO_CHECK[kind]()
    raise _Corrupt(f"unknown DisabledSafetyCheck kind {kind}")


def _read_pytreedef(tree: dict[str, Any] | None, leaves: Sequence[Any], what: str, budget: _Budget) -> PyTreeDef:
    """Rebuild the structure as JAX does: make the pytree (with ``leaves``) and take its structure."""
    if tree is None:
        raise _Corrupt(f"{what} is missing")
    leaf_iter = iter(leaves)
    count = [0]

    def next_leaf() -> Any:
        count[0] += 1
        try:
            return next(leaf_iter)
        except StopIteration:
            raise _Corrupt(f"{what} has more leaves than the {len(leaves)} avals") from None

    pytree = _read_pytree_node(tree, next_leaf, what, 0, budget)
    if count[0] != len(leaves):
        raise _Corrupt(f"{what} has {count[0]} leaves but there are {len(leaves)} avals")
    treedef = pytrees.tree_structure(pytree)
    if treedef.num_leaves != len(leaves):
        raise _Corrupt(f"{what} rebuilt with {treedef.num_leaves} leaves, expected {len(leaves)} "
                       "(a custom node's from_children does not round-trip)")
    return treedef


def _read_pytree_node(node: dict[str, Any], next_leaf: Callable[[], Any], what: str, depth: int,
                      budget: _Budget) -> Any:
    if depth > _MAX_TREE_DEPTH:
        raise _Corrupt(f"{what} nests more than {_MAX_TREE_DEPTH} levels deep")
    budget.spend()
    kind = node["kind"]
    children = [_read_pytree_node(child, next_leaf, what, depth + 1, budget)
                for child in budget.items(node["children"])]
    if kind == exported_generated.PyTreeDefKind.leaf:
        if children:
            raise _Corrupt(f"{what} has a leaf with children")
        return next_leaf()
    if kind == exported_generated.PyTreeDefKind.none:
        if children:
            raise _Corrupt(f"{what} has a None node with children")
        return None
    if kind == exported_generated.PyTreeDefKind.tuple:
        return tuple(children)
    if kind == exported_generated.PyTreeDefKind.list:
        return children
    if kind == exported_generated.PyTreeDefKind.dict:
        names = node["children_names"] or ()
        if len(names) != len(children):
            raise _Corrupt(f"{what} has a dict node with {len(names)} keys for {len(children)} children")
        keys = [_decode(name, "dict key") for name in names]
        if len(set(keys)) != len(keys):
            raise _Corrupt(f"{what} has a dict node with duplicate keys {keys}")
        return dict(zip(keys, children))
    if kind == exported_generated.PyTreeDefKind.custom:
        name = _decode(node["custom_name"], "custom node name")
        if name not in _deserialization_registry:
            raise _Corrupt(f"{what} contains an unregistered type `{name}`; use "
                           "`toolkit.export.register_pytree_node_serialization` or "
                           "`toolkit.export.register_namedtuple_serialization`")
        _, deserialize_auxdata, from_children = _deserialization_registry[name]
        auxdata_bytes = node["custom_auxdata"] or b""
        try:
            return from_children(deserialize_auxdata(auxdata_bytes), children)
        except Exception as e:  # user callbacks: any failure means the blob does not fit the registration
            raise _Corrupt(f"{what} custom node `{name}` could not be rebuilt: {type(e).__name__}: {e}") from None
    raise _Corrupt(f"{what} has a node of unknown kind {kind}")
