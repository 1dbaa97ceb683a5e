"""toolkit.make_mesh against jax.make_mesh (JAX 0.10: axis types default to Explicit), and members of meshes,
shardings and ShapeDtypeStruct against JAX's."""

import numpy as np
import pytest

import toolkit
from toolkit.shard import AxisType, Mesh, get_abstract_mesh, get_mesh

pytestmark = pytest.mark.multidevice


@pytest.fixture(autouse=True)
def _eight():
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")


@pytest.mark.parametrize("shape,names", [((2, 4), ("x", "y")), ((8,), ("d",)), ((4, 2), ("a", "b")),
                                         ((2, 2), ("x", "y")), ((1, 8), ("p", "q")), ((2, 2, 2), ("a", "b", "c"))])
def test_matches_jax(jx, shape, names):
    t, j = toolkit.make_mesh(shape, names), jx.make_mesh(shape, names)
    assert t.axis_names == j.axis_names
    assert t.axis_sizes == tuple(j.axis_sizes)
    assert [a.name for a in t.axis_types] == [a.name for a in j.axis_types] == ["Explicit"] * len(shape)
    assert t.device_ids.tolist() == j.device_ids.tolist()
    assert str(t) == str(j)


def test_axis_types_and_devices(jx):
    from jax.sharding import AxisType as JAxisType
    t = toolkit.make_mesh((2, 4), ("x", "y"), (AxisType.Auto, AxisType.Explicit))
    j = jx.make_mesh((2, 4), ("x", "y"), (JAxisType.Auto, JAxisType.Explicit))
    assert str(t) == str(j)
    assert t.auto_axes == ("x",) and t.explicit_axes == ("y",)
    devs = toolkit.devices()[4:]
    t = toolkit.make_mesh((2, 2), ("x", "y"), devices=devs)
    assert t.device_ids.tolist() == [[4, 5], [6, 7]]


def test_errors(jx):
    with pytest.raises(ValueError, match=r"Number of devices 8 must be >= the product of mesh_shape \(3, 4\)"):
        toolkit.make_mesh((3, 4), ("a", "b"))
    with pytest.raises(ValueError):
        jx.make_mesh((3, 4), ("a", "b"))
    with pytest.raises(ValueError, match="axis shapes"):
        toolkit.make_mesh((2, 4), ("x",))
    with pytest.raises(ValueError, match="unique"):
        toolkit.make_mesh((2, 4), ("x", "x"))


def test_set_mesh_toplevel():
    mesh = toolkit.make_mesh((2, 4), ("x", "y"))
    assert isinstance(mesh, Mesh)
    assert get_mesh() is None
    with toolkit.set_mesh(mesh) as m:
        assert m is mesh and get_mesh() is mesh
        assert get_abstract_mesh() == mesh.abstract_mesh  # with its AbstractDevice, as JAX's
        assert get_abstract_mesh().shape_tuple == (("x", 2), ("y", 4))
        assert get_abstract_mesh().axis_types == (AxisType.Explicit,) * 2
    assert get_mesh() is None
    assert toolkit.AxisType is AxisType


@pytest.mark.parametrize("types", [None, ("Auto", "Auto"), ("Explicit", "Explicit"), ("Manual", "Manual"),
                                   ("Explicit", "Auto")])
def test_axis_type_predicates_and_is_scalar_as_jax(types):
    jax = pytest.importorskip("jax")
    ours = toolkit.sharding.Mesh(np.array(toolkit.devices()[:4]).reshape(2, 2), ("a", "b"),
                                 axis_types=None if types is None else
                                 tuple(getattr(toolkit.sharding.AxisType, t) for t in types))
    theirs = jax.sharding.Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"),
                               axis_types=None if types is None else
                               tuple(getattr(jax.sharding.AxisType, t) for t in types))
    names = ("are_all_axes_auto", "are_all_axes_explicit", "are_all_axes_manual", "is_scalar")
    assert [getattr(ours, n) for n in names] == [getattr(theirs, n) for n in names]
    assert [getattr(ours.abstract_mesh, n) for n in names[:3]] == [getattr(theirs.abstract_mesh, n) for n in names[:3]]
    scalar, jax_scalar = toolkit.sharding.Mesh(np.array(toolkit.devices()[0]), ()), jax.sharding.Mesh(
        np.array(jax.devices()[0]), ())
    assert scalar.is_scalar == jax_scalar.is_scalar is True
    assert scalar.are_all_axes_auto == jax_scalar.are_all_axes_auto is False  # no axes: none match, as JAX's


def test_replicated_axes_and_has_addressable_devices_as_jax():
    jax = pytest.importorskip("jax")
    ours = toolkit.sharding.Mesh(np.array(toolkit.devices()[:4]).reshape(2, 2), ("a", "b"))
    theirs = jax.sharding.Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
    for spec in [(), ("a",), (None, "b"), (("a", "b"),), ("b", toolkit.sharding.PartitionSpec.UNCONSTRAINED)]:
        jspec = tuple(jax.sharding.PartitionSpec.UNCONSTRAINED if s is toolkit.sharding.PartitionSpec.UNCONSTRAINED
                      else s for s in spec)
        mine = toolkit.sharding.NamedSharding(ours, toolkit.sharding.PartitionSpec(*spec))
        jaxs = jax.sharding.NamedSharding(theirs, jax.sharding.PartitionSpec(*jspec))
        assert mine.replicated_axes == jaxs.replicated_axes, spec
        assert mine.has_addressable_devices == jaxs.has_addressable_devices is True
    single = toolkit.sharding.SingleDeviceSharding(toolkit.devices()[1])
    assert single.has_addressable_devices is jax.sharding.SingleDeviceSharding(jax.devices()[0]).has_addressable_devices


def test_shape_dtype_struct_update_as_jax():
    jax = pytest.importorskip("jax")
    ours, theirs = toolkit.ShapeDtypeStruct((2, 3), np.float32), jax.ShapeDtypeStruct((2, 3), np.float32)
    for changes in [dict(shape=(4,)), dict(dtype=np.int32, weak_type=True), dict(), dict(is_ref=False)]:
        mine, jaxs = ours.update(**changes), theirs.update(**changes)
        assert (mine.shape, mine.dtype, mine.weak_type) == (jaxs.shape, jaxs.dtype, jaxs.weak_type)
    mesh = toolkit.sharding.Mesh(np.array(toolkit.devices()[:2]), ("x",))
    sharded = ours.update(sharding=toolkit.sharding.NamedSharding(mesh, toolkit.sharding.PartitionSpec("x")))
    assert sharded.sharding.spec == toolkit.sharding.PartitionSpec("x") and ours.sharding is None
    with pytest.raises(TypeError, match=r"unexpected field\(s\) \['shpe'\]"):
        ours.update(shpe=(1,))  # JAX ignores a misspelt name; toolkit says so
    with pytest.raises(TypeError, match="is_ref is not supported"):
        ours.update(is_ref=True)
