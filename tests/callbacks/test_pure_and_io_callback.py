"""toolkit.pure_callback and toolkit.experimental.io_callback side by side with JAX's in the same run.

Values under jit, eagerly, vmap (every vmap_method), scan, custom_jvp; JAX's errors (no JVP, vmap of an
ordered io_callback, vmap_method=None, wrong result shapes and dtypes, 64-bit results with x64 off).
"""

import types

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("jax.experimental")  # jax.experimental.io_callback
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402

T = types.SimpleNamespace(pure_callback=toolkit.pure_callback, io_callback=toolkit.experimental.io_callback,
                          SDS=toolkit.ShapeDtypeStruct, jit=toolkit.jit, vmap=toolkit.vmap, grad=toolkit.grad,
                          jvp=toolkit.jvp, lax=toolkit.lax, np=tnp, custom_jvp=toolkit.custom_jvp, Array=toolkit.Array)
J = types.SimpleNamespace(pure_callback=jax.pure_callback, io_callback=jax.experimental.io_callback,
                          SDS=jax.ShapeDtypeStruct, jit=jax.jit, vmap=jax.vmap, grad=jax.grad, jvp=jax.jvp,
                          lax=jax.lax, np=jnp, custom_jvp=jax.custom_jvp, Array=jax.Array)

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def both(fun, *args, rtol=1e-6):
    """``fun(T, *args)`` and ``fun(J, *args)``: same values, shapes and dtypes (pytrees of arrays)."""
    t_out, j_out = fun(T, *args), fun(J, *args)
    t_leaves, j_leaves = jax.tree_util.tree_leaves(t_out), jax.tree_util.tree_leaves(j_out)
    assert len(t_leaves) == len(j_leaves)
    for t, j in zip(t_leaves, j_leaves):
        assert isinstance(t, toolkit.Array)
        assert t.shape == j.shape and t.dtype == j.dtype
        np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=rtol)
    return t_out


def host_sin(x):
    return np.sin(x)


@pytest.mark.parametrize("jitted", [False, True])
def test_pure_callback_values(jitted):
    def fun(N, x):
        f = lambda v: N.pure_callback(host_sin, N.SDS(v.shape, v.dtype), v) * 2
        return (N.jit(f) if jitted else f)(x)
    both(fun, X)


def test_pytrees_in_and_out_and_keyword_arguments():
    def cb(pair, *, scale):
        a, b = pair
        return {"sum": (a + b) * scale, "count": np.int32(a.size)}

    def fun(N, x):
        spec = {"sum": N.SDS(x.shape, x.dtype), "count": N.SDS((), np.int32)}
        return N.jit(lambda v: N.pure_callback(cb, spec, (v, v + 1), scale=np.float32(2)))(x)
    out = both(fun, X)
    assert set(out) == {"sum", "count"}


def test_results_are_converted_as_jax_converts_them():
    # A Python float for a float32 result, an int64 array for an int32 vector (canonicalized, x64 off).
    def fun(N, x):
        return N.jit(lambda v: N.pure_callback(lambda a: (1.5, np.array([1, 2])),
                                               (N.SDS((), np.float32), N.SDS((2,), np.int32)), v))(x)
    both(fun, X)


def test_callback_receives_cpu_arrays_as_jax():
    # JAX 0.10 device_puts each argument to the CPU device before calling: a jax.Array, not numpy; the callback may
    # return either.
    seen = []
    out = toolkit.jit(lambda v: toolkit.pure_callback(lambda a: (seen.append((type(a), a.devices())), a * 2)[1],
                                                      toolkit.ShapeDtypeStruct((3,), np.float32), v))(tnp.ones(3))
    assert seen == [(toolkit.Array, {toolkit.devices("cpu")[0]})]
    np.testing.assert_array_equal(out, np.full(3, 2.0, np.float32))
    jax = pytest.importorskip("jax")
    jseen = []
    jax.jit(lambda v: jax.pure_callback(lambda a: (jseen.append(isinstance(a, jax.Array)), a)[1],
                                        jax.ShapeDtypeStruct((3,), np.float32), v))(np.ones(3, np.float32))
    assert jseen == [True]


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                                    "legacy_vectorized"])
def test_vmap_methods(method):
    shapes = {}

    def fun(N, x, y):
        def cb(a, b):
            shapes.setdefault(N is T, []).append((a.shape, b.shape))
            return (a * b).astype(np.float32)
        f = lambda u, w: N.pure_callback(cb, N.SDS(u.shape, u.dtype), u, w, vmap_method=method)
        return N.jit(N.vmap(f, in_axes=(0, None)))(x, y)
    both(fun, np.arange(3, dtype=np.float32), np.float32(3))
    assert shapes[True] == shapes[False]  # the callback saw the same operand shapes in both


def test_vmap_without_a_method_is_refused_as_jax_does():
    for N in (T, J):
        f = lambda v: N.pure_callback(host_sin, N.SDS((), np.float32), v)
        with pytest.raises(NotImplementedError, match="vmap_method"):
            N.vmap(f)(np.arange(3, dtype=np.float32))


def test_bad_vmap_method_is_refused():
    for N in (T, J):
        with pytest.raises(ValueError, match="vmap_method must be"):
            N.pure_callback(host_sin, N.SDS((), np.float32), np.float32(1), vmap_method="bogus")


def test_pure_callback_has_no_jvp():
    for N in (T, J):
        f = lambda v: N.pure_callback(host_sin, N.SDS((), np.float32), v)
        with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
            N.grad(f)(np.float32(1))
        with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
            N.jvp(f, (np.float32(1),), (np.float32(1),))


def test_custom_jvp_differentiates_through_a_callback():
    def fun(N, x):
        @N.custom_jvp
        def f(v):
            return N.pure_callback(host_sin, N.SDS(v.shape, v.dtype), v)

        @f.defjvp
        def f_jvp(primals, tangents):
            (v,), (t,) = primals, tangents
            return f(v), N.pure_callback(np.cos, N.SDS(v.shape, v.dtype), v) * t
        return N.jit(N.grad(lambda v: f(v).sum()))(x)
    both(fun, X)


def test_inside_scan():
    def fun(N, xs):
        def body(c, x):
            y = N.pure_callback(lambda a, b: (a * b + 1).astype(np.float32), N.SDS((), np.float32), c, x)
            return y, y
        return N.jit(lambda xs: N.lax.scan(body, np.float32(1), xs))(xs)
    both(fun, np.arange(5, dtype=np.float32))


# --- io_callback ------------------------------------------------------------------------------------------


def test_io_callback_ordered_calls_keep_program_order():
    for N in (T, J):
        log = []

        def f(v, log=log, N=N):
            a = N.io_callback(lambda x: (log.append("a"), x + 1)[1], N.SDS((), np.float32), v, ordered=True)
            b = N.io_callback(lambda x: (log.append("b"), x * 2)[1], N.SDS((), np.float32), v, ordered=True)
            return a + b
        out = N.jit(f)(np.float32(3))
        assert float(out) == 10.0
        assert log == ["a", "b"]


def test_io_callback_is_not_dropped_when_its_result_is_unused():
    calls = []
    toolkit.jit(lambda v: (toolkit.experimental.io_callback(lambda x: (calls.append(1), x)[1],
                                                            toolkit.ShapeDtypeStruct((), np.float32), v), v)[1])(
        np.float32(1))
    assert calls == [1]


def test_io_callback_runs_once_per_call_and_eagerly():
    calls = []

    def f(v):
        return toolkit.experimental.io_callback(lambda x: (calls.append(float(x)), x)[1],
                                                toolkit.ShapeDtypeStruct((), np.float32), v)
    g = toolkit.jit(f)
    g(np.float32(1))
    g(np.float32(2))
    out = f(np.float32(3))  # eagerly: called now, an Array back
    assert calls == [1.0, 2.0, 3.0]
    assert isinstance(out, toolkit.Array) and float(out) == 3.0


def test_io_callback_vmap():
    def fun(N, xs):
        f = lambda v: N.io_callback(lambda a: (a * 3).astype(np.float32), N.SDS((), np.float32), v)
        return N.jit(N.vmap(f))(xs)
    both(fun, np.arange(4, dtype=np.float32))
    for N in (T, J):
        g = lambda v: N.io_callback(lambda a: a, N.SDS((), np.float32), v, ordered=True)
        with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
            N.vmap(g)(np.arange(3, dtype=np.float32))


def test_io_callback_has_no_jvp():
    for N in (T, J):
        f = lambda v: N.io_callback(host_sin, N.SDS((), np.float32), v)
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            N.grad(f)(np.float32(1))


def test_io_callback_in_scan_ordered():
    def fun(N, xs, log):
        def body(c, x):
            y = N.io_callback(lambda a: (log.append(float(a)), a)[1], N.SDS((), np.float32), c + x, ordered=True)
            return y, y
        return N.jit(lambda xs: N.lax.scan(body, np.float32(0), xs))(xs)
    t_log, j_log = [], []
    t, j = fun(T, np.arange(4, dtype=np.float32), t_log), fun(J, np.arange(4, dtype=np.float32), j_log)
    np.testing.assert_allclose(np.asarray(t[1]), np.asarray(j[1]))
    assert t_log == j_log == [0.0, 1.0, 3.0, 6.0]


# --- errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("returned,message", [
    (lambda a: np.zeros((4,), np.float32), "Incorrect output shape for return value #0"),
    (lambda a: np.zeros((3,), np.int32), "Incorrect output dtype for return value #0"),
    (lambda a: (a, a), "Mismatched number of outputs from callback"),
])
def test_wrong_results_are_clear_errors(returned, message):
    f = toolkit.jit(lambda v: toolkit.pure_callback(returned, toolkit.ShapeDtypeStruct((3,), np.float32), v))
    with pytest.raises(Exception, match=message):
        f(tnp.ones(3))
    with pytest.raises(RuntimeError, match=message):  # eagerly, the check itself
        toolkit.pure_callback(returned, toolkit.ShapeDtypeStruct((3,), np.float32), np.ones(3, np.float32))


def test_64_bit_results_need_x64():
    for N in (T, J):
        with pytest.raises(ValueError, match="64-bit"):
            N.pure_callback(host_sin, N.SDS((), np.float64), np.float32(1))
        with pytest.raises(ValueError, match="64-bit"):
            N.io_callback(host_sin, N.SDS((), np.int64), np.float32(1))


@pytest.mark.x64
def test_64_bit_results_with_x64():
    def fun(N, x):
        return N.jit(lambda v: N.pure_callback(lambda a: np.sin(a), N.SDS((3,), np.float64), v))(x)
    both(fun, np.arange(3, dtype=np.float64))


def test_bad_arguments():
    with pytest.raises(TypeError, match="must be callable"):
        toolkit.pure_callback(3, toolkit.ShapeDtypeStruct((), np.float32))
    with pytest.raises(TypeError, match="must be callable"):
        toolkit.experimental.io_callback(None, toolkit.ShapeDtypeStruct((), np.float32))
    with pytest.raises(TypeError, match="result_shape_dtypes leaves must have `shape` and `dtype`"):
        toolkit.pure_callback(host_sin, [3], np.float32(1))
    with pytest.raises(TypeError, match="argument leaf 0 is not an array"):
        toolkit.jit(lambda v: toolkit.pure_callback(host_sin, toolkit.ShapeDtypeStruct((), np.float32), "s"))(
            np.float32(1))


def test_an_exception_in_the_callback_reaches_the_caller():
    def bad(x):
        raise KeyError("boom")
    with pytest.raises(Exception, match="boom"):
        toolkit.jit(lambda v: toolkit.pure_callback(bad, toolkit.ShapeDtypeStruct((), np.float32), v))(
            np.float32(1))
    with pytest.raises(KeyError, match="boom"):  # eagerly: the exception itself
        toolkit.pure_callback(bad, toolkit.ShapeDtypeStruct((), np.float32), np.float32(1))


def test_sharding_keyword_is_not_passed_to_the_callback():
    seen = []
    toolkit.jit(lambda v: toolkit.pure_callback(lambda a, **kw: (seen.append(kw), a)[1],
                                                toolkit.ShapeDtypeStruct((), np.float32), v, sharding=None))(
        np.float32(1))
    assert seen == [{}]
    for api in (toolkit.pure_callback, toolkit.experimental.io_callback):
        with pytest.raises(NotImplementedError, match="sharding= is not supported"):
            api(host_sin, toolkit.ShapeDtypeStruct((), np.float32), np.float32(1), sharding=toolkit.devices()[0])
