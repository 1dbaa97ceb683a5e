"""closure_convert, custom_gradient, linear_transpose, fwd_and_bwd (toolkit/ad/closures.py) against JAX."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.linspace(0.1, 1.0, 4, dtype=np.float32)
W = (np.arange(16, dtype=np.float32).reshape(4, 4) / 10).astype(np.float32)
APIS = [(toolkit, tnp), (jax, jnp)]


def _close(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)
        assert np.asarray(x).dtype == np.asarray(y).dtype


def _both(run):
    ours, theirs = (run(api, numpy) for api, numpy in APIS)
    _close(ours, theirs)
    return ours, theirs


# -- custom_gradient ------------------------------------------------------------------------------------------

def test_custom_gradient_one_argument():
    def run(api, numpy):
        @api.custom_gradient
        def f(x):
            return numpy.sin(x), lambda g: (g * 3 * numpy.cos(x),)
        loss = lambda x: f(x).sum()  # noqa: E731
        return f(X), api.grad(loss)(X), api.jit(api.grad(loss))(X), api.vmap(api.grad(loss))(np.stack([X, X]))
    _both(run)


def test_custom_gradient_two_arguments_and_weak_types():
    def run(api, numpy):
        @api.custom_gradient
        def f(a, b):
            return a * b, lambda g: (g * b, g * a * 2)
        return f(3., 4.), api.grad(f, argnums=(0, 1))(3., 4.)
    ours, _ = _both(run)
    assert ours[1][0].weak_type


def test_custom_gradient_bare_cotangent_and_pytree_output():
    def run(api, numpy):
        @api.custom_gradient
        def f(x):
            return {"s": numpy.sum(x ** 2)}, lambda g: 5.0 * g["s"] * x  # one argument: a bare cotangent
        return api.grad(lambda x: f(x)["s"])(X)
    _both(run)


def test_custom_gradient_second_order_and_eager_value():
    def run(api, numpy):
        @api.custom_gradient
        def f(x):
            return x ** 3, lambda g: (g * 3 * x ** 2,)
        return f(2.0), api.grad(api.grad(f))(2.0)
    _both(run)


def test_custom_gradient_errors():
    with pytest.raises(TypeError, match="callable"):
        toolkit.custom_gradient(3)
    f = toolkit.custom_gradient(lambda x: x)
    with pytest.raises(TypeError, match="pair"):
        toolkit.grad(f)(1.0)


# -- closure_convert ------------------------------------------------------------------------------------------

def test_closure_convert_outside_a_trace_hoists_nothing():
    def run(api, numpy):
        w = numpy.asarray(W)
        fn, consts = api.closure_convert(lambda v: numpy.tanh(v @ w), X)
        assert consts == []
        return fn(X)
    _both(run)


def test_closure_convert_hoists_traced_floats_only():
    def run(api, numpy):
        def outer(w, n):
            fn, consts = api.closure_convert(lambda v: (v * w).sum() + n, X)
            assert len(consts) == 1  # w; the integer n is not hoisted (its tangent is float0)
            return fn(X, *consts)
        return api.jit(outer)(np.float32(2.0), np.int32(3)), api.grad(outer)(np.float32(2.0), np.int32(3))
    _both(run)


def test_closure_convert_for_custom_vjp_of_a_higher_order_function():
    # The use JAX documents: differentiate through the closed-over values of a function argument.
    def run(api, numpy):
        def apply_impl(f, x, *consts):
            return f(x, *consts)
        apply = api.custom_vjp(apply_impl, nondiff_argnums=(0,))

        def fwd(f, x, *consts):
            return api.vjp(f, x, *consts)

        def bwd(f, pullback, g):
            return pullback(g)
        apply.defvjp(fwd, bwd)

        def loss(w):
            fn, consts = api.closure_convert(lambda v: numpy.sin(v * w).sum(), X)
            return apply(fn, X, *consts)
        return api.grad(loss)(np.float32(0.5))
    _both(run)


def test_closure_convert_errors():
    fn, _ = toolkit.closure_convert(lambda v: v * 2, X)
    with pytest.raises(TypeError, match="same Pytree structure"):
        fn((X, X))
    with pytest.raises(TypeError, match="callable"):
        toolkit.closure_convert(3, X)
    with pytest.raises(TypeError):
        toolkit.closure_convert(lambda v: v, "not an array")


# -- linear_transpose -----------------------------------------------------------------------------------------

def test_linear_transpose_matches_jax_eager_and_jitted():
    def run(api, numpy):
        t = api.linear_transpose(lambda a, b: (0.5 * a - b @ W), X, X)
        return t(X), api.jit(lambda c: t(c))(X)
    _both(run)


def test_linear_transpose_pytrees_and_shape_dtype_structs():
    def run(api, numpy):
        t = api.linear_transpose(lambda a: {"u": a * 2.0, "v": a.sum()}, api.ShapeDtypeStruct((4,), np.float32))
        return t({"u": X, "v": np.float32(1)})
    ours, _ = _both(run)
    assert isinstance(ours, tuple) and len(ours) == 1


def test_linear_transpose_is_a_pytree_crossing_jit():
    def run(api, numpy):
        def make(w):
            return api.linear_transpose(lambda a: a * w, X)
        t = api.jit(make)(np.float32(3.0))
        return api.jit(lambda t, c: t(c))(t, X)
    _both(run)


def test_linear_transpose_errors_match_jax():
    for api, numpy in APIS:
        t = api.linear_transpose(lambda a: a * 2.0, X)
        with pytest.raises(TypeError, match="cotangent tree does not match"):
            t((X, X))
        with pytest.raises(TypeError, match="cotangent type does not match"):
            t(np.ones(3, np.float32))
        with pytest.raises(TypeError, match=r"linear_transpose only supports \[float or complex\]"):
            api.linear_transpose(lambda a: a.astype(np.float32), np.ones(3, np.int32))
        with pytest.raises(NotImplementedError, match="reduce_axes"):
            api.linear_transpose(lambda a: a, X, reduce_axes=("i",))


def test_linear_transpose_of_a_nonlinear_function_is_refused():
    t = toolkit.linear_transpose(lambda a: tnp.sin(a), X)
    with pytest.raises(Exception, match="transpose|linear"):
        t(X)


# -- fwd_and_bwd ----------------------------------------------------------------------------------------------

def _layer(numpy):
    return lambda a, w: numpy.tanh(a @ w)


@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_matches_jax(jitted):
    def run(api, numpy):
        fwd, bwd = api.fwd_and_bwd(_layer(numpy), argnums=(0, 1), jitted=jitted)
        y, res = fwd(X, W)
        single_fwd, single_bwd = api.fwd_and_bwd(_layer(numpy), argnums=1, jitted=jitted)
        y2, res2 = single_fwd(X, W)
        return y, bwd(res, np.ones(4, np.float32)), single_bwd(res2, X)
    _both(run)


def test_fwd_and_bwd_has_aux():
    def run(api, numpy):
        fwd, bwd = api.fwd_and_bwd(lambda a, w: (numpy.tanh(a @ w), {"a": a * 2}), argnums=1, has_aux=True)
        y, res, aux = fwd(X, W)
        return y, aux, bwd(res, np.ones(4, np.float32))
    _both(run)


def test_fwd_and_bwd_bwd_compiles_once(compilations):
    fwd, bwd = toolkit.fwd_and_bwd(_layer(tnp), argnums=(0, 1))
    for i in range(3):
        y, res = fwd(X + i, W)
        bwd(res, np.ones(4, np.float32))
    assert compilations[0] == 2  # fwd once, bwd once


def test_fwd_and_bwd_inside_jit():
    def run(api, numpy):
        fwd, bwd = api.fwd_and_bwd(_layer(numpy), argnums=0)

        @api.jit
        def step(x):
            y, res = fwd(x, W)
            return bwd(res, y)
        return step(X)
    _both(run)


def test_fwd_and_bwd_errors():
    with pytest.raises(TypeError, match="callable"):
        toolkit.fwd_and_bwd(3, 0)
    fwd, bwd = toolkit.fwd_and_bwd(_layer(tnp), argnums=0)
    with pytest.raises(TypeError, match="positional"):
        fwd(X, w=W)
    with pytest.raises(TypeError, match="residuals"):
        bwd((1, 2), X)
    with pytest.raises(ValueError, match="out of bounds"):
        toolkit.fwd_and_bwd(_layer(tnp), argnums=5, jitted=False)[0](X, W)


@pytest.mark.x64  # 64-bit on both sides (tests/conftest.py)
def test_64_bit_types_kept():
    x64 = X.astype(np.float64)

    def run(api, numpy):
        t = api.linear_transpose(lambda a: a * 2.0, x64)

        @api.custom_gradient
        def f(x):
            return x * x, lambda g: (g * 2 * x,)
        fwd, bwd = api.fwd_and_bwd(lambda a: numpy.sin(a).sum(), argnums=0)
        y, res = fwd(x64)
        return t(x64), api.grad(lambda x: f(x).sum())(x64), bwd(res, np.float64(1.0))
    ours, _ = _both(run)
    assert all(np.asarray(leaf).dtype == np.float64 for leaf in jax.tree_util.tree_leaves(ours))
