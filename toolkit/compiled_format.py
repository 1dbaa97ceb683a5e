"""Saving and loading a compiled executable: ``Compiled.serialize()`` / ``toolkit.deserialize_compiled``.

The container (no pickle; see ``docs/compiled.md``)::

    b"TKEXEC\\x00\\x01"            magic and format version 1 (8 bytes)
    header length                  4 bytes, big-endian unsigned
    header                         UTF-8 JSON, described below
    executable                     PJRT's serialization of the executable (``header["executable"]["size"]`` bytes)

The header's ``"key"`` is what the executable is only valid for: the jaxlib
version, the platform and its version, the device kind and count, and the
compile options (partitions, replicas, SPMD partitioner, XLA options, which
outputs the partitioner lays out). Loading compares it with the running
process and refuses any difference, naming it. ``"executable"`` holds the
size and SHA-256 of the executable bytes, checked before jaxlib sees them:
jaxlib parses corrupt bytes into an executable when the damage misses its
framing (a flipped byte loads), and loading an executable may run its code,
so the checksum is the guard against corruption; it is not a signature —
load only files you (or someone you trust) wrote. ``"signature"`` is what
``Compiled`` needs to be called again: the function's name, the argument and
result trees (tuples, lists, dicts and None only), abstract values, argument
paths, kept and donated inputs and the shardings of every argument and result
(single-device, ``NamedSharding`` over a concrete mesh, or device ids plus an
``OpSharding`` proto).

Reading gives a :class:`CompiledRecord` (the executable and its signature);
``toolkit.stages`` builds the callable ``Compiled`` around it, so this module
knows nothing of the stage objects.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import struct
from typing import Any, Callable, Mapping, Sequence, TypeVar

import ml_dtypes
import numpy as np

from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray
from toolkit.core.program import Program, Var
from toolkit.core.sharding_types import type_sharding
from toolkit.runtime import client as runtime_client
from toolkit.runtime import executable as runtime_executable
from toolkit.runtime.shardings import hlo_sharding_from_proto_bytes, hlo_sharding_to_proto_bytes
from toolkit.shard import AxisType, GSPMDSharding, Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding
from toolkit.sharding_plan import ShardingPlan

MAGIC = b"TKEXEC\x00\x01"
FORMAT_VERSION = 1
_MAX_HEADER = 64 << 20


class CompiledFormatError(ValueError):
    """The bytes are not a loadable toolkit compiled executable here (what differs is in the message)."""


# --- pytrees ------------------------------------------------------------------------------------------


def _encode_tree(tree: pytrees.PyTreeDef) -> Any:
    example = pytrees.tree_unflatten(tree, list(range(tree.num_leaves)))

    def encode(x: Any) -> Any:
        if type(x) is int:
            return {"leaf": x}
        if x is None:
            return {"none": True}
        if type(x) is tuple:
            return {"tuple": [encode(v) for v in x]}
        if type(x) is list:
            return {"list": [encode(v) for v in x]}
        if type(x) is dict:
            if not all(type(k) is str for k in x):
                raise TypeError("only dicts with string keys can be serialized in a compiled executable's trees")
            return {"dict": {k: encode(v) for k, v in x.items()}}
        raise TypeError(f"a {type(x).__name__} node cannot be serialized in a compiled executable's trees "
                        "(tuples, lists, dicts with string keys and None only)")
    return encode(example)


def _decode_tree(data: Any) -> pytrees.PyTreeDef:
    def decode(x: Any) -> Any:
        if not isinstance(x, dict) or len(x) != 1:
            raise CompiledFormatError(f"malformed tree node in the header: {x!r:.80}")
        (kind, value), = x.items()
        if kind == "leaf":
            return _Leaf()
        if kind == "none":
            return None
        if kind in ("tuple", "list"):
            items = [decode(v) for v in _typed(value, list, "tree node")]
            return tuple(items) if kind == "tuple" else items
        if kind == "dict":
            return {str(k): decode(v) for k, v in _typed(value, dict, "tree node").items()}
        raise CompiledFormatError(f"unknown tree node kind {kind!r} in the header")
    return pytrees.tree_structure(decode(data))


class _Leaf:
    """A placeholder leaf while rebuilding a tree."""


# --- avals and shardings --------------------------------------------------------------------------------


def _encode_aval(aval: ShapedArray) -> dict:
    return {"shape": [int(d) for d in aval.shape], "dtype": np.dtype(aval.dtype).name,
            "weak_type": bool(aval.weak_type), "typed": aval.sharding is not None}


def _dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        if hasattr(ml_dtypes, name):
            return np.dtype(getattr(ml_dtypes, name))
        raise CompiledFormatError(f"unknown dtype {name!r} in the header") from None


def _decode_aval(data: dict) -> tuple[ShapedArray, bool]:
    shape = tuple(int(d) for d in _typed(data.get("shape"), list, "aval shape"))
    return ShapedArray(shape, _dtype(str(data.get("dtype"))), bool(data.get("weak_type"))), bool(data.get("typed"))


def _encode_sharding(sharding: Any, ndim: int) -> dict:
    if type(sharding) is SingleDeviceSharding:
        return {"single": sharding._device_assignment[0].id}
    if (type(sharding) is NamedSharding and isinstance(sharding.mesh, Mesh)
            and sharding.memory_kind == NamedSharding(sharding.mesh, sharding.spec).memory_kind):  # default memory
        mesh = sharding.mesh
        spec = [list(e) if isinstance(e, tuple) else e for e in sharding.spec]
        if all(e is None or isinstance(e, str) or (isinstance(e, list) and all(isinstance(n, str) for n in e))
               for e in spec) and all(isinstance(n, str) for n in mesh.axis_names):
            return {"named": {"devices": np.vectorize(lambda d: d.id, otypes=[int])(mesh.devices).tolist(),
                              "axis_names": list(mesh.axis_names),
                              "axis_types": [t.name for t in mesh.axis_types], "spec": spec}}
    hlo = sharding._to_xla_hlo_sharding(ndim)
    return {"hlo": {"devices": [d.id for d in sharding._device_assignment],
                    "proto": base64.b64encode(hlo_sharding_to_proto_bytes(hlo)).decode("ascii")}}


def _decode_sharding(data: Any, devices_by_id: Mapping[int, Any]) -> Any:
    def device(i: Any) -> Any:
        if type(i) is not int or i not in devices_by_id:
            raise CompiledFormatError(f"the header names device {i!r}, which this process does not have")
        return devices_by_id[i]

    if not isinstance(data, dict) or len(data) != 1:
        raise CompiledFormatError(f"malformed sharding in the header: {data!r:.80}")
    (kind, value), = data.items()
    if kind == "single":
        return SingleDeviceSharding(device(value))
    if kind == "named":
        value = _typed(value, dict, "named sharding")
        ids = np.asarray(value.get("devices"), dtype=object)
        mesh_devices = np.vectorize(device, otypes=[object])(ids) if ids.size else ids
        types = tuple(AxisType[t] for t in value.get("axis_types", ()))
        mesh = Mesh(mesh_devices, tuple(value["axis_names"]), types or None)
        spec = PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in value.get("spec", ())])
        return NamedSharding(mesh, spec)
    if kind == "hlo":
        value = _typed(value, dict, "HLO sharding")
        hlo = hlo_sharding_from_proto_bytes(base64.b64decode(value["proto"]))
        return GSPMDSharding([device(i) for i in value["devices"]], hlo)
    raise CompiledFormatError(f"unknown sharding kind {kind!r} in the header")


def _typed(value: Any, kind: type, what: str) -> Any:
    if not isinstance(value, kind):
        raise CompiledFormatError(f"malformed {what} in the header: expected a {kind.__name__}, got {value!r:.80}")
    return value


# --- the key ----------------------------------------------------------------------------------------------


def _key(devices: Sequence[Any], options: Mapping[str, Any]) -> dict:
    versions = runtime_executable.runtime_versions(devices[0].platform)
    return {**versions, "device_kind": devices[0].device_kind, "device_count": len(devices),
            "compile_options": dict(options)}


# --- writing ------------------------------------------------------------------------------------------


def serialize(compiled: Any) -> bytes:
    """The container bytes of a ``toolkit.stages.Compiled`` (see the module docstring)."""
    lowered = compiled._lowered
    traced = lowered._traced
    plan = compiled._plan
    options = {"num_partitions": plan.num_partitions, "num_replicas": 1, "spmd": plan.num_partitions > 1,
               "use_shardy": plan.partitioner == "shardy",
               "compiler_options": {str(k): v for k, v in (compiled._compiler_options or {}).items()},
               "propagate_output_shardings": plan.output_propagation()}
    in_avals = compiled._in_avals
    signature = {
        "name": traced.fun_name,
        "in_tree": _encode_tree(traced.in_tree), "out_tree": _encode_tree(traced.out_tree),
        "in_avals": [_encode_aval(a) for a in in_avals],
        "out_avals": [_encode_aval(a) for a in compiled._out_avals],
        "arg_paths": list(traced.arg_paths), "kept": list(compiled._kept), "donated": list(traced.donated),
        "devices": [d.id for d in plan.devices], "partitioner": plan.partitioner, "committed": bool(plan.committed),
        "arg_shardings": [_encode_sharding(plan.arg_sharding(i, a), a.ndim) for i, a in enumerate(in_avals)],
        "out_shardings": [_encode_sharding(s, a.ndim) for s, a in zip(compiled._out_shardings, compiled._out_avals)],
    }
    payload = runtime_executable.serialize_executable(compiled._executable)
    header = {"format": "toolkit-compiled", "version": FORMAT_VERSION, "key": _key(plan.devices, options),
              "executable": {"size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()},
              "signature": signature}
    text = json.dumps(header, sort_keys=True).encode("utf-8")
    return MAGIC + struct.pack(">I", len(text)) + text + payload


# --- reading ------------------------------------------------------------------------------------------


def read_header(data: bytes) -> tuple[dict, bytes]:
    """``(header, executable bytes)`` of a container, checked for framing and checksum only."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"deserialize_compiled expects bytes, got {type(data).__name__}")
    data = bytes(data)
    if data[:6] != MAGIC[:6]:
        raise CompiledFormatError("not a toolkit compiled executable (the bytes do not start with the TKEXEC magic)")
    if data[:8] != MAGIC:
        raise CompiledFormatError(f"unsupported toolkit compiled executable format version {data[6:8].hex()} "
                                  f"(this toolkit reads version {FORMAT_VERSION})")
    if len(data) < 12:
        raise CompiledFormatError("truncated toolkit compiled executable: no header length")
    (size,) = struct.unpack(">I", data[8:12])
    if size > _MAX_HEADER or 12 + size > len(data):
        raise CompiledFormatError(f"truncated toolkit compiled executable: the header needs {size} bytes, "
                                  f"{max(len(data) - 12, 0)} are there")
    try:
        header = json.loads(data[12:12 + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise CompiledFormatError(f"corrupt toolkit compiled executable header: {error}") from None
    if not isinstance(header, dict) or header.get("format") != "toolkit-compiled":
        raise CompiledFormatError("corrupt toolkit compiled executable header: not a toolkit-compiled header")
    payload = data[12 + size:]
    info = _typed(header.get("executable"), dict, "executable record")
    if len(payload) != info.get("size"):
        raise CompiledFormatError(f"the executable is {len(payload)} bytes but the header says {info.get('size')}: "
                                  "the file is truncated or corrupt")
    if hashlib.sha256(payload).hexdigest() != info.get("sha256"):
        raise CompiledFormatError("the executable bytes do not match the header's SHA-256 checksum: corrupt data "
                                  "(refusing to load it)")
    for field in ("key", "signature"):
        _typed(header.get(field), dict, field)
    return header, payload


@dataclasses.dataclass(frozen=True)
class CompiledRecord:
    """What a container holds, loaded: the executable and the calling signature a ``Compiled`` needs.

    ``program`` has the signature's types and no equations (what ``out_info`` and the printers read).
    """

    name: str
    program: Program
    in_tree: pytrees.PyTreeDef
    out_tree: pytrees.PyTreeDef
    in_avals: list[ShapedArray]
    out_avals: list[ShapedArray]
    arg_paths: list[str]
    donated: list[bool]
    kept: tuple[int, ...]
    plan: ShardingPlan
    executable: Any
    compiler_options: dict[str, Any] | None


T = TypeVar("T")


def deserialize(data: bytes, build: Callable[[CompiledRecord], T], *,
                compiler_options: Mapping[str, Any] | None = None) -> T:
    """``build`` of the :class:`CompiledRecord` in :func:`serialize`'s bytes (see ``toolkit.deserialize_compiled``).

    ``build`` makes the callable ``Compiled`` (``toolkit.stages``); a
    ``KeyError``, ``TypeError``, ``ValueError`` or ``IndexError`` it raises on
    a malformed signature becomes a :class:`CompiledFormatError`.
    """
    header, payload = read_header(data)
    key, sig = header["key"], header["signature"]
    try:
        device_ids = [int(i) for i in sig["devices"]]
        platform = key["platform"]
        available = {d.id: d for d in runtime_client.backend(platform).devices()}
    except Exception as error:  # a missing field, or a platform this process has no client for
        raise CompiledFormatError(f"cannot load the executable here: {error}") from None
    missing = [i for i in device_ids if i not in available]
    if missing:
        raise CompiledFormatError(f"device count differs: the executable runs on {len(device_ids)} {platform} "
                                  f"device(s) {device_ids}, this process has {len(available)} "
                                  f"(devices {missing} are missing)")
    devices = [available[i] for i in device_ids]
    options = _typed(key.get("compile_options"), dict, "compile options")
    current = _key(devices, options)
    differences = [f"{name}: the executable was compiled for {key.get(name)!r}, this process has {current[name]!r}"
                   for name in ("jaxlib", "platform", "platform_version", "device_kind", "device_count")
                   if key.get(name) != current[name]]
    if compiler_options is not None:
        wanted = {str(k): v for k, v in compiler_options.items()}
        if wanted != options.get("compiler_options"):
            differences.append(f"compiler_options: the executable was compiled with "
                               f"{options.get('compiler_options')!r}, {wanted!r} were asked for")
    if differences:
        raise CompiledFormatError("cannot load the compiled executable here: " + "; ".join(differences))
    try:
        xla_options = runtime_executable.compile_options(
            devices, num_partitions=int(options["num_partitions"]), num_replicas=int(options["num_replicas"]),
            spmd=bool(options["spmd"]), use_shardy=bool(options["use_shardy"]),
            compiler_options=options.get("compiler_options") or None,
            propagate_output_shardings=options.get("propagate_output_shardings"))
    except (KeyError, TypeError, ValueError) as error:
        raise CompiledFormatError(f"malformed compile options in the header: {error}") from None
    executable = runtime_executable.deserialize_executable(payload, devices, xla_options)
    try:
        return build(_record(sig, devices, executable, options))
    except CompiledFormatError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise CompiledFormatError(f"malformed signature in the header: {error!r}") from None


def _record(sig: dict, devices: list, executable: Any, options: dict) -> CompiledRecord:
    by_id = {d.id: d for d in devices}
    in_tree, out_tree = _decode_tree(sig["in_tree"]), _decode_tree(sig["out_tree"])
    in_decoded = [_decode_aval(a) for a in sig["in_avals"]]
    out_decoded = [_decode_aval(a) for a in sig["out_avals"]]
    arg_shardings = [_decode_sharding(s, by_id) for s in sig["arg_shardings"]]
    out_shardings = [_decode_sharding(s, by_id) for s in sig["out_shardings"]]
    if not (len(in_decoded) == in_tree.num_leaves == len(arg_shardings) == len(sig["arg_paths"])
            == len(sig["donated"]) and len(out_decoded) == out_tree.num_leaves == len(out_shardings)):
        raise CompiledFormatError("malformed signature in the header: the trees, types and shardings disagree")
    in_avals = [a.update(sharding=type_sharding(s, a.ndim)) if typed else a
                for (a, typed), s in zip(in_decoded, arg_shardings)]
    out_avals = [a.update(sharding=type_sharding(s, a.ndim)) if typed else a
                 for (a, typed), s in zip(out_decoded, out_shardings)]
    kept = [int(i) for i in sig["kept"]]
    if any(not 0 <= i < len(in_avals) for i in kept):
        raise CompiledFormatError("malformed signature in the header: kept inputs out of range")

    # A program of the right types only (no equations).
    program = Program([], [], [Var(a) for a in in_avals], [Var(a) for a in out_avals], [])
    plan = ShardingPlan(devices, arg_shardings, None, out_tree, [bool(sig["committed"])])
    plan.partitioner = str(sig["partitioner"])
    plan.explicit_out_shardings = out_shardings
    return CompiledRecord(name=str(sig["name"]), program=program, in_tree=in_tree, out_tree=out_tree,
                          in_avals=in_avals, out_avals=out_avals, arg_paths=[str(p) for p in sig["arg_paths"]],
                          donated=[bool(d) for d in sig["donated"]], kept=tuple(kept), plan=plan,
                          executable=executable,
                          compiler_options=dict(options.get("compiler_options") or {}) or None)
