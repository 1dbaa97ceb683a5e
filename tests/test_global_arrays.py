"""Global arrays in one process (8 CPU devices), checked against jax 0.10.2 on the same meshes and specs:
make_array_from_callback / _single_device_arrays / _process_local_data, Array's shard properties, the
errors, and toolkit.multihost with one process."""

import os

os.environ.setdefault("TOOLKIT_NUM_CPU_DEVICES", "8")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import toolkit  # noqa: E402
from toolkit import multihost  # noqa: E402
from toolkit.shard import GSPMDSharding, Mesh, NamedSharding, P, SingleDeviceSharding  # noqa: E402

pytestmark = pytest.mark.multidevice

SPECS = [P(), P("x"), P("y"), P(None, "y"), P("x", "y"), P("y", "x"), P(("x", "y")), P(None, ("y", "x"))]
SHAPE = (8, 16)
DATA = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)


@pytest.fixture(scope="module")
def jax_mod():
    jax = pytest.importorskip("jax")
    if len(jax.devices("cpu")) != 8:
        pytest.skip("jax was initialised with another CPU device count")
    return jax


def _ours(mesh, spec):
    return NamedSharding(mesh, spec)


def _theirs(jax, spec):
    from jax.sharding import Mesh as JMesh, NamedSharding as JNamed
    return JNamed(JMesh(np.array(jax.devices("cpu")).reshape(2, 4), ("x", "y")), spec_to_jax(spec))


def spec_to_jax(spec):
    from jax.sharding import PartitionSpec as JP
    return JP(*tuple(spec))


def _shards(arr):
    return sorted(((s.device.id, tuple((i.start, i.stop) for i in s.index), np.asarray(s.data).tolist())
                   for s in arr.addressable_shards), key=lambda t: t[0])


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_make_array_from_callback_matches_jax(mesh, jax_mod, spec):
    calls, jcalls = [], []
    x = toolkit.make_array_from_callback(SHAPE, _ours(mesh, spec), lambda i: calls.append(i) or DATA[i])
    j = jax_mod.make_array_from_callback(SHAPE, _theirs(jax_mod, spec), lambda i: jcalls.append(i) or DATA[i])
    assert len(calls) == len(jcalls)  # fully replicated: one call, as JAX
    np.testing.assert_array_equal(np.asarray(x), DATA)
    assert _shards(x) == _shards(j)
    assert x.dtype == j.dtype and x.shape == j.shape
    for prop in ("committed", "is_fully_addressable", "is_fully_replicated", "nbytes"):
        assert getattr(x, prop) == getattr(j, prop), prop
    assert x.on_device_size_in_bytes() == j.on_device_size_in_bytes()
    assert x.addressable_data(0).shape == j.addressable_data(0).shape
    np.testing.assert_array_equal(np.asarray(x.addressable_data(3)), np.asarray(j.addressable_data(3)))
    assert [(s.device.id, s.index) for s in x.global_shards] == \
        sorted([(s.device.id, s.index) for s in j.global_shards], key=lambda t: t[0])
    assert x.sharding == _ours(mesh, spec)


def test_callback_data_and_dtype_rules(mesh, jax_mod):
    s = _ours(mesh, P("x"))
    x = toolkit.make_array_from_callback((8,), s, lambda i: np.arange(8, dtype=np.int32)[i])
    assert x.dtype == np.int32 and x.committed
    y = toolkit.make_array_from_callback((), _ours(mesh, P()), lambda i: 3.5)
    assert y.shape == () and float(y) == 3.5
    z = toolkit.make_array_from_callback((4,), s, lambda i: np.zeros(2, np.float32), dtype=np.float32)
    assert z.dtype == np.float32
    x.copy_to_host_async()
    np.testing.assert_array_equal(np.asarray(x), np.arange(8))


def _errors(fun, *args, **kwargs):
    try:
        fun(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - comparing kinds and texts
        return exc
    raise AssertionError("no error")


def test_callback_errors_match_jax(mesh, jax_mod):
    s, js = _ours(mesh, P("x", "y")), _theirs(jax_mod, P("x", "y"))
    # a piece of the wrong shape
    ours = _errors(toolkit.make_array_from_callback, SHAPE, s, lambda i: np.zeros((3, 3), np.float32))
    theirs = _errors(jax_mod.make_array_from_callback, SHAPE, js, lambda i: np.zeros((3, 3), np.float32))
    assert type(ours) is type(theirs) is ValueError
    assert "Expected shard shape (4, 4) doesn't match the single device array shape (3, 3)" in str(ours)
    assert "Expected shard shape (4, 4) doesn't match the single device array shape (3, 3)" in str(theirs)
    # dtype given but different from the data's
    ours = _errors(toolkit.make_array_from_callback, SHAPE, s, lambda i: DATA[i], dtype=np.int32)
    theirs = _errors(jax_mod.make_array_from_callback, SHAPE, js, lambda i: DATA[i], dtype=np.int32)
    assert type(ours) is type(theirs) is ValueError
    assert "it must match the dtype of the addressable shards" in str(ours)
    # pieces with different dtypes
    bad = lambda i: DATA[i] if i[1].start == 0 else DATA[i].astype(np.int32)  # noqa: E731
    assert "must have matching dtypes" in str(_errors(toolkit.make_array_from_callback, SHAPE, s, bad))
    assert "must have matching dtypes" in str(_errors(jax_mod.make_array_from_callback, SHAPE, js, bad))
    # not a sharding
    assert isinstance(_errors(toolkit.make_array_from_callback, SHAPE, P("x"), lambda i: DATA[i]), TypeError)
    assert isinstance(_errors(jax_mod.make_array_from_callback, SHAPE, spec_to_jax(P("x")), lambda i: DATA[i]),
                      TypeError)
    # a shape the sharding cannot split
    with pytest.raises(ValueError, match="splits array dimension 1 \\(size 6\\) 4 ways"):
        toolkit.make_array_from_callback((8, 6), s, lambda i: np.zeros((4, 2)))
    with pytest.raises(ValueError):
        jax_mod.make_array_from_callback((8, 6), js, lambda i: np.zeros((4, 2)))


def _pieces(mesh, spec, reverse=False):
    s = _ours(mesh, spec)
    items = list(s.addressable_devices_indices_map(SHAPE).items())
    if reverse:
        items = items[::-1]
    return s, [toolkit.device_put(DATA[i], d) for d, i in items]


def _jpieces(jax, spec, reverse=False):
    s = _theirs(jax, spec)
    items = list(s.addressable_devices_indices_map(SHAPE).items())
    if reverse:
        items = items[::-1]
    return s, [jax.device_put(DATA[i], d) for d, i in items]


@pytest.mark.parametrize("spec", [P("x", "y"), P(None, "y"), P()], ids=str)
def test_single_device_arrays_matches_jax(mesh, jax_mod, spec):
    s, pieces = _pieces(mesh, spec, reverse=True)
    js, jpieces = _jpieces(jax_mod, spec, reverse=True)
    x = toolkit.make_array_from_single_device_arrays(SHAPE, s, pieces)
    j = jax_mod.make_array_from_single_device_arrays(SHAPE, js, jpieces)
    np.testing.assert_array_equal(np.asarray(x), DATA)
    assert _shards(x) == _shards(j)
    assert x.committed and x.sharding == s
    # the buffers are used as they are: deleting the global array deletes the pieces
    x.delete()
    assert all(p.is_deleted() for p in pieces)


def test_single_device_arrays_errors_match_jax(mesh, jax_mod):
    s, pieces = _pieces(mesh, P("x", "y"))
    js, jpieces = _jpieces(jax_mod, P("x", "y"))
    cases = [
        ("too few", lambda mk, sh, ps: mk(SHAPE, sh, ps[:-1]),
         "Expected 8 per-device arrays (this is how many devices are addressable by the sharding), but got 7"),
        ("repeated device", lambda mk, sh, ps: mk(SHAPE, sh, ps[:-1] + ps[:1]),
         "the input arrays must be from distinct devices"),
        ("wrong shard shape", lambda mk, sh, ps: mk((16, 16), sh, ps),
         "Expected shard shape (8, 4) doesn't match the single device array shape (4, 4)"),
    ]
    for name, call, text in cases:
        ours = _errors(call, toolkit.make_array_from_single_device_arrays, s, pieces)
        theirs = _errors(call, jax_mod.make_array_from_single_device_arrays, js, jpieces)
        assert type(ours) is type(theirs) is ValueError, name
        assert text in str(ours), (name, str(ours))
        assert text in str(theirs), (name, str(theirs))
    # devices not those of the sharding: a sharding over the first 4 devices, arrays on the last 4
    small = NamedSharding(Mesh(np.array(toolkit.devices()[:4]), ("x",)), P("x"))
    others = [toolkit.device_put(np.zeros((2, 16), np.float32), d) for d in toolkit.devices()[4:]]
    with pytest.raises(ValueError, match="Addressable devices and per-device arrays devices do not match"):
        toolkit.make_array_from_single_device_arrays(SHAPE, small, others)
    with pytest.raises(TypeError, match="must be a list or tuple"):
        toolkit.make_array_from_single_device_arrays(SHAPE, s, iter(pieces))
    with pytest.raises(ValueError, match="must be provided"):
        toolkit.make_array_from_single_device_arrays(SHAPE, s, [])
    with pytest.raises(ValueError, match="dtype"):
        toolkit.make_array_from_single_device_arrays(SHAPE, s, pieces, dtype=np.int32)


def test_process_local_data_single_process(mesh, jax_mod):
    s, js = _ours(mesh, P(("x", "y"))), _theirs(jax_mod, P(("x", "y")))
    x = toolkit.make_array_from_process_local_data(s, DATA)
    j = jax_mod.make_array_from_process_local_data(js, DATA)
    assert _shards(x) == _shards(j)
    assert x.shape == SHAPE
    tree = toolkit.make_array_from_process_local_data({"a": s, "b": _ours(mesh, P())}, {"a": DATA, "b": DATA[0]})
    assert tree["b"].shape == (16,) and tree["b"].is_fully_replicated
    with toolkit.set_mesh(mesh):
        y = toolkit.make_array_from_process_local_data(P("x"), DATA)
    assert y.sharding.spec == P("x")
    ours = _errors(toolkit.make_array_from_process_local_data, s, DATA, (16, 16))
    theirs = _errors(jax_mod.make_array_from_process_local_data, js, DATA, (16, 16))
    assert type(ours) is type(theirs) is ValueError
    assert "global_shape should be None or equal to local_data.shape" in str(ours)
    assert "global_shape should be None or equal to local_data.shape" in str(theirs)


def test_process_local_data_shape_logic_as_jax(mesh):
    """The multi-process index arithmetic (local → global shape, local slices) on one process's view."""
    from toolkit.global_arrays import _array_from_process_local_data, local_to_global_shape, num_addressable_indices
    s = _ours(mesh, P("x", "y"))
    assert local_to_global_shape(s, (8, 16)) == (8, 16)  # one process holds everything
    assert num_addressable_indices(s, 0, SHAPE) == 8 and num_addressable_indices(s, 1, SHAPE) == 16
    x = _array_from_process_local_data(DATA, s, SHAPE)
    np.testing.assert_array_equal(np.asarray(x), DATA)
    with pytest.raises(ValueError, match="Invalid host data, each dimension should match either global or process"):
        _array_from_process_local_data(DATA[:, :4], s, SHAPE)


def test_array_properties(mesh):
    s = _ours(mesh, P("x"))
    x = toolkit.device_put(DATA, s)
    assert x.committed and not toolkit.device_put(DATA).committed
    assert x.is_fully_addressable and not x.is_fully_replicated
    assert x.nbytes == DATA.nbytes
    assert x.on_device_size_in_bytes() == DATA.nbytes // 2 * 8  # a (4, 16) piece on each of 8 devices
    shards = x.addressable_shards
    assert len(shards) == 8 and shards[0].data.committed
    assert isinstance(shards[0].data.sharding, SingleDeviceSharding)
    assert x.global_shards[0].device == shards[0].device
    r = toolkit.device_put(DATA, _ours(mesh, P()))
    assert r.is_fully_replicated
    # fully replicated: every index gives the first shard (as JAX)
    assert r.addressable_data(5).devices() == r.addressable_data(0).devices()
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        x.addressable_shards  # noqa: B018


def test_jit_on_global_arrays(mesh):
    s = _ours(mesh, P("x", "y"))
    x = toolkit.make_array_from_callback(SHAPE, s, lambda i: DATA[i])
    out = toolkit.jit(lambda a: (a * 2).sum(0))(x)
    np.testing.assert_allclose(np.asarray(out), (DATA * 2).sum(0))
    assert out.committed
    # a jit with a different in_sharding: the value is re-laid out
    f = toolkit.jit(lambda a: a + 1, in_shardings=_ours(mesh, P("y")))
    np.testing.assert_array_equal(np.asarray(f(x)), DATA + 1)
    # device_put between shardings, and back through GSPMDSharding
    y = toolkit.device_put(x, GSPMDSharding.get_replicated(tuple(mesh.devices.flat)))
    np.testing.assert_array_equal(np.asarray(y), DATA)


def test_multihost_single_process(mesh, jax_mod):
    from jax.experimental import multihost_utils as mu
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    for tiled in (False, True):
        ours = multihost.process_allgather(x, tiled=tiled)
        theirs = mu.process_allgather(x, tiled=tiled)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
    g = toolkit.make_array_from_callback(SHAPE, _ours(mesh, P("x", "y")), lambda i: DATA[i])
    np.testing.assert_array_equal(multihost.process_allgather(g, tiled=True), DATA)
    out = multihost.broadcast_one_to_all({"a": np.float32(2.5), "b": x})
    assert isinstance(out["b"], np.ndarray) and out["a"] == 2.5
    multihost.sync_global_devices("single")
    multihost.assert_equal({"v": x})


def test_reading_pieces_leaves_jax_usable():
    # jaxlib's C++ imports jax (when installed) the first time toolkit reads per-device pieces; that import must
    # be allowed to happen (refusing it, as toolkit once did, made jaxlib cache the failure and broke every jax
    # array made later in the process). Pieces read, report devices, and jax works afterwards.
    import subprocess
    import sys
    script = (
        "import sys, numpy as np, toolkit\n"
        "from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P\n"
        "mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ('x', 'y'))\n"
        "x = toolkit.device_put(np.arange(64, dtype=np.float32).reshape(8, 8), NamedSharding(mesh, P('x')))\n"
        "assert np.asarray(x).sum() == 2016 and len(x.addressable_shards) == 8\n"
        "x.addressable_data(0); x.copy_to_host_async(); x.on_device_size_in_bytes()\n"
        "shard = x.addressable_shards[1]\n"
        "piece = shard.data\n"
        "assert np.asarray(piece).tolist() == np.arange(64).reshape(8, 8)[shard.index].tolist(), np.asarray(piece)\n"
        "assert piece.devices() == {toolkit.devices()[1]} and piece.sharding.device_set == piece.devices()\n"
        "import jax\n"
        "from jax.sharding import Mesh as JMesh, NamedSharding as JNamed, PartitionSpec as JP\n"
        "jmesh = JMesh(np.array(jax.devices()[:8]).reshape(2, 4), ('x', 'y'))\n"
        "a = jax.make_array_from_callback((8, 8), JNamed(jmesh, JP('x')), lambda i: np.ones((8, 8), np.float32)[i])\n"
        "assert a.addressable_shards[0].data.shape == (4, 8) and float(np.asarray(a).sum()) == 64.0\n"
        "print('ok')\n")
    pytest.importorskip("jax")
    env = dict(os.environ, TOOLKIT_NUM_CPU_DEVICES="8", XLA_FLAGS="--xla_force_host_platform_device_count=8")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
