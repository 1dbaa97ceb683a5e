"""toolkit.shard on 8 CPU devices, checked against JAX when it is installed."""

import os

os.environ["TOOLKIT_NUM_CPU_DEVICES"] = "8"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from toolkit.runtime.client import devices  # noqa: E402
from toolkit.shard import (  # noqa: E402
    UNCONSTRAINED, AbstractDevice, AbstractMesh, DuplicateSpecError, GSPMDSharding, Mesh, NamedSharding, P,
    PmapSharding, PositionalSharding, SingleDeviceSharding, as_named_sharding, device_put_sharded, get_mesh,
    host_array, hlo_sharding_from_text, mhlo_sharding_text, named_sharding_from_hlo, set_mesh, sharding_from_hlo,
    shardy_mesh_text, shardy_sharding_text, to_op_sharding)

pytestmark = pytest.mark.multidevice

# If another test module created the CPU backend first with another device
# count, this module re-runs itself in a fresh process instead.
IN_PROCESS = len(devices()) == 8


@pytest.fixture(autouse=True)
def _needs_eight_devices(request):
    if not IN_PROCESS and request.node.name != "test_in_subprocess":
        pytest.skip("covered by test_in_subprocess")


def test_in_subprocess():
    if IN_PROCESS:
        return
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


MESH_SHAPES = [(8,), (2, 4), (4, 2), (1, 8)]
NAMES = {1: ("x",), 2: ("x", "y")}


def specs_for(ndim_mesh):
    if ndim_mesh == 1:
        return [P(), P(None), P("x"), P(None, "x"), P(("x",))]
    return [P(), P("x"), P("y"), P(None, "y"), P("x", "y"), P("y", "x"), P(("x", "y")), P(("y", "x")),
            P(None, ("x", "y")), P(None, ("y", "x"))]


CASES = [(shape, spec) for shape in MESH_SHAPES for spec in specs_for(len(shape))]
ARRAY_SHAPE = (8, 16)


def ours(mesh_shape, spec):
    mesh = Mesh(np.array(devices()).reshape(mesh_shape), NAMES[len(mesh_shape)])
    return NamedSharding(mesh, spec)


def id_map(index_map):
    return {d.id: index for d, index in index_map.items()}


# -- hand-computed expectations (always run) -------------------------------------------

def test_hand_computed_2x4():
    s = ours((2, 4), P("x", "y"))
    assert s.shard_shape((8, 16)) == (4, 4)
    m = id_map(s.devices_indices_map((8, 16)))
    assert m[0] == (slice(0, 4), slice(0, 4))
    assert m[5] == (slice(4, 8), slice(4, 8))
    assert str(s._to_xla_hlo_sharding(2)) == "{devices=[2,4]<=[8]}"
    row = ours((2, 4), P("x"))
    assert str(row._to_xla_hlo_sharding(2)) == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"
    assert id_map(row.devices_indices_map((8, 16)))[3] == (slice(0, 4), slice(None))
    col = ours((2, 4), P(None, "y"))
    assert str(col._to_xla_hlo_sharding(2)) == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    assert id_map(col.devices_indices_map((8, 16)))[5] == (slice(None), slice(4, 8))
    transposed = ours((2, 4), P(("y", "x")))
    # 'y' major: device (x=1, y=0) = id 4 holds row-block 1 of 8.
    assert id_map(transposed.devices_indices_map((8, 16)))[4] == (slice(1, 2), slice(None))
    assert ours((1, 8), P("x")).is_fully_replicated
    assert not ours((1, 8), P("y")).is_fully_replicated
    assert ours((2, 4), P()).is_fully_replicated


def test_hand_computed_equivalence():
    assert ours((1, 8), P("x", "y")).is_equivalent_to(ours((8,), P(None, "x")), 2)
    assert ours((2, 4), P(("x", "y"))).is_equivalent_to(ours((8,), P("x")), 2)
    assert not ours((2, 4), P(("y", "x"))).is_equivalent_to(ours((8,), P("x")), 2)
    assert ours((2, 4), P()).is_equivalent_to(GSPMDSharding.get_replicated(devices()), 2)
    assert not ours((2, 4), P()).is_equivalent_to(GSPMDSharding.get_replicated(devices()[::-1]), 2)


# -- against JAX ---------------------------------------------------------------

@pytest.fixture(scope="module")
def jax_mod():
    jax = pytest.importorskip("jax")
    if len(jax.devices("cpu")) != 8:
        pytest.skip("jax was initialised with another CPU device count")
    return jax


def theirs(jax, mesh_shape, spec):
    from jax.sharding import Mesh as JMesh, NamedSharding as JNamed, PartitionSpec as JP
    mesh = JMesh(np.array(jax.devices("cpu")).reshape(mesh_shape), NAMES[len(mesh_shape)])
    return JNamed(mesh, JP(*spec))


@pytest.mark.parametrize("mesh_shape,spec", CASES, ids=[f"{m}-{s}" for m, s in CASES])
def test_matches_jax(jax_mod, mesh_shape, spec):
    a, b = ours(mesh_shape, spec), theirs(jax_mod, mesh_shape, spec)
    assert id_map(a.devices_indices_map(ARRAY_SHAPE)) == id_map(b.devices_indices_map(ARRAY_SHAPE))
    assert a.shard_shape(ARRAY_SHAPE) == b.shard_shape(ARRAY_SHAPE)
    assert a.is_fully_replicated == b.is_fully_replicated
    assert str(a._to_xla_hlo_sharding(2)) == str(b._to_xla_hlo_sharding(2))
    assert a.num_devices == b.num_devices


def test_equivalence_matches_jax(jax_mod):
    for mesh_a, spec_a in CASES:
        for mesh_b, spec_b in CASES:
            expected = theirs(jax_mod, mesh_a, spec_a).is_equivalent_to(theirs(jax_mod, mesh_b, spec_b), 2)
            got = ours(mesh_a, spec_a).is_equivalent_to(ours(mesh_b, spec_b), 2)
            assert got == expected, (mesh_a, spec_a, mesh_b, spec_b)


# -- conversions --------------------------------------------------------------------

@pytest.mark.parametrize("mesh_shape,spec", CASES, ids=[f"{m}-{s}" for m, s in CASES])
def test_hlo_round_trips(mesh_shape, spec):
    s = ours(mesh_shape, spec)
    hlo = s._to_xla_hlo_sharding(2)
    back = named_sharding_from_hlo(hlo, s.mesh, 2)
    assert back.is_equivalent_to(s, 2)
    assert sharding_from_hlo(mhlo_sharding_text(s, 2), devices()).is_equivalent_to(s, 2)
    assert sharding_from_hlo(to_op_sharding(s, 2), mesh=s.mesh, ndim=2).is_equivalent_to(s, 2)
    positional = sharding_from_hlo(hlo, list(s.mesh.devices.flat), ndim=2, kind="positional")
    assert isinstance(positional, PositionalSharding) and positional.is_equivalent_to(s, 2)
    assert as_named_sharding(GSPMDSharding(list(s.mesh.devices.flat), hlo), 2).is_equivalent_to(s, 2)


def test_hlo_not_expressible_as_spec():
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    with pytest.raises(ValueError, match="cannot be written as a PartitionSpec"):
        named_sharding_from_hlo(hlo_sharding_from_text("{devices=[2,4]0,2,1,3,4,5,6,7}"), mesh, 2)
    with pytest.raises(ValueError, match="not a valid HLO sharding"):
        hlo_sharding_from_text("bogus")


def test_shardy_text():
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    assert shardy_mesh_text(mesh) == 'sdy.mesh @mesh = <["x"=2, "y"=4]>'
    assert shardy_sharding_text(NamedSharding(mesh, P("x")), 2) == '#sdy.sharding<@mesh, [{"x"}, {}]>'
    assert shardy_sharding_text(NamedSharding(mesh, P(("y", "x"), UNCONSTRAINED)), 2) == \
        '#sdy.sharding<@mesh, [{"y", "x"}, {?}]>'
    assert shardy_sharding_text(NamedSharding(mesh, P()), 0) == "#sdy.sharding<@mesh, []>"


def test_shardy_text_parses_in_mlir():
    from jaxlib.mlir import ir
    from toolkit.ir.context import make_context
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    text = (shardy_mesh_text(mesh) + "\nfunc.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = "
            + shardy_sharding_text(NamedSharding(mesh, P("x", "y")), 2) + "}) -> tensor<8x8xf32> {\n"
            "  return %arg0 : tensor<8x8xf32>\n}\n")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        assert module.operation.verify()


# -- other sharding kinds -----------------------------------------------------------

def test_single_device():
    d = devices()[3]
    s = SingleDeviceSharding(d)
    assert s.device_set == {d} and s.num_devices == 1 and s.is_fully_replicated
    assert s.devices_indices_map((2, 3)) == {d: (slice(None), slice(None))}
    assert s.shard_shape((2, 3)) == (2, 3)
    assert s.with_memory_kind("pinned_host").memory_kind == "pinned_host"
    assert s == SingleDeviceSharding(d) and hash(s) == hash(SingleDeviceSharding(d))
    assert s.addressable_devices == {d} and s.is_fully_addressable


def test_positional():
    s = PositionalSharding(devices())
    assert s.shape == (8,) and s.ndim == 1
    grid = s.reshape(4, 2)
    assert grid.shard_shape((8, 8)) == (2, 4)
    assert grid.T.shape == (2, 4)
    assert grid.replicate(0).shape == (1, 2)
    assert grid.replicate(0).shard_shape((8, 8)) == (8, 4)
    assert grid.replicate(1, keepdims=False).shape == (4,)
    assert grid.replicate().is_fully_replicated
    # device order follows the positions: (row 1, col 0) is device 2.
    assert id_map(grid.devices_indices_map((8, 8)))[2] == (slice(2, 4), slice(0, 4))
    assert grid.is_equivalent_to(ours((4, 2), P("x", "y")), 2)
    assert grid.replicate(1).is_equivalent_to(ours((4, 2), P("x")), 2)
    assert grid.T.is_equivalent_to(ours((4, 2), P("y", "x")), 2)
    with pytest.raises(ValueError, match="rank 3"):
        grid.shard_shape((8, 8, 8))


def test_pmap_sharding():
    s = PmapSharding.default((8, 3))
    assert s.shard_shape((8, 3)) == (3,)
    m = id_map(s.devices_indices_map((8, 3)))
    assert m[5] == (5, slice(None))
    assert s.sharding_spec.sharding[0].size == 8
    assert len(s.devices) == 8 and not s.is_fully_replicated
    r = PmapSharding.default((4, 3), sharded_dim=None, devices=devices()[:2])
    assert r.is_fully_replicated and r.shard_shape((4, 3)) == (4, 3)
    with pytest.raises(ValueError, match="dimension 0"):
        PmapSharding.default((3, 2), devices=devices()[:2])
    arr = device_put_sharded(np.arange(24.0).reshape(8, 3), s)
    np.testing.assert_array_equal(np.asarray(arr._arrays[2]), [[6.0, 7.0, 8.0]])


def test_gspmd():
    hlo = hlo_sharding_from_text("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
    s = GSPMDSharding(devices(), hlo)
    assert s.shard_shape((8, 8)) == (4, 8)
    assert s == GSPMDSharding(devices(), to_op_sharding(s, 2))
    assert not s.is_fully_replicated
    assert s.with_memory_kind("device").memory_kind == "device"
    with pytest.raises(ValueError, match="spans 8 devices but 2"):
        GSPMDSharding(devices()[:2], hlo)


# -- mesh ---------------------------------------------------------------------------

def test_mesh_members():
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    assert list(mesh.shape.items()) == [("x", 2), ("y", 4)]
    assert mesh.size == 8 and mesh.axis_sizes == (2, 4)
    assert mesh.device_ids.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert mesh.abstract_mesh.shape_tuple == AbstractMesh((2, 4), ("x", "y")).shape_tuple
    assert mesh.abstract_mesh.abstract_device == AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu")
    assert mesh == Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    assert get_mesh() is None
    with mesh:
        assert get_mesh() is mesh
        with set_mesh(Mesh(np.array(devices()), "z")) as inner:
            assert get_mesh() is inner
        assert get_mesh() is mesh
    assert get_mesh() is None


def test_abstract_mesh_sharding():
    s = NamedSharding(AbstractMesh((2, 4), ("x", "y")), P("x"))
    assert s.shard_shape((8, 8)) == (4, 8)
    assert str(s._to_xla_hlo_sharding(2)) == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"
    with pytest.raises(ValueError, match="AbstractMesh"):
        s.device_set


# -- errors -----------------------------------------------------------------------

def test_error_axis_not_in_mesh():
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    with pytest.raises(ValueError, match=r"Resource axis: z of P\('x', 'z'\) is not found in mesh: \('x', 'y'\)\."):
        NamedSharding(mesh, P("x", "z"))


def test_error_axis_used_twice():
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    # JAX's DuplicateSpecError: an Exception, not a ValueError, with JAX's words.
    with pytest.raises(DuplicateSpecError, match=r"but P\('x', \('y', 'x'\)\) has duplicate entries for `x`") as error:
        NamedSharding(mesh, P("x", ("y", "x")))
    assert not isinstance(error.value, ValueError) and error.value.pspec == P("x", ("y", "x"))


def test_error_spec_longer_than_rank():
    s = ours((2, 4), P("x", None, "y"))
    with pytest.raises(ValueError, match=r"rank 2; dimensions \[2\]"):
        s.shard_shape((8, 8))
    with pytest.raises(ValueError, match="rank 2"):
        device_put_sharded(np.zeros((8, 8)), s)
    with pytest.raises(ValueError, match="PartitionSpec()"):
        ours((2, 4), P("x"))._to_xla_hlo_sharding(0)


def test_error_indivisible_dimension():
    s = ours((2, 4), P(None, "y"))
    with pytest.raises(ValueError, match=r"dimension 1 \(size 6\) 4 ways"):
        s.shard_shape((8, 6))
    with pytest.raises(ValueError, match="dimension 1"):
        device_put_sharded(np.zeros((8, 6)), s)
    with pytest.raises(ValueError, match="dimension 0"):
        ours((8,), P("x")).devices_indices_map((6,))


class _FakeDevice:
    def __init__(self, id, platform):
        self.id, self.platform = id, platform


def test_error_mixed_platforms():
    fake = [_FakeDevice(0, "cpu"), _FakeDevice(1, "cuda")]
    with pytest.raises(ValueError, match=r"one platform.*\['cpu', 'cuda'\]"):
        Mesh(np.array(fake, dtype=object), ("x",))
    with pytest.raises(ValueError, match="one platform"):
        GSPMDSharding(fake, hlo_sharding_from_text("{replicated}"))


def test_error_mesh_shape():
    with pytest.raises(ValueError, match="ndim 1"):
        Mesh(np.array(devices()), ("x", "y"))
    with pytest.raises(ValueError, match="distinct"):
        Mesh(np.array([devices()[0], devices()[0]], dtype=object), ("x",))
    with pytest.raises(ValueError, match="'x' appears more than once|x appears more than once"):
        Mesh(np.array(devices()).reshape(2, 4), ("x", "x"))
    with pytest.raises(ValueError, match="memory kind 'nope'"):
        NamedSharding(Mesh(np.array(devices()), "x"), P(), memory_kind="nope")


# -- placement --------------------------------------------------------------------

@pytest.mark.parametrize("mesh_shape,spec", CASES, ids=[f"{m}-{s}" for m, s in CASES])
def test_device_put_round_trip(mesh_shape, spec):
    host = np.arange(8 * 16, dtype=np.float32).reshape(ARRAY_SHAPE)
    s = ours(mesh_shape, spec)
    array = device_put_sharded(host, s)
    np.testing.assert_array_equal(host_array(array), host)
    index_map = s.devices_indices_map(ARRAY_SHAPE)
    pieces = array._arrays
    assert len(pieces) == 8
    for piece in pieces:
        device = list(piece.devices())[0]
        np.testing.assert_array_equal(np.asarray(piece), host[index_map[device]])
        assert np.asarray(piece).shape == s.shard_shape(ARRAY_SHAPE)
