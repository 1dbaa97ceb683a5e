"""toolkit.Array and device_put."""

import numpy as np
import pytest

import toolkit
from toolkit.shard import SingleDeviceSharding


def test_device_put_roundtrip_and_properties():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    a = toolkit.device_put(x)
    assert isinstance(a, toolkit.Array)
    assert a.shape == (2, 3) and a.dtype == np.int32 and a.ndim == 2 and a.size == 6
    np.testing.assert_array_equal(np.asarray(a), x)
    assert a.devices() == {toolkit.devices()[0]}
    assert isinstance(a.sharding, SingleDeviceSharding)
    assert a.block_until_ready() is a


@pytest.mark.x64  # with x64 off an int64 array becomes int32, as in JAX (tests/test_x64.py)
def test_int64_stays_int64_even_with_large_values():
    x = np.array([2**40, -(2**40)], np.int64)
    np.testing.assert_array_equal(np.asarray(toolkit.device_put(x)), x)


def test_device_put_on_a_given_device():
    device = toolkit.devices()[-1]
    a = toolkit.device_put(np.ones(3, np.float32), device)
    assert a.devices() == {device}
    b = a + 1  # computations follow committed arrays
    assert b.devices() == {device}


def test_device_put_pytree():
    out = toolkit.device_put({"a": np.ones(2), "b": (np.zeros(3, np.int32),)})
    assert isinstance(out["a"], toolkit.Array) and out["b"][0].dtype == np.int32


def test_device_put_errors():
    with pytest.raises(TypeError, match="expects a device or a toolkit.shard sharding"):
        toolkit.device_put(np.ones(2), "cpu:0")
    with pytest.raises(TypeError, match="cannot put a value of type"):
        toolkit.device_put(object())
    with pytest.raises(TypeError, match="not supported"):
        toolkit.device_put(np.array(["a", "b"]))


def test_incompatible_committed_devices():
    d0, d1 = toolkit.devices()[:2]
    a = toolkit.device_put(np.ones(2, np.float32), d0)
    b = toolkit.device_put(np.ones(2, np.float32), d1)
    with pytest.raises(ValueError, match="incompatible devices"):
        toolkit.jit(lambda x, y: x + y)(a, b)


def test_python_protocols():
    a = toolkit.device_put(np.array([1.5, 2.5], np.float32))
    assert len(a) == 2
    assert [float(v) for v in a] == [1.5, 2.5]
    assert float(a[0]) == 1.5
    assert "Array([1.5, 2.5], dtype=float32)" == repr(a)
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    assert a.tolist() == [1.5, 2.5]


def test_operators_and_methods():
    a = toolkit.device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(a.T), np.arange(6).reshape(2, 3).T)
    np.testing.assert_allclose(np.asarray(a.sum(axis=0)), [3, 5, 7])
    np.testing.assert_allclose(np.asarray(a.reshape(3, 2).mean()), 2.5)
    np.testing.assert_allclose(np.asarray(2 ** a), 2 ** np.arange(6).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(a // 4), np.arange(6).reshape(2, 3) // 4)
    np.testing.assert_array_equal(np.asarray(a > 2), np.arange(6).reshape(2, 3) > 2)
    assert a.astype(np.int32).dtype == np.int32


def test_block_until_ready_on_pytrees():
    tree = {"x": toolkit.device_put(np.ones(2)), "y": 3}
    assert toolkit.block_until_ready(tree) is tree


def test_more_methods_and_immutability():
    a = toolkit.device_put(np.array([3.0, 1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(a.sort()), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(a.argsort()), [1, 2, 0])
    np.testing.assert_array_equal(np.asarray(a.cumsum()), [3, 4, 6])
    np.testing.assert_array_equal(np.asarray(a.take(np.array([2, 0]))), [2, 3])
    np.testing.assert_array_equal(np.asarray(a.repeat(2)), [3, 3, 1, 1, 2, 2])
    m = toolkit.device_put(np.arange(4, dtype=np.float32).reshape(2, 2))
    np.testing.assert_array_equal(np.asarray(m.diagonal()), [0, 3])
    assert float(m.trace()) == 3.0
    with pytest.raises(TypeError, match=r"x = x.at\[idx\].set\(y\)"):
        a[0] = 1.0


def test_donated_and_deleted_arrays_say_so():
    f = toolkit.jit(lambda x: x * 2, donate_argnums=0)
    a = toolkit.device_put(np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(f(a)), [2, 2, 2, 2])
    assert a.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[4\]"):
        np.asarray(a)
    with pytest.raises(Exception, match="deleted or donated"):
        f(a)
    b = toolkit.device_put(np.ones(2, np.float32))
    b.delete()
    assert b.is_deleted()


def test_numpy_values_put_without_a_target_as_jax():
    # device_put(x) and asarray(x) of a numpy array take a short path (toolkit.array._put_host_array): what the
    # general one gives, checked here against JAX's device_put.
    jax = pytest.importorskip("jax")
    values = [np.arange(6, dtype=np.float64).reshape(2, 3), np.arange(12, dtype=np.int16)[::3], np.float32(2.5),
              np.array(7, np.uint8), np.zeros((0, 4), np.bool_), np.ones((2, 2), np.complex128).T]
    for value in values:
        ours, theirs = toolkit.device_put(np.asarray(value)), jax.device_put(np.asarray(value))
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and ours.weak_type == theirs.weak_type
        assert not ours.committed and ours.sharding == SingleDeviceSharding(toolkit.devices()[0])
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    a, b = toolkit.numpy.asarray(np.ones(3, np.float32)), toolkit.device_put(np.zeros(3, np.float32))
    assert a.sharding is b.sharding  # one sharding object per device (fast calls compare by identity first)
    with toolkit.default_device(toolkit.devices()[-1]):
        assert toolkit.device_put(np.ones(2, np.float32)).devices() == {toolkit.devices()[-1]}
    with toolkit.transfer_guard("disallow"), pytest.raises(Exception, match="Disallowed host-to-device transfer"):
        toolkit.numpy.asarray(np.ones(2, np.float32)) + 1  # an implicit transfer, refused as in JAX
    with toolkit.transfer_guard("disallow"):
        toolkit.device_put(np.ones(2, np.float32))  # explicit: allowed under "disallow", as in JAX


def test_numpy_conversions_copy_and_write_as_jax():
    # numpy 2 passes copy=True to __array__ for np.array(x) and np.asarray(x, copy=True) and keeps what it gets:
    # the copy must be made there and be writable. np.array(x) of a toolkit array was read-only (JAX's writable).
    jax = pytest.importorskip("jax")
    ours, theirs = toolkit.numpy.arange(4.0).reshape(2, 2), jax.numpy.arange(4.0).reshape(2, 2)
    conversions = [
        lambda x: np.asarray(x), lambda x: np.array(x), lambda x: np.asarray(x, copy=True),
        lambda x: np.asarray(x, copy=False), lambda x: np.asarray(x, dtype=np.float64),
        lambda x: np.array(x, dtype=np.int8), lambda x: x.__array__(np.float16, None, True),
        lambda x: np.asarray(x[1]),  # an output of jit's fast path (its sharding made when asked for)
    ]
    for convert in conversions:
        a, b = convert(ours), convert(theirs)
        assert a.dtype == b.dtype and a.flags.writeable == b.flags.writeable
        np.testing.assert_array_equal(a, b)
    copy = np.array(ours)
    copy[0, 0] = 7.0
    np.testing.assert_array_equal(np.asarray(ours), [[0.0, 1.0], [2.0, 3.0]])  # the array is unchanged
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(ours)[0, 0] = 7.0
    sharded = toolkit.device_put(np.arange(8.0, dtype=np.float32), toolkit.shard.NamedSharding(
        toolkit.shard.Mesh(np.array(toolkit.devices()[:2]), ("x",)), toolkit.shard.PartitionSpec("x")))
    np.testing.assert_array_equal(np.array(sharded), np.arange(8.0))  # pieces assembled on the host
    assert np.array(sharded).flags.writeable


def test_format_as_jax():
    # f"{x}" of an array is its str (numpy's text), and a format spec applies to a 0-d value, as in JAX; toolkit
    # gave the repr ("Array([...], dtype=float32)") for arrays of rank 1 and more.
    jax = pytest.importorskip("jax")
    values = [np.arange(6.0, dtype=np.float32).reshape(2, 3), np.array([True, False]), np.array(2.5, np.float32),
              np.array([1 + 2j], np.complex64), np.zeros((0, 2), np.float32), np.array(7, np.int32)]
    for value in values:
        ours, theirs = toolkit.device_put(value), jax.device_put(value)
        assert f"{ours}" == f"{theirs}" and format(ours, "") == str(theirs)
    assert f"{toolkit.device_put(np.float32(2.5)):.3f}|{toolkit.device_put(np.int32(7)):>4}" == "2.500|   7"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{toolkit.device_put(np.ones(2, np.float32)):.3f}"  # numpy's error, as JAX's
    deleted = toolkit.device_put(np.ones(2, np.float32))
    deleted.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f"{deleted}"
