"""toolkit.ad's user API: jvp, linearize, vjp, grad, value_and_grad (pytrees, argnums, has_aux, errors)."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.ad import DifferentiationError, grad, jvp, linearize, value_and_grad, vjp

F32 = np.float32
X = np.linspace(0.3, 1.7, 6, dtype=F32)


def test_exports_from_toolkit():
    assert toolkit.grad is grad and toolkit.jvp is jvp and toolkit.vjp is vjp
    assert toolkit.value_and_grad is value_and_grad and toolkit.linearize is linearize


def test_grad_of_sin_eager_and_jit():
    f = lambda x: tnp.sum(tnp.sin(x) * x)
    want = np.cos(X) * X + np.sin(X)
    np.testing.assert_allclose(grad(f)(X), want, rtol=1e-6)
    np.testing.assert_allclose(toolkit.jit(grad(f))(X), want, rtol=1e-6)


def test_jvp_pytrees_and_linearize():
    f = lambda p: {"y": p["a"] * p["b"], "z": tnp.exp(p["a"])}
    primals = ({"a": X, "b": 2 * X},)
    tangents = ({"a": np.ones_like(X), "b": np.zeros_like(X)},)
    out, out_t = jvp(f, primals, tangents)
    np.testing.assert_allclose(out_t["y"], 2 * X, rtol=1e-6)
    np.testing.assert_allclose(out_t["z"], np.exp(X), rtol=1e-6)
    out2, f_jvp = linearize(f, *primals)
    np.testing.assert_allclose(out2["y"], out["y"])
    np.testing.assert_allclose(f_jvp(*tangents)["z"], np.exp(X), rtol=1e-6)


def test_vjp_returns_one_cotangent_per_primal():
    w = np.full((6, 2), 0.5, F32)
    y, f_vjp = vjp(lambda x, w: x @ w, X, w)
    dx, dw = f_vjp(np.ones((2,), F32))
    np.testing.assert_allclose(dx, np.ones(6), rtol=1e-6)
    np.testing.assert_allclose(dw, np.stack([X, X], 1), rtol=1e-6)


def test_argnums_has_aux_and_value_and_grad():
    def loss(w, x, scale):
        y = tnp.sum((x * w) ** 2) * scale
        return y, {"y": y, "count": 3}
    (value, aux), (gw, gx) = value_and_grad(loss, argnums=(0, 1), has_aux=True)(X, 2 * X, 0.5)
    np.testing.assert_allclose(value, np.sum((2 * X * X) ** 2) * 0.5, rtol=1e-5)
    np.testing.assert_allclose(aux["y"], value)
    np.testing.assert_allclose(gw, 2 * (2 * X * X) * 2 * X * 0.5, rtol=1e-5)
    np.testing.assert_allclose(gx, 2 * (2 * X * X) * X * 0.5, rtol=1e-5)
    g, aux = grad(loss, has_aux=True)(X, 2 * X, 0.5)
    np.testing.assert_allclose(g, gw, rtol=1e-6)
    jitted = toolkit.jit(grad(loss, has_aux=True))(X, 2 * X, 0.5)
    np.testing.assert_allclose(jitted[0], gw, rtol=1e-5)


def test_higher_order_and_nested_jit():
    f = lambda x: tnp.sin(x) * x
    d2 = grad(grad(f))
    x = F32(0.7)
    np.testing.assert_allclose(d2(x), 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(toolkit.jit(d2)(x), 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(grad(toolkit.jit(f))(x), np.cos(x) * x + np.sin(x), rtol=1e-6)


def test_closure_over_outer_tracer_is_a_constant():
    def outer(y):
        return grad(lambda x: tnp.sum(x * y))(X)
    np.testing.assert_allclose(toolkit.jit(outer)(3 * X), 3 * X, rtol=1e-6)


def test_symbolic_zero_tangents_and_integer_inputs():
    f = lambda x, n: x * 2.0 + n.astype(F32)
    out, t = jvp(f, (X, np.arange(6, dtype=np.int32)), (np.ones_like(X), np.zeros(6, np.int32)))
    np.testing.assert_allclose(t, 2 * np.ones(6))
    _, f_vjp = vjp(f, X, np.arange(6, dtype=np.int32))
    dx, dn = f_vjp(np.ones_like(X))
    assert np.asarray(dn).dtype == np.int32 and not np.asarray(dn).any()
    _, t = jvp(lambda x: tnp.argmax(x), (X,), (np.ones_like(X),))
    assert not np.asarray(t).any()


def test_errors():
    with pytest.raises(TypeError, match="scalar-valued"):
        grad(lambda x: x * 2)(X)
    with pytest.raises(TypeError, match="real- or complex-valued inputs"):
        grad(lambda n: tnp.sum(n))(np.arange(3))
    with pytest.raises(TypeError, match="same tree structure"):
        jvp(lambda a, b: a, (X, X), (X,))
    with pytest.raises(TypeError, match="equal dtypes"):
        jvp(tnp.sin, (X,), (X.astype(np.float16),))
    with pytest.raises(ValueError, match="out of bounds"):
        grad(lambda x: tnp.sum(x), argnums=3)(X)
    with pytest.raises(TypeError, match="pair"):
        grad(lambda x: tnp.sum(x), has_aux=True)(X)
    _, f_vjp = vjp(tnp.sin, X)
    with pytest.raises(ValueError, match="cotangent leaf 0"):
        f_vjp(np.ones(3, F32))


def test_holomorphic_grad_is_jaxs():
    jax = pytest.importorskip("jax")
    z = np.array([1 + 1j, 2 - 0.5j, -0.3j], np.complex64)
    def f(numpy):
        return lambda v: numpy.sum(numpy.sin(v) * v ** 2)
    ours = toolkit.grad(f(tnp), holomorphic=True)(z)
    theirs = jax.grad(f(jax.numpy), holomorphic=True)(z)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    assert np.asarray(ours).dtype == np.complex64
    value, scalar = toolkit.value_and_grad(lambda w: w ** 3, holomorphic=True)(np.complex64(2j))
    assert complex(scalar) == complex(jax.grad(lambda w: w ** 3, holomorphic=True)(np.complex64(2j)))
    np.testing.assert_allclose(np.asarray(toolkit.jit(toolkit.grad(f(tnp), holomorphic=True))(z)),
                               np.asarray(theirs), rtol=1e-6)
    for fun, x, kwargs in [(lambda w: w * 2, np.float32(1), dict(holomorphic=True)),
                           (lambda w: w.real, np.complex64(1j), dict(holomorphic=True)),
                           (lambda w: w * w, np.complex64(1j), {}), (lambda w: (w > 0) * 3, np.float32(1), {})]:
        with pytest.raises(TypeError) as want:
            jax.grad(fun, **kwargs)(x)
        with pytest.raises(TypeError) as got:
            toolkit.grad(fun, **kwargs)(x)
        assert str(got.value) == str(want.value).replace("jax.vjp", "toolkit.vjp")


def test_reverse_mode_through_while_is_refused():
    # A fori_loop with static bounds is a scan (reverse mode works, tests/ad/test_fori_grad.py); with a
    # traced trip count it is a while_loop, which only forward mode differentiates (as JAX).
    f = lambda x: tnp.sum(lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, tnp.sin(c[1])), (0, x))[1])
    _, t = jvp(f, (X,), (np.ones_like(X),))  # forward mode works
    with pytest.raises(DifferentiationError, match="while_loop"):
        grad(f)(X)


def test_custom_call_has_no_rule():
    def f(x):
        out = lax.custom_call("my_kernel", toolkit.ShapeDtypeStruct(x.shape, x.dtype), x)
        return tnp.sum(out)
    with pytest.raises(DifferentiationError, match="custom_call `my_kernel`"):
        toolkit.jit(grad(f)).trace(X)
