"""vmap's API (in_axes/out_axes, errors), nesting, and composition with jit, grad and the reference programs,
compared with jax 0.10.2 in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit.core import pytrees
from toolkit.examples.reference_programs import PROGRAMS

jax = pytest.importorskip("jax")
jnp = jax.numpy

rng = np.random.default_rng(0)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(got, want, rtol=2e-5, atol=2e-5):
    g, w = pytrees.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def model(lib):
    np_ = lib.numpy

    def f(params, x):
        w, b = params["w"], params["b"]
        h = np_.tanh(x @ w + b)
        return {"sum": np_.sum(h * h), "h": h}
    return f


params = {"w": f32(3, 4), "b": f32(4)}


@pytest.mark.parametrize("in_axes,out_axes,xshape", [
    ((None, 0), 0, (5, 3)),
    ((None, 1), {"sum": 0, "h": 1}, (3, 5)),
    (({"w": None, "b": 0}, 0), {"sum": 0, "h": 1}, (5, 3)),
    (({"w": 2, "b": None}, None), {"sum": -1, "h": -2}, (3,)),
    ([None, -1], 0, (3, 5)),
])
def test_in_axes_out_axes(in_axes, out_axes, xshape):
    x = f32(*xshape)
    p = dict(params)
    if isinstance(in_axes[0], dict):
        p = {k: v if in_axes[0][k] is None else np.stack([v + i for i in range(5)], axis=in_axes[0][k])
             for k, v in params.items()}
    got = toolkit.vmap(model(toolkit), in_axes, out_axes)(p, x)
    want = jax.vmap(model(jax), in_axes, out_axes)(p, x)
    close(got, want)


def test_kwargs_are_mapped_over_axis_0_and_axis_size():
    f = lambda x, *, y: x * y
    y = f32(4)
    close(toolkit.vmap(f, in_axes=None)(np.float32(2), y=y), jax.vmap(f, in_axes=None)(np.float32(2), y=y))
    g = lambda x: x + 1
    x = f32(2)
    close(toolkit.vmap(g, in_axes=None, axis_size=3)(x), jax.vmap(g, in_axes=None, axis_size=3)(x))


def test_nested_vmap():
    x, y = f32(4, 3, 2), f32(5, 2, 6)

    def outer(lib, x, y):
        return lib.vmap(lambda a: lib.vmap(lambda b: lib.numpy.dot(a, b).sum(0), in_axes=0)(y), in_axes=0)(x)
    close(outer(toolkit, x, y), outer(jax, x, y), rtol=1e-4, atol=1e-4)


_xa, _ya = f32(4, 6), f32(5, 6)


def test_nested_closure():
    def closed(lib):
        return lib.vmap(lambda a: lib.vmap(lambda b: a[0] * b + a, out_axes=1)(_ya[:, :6]), out_axes=1)(_xa)
    close(closed(toolkit), closed(jax))


def loss(lib):
    np_ = lib.numpy

    def f(w, x):
        return np_.sum(np_.sin(x @ w) ** 2) + np_.max(x)
    return f


def test_vmap_of_grad_and_grad_of_vmap():
    w, xs = f32(3, 2), f32(6, 4, 3)
    close(toolkit.vmap(toolkit.grad(loss(toolkit)), (None, 0))(w, xs),
          jax.vmap(jax.grad(loss(jax)), (None, 0))(w, xs), rtol=1e-4, atol=1e-5)
    g_tk = toolkit.grad(lambda w: toolkit.vmap(loss(toolkit), (None, 0))(w, xs).sum())(w)
    g_jx = jax.grad(lambda w: jax.vmap(loss(jax), (None, 0))(w, xs).sum())(w)
    close(g_tk, g_jx, rtol=1e-4, atol=1e-5)
    # per-example gradients w.r.t. the batched argument, under jit
    close(toolkit.jit(toolkit.vmap(toolkit.grad(loss(toolkit), argnums=1), (None, 0)))(w, xs),
          jax.vmap(jax.grad(loss(jax), argnums=1), (None, 0))(w, xs), rtol=1e-4, atol=1e-5)


def test_vmap_inside_and_outside_jit():
    w, xs = f32(3, 2), f32(6, 4, 3)
    want = jax.vmap(loss(jax), (None, 0))(w, xs)
    close(toolkit.jit(toolkit.vmap(loss(toolkit), (None, 0)))(w, xs), want, rtol=1e-5)
    close(toolkit.vmap(toolkit.jit(loss(toolkit)), (None, 0))(w, xs), want, rtol=1e-5)
    program = toolkit.jit(toolkit.vmap(loss(toolkit), (None, 0))).trace(w, xs).program
    assert "dot_general" in str(program) and "f32[6,4,2]" in str(program)


def test_eager_matches_jit():
    w, xs = f32(3, 2), f32(6, 4, 3)
    close(toolkit.vmap(loss(toolkit), (None, 0))(w, xs), jax.vmap(loss(jax), (None, 0))(w, xs), rtol=1e-5)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reference_programs(name):
    program = PROGRAMS[name]
    args = program.make_inputs(np.random.default_rng(0))
    if name == "mlp":
        args = (args[0], args[1][:8])
    # a new leading batch of 2 over the data argument (the last); the parameters are shared
    data = np.stack([args[-1], args[-1] * 0.5 + 0.25])
    in_axes = (None,) * (len(args) - 1) + (0,)
    got = toolkit.jit(toolkit.vmap(program.build(toolkit), in_axes))(*args[:-1], data)
    want = jax.jit(jax.vmap(program.build(jax), in_axes))(*args[:-1], data)
    close(got, want, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name", ["mlp", "rnn"])
def test_reference_programs_per_example_gradients(name):
    program = PROGRAMS[name]
    args = program.make_inputs(np.random.default_rng(0))
    if name == "mlp":
        args = (args[0], args[1][:4])
    data = np.stack([args[-1], args[-1] * 0.5])

    def per_example(lib):
        fun = program.build(lib)
        return lib.vmap(lib.grad(lambda p, x: lib.numpy.sum(fun(p, x) ** 2)), (None, 0))
    close(toolkit.jit(per_example(toolkit))(args[0], data), jax.jit(per_example(jax))(args[0], data),
          rtol=1e-3, atol=1e-4)


# --- errors (JAX's messages) ------------------------------------------------------------


def test_errors():
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped:\n"
                                         "  \\* most axes \\(2 of them\\) had size 3, e.g. axis 0 of argument x"):
        toolkit.vmap(lambda x, y, z: x + y + z)(f32(3), f32(3), f32(4))
    with pytest.raises(ValueError, match="vmap was requested to map its argument along axis 2, which implies that "
                                         "its rank should be at least 3, but is only 1"):
        toolkit.vmap(lambda x: x, in_axes=2)(f32(3))
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in in_axes"):
        toolkit.vmap(lambda x: x, in_axes=None)(f32(3))
    with pytest.raises(ValueError, match="vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                                         "the positional arguments passed to the function, but got len\\(in_axes\\)=2"):
        toolkit.vmap(lambda x: x, in_axes=(0, 0))(f32(3))
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or \\(nested\\) container"):
        toolkit.vmap(lambda x: x, in_axes=(0.5,))
    with pytest.raises(ValueError, match="at vmap out_axes, got axis spec None but output was batched on axis 0"):
        toolkit.vmap(lambda x: x, out_axes=None)(f32(3))
    with pytest.raises(ValueError, match="tree prefix"):
        toolkit.vmap(lambda x: x, in_axes=({"a": 0},))([f32(3)])
    # unbatched output with out_axes=None is fine
    np.testing.assert_allclose(toolkit.vmap(lambda x: np.float32(1.0), out_axes=None)(f32(3)), 1.0)


def test_eager_control_flow_and_vmap_of_jit_with_control_flow():
    def f(lib):
        lax, np_ = lib.lax, lib.numpy

        def g(p, x):
            y = lax.cond(p > 0, lambda v: v * 2, lambda v: v - 1, x)
            y = lax.while_loop(lambda c: np_.sum(c) < 50.0, lambda c: c * 1.5 + 1, y)
            return lax.scan(lambda h, r: (h + r, h * r), np_.zeros_like(y[0]), y)
        return g

    ps, xs = np.array([1, -1, 2], np.float32), np.abs(f32(3, 4, 2))
    want = jax.vmap(f(jax))(ps, xs)
    close(toolkit.vmap(f(toolkit))(ps, xs), want, rtol=1e-5, atol=1e-5)
    close(toolkit.vmap(toolkit.jit(f(toolkit)))(ps, xs), want, rtol=1e-5, atol=1e-5)
    close(toolkit.vmap(f(toolkit), in_axes=(None, 0))(np.float32(1), xs), jax.vmap(f(jax), in_axes=(None, 0))(
        np.float32(1), xs), rtol=1e-5, atol=1e-5)
