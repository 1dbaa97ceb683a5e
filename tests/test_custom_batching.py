"""toolkit.custom_batching (custom_vmap, sequential_vmap) against jax.custom_batching 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import custom_batching as tcb

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _make(cb, np_mod):
    """f(x, y) = sin(x) + y, whose rule says cos(x) * y (distinguishable from f), as both libraries build it."""
    calls = []

    @cb.custom_vmap
    def f(x, y):
        return np_mod.sin(x) + y

    @f.def_vmap
    def f_rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, list(in_batched)))
        out = np_mod.cos(xs) * ys
        return out, any(in_batched)

    return f, calls


XS = np.linspace(0.1, 1.0, 4, dtype=np.float32)
YS = np.linspace(1.0, 2.0, 4, dtype=np.float32)


def test_outside_vmap_runs_the_function():
    f, calls = _make(tcb, tnp)
    jf, _ = _make(jax.custom_batching, jnp)
    np.testing.assert_allclose(f(XS[0], YS[0]), jf(XS[0], YS[0]), rtol=1e-6)
    np.testing.assert_allclose(toolkit.jit(f)(XS, YS), jax.jit(jf)(XS, YS), rtol=1e-6)
    assert calls == []


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_runs_the_rule(in_axes):
    f, calls = _make(tcb, tnp)
    jf, jcalls = _make(jax.custom_batching, jnp)
    ys = YS if in_axes[1] == 0 else YS[0]
    xs = XS if in_axes[0] == 0 else XS[0]
    got = toolkit.vmap(f, in_axes=in_axes)(xs, ys)
    want = jax.vmap(jf, in_axes=in_axes)(xs, ys)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert calls == jcalls


def test_vmap_through_jit_and_jit_of_vmap():
    f, _ = _make(tcb, tnp)
    jf, _ = _make(jax.custom_batching, jnp)
    want = jax.vmap(jf)(XS, YS)
    np.testing.assert_allclose(toolkit.vmap(toolkit.jit(f))(XS, YS), want, rtol=1e-6)
    np.testing.assert_allclose(toolkit.jit(toolkit.vmap(f))(XS, YS), want, rtol=1e-6)


def test_batch_dimension_not_in_front_is_moved():
    f, calls = _make(tcb, tnp)
    jf, jcalls = _make(jax.custom_batching, jnp)
    m = np.stack([XS, XS + 1], axis=1)  # batch along axis 1
    got = toolkit.vmap(f, in_axes=(1, None))(m, np.float32(2))
    want = jax.vmap(jf, in_axes=(1, None))(m, np.float32(2))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert calls == jcalls == [(2, [True, False])]


def test_nested_vmap():
    f, calls = _make(tcb, tnp)
    jf, jcalls = _make(jax.custom_batching, jnp)
    m = np.outer(XS, YS).astype(np.float32)
    got = toolkit.vmap(toolkit.vmap(f, in_axes=(0, None)), in_axes=(0, None))(m, np.float32(3))
    want = jax.vmap(jax.vmap(jf, in_axes=(0, None)), in_axes=(0, None))(m, np.float32(3))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_pytree_arguments_and_unbatched_outputs():
    def build(cb, np_mod):
        @cb.custom_vmap
        def g(d):
            return {"s": d["a"] * 2, "t": d["b"] + 1}

        @g.def_vmap
        def g_rule(axis_size, in_batched, d):
            (flags,) = [in_batched[0]]
            return {"s": d["a"] * 3, "t": d["b"] - 1}, {"s": flags["a"], "t": flags["b"]}
        return g

    g, jg = build(tcb, tnp), build(jax.custom_batching, jnp)
    arg = {"a": XS, "b": np.float32(5)}
    got = toolkit.vmap(g, in_axes=({"a": 0, "b": None},), out_axes={"s": 0, "t": None})(arg)
    want = jax.vmap(jg, in_axes=({"a": 0, "b": None},), out_axes={"s": 0, "t": None})(arg)
    for k in ("s", "t"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)


def test_jvp_and_vmap_of_jvp():
    f, _ = _make(tcb, tnp)
    jf, _ = _make(jax.custom_batching, jnp)
    got = toolkit.jvp(f, (XS[1], YS[1]), (np.float32(1), np.float32(0.5)))
    want = jax.jvp(jf, (XS[1], YS[1]), (np.float32(1), np.float32(0.5)))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    ones = np.ones_like(XS)
    for in_axes in [(0, 0), (0, None)]:
        ts = ones if in_axes[1] == 0 else np.float32(1)
        got = toolkit.vmap(lambda x, t: toolkit.jvp(f, (x, YS[0]), (t, np.float32(0))), in_axes=in_axes)(XS, ts)
        want = jax.vmap(lambda x, t: jax.jvp(jf, (x, YS[0]), (t, np.float32(0))), in_axes=in_axes)(XS, ts)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-5)


def test_grad_is_refused_as_jax():
    f, _ = _make(tcb, tnp)
    jf, _ = _make(jax.custom_batching, jnp)
    with pytest.raises(ValueError):
        jax.grad(jf)(XS[0], YS[0])
    with pytest.raises(NotImplementedError, match="custom_vmap_call"):
        toolkit.grad(f)(XS[0], YS[0])


def test_custom_vjp_over_custom_vmap_is_differentiable():
    # toolkit's custom_vjp does not forward attributes to the function it wraps (JAX's does), so the
    # rule is given on the custom_vmap before wrapping.
    @tcb.custom_vmap
    def inner(x, y):
        return tnp.sin(x) * y

    @inner.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        return tnp.cos(xs) * ys, True

    f = toolkit.custom_vjp(inner)

    f.defvjp(lambda x, y: (f(x, y), (tnp.cos(x), tnp.sin(x), y)),
             lambda res, g: (res[0] * g * res[2], res[1] * g))
    np.testing.assert_allclose(toolkit.vmap(f)(np.zeros(3, np.float32), np.ones(3, np.float32)), np.ones(3))
    np.testing.assert_allclose(toolkit.grad(f)(np.float32(0), np.float32(1)), 1.0)


def test_sequential_vmap_matches_jax():
    seen = []

    def body(np_mod):
        def g(x, y):
            seen.append(np_mod.__name__)
            return x * 2 + y
        return g

    g = tcb.sequential_vmap(body(tnp))
    jg = jax.custom_batching.sequential_vmap(body(jnp))
    for in_axes in [(0, None), (0, 0)]:
        ys = YS if in_axes[1] == 0 else np.float32(1)
        np.testing.assert_allclose(toolkit.vmap(g, in_axes=in_axes)(XS, ys),
                                   jax.vmap(jg, in_axes=in_axes)(XS, ys), rtol=1e-6)
    np.testing.assert_allclose(g(XS, YS), jg(XS, YS), rtol=1e-6)
    text = str(toolkit.make_jaxpr(toolkit.vmap(g, in_axes=(0, None)))(XS, np.float32(1)))
    assert "scan" in text


def test_keyword_arguments_are_resolved():
    f, _ = _make(tcb, tnp)
    jf, _ = _make(jax.custom_batching, jnp)
    np.testing.assert_allclose(toolkit.vmap(lambda x, y: f(x, y=y))(XS, YS),
                               jax.vmap(lambda x, y: jf(x, y=y))(XS, YS), rtol=1e-6)


def test_errors():
    g = tcb.custom_vmap(lambda x: x)
    with pytest.raises(AttributeError, match="No batching rule defined"):
        g(XS)
    f, _ = _make(tcb, tnp)
    with pytest.raises(TypeError, match="could not be resolved"):
        f(XS)
    with pytest.raises(TypeError, match="takes a function"):
        tcb.custom_vmap(3)
    with pytest.raises(TypeError, match="takes a function"):
        g.def_vmap(None)

    h = tcb.custom_vmap(lambda x: (x, x))
    h.def_vmap(lambda n, b, xs: ((xs, xs), True))  # out_batched tree does not match the outputs
    with pytest.raises(ValueError, match="do not match"):
        toolkit.vmap(h)(XS)
    k = tcb.custom_vmap(lambda x: x)
    k.def_vmap(lambda n, b, xs: ((xs, xs), (True, True)))  # not the function's output structure
    with pytest.raises(ValueError, match="original custom-vmapped function"):
        toolkit.vmap(k)(XS)
    w = tcb.custom_vmap(lambda x: x)
    w.def_vmap(lambda n, b, xs: (xs[0], True))  # claims batched but has no batch dimension
    with pytest.raises(ValueError, match="output leaf 0"):
        toolkit.vmap(w)(XS)
    p = tcb.custom_vmap(lambda x: x)
    p.def_vmap(lambda n, b, xs: xs)  # not a pair
    with pytest.raises(ValueError, match="pair"):
        toolkit.vmap(p)(np.ones((2, 2), np.float32))


def test_closing_over_a_batched_value_is_an_error():
    def outer(y):
        c = tcb.custom_vmap(lambda x: x + y)
        c.def_vmap(lambda n, b, xs: (xs, b[0]))
        return c(np.float32(1))
    with pytest.raises(ValueError, match="closes over a value that vmap batches"):
        toolkit.vmap(outer)(XS)
