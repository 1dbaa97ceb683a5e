"""toolkit.numpy's logspace, geomspace, empty_like, copy and from_dlpack against jax.numpy 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check


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
