"""toolkit.numpy's window functions (bartlett, blackman, hamming, hanning, kaiser) and printing names (array_str,
array_repr, printoptions, get/set_printoptions) against jax.numpy 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name):
    for M in (0, 1, 2, 7, 16):
        check(lambda m: getattr(m, name)(M), tol=2e-6)
    check(lambda m: getattr(m, name)(np.int32(5)), tol=2e-6)
    check(lambda m: getattr(m, name)(-3))


def test_kaiser():
    for M, beta in ((0, 1.0), (1, 5.0), (8, 14.0), (9, 0.0), (12, 8.6)):
        check(lambda m: m.kaiser(M, beta), tol=1e-5)
    check(lambda m, b: m.kaiser(6, b), np.float32(3.0), tol=1e-5, jit=True)


@pytest.mark.x64
@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_x64(name):
    check(lambda m: getattr(m, name)(9), tol=1e-12)
    check(lambda m: m.kaiser(9, 5.0), tol=1e-10)


def test_windows_need_a_static_length():
    with pytest.raises(toolkit.ConcretizationTypeError):
        toolkit.jit(tnp.hanning)(5)
    with pytest.raises(TypeError):
        tnp.hamming("5")


def test_array_str_and_repr():
    x = np.array([1 / 3, 2.0], np.float32)
    assert tnp.array_str(tnp.asarray(x)) == np.array_str(x)
    assert tnp.array_str(tnp.asarray(x), precision=2) == np.array_str(x, precision=2)
    # numpy's repr of the value (jax 0.10.2 prints its class name, "ArrayImpl(...)", in place of "array")
    assert tnp.array_repr(tnp.asarray(x)) == np.array_repr(x)
    assert tnp.array_repr([1, 2]) == np.array_repr(np.array([1, 2]))
    with pytest.raises(toolkit.ConcretizationTypeError):
        toolkit.jit(tnp.array_str)(x)


def test_print_options_are_numpys():
    import jax.numpy as jnp
    with tnp.printoptions(precision=3), jnp.printoptions(precision=3):   # both are numpy's options
        assert tnp.get_printoptions() == jnp.get_printoptions() == np.get_printoptions()
    before = tnp.get_printoptions()
    try:
        tnp.set_printoptions(precision=4)
        assert np.get_printoptions()["precision"] == 4
    finally:
        np.set_printoptions(**before)
    with tnp.printoptions(precision=2):
        assert tnp.get_printoptions()["precision"] == 2
        assert "0.33" in str(tnp.asarray([1 / 3]))
