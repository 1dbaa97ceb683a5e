"""``toolkit.numpy.from_dlpack(x, device=..., copy=...)`` (and ``toolkit.dlpack.from_dlpack``) against JAX 0.10.2 in
the same run, on eight CPU devices: where the result lives and whether it is committed (a device, a sharding over one
device, none), what ``copy=`` does together with ``device=``, the 64-bit canonicalization, numpy, toolkit and JAX
arrays as sources, and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.shard import NamedSharding, PartitionSpec as P, SingleDeviceSharding

jax = pytest.importorskip("jax")
jnp = jax.numpy

from tests._oracle import assert_same, raises_like  # noqa: E402  (after jax is known present)

try:  # before JAX's backend starts; when another module started it already, the tests needing 8 devices skip
    jax.config.update("jax_num_cpu_devices", 8)
except Exception:
    pass

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(scope="module")
def devices():
    """(toolkit's, JAX's) eight CPU devices."""
    ours, theirs = toolkit.devices(), jax.devices()
    if len(ours) < 8 or len(theirs) < 8:
        pytest.skip("needs 8 CPU devices in toolkit and in JAX")
    return ours, theirs


def _placement(x):
    """What a from_dlpack result is, as comparable between the libraries: type-free value, device ids, committed."""
    return np.asarray(x), x.dtype, sorted(d.id for d in x.devices()), x.committed, type(x.sharding).__name__


def _same_placement(ours, theirs):
    (ov, *o), (tv, *t) = _placement(ours), _placement(theirs)
    assert_same(ov, tv)
    assert o == t, (o, t)


def test_device_and_sharding_place_the_result_as_jax(devices):
    ours_devices, theirs_devices = devices

    def cases(from_dlpack, ds, single, named):
        mesh_of_one = named(ds[5])
        return [from_dlpack(X), from_dlpack(X, device=ds[0]), from_dlpack(X, device=ds[3]),
                from_dlpack(X, device=ds[3], copy=True), from_dlpack(X, device=ds[0], copy=True),
                from_dlpack(X, device=single(ds[6])), from_dlpack(X, device=mesh_of_one),
                from_dlpack(np.arange(3.0)), from_dlpack(np.arange(3), device=ds[2])]

    def toolkit_named(device):
        return NamedSharding(toolkit.make_mesh((1,), ("a",), devices=[device]), P())

    def jax_named(device):
        return jax.sharding.NamedSharding(jax.make_mesh((1,), ("a",), devices=[device]), jax.sharding.PartitionSpec())

    ours = cases(tnp.from_dlpack, ours_devices, SingleDeviceSharding, toolkit_named)
    theirs = cases(jnp.from_dlpack, theirs_devices, jax.sharding.SingleDeviceSharding, jax_named)
    for o, t in zip(ours, theirs):
        _same_placement(o, t)
    # toolkit.dlpack's (positional device, as jax.dlpack's) is the same function.
    _same_placement(toolkit.dlpack.from_dlpack(X, ours_devices[4]), jax.dlpack.from_dlpack(X, theirs_devices[4]))


@pytest.mark.x64
def test_64_bit_values_keep_their_type_under_x64(devices):
    ours_devices, theirs_devices = devices
    for host in (np.arange(3.0), np.arange(3)):
        _same_placement(tnp.from_dlpack(host, device=ours_devices[1]), jnp.from_dlpack(host, device=theirs_devices[1]))


def test_array_sources_report_device_0_as_jax(devices):
    # A JAX (and toolkit) array on CPU device 3 says (kDLCPU, 0) in __dlpack_device__: without device= the result
    # lands on device 0, with device= where it says.
    ours_devices, theirs_devices = devices
    mine = toolkit.device_put(tnp.arange(4.0), ours_devices[3])
    theirs_src = jax.device_put(jnp.arange(4.0), theirs_devices[3])
    assert mine.__dlpack_device__() == tuple(int(v) for v in theirs_src.__dlpack_device__())
    for source in (mine, theirs_src):  # toolkit reads either library's arrays
        _same_placement(tnp.from_dlpack(source), jnp.from_dlpack(theirs_src))
        _same_placement(tnp.from_dlpack(source, device=ours_devices[5]),
                        jnp.from_dlpack(theirs_src, device=theirs_devices[5]))


def test_errors_match_jax(devices):
    ours_devices, theirs_devices = devices
    # copy=False with a device other than the tensor's: JAX's ValueError, word for word.
    raises_like(lambda: tnp.from_dlpack(X, device=ours_devices[3], copy=False),
                lambda: jnp.from_dlpack(X, device=theirs_devices[3], copy=False))
    raises_like(lambda: tnp.from_dlpack(X, device=SingleDeviceSharding(ours_devices[2]), copy=False),
                lambda: jnp.from_dlpack(X, device=jax.sharding.SingleDeviceSharding(theirs_devices[2]), copy=False))
    # A sharding over several devices.
    ours_mesh = toolkit.make_mesh((2, 4), ("x", "y"))
    theirs_mesh = jax.make_mesh((2, 4), ("x", "y"))
    raises_like(lambda: tnp.from_dlpack(X, device=NamedSharding(ours_mesh, P())),
                lambda: jnp.from_dlpack(X, device=jax.sharding.NamedSharding(theirs_mesh, jax.sharding.PartitionSpec())))
    raises_like(lambda: toolkit.dlpack.from_dlpack(X, NamedSharding(ours_mesh, P("x"))),
                lambda: jax.dlpack.from_dlpack(X, jax.sharding.NamedSharding(theirs_mesh, jax.sharding.PartitionSpec("x"))))
    # Not a DLPack producer, whatever the device.
    raises_like(lambda: tnp.from_dlpack([1, 2], device=ours_devices[1]),
                lambda: jnp.from_dlpack([1, 2], device=theirs_devices[1]))
    # Not a device: JAX's device_put refuses it with a ValueError.
    with pytest.raises(ValueError, match="device='cpu'"):
        tnp.from_dlpack(X, device="cpu")
    with pytest.raises(ValueError):
        jnp.from_dlpack(X, device="cpu")


def test_copy_false_on_the_same_device_is_refused():
    # JAX shares the buffer (or refuses an unaligned one with a ValueError); toolkit always copies into its own
    # buffer, so it refuses copy=False with a ValueError that says so.
    for device in (None, toolkit.devices()[0]):
        with pytest.raises(ValueError, match="copy=False"):
            tnp.from_dlpack(X, device=device, copy=False)


def test_jax_and_numpy_read_toolkit_arrays():
    """jax.numpy.from_dlpack asks for the pre-1.0 DLPack format, which cannot say read-only: toolkit exports a
    writable copy there (it raised BufferError); numpy's versioned request gets the read-only host view."""
    x = tnp.arange(6.0).reshape(2, 3)
    assert_same(jnp.from_dlpack(x), np.arange(6.0, dtype=np.float32).reshape(2, 3))
    view = np.from_dlpack(x)
    assert not view.flags.writeable
    np.testing.assert_array_equal(view, np.arange(6.0, dtype=np.float32).reshape(2, 3))
