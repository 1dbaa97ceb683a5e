"""``Exported`` avals carry a memory space, read and written in the wire format as JAX 0.10.2 does.

JAX ships 17 saved ``Exported`` serializations with its back-compat data
(``export_with_*.py``); four of them have arguments and results in host
memory. Each is deserialized here by toolkit and by JAX in the same process
and the memory spaces compared; toolkit-written exports with ``pinned_host``
arguments are read and called by JAX.
"""

from __future__ import annotations

import importlib
import os

os.environ["TOOLKIT_NUM_CPU_DEVICES"] = "8"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax = pytest.importorskip("jax")

import toolkit  # noqa: E402
from toolkit import export as texport  # noqa: E402
from toolkit.core import pytrees  # noqa: E402
from toolkit.core.avals import ShapedArray  # noqa: E402
from toolkit.export import serialization  # noqa: E402
from toolkit.export.exported import Exported  # noqa: E402
from toolkit.export.memory_spaces import (  # noqa: E402
    MemorySpace, ShapedArrayInMemory, memory_kind_to_space, memory_space_of, memory_space_to_kind,
    with_memory_space)
from toolkit.shard import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

DATA = "jax._src.internal_test_util.export_back_compat_test_data."
MODULES = ("export_with_memory_space", "export_with_multiple_meshes", "export_with_specified_sharding",
           "export_with_unspecified_sharding")


def _saved() -> list[tuple[str, bytes]]:
    found = []
    for name in MODULES:
        for i, entry in enumerate(importlib.import_module(DATA + name).serializations):
            found.append((f"{name}[{i}]@v{entry['serialization_version']}", bytes(entry["exported_serialized"])))
    return found


SAVED = _saved()
HOST_SAVED = [(n, b) for n, b in SAVED if n.startswith("export_with_memory_space")]


def _spaces(avals) -> list[str]:
    return [memory_space_of(a).name for a in avals]


def test_jax_saves_17_serializations_and_4_with_host_memory():
    assert len(SAVED) == 17 and len(HOST_SAVED) == 4


@pytest.mark.parametrize("name,blob", SAVED, ids=[n for n, _ in SAVED])
def test_saved_serializations_read_with_jaxs_memory_spaces(name, blob):
    mine, theirs = texport.deserialize(blob), jax.export.deserialize(blob)
    assert _spaces(mine.in_avals) == [a.memory_space.name for a in theirs.in_avals]
    assert _spaces(mine.out_avals) == [a.memory_space.name for a in theirs.out_avals]
    assert [a.shape for a in mine.in_avals] == [a.shape for a in theirs.in_avals]
    assert [repr(a) for a in mine.in_avals + mine.out_avals] == [
        repr(a) for a in theirs.in_avals + theirs.out_avals]
    if theirs._in_named_shardings is not None and mine._in_named_shardings is not None:
        assert [None if s is None else s.memory_kind for s in mine._in_named_shardings] == [
            None if s is None else s.memory_kind for s in theirs._in_named_shardings]


@pytest.mark.parametrize("name,blob", HOST_SAVED, ids=[n for n, _ in HOST_SAVED])
def test_host_memory_serializations_are_host_and_survive_toolkits_rewrite(name, blob):
    mine = texport.deserialize(blob)
    assert _spaces(mine.in_avals) == _spaces(mine.out_avals) == ["Host"]
    assert isinstance(mine.in_avals[0], ShapedArrayInMemory) and mine.in_avals[0].memory_space is MemorySpace.Host
    rewritten = mine.serialize()
    again, theirs = texport.deserialize(rewritten), jax.export.deserialize(rewritten)
    assert _spaces(again.in_avals) == _spaces(again.out_avals) == ["Host"]
    assert [a.memory_space.name for a in theirs.in_avals + theirs.out_avals] == ["Host", "Host"]


@pytest.mark.parametrize("name,blob", HOST_SAVED, ids=[n for n, _ in HOST_SAVED])
def test_calling_a_host_memory_export_for_other_platforms_is_refused_as_in_jax(name, blob):
    # These were exported for TPU/GPU: neither library calls them on CPU (the platform check, not memory).
    mine, theirs = texport.deserialize(blob), jax.export.deserialize(blob)
    x = np.ones((2, 3), np.float32)
    jmesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    j_x = jax.device_put(x, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x"),
                                                       memory_kind="pinned_host"))
    t_mesh = toolkit.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    t_x = toolkit.device_put(x, NamedSharding(t_mesh, P("x"), memory_kind="pinned_host"))
    with pytest.raises(ValueError, match="platform"):
        theirs.call(j_x)
    with pytest.raises(ValueError, match="platform"):
        mine.call(t_x)


def _host_export():
    mesh = toolkit.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    host = NamedSharding(mesh, P("x"), memory_kind="pinned_host")
    fn = toolkit.jit(lambda x: x * 2, in_shardings=host, out_shardings=host)
    return texport.export(fn)(toolkit.ShapeDtypeStruct((4, 2), np.float32, sharding=host)), host


def test_toolkit_export_with_a_pinned_host_argument_is_read_by_jax_with_host_memory():
    exp, _ = _host_export()
    assert _spaces(exp.in_avals) == _spaces(exp.out_avals) == ["Host"]
    text = exp.mlir_module()
    assert 'mhlo.memory_kind = "pinned_host"' in text and "annotate_device_placement" in text
    theirs = jax.export.deserialize(exp.serialize())
    assert [a.memory_space.name for a in theirs.in_avals + theirs.out_avals] == ["Host", "Host"]
    assert [s.memory_kind for s in theirs._in_named_shardings] == ["pinned_host"]


def test_toolkit_export_with_pinned_host_runs_in_jax_and_toolkit_alike():
    exp, host = _host_export()
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    theirs = jax.export.deserialize(exp.serialize())
    jmesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    j_out = theirs.call(jax.device_put(x, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x"),
                                                                      memory_kind="pinned_host")))
    t_out = exp.call(toolkit.device_put(x, host))
    assert t_out.sharding.memory_kind == j_out.sharding.memory_kind == "pinned_host"
    np.testing.assert_array_equal(np.asarray(t_out), np.asarray(j_out))
    np.testing.assert_array_equal(np.asarray(t_out), x * 2)


def _bare_exported(aval: ShapedArray) -> Exported:
    """A one-device export of the identity on ``aval`` with no shardings (the aval's space is all there is)."""
    template = texport.export(toolkit.jit(lambda v: v))(np.zeros(aval.shape, aval.dtype))
    return Exported(
        fun_name="ident", in_tree=pytrees.tree_structure(((0,), {})), in_avals=(aval,),
        out_tree=pytrees.tree_structure(0), out_avals=(aval,), in_shardings_hlo=(None,), out_shardings_hlo=(None,),
        nr_devices=1, platforms=("cpu",), ordered_effects=(), unordered_effects=(), disabled_safety_checks=(),
        mlir_module_serialized=template.mlir_module_serialized,
        calling_convention_version=template.calling_convention_version, module_kept_var_idx=(0,),
        uses_global_constants=False)


@pytest.mark.parametrize("space", list(MemorySpace))
def test_every_memory_space_round_trips_through_the_wire_format_as_jax_reads_it(space):
    aval = with_memory_space(ShapedArray((3,), np.float32), space)
    exp = _bare_exported(aval)
    blob = exp.serialize()
    assert _spaces(texport.deserialize(blob).in_avals) == [space.name]
    assert [a.memory_space.name for a in jax.export.deserialize(blob).in_avals] == [space.name]
    assert texport.deserialize(blob) == exp


def test_an_unknown_memory_space_code_is_a_clear_error(monkeypatch):
    exp = _bare_exported(ShapedArray((3,), np.float32))

    class Bogus:
        value = 7

    monkeypatch.setattr(serialization, "memory_space_of", lambda aval: Bogus)
    blob = exp.serialize()
    monkeypatch.undo()
    with pytest.raises(ValueError, match="unknown memory space code 7"):
        texport.deserialize(blob)


def test_memory_space_helpers_match_jax():
    from jax._src import core as jcore

    for kind in ("device", "pinned_host", "unpinned_host", None):
        assert memory_kind_to_space(kind).name == jcore.mem_kind_to_space(kind).name
    for space in (MemorySpace.Device, MemorySpace.Host):
        assert memory_space_to_kind(space) == jcore.mem_space_to_kind(jcore.MemorySpace[space.name])
    with pytest.raises(ValueError, match="has no memory kind"):
        memory_space_to_kind(MemorySpace.Any)
    host = jcore.ShapedArray((2, 3), np.float32, memory_space=jcore.MemorySpace.Host)
    assert memory_space_of(host) is MemorySpace.Host
    mine = with_memory_space(ShapedArray((2, 3), np.float32), MemorySpace.Host)
    assert repr(mine) == repr(host) and str(mine) == str(host)


def test_in_memory_avals_compare_by_memory_space_too():
    plain = ShapedArray((2,), np.float32)
    host = with_memory_space(plain, MemorySpace.Host)
    assert host != plain and plain != host and host == with_memory_space(plain, MemorySpace.Host)
    assert hash(host) == hash(with_memory_space(plain, MemorySpace.Host))
    assert with_memory_space(host, MemorySpace.Device) == plain
    assert host.update(shape=(3,)).memory_space is MemorySpace.Host
    assert with_memory_space(plain, MemorySpace.Device) is plain
    with pytest.raises(ValueError, match="non-device MemorySpace"):
        ShapedArrayInMemory((2,), np.float32, memory_space=MemorySpace.Device)
    with pytest.raises(TypeError, match="must be a MemorySpace"):
        with_memory_space(plain, "Host")
    with pytest.raises(ValueError, match="unknown memory space"):
        memory_space_of(type("A", (), {"memory_space": "elsewhere"})())
