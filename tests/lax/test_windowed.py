"""reduce (generic, variadic), reduce_window (+ helpers) and cumulative reductions vs numpy; errors;
cumlogsumexp vs jax.lax."""

import ml_dtypes
import numpy as np
import pytest
from _oracle import assert_same

import toolkit
from toolkit import lax

RNG = np.random.default_rng(2)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_reduce_monoid_becomes_fixed_reduction():
    x = f32(3, 4)
    f = lambda x: lax.reduce(x, np.float32(0), lax.add, (1,))
    np.testing.assert_allclose(toolkit.jit(f)(x), x.sum(1), rtol=1e-5)
    assert [e.primitive.name for e in toolkit.jit(f).trace(x).program.eqns] == ["reduce_sum"]
    np.testing.assert_allclose(lax.reduce(x, -np.inf, lax.max, (0,)), x.max(0))


def test_reduce_generic_computation():
    x = f32(3, 4)
    # sum of squares through a non-monoid computation, and a non-identity init
    f = toolkit.jit(lambda x: lax.reduce(x, 1.0, lambda a, b: a + b * b, (0, 1)))
    np.testing.assert_allclose(f(x), 1 + (x * x).sum(), rtol=1e-5)
    program = toolkit.jit(lambda x: lax.reduce(x, 1.0, lambda a, b: a + b * b, (0,))).trace(x).program
    assert program.eqns[-1].primitive.name == "reduce"
    text = toolkit.jit(lambda x: lax.reduce(x, 1.0, lambda a, b: a + b * b, (0,))).lower(x).as_text()
    assert "stablehlo.reduce" in text and "stablehlo.multiply" in text


def test_reduce_variadic_argmax():
    v = f32(9)

    def pick(a, b):
        take_a = lax.ge(a[0], b[0])
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])

    f = toolkit.jit(lambda v: lax.reduce((v, lax.iota(np.int32, 9)), (np.float32(-np.inf), np.int32(0)), pick, (0,)))
    best, index = f(v)
    assert float(best) == v.max() and int(index) == v.argmax()
    text = f.lower(v).as_text()
    assert "stablehlo.reduce" in text and "stablehlo.select" in text


def test_reduce_eager_generic():
    x = np.arange(1, 6, dtype=np.int32)
    assert int(lax.reduce(x, 0, lambda a, b: a * 2 + b, (0,))) == int(np.frompyfunc(lambda a, b: a * 2 + b, 2, 1)
                                                                     .reduce(np.concatenate([[0], x])))


def test_reduce_errors():
    x = f32(3)
    with pytest.raises(TypeError, match="same structure"):
        lax.reduce((x, x), 0.0, lax.add, (0,))
    with pytest.raises(TypeError, match="init value 0 must be a scalar"):
        toolkit.jit(lambda x: lax.reduce(x, np.zeros(2, np.float32), lambda a, b: a + b, (0,)))(x)
    with pytest.raises(ValueError, match="out of bounds"):
        toolkit.jit(lambda x: lax.reduce(x, 0.0, lambda a, b: a * b, (1,)))(x)
    with pytest.raises(TypeError, match="must not close over traced values"):
        toolkit.jit(lambda x, y: lax.reduce(x, 0.0, lambda a, b: a + b * y, (0,)))(x, np.float32(2))
    with pytest.raises(TypeError, match="computation's output 0"):
        toolkit.jit(lambda x: lax.reduce(x, 0.0, lambda a, b: lax.convert_element_type(a, np.int32), (0,)))(x)


def maxpool_reference(x, k, s):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.empty((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = x[:, i * s:i * s + k, j * s:j * s + k].max(axis=(1, 2))
    return out


def test_reduce_window_max_pool():
    x = f32(2, 7, 8, 3)
    f = toolkit.jit(lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "VALID"))
    np.testing.assert_array_equal(f(x), maxpool_reference(x, 3, 2))
    assert "stablehlo.reduce_window" in f.lower(x).as_text()
    np.testing.assert_array_equal(lax.reduce_window_max(x, (1, 2, 2, 1), (1, 2, 2, 1)), maxpool_reference(x, 2, 2))


def test_reduce_window_sum_same_padding_and_dilations():
    x = f32(6, 5)
    out = lax.reduce_window_sum(x, (3, 3), (1, 1), "SAME")
    xp = np.pad(x, ((1, 1), (1, 1)))
    want = np.array([[xp[i:i + 3, j:j + 3].sum() for j in range(5)] for i in range(6)])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    # window dilation 2 on axis 1: taps at j, j+2
    out = lax.reduce_window_sum(x, (1, 2), (1, 1), "VALID", window_dilation=(1, 2))
    np.testing.assert_allclose(out, x[:, :-2] + x[:, 2:], rtol=1e-6)
    # base dilation 2: zeros (the identity) between elements
    out = lax.reduce_window_sum(x, (1, 2), (1, 1), "VALID", base_dilation=(1, 2))
    dil = np.zeros((6, 9), np.float32)
    dil[:, ::2] = x
    np.testing.assert_allclose(out, dil[:, :-1] + dil[:, 1:], rtol=1e-6)
    np.testing.assert_array_equal(lax.reduce_window_min(x, (6, 1)), x.min(0, keepdims=True))


def test_reduce_window_variadic_and_generic():
    x, y = f32(5), f32(5)
    a, b = lax.reduce_window((x, y), (np.float32(0), np.float32(1)), lambda p, q: (p[0] + q[0], p[1] * q[1]),
                             (2,), (1,), "VALID")
    np.testing.assert_allclose(a, x[:-1] + x[1:], rtol=1e-6)
    np.testing.assert_allclose(b, y[:-1] * y[1:], rtol=1e-6)


def test_reduce_window_errors():
    x = f32(4, 4)
    with pytest.raises(TypeError, match="window_dimensions"):
        lax.reduce_window_sum(x, (2,), (1,), "VALID")
    with pytest.raises(ValueError, match="must be positive"):
        toolkit.jit(lambda x: lax.reduce_window_sum(x, (2, 0), (1, 1), "VALID"))(x)
    with pytest.raises(TypeError, match="padding must be"):
        lax.reduce_window_sum(x, (2, 2), (1, 1), 3)


@pytest.mark.parametrize("name,ref", [("cumsum", np.cumsum), ("cumprod", np.cumprod),
                                      ("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)])
def test_cumulative_reductions(name, ref):
    fn = getattr(lax, name)
    x = f32(4, 6)
    np.testing.assert_allclose(toolkit.jit(lambda x: fn(x, axis=1))(x), ref(x, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fn(x, 0, reverse=True), np.flip(ref(np.flip(x, 0), axis=0), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fn(x, -1), ref(x, axis=-1), rtol=1e-5, atol=1e-6)
    ints = np.array([3, 1, 4, 1, 5], np.int32)
    np.testing.assert_array_equal(fn(ints), ref(ints))
    assert fn(np.zeros((0, 2), np.float32)).shape == (0, 2)


def test_cumulative_errors():
    with pytest.raises(TypeError, match="bool"):
        lax.cumsum(np.array([True, False]))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumsum(f32(3), axis=1)
    with pytest.raises(ValueError, match="rank at least 1"):
        lax.cumsum(np.float32(3))


# --- cumlogsumexp, checked against jax.lax 0.10.2 ---------------------------------------------------------

X345 = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumlogsumexp(dtype, axis, reverse):
    jl = pytest.importorskip("jax.lax")
    x = X345.astype(dtype)
    x[0, 0, 0] = -np.inf
    tol = 1e-5 if dtype == np.float32 else 2e-2
    # JAX's cumlogsumexp rejects negative axes ("XLA operations do not allow negative axes"); toolkit's takes them.
    assert_same(lax.cumlogsumexp(x, axis, reverse), jl.cumlogsumexp(x, axis % 3, reverse), rtol=tol, atol=tol)


def test_cumlogsumexp_jit_and_errors():
    jl = pytest.importorskip("jax.lax")
    assert_same(toolkit.jit(lambda x: lax.cumlogsumexp(x, 1))(X345), jl.cumlogsumexp(X345, 1), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(np.arange(60, dtype=np.int32).reshape(3, 4, 5))
