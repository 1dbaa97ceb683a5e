"""The Exported record, DisabledSafetyCheck, constants and the recorded shardings."""

from __future__ import annotations

import dataclasses
import numpy as np
import pytest

from _exported_helpers import artifact, make_exported
from toolkit import export
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray
from toolkit.export import DisabledSafetyCheck, Effect, ExportedAbstractMesh, ExportedNamedSharding


def test_constants():
    assert export.minimum_supported_calling_convention_version == 9
    assert export.maximum_supported_calling_convention_version == 10
    assert export.serialization_version == 11
    assert export.serialization_version_stored == 3
    assert export.minimum_supported_serialization_version == 1
    assert export.maximum_supported_serialization_version == 11
    assert export.default_export_platform() == "cpu"


def test_disabled_safety_check():
    cc = DisabledSafetyCheck.custom_call("my_target")
    assert cc.is_custom_call() == "my_target"
    assert str(cc) == repr(cc) == "custom_call:my_target"
    assert DisabledSafetyCheck.platform().is_custom_call() is None
    assert str(DisabledSafetyCheck.platform()) == "platform"
    assert str(DisabledSafetyCheck.shape_assertions()) == "shape_assertions"
    assert DisabledSafetyCheck.platform() == DisabledSafetyCheck.platform()
    assert cc != DisabledSafetyCheck.custom_call("other")
    assert len({cc, DisabledSafetyCheck.custom_call("my_target"), DisabledSafetyCheck.platform()}) == 2
    with pytest.raises(ValueError, match="non-empty string"):
        DisabledSafetyCheck.custom_call("")


def test_fields_normalised_and_frozen():
    exp = make_exported(platforms=["cpu", "cuda"], module_kept_var_idx=[0, 1], mlir_module_serialized=bytearray(artifact()))
    assert exp.platforms == ("cpu", "cuda")
    assert exp.module_kept_var_idx == (0, 1)
    assert type(exp.mlir_module_serialized) is bytes
    with pytest.raises(Exception):
        exp.fun_name = "g"  # type: ignore[misc]


def test_equality_ignores_get_vjp():
    a = make_exported()
    b = make_exported(_get_vjp=lambda e: a)
    assert a == b
    assert not a.has_vjp() and b.has_vjp()
    assert b.vjp() is a


def test_vjp_missing_is_a_clear_error():
    with pytest.raises(ValueError, match="No VJP is available for the Exported 'f'"):
        make_exported().vjp()


def test_serialize_with_vjp_order_needs_vjp():
    with pytest.raises(ValueError, match="has no VJP"):
        make_exported().serialize(vjp_order=1)
    with pytest.raises(ValueError, match="vjp_order"):
        make_exported().serialize(vjp_order=-1)


@pytest.mark.parametrize("overrides, message", [
    (dict(in_avals=(ShapedArray((3,), np.float32),)), "in_tree has 2 leaves but there are 1 in_avals"),
    (dict(out_tree=pytrees.tree_structure([1])), "out_tree has 1 leaves"),
    (dict(module_kept_var_idx=(1, 0)), "module_kept_var_idx"),
    (dict(module_kept_var_idx=(0, 5)), "module_kept_var_idx"),
    (dict(in_shardings_hlo=(None,)), "in_shardings_hlo has 1 entries for 2 in_avals"),
    (dict(_in_named_shardings=(None,)), "_in_named_shardings has 1 entries"),
])
def test_inconsistent_fields_rejected(overrides, message):
    with pytest.raises(ValueError, match=message):
        make_exported(**overrides)


def test_wrong_field_types_rejected():
    with pytest.raises(TypeError, match="ShapedArray"):
        make_exported(in_avals=((3,), (2, 4)))
    with pytest.raises(TypeError, match="PyTreeDef"):
        make_exported(in_tree=((1, 2), {}))
    with pytest.raises(TypeError, match="DisabledSafetyCheck"):
        make_exported(disabled_safety_checks=("platform",))


def test_mlir_module_text():
    text = make_exported().mlir_module()
    assert "func.func public @main" in text
    assert "stablehlo.add" in text


def test_mlir_module_bad_artifact():
    with pytest.raises(ValueError, match="not a StableHLO portable artifact"):
        make_exported(mlir_module_serialized=b"garbage").mlir_module()
    with pytest.raises(ValueError, match=r"cannot read the StableHLO portable artifact \(written by StableHLO 1\.15\.0\)"):
        make_exported(mlir_module_serialized=artifact()[:40]).mlir_module()


def test_str_and_repr_are_short():
    exp = make_exported()
    assert str(exp) == "Exported(fun_name=f, ...)"
    r = repr(exp)
    assert "fun_name='f'" in r and "bytes>" in r and "float32[3]" in r
    assert len(r) < 500


def test_call_runs_the_module():
    # Exported.call itself is tested in test_export_function.py.
    x, y = make_exported().call(np.ones(3, np.float32), np.ones((2, 4), np.int32))
    np.testing.assert_array_equal(np.asarray(x), np.full(3, 2.0, np.float32))
    np.testing.assert_array_equal(np.asarray(y), np.ones((2, 4), np.int32))


def test_effects():
    e = Effect("<class 'jax._src.debugging.OrderedDebugEffect'>")
    assert str(e) == e.type_name and e == Effect(e.type_name)
    exp = make_exported(ordered_effects=(e,))
    assert exp.ordered_effects == (e,)
    with pytest.raises(ValueError, match="non-empty string"):
        export.register_effect_type_name("")


# -- shardings -----------------------------------------------------------------

MESH = ExportedAbstractMesh((2, 4), ("x", "y"))


def test_named_shardings_derive_hlo_shardings():
    s0 = ExportedNamedSharding(MESH, ("x", "y"), memory_kind="device")
    exp = make_exported(in_avals=(ShapedArray((8,), np.float32), ShapedArray((8, 8), np.int32)),
                        _in_named_shardings=(None, s0), _out_named_shardings=(None, None))
    # Recorded as given (JAX 0.10.2 leaves the HloSharding fields None beside named shardings); derived on use.
    assert exp.in_shardings_hlo == (None, None) and exp.out_shardings_hlo == (None, None)
    assert exp._hlo_shardings("in")[0] is None
    assert str(exp._hlo_shardings("in")[1]) == "{devices=[2,4]<=[8]}"
    assert exp._hlo_shardings("out") == (None, None)
    assert exp == dataclasses.replace(exp, in_shardings_hlo=exp._hlo_shardings("in"))


@pytest.mark.parametrize("partitions, axis_types, ndim, expected", [
    ((), None, 2, "{replicated}"),
    (("x", "y"), None, 2, "{devices=[2,4]<=[8]}"),
    (("x", None), None, 2, "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
    (("y", "x"), None, 2, "{devices=[4,2]<=[2,4]T(1,0)}"),
    ((("x", "y"),), None, 1, "{devices=[8]<=[8]}"),
    ((None, "y"), ("Manual", "Auto"), 2, "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}"),
])
def test_named_to_hlo_sharding(partitions, axis_types, ndim, expected):
    mesh = ExportedAbstractMesh((2, 4), ("x", "y"), axis_types)
    assert str(ExportedNamedSharding(mesh, partitions).to_hlo_sharding(ndim)) == expected


def test_named_to_hlo_agrees_with_toolkit_shard():
    shard = pytest.importorskip("toolkit.shard")
    mesh = shard.AbstractMesh((2, 4), ("x", "y"))
    for spec in [(), ("x",), ("y", "x"), (None, ("x", "y")), ("x", None, "y")]:
        ours = ExportedNamedSharding(MESH, spec).to_hlo_sharding(3)
        theirs = shard.NamedSharding(mesh, shard.PartitionSpec(*spec))._to_xla_hlo_sharding(3)
        assert ours == theirs, spec


def test_exported_named_sharding_validation():
    with pytest.raises(ValueError, match="not in the mesh axes"):
        ExportedNamedSharding(MESH, ("z",))
    with pytest.raises(ValueError, match="more than once"):
        ExportedNamedSharding(MESH, ("x", "x"))
    with pytest.raises(ValueError, match="partition spec entry"):
        ExportedNamedSharding(MESH, (3,))
    with pytest.raises(ValueError, match="equal lengths"):
        ExportedAbstractMesh((2,), ("x", "y"))
    with pytest.raises(ValueError, match="Unknown mesh axis type"):
        ExportedAbstractMesh((2,), ("x",), ("Sideways",))
    with pytest.raises(ValueError, match="more entries than the array rank"):
        ExportedNamedSharding(MESH, ("x", "y")).to_hlo_sharding(1)


def test_named_sharding_from_toolkit_shard_objects():
    shard = pytest.importorskip("toolkit.shard")
    mesh = shard.AbstractMesh((2, 4), ("x", "y"), (shard.AxisType.Explicit, shard.AxisType.Auto))
    s = shard.NamedSharding(mesh, shard.PartitionSpec("x", ("y",)))
    exp = make_exported(in_avals=(ShapedArray((8, 8), np.float32), ShapedArray((2, 4), np.int32)),
                        _in_named_shardings=(s, None), _out_named_shardings=(None, None))
    recorded = exp._in_named_shardings[0]
    assert isinstance(recorded, ExportedNamedSharding)
    assert recorded.mesh == ExportedAbstractMesh((2, 4), ("x", "y"), ("Explicit", "Auto"))
    assert recorded.partitions == ("x", "y")


def test_in_shardings_jax_over_a_mesh():
    shard = pytest.importorskip("toolkit.shard")
    s0 = ExportedNamedSharding(MESH, ("x", None))
    exp = make_exported(in_avals=(ShapedArray((8, 8), np.float32), ShapedArray((2, 4), np.int32)),
                        _in_named_shardings=(s0, None), _out_named_shardings=(s0, None),
                        out_avals=(ShapedArray((8, 8), np.float32), ShapedArray((2, 4), np.int32)))
    mesh = shard.AbstractMesh((2, 4), ("x", "y"))
    ins = exp.in_shardings_jax(mesh)
    assert ins[1] is None
    assert isinstance(ins[0], shard.NamedSharding) and ins[0].spec == shard.PartitionSpec("x", None)
    assert ins[0].mesh == mesh
    assert exp.out_shardings_jax(mesh)[0] == ins[0]
    with pytest.raises(ValueError, match="does not match the mesh used for export"):
        exp.in_shardings_jax(shard.AbstractMesh((4, 2), ("x", "y")))


def test_in_shardings_jax_unspecified_and_hlo_only():
    assert make_exported().in_shardings_jax(None) == (None, None)
    from toolkit.runtime.shardings import HloSharding

    exp = make_exported(in_shardings_hlo=(HloSharding.replicate(), None))
    with pytest.raises(NotImplementedError, match="HloShardings only"):
        exp.in_shardings_jax(None)
