"""toolkit.numpy's linspace, logspace, geomspace, empty_like, copy and from_dlpack against jax.numpy 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check


def _bits(ours, theirs):
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    for a, b in zip(ours, theirs, strict=True):
        assert (a.dtype, a.shape, bool(a.weak_type)) == (b.dtype, b.shape, bool(b.aval.weak_type))
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("args, kwargs", [
    ((0, 10), {}), ((-0.5, 0.5, 11), {}), ((0.0, 1.0, 7), {"endpoint": False}), ((3, -2.5, 12), {}),
    ((np.zeros(3), np.arange(3.0), 5), {"axis": 1}), ((np.zeros(3), np.arange(3.0), 5), {"axis": -1, "retstep": True}),
    ((1, 100, 9), {"dtype": np.int32}), ((0, 1, 1), {"retstep": True}), ((0, 1, 1), {"retstep": True, "endpoint": False}),
    ((0, 1, 0), {"retstep": True}), ((np.float16(0), np.float16(3), 7), {}), ((0, 2 + 1j, 4), {}),
    ((np.int8(3), 200, 6), {}), ((np.array([0.0, 1.0]), np.array([[2.0], [3.0]]), 4), {"axis": 2}),
])
def test_linspace_is_jaxs_bit_for_bit(args, kwargs):
    """JAX computes start * (1 - t) + stop * t in the result's precision, in a jit of its own; toolkit rounded
    numpy's float64 values to float32 (1 ulp off for some, so histogram(0) put 0 in another bin) and took neither
    array nor traced bounds, ``retstep`` nor ``axis``."""
    jnp = pytest.importorskip("jax.numpy")
    _bits(tnp.linspace(*args, **kwargs), jnp.linspace(*args, **kwargs))


def test_linspace_of_traced_bounds_and_its_errors():
    jax = pytest.importorskip("jax")
    f = lambda m: lambda a, b: m.linspace(a, b, 13, retstep=True)  # noqa: E731
    _bits(toolkit.jit(f(tnp))(np.float32(-1.3), np.float32(2.1)), jax.jit(f(jax.numpy))(np.float32(-1.3), np.float32(2.1)))
    _bits(tnp.histogram(0)[1], jax.numpy.histogram(0)[1])
    assert np.asarray(tnp.histogram(0)[0]).tolist() == np.asarray(jax.numpy.histogram(0)[0]).tolist()
    _bits(tnp.mgrid[0:1:7j], jax.numpy.mgrid[0:1:7j])
    check(lambda m: m.linspace(0, 1, -1))
    with pytest.raises(TypeError, match="num argument"):
        toolkit.jit(lambda n: tnp.linspace(0.0, 1.0, n))(3)
    with pytest.raises(ValueError, match="must be a device or a toolkit.shard Sharding"):
        tnp.linspace(0, 1, 3, device="cpu")


def test_logspace():
    check(lambda m: m.logspace(0.0, 3.0, 4), tol=2e-6)
    check(lambda m: m.logspace(0, 3, 4, dtype=np.int32))
    check(lambda m: m.logspace(0, 3, 4, endpoint=False, base=2.0), tol=2e-6)
    check(lambda m: m.logspace(0, 2, 1), tol=2e-6)
    check(lambda m: m.logspace(0, 2, 0))
    check(lambda m, a: m.logspace(a, 3.0, 5, axis=1, base=2.0), np.array([0.0, 1.0], np.float32), tol=2e-6, jit=True)
    check(lambda m: m.logspace(0, 2, -1))


def test_geomspace():
    check(lambda m: m.geomspace(1.0, 256.0, 9), tol=2e-6)
    check(lambda m: m.geomspace(-1000, -1, 4), tol=2e-6)
    check(lambda m: m.geomspace(2.0, 3.0, 1), tol=2e-6)
    check(lambda m: m.geomspace(2.0, 3.0, 0))
    check(lambda m: m.geomspace(1, 1000, 4, dtype=np.int32))
    check(lambda m, a, b: m.geomspace(a, b, 3, axis=-1), np.array([1.0, 2.0], np.float32),
          np.array([[4.0, 8.0]], np.float32), tol=2e-6, jit=True)
    check(lambda m: m.geomspace(1.0, 2.0, -2))


@pytest.mark.x64
def test_spaced_values_x64():
    check(lambda m: m.logspace(0.0, 3.0, 4), tol=1e-12)
    check(lambda m: m.geomspace(1, 256, 9), tol=1e-12)


def test_num_must_be_static():
    with pytest.raises(TypeError):
        toolkit.jit(lambda n: tnp.logspace(0.0, 1.0, n))(3)


def test_empty_like_copy():
    check(lambda m: m.empty_like(np.ones((2, 3), np.int8)))
    check(lambda m: m.empty_like(m.asarray(2.0)))
    check(lambda m: m.empty_like(np.ones(2), dtype=np.int32, shape=(3, 1)))
    check(lambda m: m.empty_like([1, 2]))
    check(lambda m: m.copy(np.ones(3, np.float32)))
    check(lambda m: m.copy(m.asarray(2.5)))
    check(lambda m: m.copy([1, 2]))
    check(lambda m, x: m.copy(x) * 2, np.ones(3, np.float32), jit=True)
    x = tnp.ones(3)
    assert tnp.copy(x) is not x


def test_from_dlpack():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    check(lambda m: m.from_dlpack(x))
    out = tnp.from_dlpack(tnp.asarray(x))   # a toolkit array exports DLPack too
    np.testing.assert_array_equal(np.asarray(out), x)
    with pytest.raises(TypeError, match="__dlpack__"):
        tnp.from_dlpack([1, 2])
    with pytest.raises(ValueError, match="copy=False"):
        tnp.from_dlpack(x, copy=False)
