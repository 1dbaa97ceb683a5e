"""toolkit.shard_map and its collectives on 8 CPU devices, compared with jax 0.10 in the same run.

Each program is written once over a namespace ``L`` (toolkit's or jax's ``lax``,
``numpy``, ``shard_map``, ``P``, mesh) and run by both; values and the output
shardings' specs must agree.
"""

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import functools  # noqa: E402
import types  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.export  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit import shard  # noqa: E402

try:
    jax.config.update("jax_num_cpu_devices", 8)
except Exception:  # the backend is already up
    pass

F32 = np.float32


@pytest.fixture(autouse=True)
def _shardy(monkeypatch):
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    if len(toolkit.devices()) < 8 or jax.device_count() < 8:
        pytest.skip("needs 8 CPU devices for toolkit and jax")


@pytest.fixture(params=["shardy", "gspmd"])
def partitioner(request, monkeypatch):
    """Run the test under both of jit's partitioners."""
    monkeypatch.setenv("TOOLKIT_PARTITIONER", request.param)
    return request.param


@pytest.fixture(scope="module")
def libs():
    tk_mesh = shard.Mesh(np.array(toolkit.devices()[:8]).reshape(2, 4), ("x", "y"))
    jx_mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("x", "y"))
    tk = types.SimpleNamespace(lax=toolkit.lax, np=tnp, shard_map=toolkit.shard_map, P=shard.PartitionSpec,
                               mesh=tk_mesh, jit=toolkit.jit, grad=toolkit.grad, scan=toolkit.lax.scan,
                               jvp=toolkit.jvp, name="toolkit")
    jx = types.SimpleNamespace(lax=jax.lax, np=jnp, shard_map=jax.shard_map, P=jax.sharding.PartitionSpec,
                               mesh=jx_mesh, jit=jax.jit, grad=jax.grad, scan=jax.lax.scan, jvp=jax.jvp,
                               name="jax")
    return tk, jx


def _norm(spec, ndim):
    entries = list(spec) + [None] * (ndim - len(spec))
    return tuple(tuple(e) if isinstance(e, (tuple, list)) else e for e in entries)


def run_both(libs, build, *args, check_sharding=True):
    """``build(L)`` returns a function; jit it with each library and compare outputs (and shardings)."""
    tk, jx = libs
    out_tk = toolkit.jit(build(tk))(*args)
    out_jx = jax.jit(build(jx))(*args)
    leaves_tk = toolkit.tree_util.tree_leaves(out_tk)
    leaves_jx = jax.tree_util.tree_leaves(out_jx)
    assert len(leaves_tk) == len(leaves_jx)
    for a, b in zip(leaves_tk, leaves_jx):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        if check_sharding:
            assert _norm(a.sharding.spec, a.ndim) == _norm(b.sharding.spec, b.ndim), (a.sharding, b.sharding)
    return out_tk, out_jx


X = np.arange(64, dtype=F32).reshape(8, 8)


# --- the collectives ------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["psum", "pmean", "pmax", "pmin"])
@pytest.mark.parametrize("axes", ["x", "y", ("x", "y")])
def test_reductions(libs, op, axes, partitioner):
    def build(L):
        out_spec = L.P(None if "x" in axes else "x", None if "y" in axes else "y")
        return L.shard_map(lambda a: getattr(L.lax, op)(a * a - 7.0, axes), mesh=L.mesh, in_specs=L.P("x", "y"),
                           out_specs=out_spec)
    run_both(libs, build, X)


def test_integer_and_bool_reductions(libs):
    xi = np.arange(64, dtype=np.int32).reshape(8, 8) - 20

    def build(L):
        def body(a):
            return (L.lax.psum(a, "y"), L.lax.psum(a > 0, "y"), L.lax.pmax(a, "x"), L.lax.pmin(a, ("x", "y")),
                    L.lax.pmean(a, "y"))
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"),
                           out_specs=(L.P("x"), L.P("x"), L.P(None, "y"), L.P(), L.P("x")))
    run_both(libs, build, xi)


@pytest.mark.parametrize("axis,tiled", [(0, True), (1, True), (0, False), (2, False)])
def test_all_gather(libs, partitioner, axis, tiled):
    def build(L):
        # the gathered value still varies over "y" in type (JAX 0.10), so out_specs must name it
        return L.shard_map(lambda a: L.lax.all_gather(a + 1.0, "y", axis=axis, tiled=tiled), mesh=L.mesh,
                           in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))
    run_both(libs, build, X)


def test_all_gather_tuple_axes(libs):
    def build(L):
        return L.shard_map(lambda a: L.lax.all_gather(a, ("x", "y"), axis=0, tiled=True), mesh=L.mesh,
                           in_specs=L.P("x", "y"), out_specs=L.P(("x", "y")))
    run_both(libs, build, X)


@pytest.mark.parametrize("dim,tiled", [(0, True), (1, True), (0, False)])
def test_psum_scatter(libs, dim, tiled):
    x = np.arange(2 * 4 * 16, dtype=F32).reshape(8, 16) if tiled else np.arange(8 * 8 * 3, dtype=F32).reshape(
        8, 8, 3)

    def build(L):
        def body(a):
            if not tiled:  # each device's block (1, 8, 3) -> (4, 2, 3): dimension 0 of the axis size
                a = a.reshape(4, 2, 3)
            return L.lax.psum_scatter(a, "y", scatter_dimension=dim, tiled=tiled)
        in_spec = L.P("x", None) if tiled else L.P(("x", "y"))
        out_spec = L.P("x", "y") if dim == 1 else L.P(("x", "y"))
        return L.shard_map(body, mesh=L.mesh, in_specs=in_spec, out_specs=out_spec)
    run_both(libs, build, x)


def test_ppermute_ring(libs, partitioner):
    def build(L):
        def body(a):
            n = L.lax.axis_size("y")
            return L.lax.ppermute(a, "y", [(i, (i + 1) % n) for i in range(n)])
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))
    out, _ = run_both(libs, build, X)
    # the block of device column j moved to column j+1
    np.testing.assert_array_equal(np.asarray(out)[:, 2:4], X[:, 0:2])


def test_ppermute_partial_and_tuple(libs):
    def build(L):
        return L.shard_map(lambda a: L.lax.ppermute(a, ("x", "y"), [(0, 7), (3, 1), (5, 5)]), mesh=L.mesh,
                           in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))
    run_both(libs, build, X)


@pytest.mark.parametrize("split,concat,tiled", [(0, 1, True), (1, 0, True), (0, 0, True), (0, 1, False),
                                                (1, 0, False), (0, 0, False)])
def test_all_to_all(libs, partitioner, split, concat, tiled):
    x = np.arange(16 * 32, dtype=F32).reshape(16, 32)

    def build(L):
        def body(a):  # block (8, 8)
            if not tiled:
                a = a.reshape(4, 16) if split == 0 else a.reshape(16, 4)
            return L.lax.all_to_all(a, "y", split, concat, tiled=tiled)
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))
    run_both(libs, build, x)


def test_pshuffle_and_pswapaxes(libs):
    """JAX's wrappers: pshuffle's perm[i] is the source of position i; pswapaxes is all_to_all(x, name, a, a)."""
    def build(L):
        def body(a):  # block (4, 2); the axis "y" has 4 devices, the size of the block's axis 0
            return (L.lax.pshuffle(a, "y", [1, 3, 0, 2]), L.lax.pswapaxes(a, "y", 0),
                    L.lax.pshuffle({"t": a[:, :1]}, ("x", "y"), [7, 6, 5, 4, 3, 2, 1, 0]))
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"),
                           out_specs=(L.P("x", "y"), L.P("x", "y"), {"t": L.P("x", "y")}))
    run_both(libs, build, X)
    tk, _ = libs  # (axis_index_groups: tests/shard/test_axis_index_groups_as_jax.py)
    for L in libs:
        bad = L.shard_map(lambda a: L.lax.pshuffle(a, "y", [0, 0, 1, 2]), mesh=L.mesh, in_specs=L.P("x", "y"),
                          out_specs=L.P("x", "y"))
        with pytest.raises(ValueError, match="does not represent a permutation"):
            (toolkit.jit if L is tk else jax.jit)(bad)(X)


def test_axis_index_and_size(libs):
    def build(L):
        def body(a):
            i = L.lax.axis_index("x") * 100 + L.lax.axis_index("y") * 10 + L.lax.axis_index(("y", "x"))
            return a[:1, :1] * 0 + i + L.lax.axis_size(("x", "y"))
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))
    out, _ = run_both(libs, build, X)
    assert np.asarray(out).shape == (2, 4)


def test_pytree_specs_and_decorator(libs):
    def build(L):
        @functools.partial(L.shard_map, mesh=L.mesh, in_specs=({"a": L.P("x"), "b": L.P(None, "y")},),
                           out_specs=(L.P("x"), L.P()))
        def f(d):
            return d["a"] * 2, L.lax.psum(d["b"].sum(), "y")
        return f
    run_both(libs, build, {"a": X, "b": X + 1})


def test_eager_call_and_context_mesh(libs):
    tk, jx = libs
    f = toolkit.shard_map(lambda a: toolkit.lax.psum(a, "x"), mesh=tk.mesh, in_specs=tk.P("x"), out_specs=tk.P())
    np.testing.assert_allclose(np.asarray(f(X)), X[:4] + X[4:])
    with tk.mesh:
        g = toolkit.shard_map(lambda a: a * 2, in_specs=tk.P("x", "y"), out_specs=tk.P("x", "y"))
        np.testing.assert_allclose(np.asarray(toolkit.jit(g)(X)), X * 2)


def test_partial_manual_axes(libs):
    def build(L):
        return L.shard_map(lambda a: (L.lax.psum(a, "x"), L.lax.axis_index("x").reshape(1)), mesh=L.mesh,
                           in_specs=L.P("x"), out_specs=(L.P(), L.P("x")), axis_names=frozenset({"x"}))
    run_both(libs, build, X, check_sharding=False)


def test_closure_capture(libs):
    w = np.linspace(-1, 1, 8, dtype=F32)

    def build(L):
        def outer(a, b):
            return L.shard_map(lambda blk: L.lax.psum(blk * b, "y"), mesh=L.mesh, in_specs=L.P("x", "y"),
                               out_specs=L.P("x"))(a)
        return outer
    run_both(libs, build, X, w[:2], check_sharding=False)


# --- programs -------------------------------------------------------------------------------------


def _mlp_params():
    rng = np.random.default_rng(0)
    return {"w1": rng.normal(size=(4, 16)).astype(F32) * 0.5, "b1": np.zeros(16, F32),
            "w2": rng.normal(size=(16, 1)).astype(F32) * 0.5}


def _mlp_data():
    rng = np.random.default_rng(1)
    return rng.normal(size=(32, 4)).astype(F32), rng.normal(size=(32, 1)).astype(F32)


def test_data_parallel_mlp_training_step(libs, partitioner):
    params, (xs, ys) = _mlp_params(), _mlp_data()

    def build(L):
        def local_loss(p, x, y):
            h = L.np.tanh(x @ p["w1"] + p["b1"])
            return L.np.sum((h @ p["w2"] - y) ** 2)

        def loss(p, x, y):  # the global mean squared error: per-device sums, one psum
            total = L.shard_map(lambda p, x, y: L.lax.psum(local_loss(p, x, y), "x"), mesh=L.mesh,
                                in_specs=(L.P(), L.P("x"), L.P("x")), out_specs=L.P())(p, x, y)
            return total / x.shape[0]

        def step(p, x, y):
            g = L.grad(loss)(p, x, y)
            return {k: p[k] - 0.1 * g[k] for k in p}, g
        return step
    (new_tk, g_tk), (new_jx, g_jx) = run_both(libs, build, params, xs, ys, check_sharding=False)
    for k in params:
        assert not np.allclose(np.asarray(g_tk[k]), 0)


def test_data_parallel_grads_inside_body_check_vma_false(libs):
    params, (xs, ys) = _mlp_params(), _mlp_data()

    def build(L):
        def local_loss(p, x, y):
            h = L.np.tanh(x @ p["w1"] + p["b1"])
            return L.np.mean((h @ p["w2"] - y) ** 2)

        def body(p, x, y):
            g = L.grad(local_loss)(p, x, y)
            g = L.lax.pmean(g, "x")
            return {k: p[k] - 0.1 * g[k] for k in p}
        return L.shard_map(body, mesh=L.mesh, in_specs=(L.P(), L.P("x"), L.P("x")), out_specs=L.P(),
                           check_vma=False)
    run_both(libs, build, params, xs, ys, check_sharding=False)


def test_tensor_parallel_matmul(libs, partitioner):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 16)).astype(F32)
    w1 = rng.normal(size=(16, 32)).astype(F32)
    w2 = rng.normal(size=(32, 12)).astype(F32)

    def build(L):
        # Megatron style: batch over x; features of x over y are all-gathered; w1 column-parallel and w2
        # row-parallel over y; the partial products are reduce-scattered over y.
        def body(x_blk, w1_blk, w2_blk):
            x_full = L.lax.all_gather(x_blk, "y", axis=1, tiled=True)          # (4, 16)
            h = L.np.tanh(x_full @ w1_blk)                                     # (4, 8)
            return L.lax.psum_scatter(h @ w2_blk, "y", scatter_dimension=1, tiled=True)  # (4, 3)
        return L.shard_map(body, mesh=L.mesh, in_specs=(L.P("x", "y"), L.P(None, "y"), L.P("y", None)),
                           out_specs=L.P("x", "y"))
    out, _ = run_both(libs, build, x, w1, w2)
    np.testing.assert_allclose(np.asarray(out), np.tanh(x @ w1) @ w2, rtol=1e-4, atol=1e-4)


def test_shard_map_inside_scan(libs, partitioner):
    def build(L):
        sm = L.shard_map(lambda c, x: L.lax.psum(c * x, "y"), mesh=L.mesh, in_specs=(L.P(None, "y"), L.P(None, "y")),
                         out_specs=L.P())

        def f(c0, xs):
            def step(c, x):
                s = sm(c, x)
                return c + s.sum() * 0.01, s
            return L.scan(step, c0, xs)
        return f
    run_both(libs, build, np.ones((2, 8), F32), np.arange(3 * 2 * 8, dtype=F32).reshape(3, 2, 8),
             check_sharding=False)


def test_shard_map_inside_fori_and_while_loops(libs):
    def build(L):
        ring = L.shard_map(lambda a: L.lax.ppermute(a, "x", [(0, 1), (1, 0)]) + L.lax.pmean(a, "y"), mesh=L.mesh,
                           in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))

        def f(x):
            y = L.lax.fori_loop(0, 3, lambda i, v: ring(v) * 0.5, x)
            return L.lax.while_loop(lambda v: v.sum() < 1e4, lambda v: ring(v) + 1.0, y)
        return f
    run_both(libs, build, X, check_sharding=False)


def test_scan_and_loops_inside_shard_map(libs, partitioner):
    def build(L):
        def body(a):
            def step(c, row):
                c = c + L.lax.psum(row, "y")
                return c, L.lax.pmax(row, "y")
            c, ys = L.scan(step, L.lax.pcast(L.np.zeros(a.shape[1:], a.dtype), "x", to="varying"), a)
            w = L.lax.fori_loop(0, 3, lambda i, v: v + L.lax.ppermute(v, "x", [(0, 1), (1, 0)]), a)
            k = L.lax.while_loop(lambda v: v[0] < 100.0, lambda v: v + L.lax.psum(L.np.abs(v), "y") + 1.0,
                                 L.np.zeros((1,), a.dtype) + c[:1])
            return c, ys, w, k
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"),
                           out_specs=(L.P("x"), L.P("x"), L.P("x", "y"), L.P("x")))
    run_both(libs, build, X, check_sharding=False)


# --- differentiation -----------------------------------------------------------------------------


def test_data_parallel_grads_inside_body_check_vma(libs, partitioner):
    # grad inside the body with check_vma=True (JAX's default): the replicated parameters meet the sharded
    # batch through pvary, whose transpose sums their cotangents over the batch axis; pmean of that invariant
    # sum leaves it alone. JAX's numbers are the sum of the per-device gradients, not their mean.
    params, (xs, ys) = _mlp_params(), _mlp_data()

    def build(L):
        def local_loss(p, x, y):
            h = L.np.tanh(x @ p["w1"] + p["b1"])
            return L.np.mean((h @ p["w2"] - y) ** 2)

        def body(p, x, y):
            g = L.lax.pmean(L.grad(local_loss)(p, x, y), "x")
            return {k: p[k] - 0.1 * g[k] for k in p}
        return L.shard_map(body, mesh=L.mesh, in_specs=(L.P(), L.P("x"), L.P("x")), out_specs=L.P())
    run_both(libs, build, params, xs, ys, check_sharding=False)


def test_grad_inside_body_of_a_replicated_input_is_summed(libs):
    def build(L):
        def body(w, x):
            return L.grad(lambda w: (x * w).sum())(w)  # varies over nothing: summed over "x" and "y"
        return L.shard_map(body, mesh=L.mesh, in_specs=(L.P(), L.P("x", "y")), out_specs=L.P())
    run_both(libs, build, np.linspace(0.5, 1.5, 2, dtype=F32), X[:, :8] / 10, check_sharding=False)


def test_grad_inside_a_loop_inside_a_check_vma_body_is_refused(mesh):
    def body(w, x):
        def step(carry, _):
            return carry + toolkit.grad(lambda w: (x * w).sum())(carry), None
        return toolkit.lax.scan(step, w, None, length=2)[0]
    P = shard.PartitionSpec
    f = toolkit.shard_map(body, mesh=mesh, in_specs=(P(), P("x", "y")), out_specs=P())
    with pytest.raises(NotImplementedError, match="inside a loop or cond inside a shard_map body with check_vma"):
        toolkit.jit(f).lower(np.ones(2, F32), np.ones((8, 8), F32))


@pytest.mark.parametrize("check_vma", [True, False])
def test_grad_through_shard_map_with_psum(libs, partitioner, check_vma):
    w = np.linspace(0.5, 1.5, 8, dtype=F32)

    def build(L):
        def f(x, w):
            def body(xb, wb):
                y = L.np.sin(xb) * wb  # wb replicated, xb sharded
                s = L.lax.psum(y.sum(axis=0), "x")
                return s, L.lax.pmean(wb * 3.0, "y")  # pmean of an invariant value
            s, m = L.shard_map(body, mesh=L.mesh, in_specs=(L.P("x", None), L.P()), out_specs=(L.P(), L.P()),
                               check_vma=check_vma)(x, w)
            return (s ** 2).sum() + m.sum()
        return lambda x, w: L.grad(f, argnums=(0, 1))(x, w)
    run_both(libs, build, X / 10, w, check_sharding=False)


def test_grad_collectives(libs):
    def build(L):
        def f(x):
            def body(a):
                g = L.lax.all_gather(a, "x", axis=0, tiled=True)
                p = L.lax.ppermute(g, "y", [(i, (i + 1) % 4) for i in range(4)])
                t = L.lax.all_to_all(p, "y", 0, 1, tiled=True)
                s = L.lax.psum_scatter(t * t, "x", scatter_dimension=1, tiled=True)
                return s
            out = L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))(x)
            return (L.np.sin(out) * L.np.arange(out.size).reshape(out.shape)).sum()
        return L.grad(f)
    run_both(libs, build, X / 64, check_sharding=False)


def test_jvp_through_shard_map(libs, partitioner):
    def build(L):
        sm = L.shard_map(lambda a, b: (L.lax.psum(a * b, "y"), L.np.cos(a)), mesh=L.mesh,
                         in_specs=(L.P("x", "y"), L.P()), out_specs=(L.P("x"), L.P("x", "y")))
        return lambda x, t: L.jvp(lambda x: sm(x, 2.0 * L.np.ones((4, 2), x.dtype)), (x,), (t,))
    run_both(libs, build, X / 10, np.ones_like(X), check_sharding=False)


# --- export ---------------------------------------------------------------------------------------


def test_export_round_trip(libs, partitioner):
    from jax import export as jexport
    tk, jx = libs

    @functools.partial(toolkit.shard_map, mesh=tk.mesh, in_specs=tk.P("x", "y"), out_specs=tk.P("x"))
    def f(a):
        return toolkit.lax.psum(a * a, "y") + toolkit.lax.axis_index("x").astype(a.dtype)

    exp = toolkit.export.export(toolkit.jit(f))(toolkit.ShapeDtypeStruct(X.shape, X.dtype))
    assert ("sdy.manual_computation" if partitioner == "shardy" else "SPMDFullToShardShape") in exp.mlir_module()
    expected = np.asarray(toolkit.jit(f)(X))
    by_toolkit = exp.call(X)
    np.testing.assert_allclose(np.asarray(by_toolkit), expected)
    replicated = jax.sharding.NamedSharding(jx.mesh, jx.P())
    by_jax = jax.jit(jexport.deserialize(bytearray(exp.serialize())).call, in_shardings=replicated)(X)
    np.testing.assert_allclose(np.asarray(by_jax), expected)
    by_toolkit_again = toolkit.export.deserialize(exp.serialize()).call(X)
    np.testing.assert_allclose(np.asarray(by_toolkit_again), expected)

    # the gradient program exports too (a shard_map whose body runs the VJP)
    def loss(a):
        return (f(a) ** 2).sum()
    grad_exp = toolkit.export.export(toolkit.jit(toolkit.grad(loss)))(toolkit.ShapeDtypeStruct(X.shape, X.dtype))
    want = jax.jit(jax.grad(lambda a: (jax.shard_map(
        lambda b: jax.lax.psum(b * b, "y") + jax.lax.axis_index("x").astype(b.dtype), mesh=jx.mesh,
        in_specs=jx.P("x", "y"), out_specs=jx.P("x"))(a) ** 2).sum()))(X / 64)
    got = jax.jit(jexport.deserialize(bytearray(grad_exp.serialize())).call, in_shardings=replicated)(X / 64)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(grad_exp.call(X / 64)), np.asarray(want), rtol=1e-5)


# --- errors ---------------------------------------------------------------------------------------


def test_nested_shard_map_refused(libs):
    tk, _ = libs
    inner = toolkit.shard_map(lambda b: b, mesh=tk.mesh, in_specs=tk.P("y"), out_specs=tk.P("y"))
    outer = toolkit.shard_map(lambda a: inner(a), mesh=tk.mesh, in_specs=tk.P("x"), out_specs=tk.P("x"))
    with pytest.raises(NotImplementedError, match="nested shard_map"):
        toolkit.jit(outer)(X)


def test_unbound_axis_name(libs):
    tk, _ = libs
    with pytest.raises(NameError, match="unbound axis name: x"):
        toolkit.jit(lambda a: toolkit.lax.psum(a, "x"))(X)
    f = toolkit.shard_map(lambda a: toolkit.lax.psum(a, "z"), mesh=tk.mesh, in_specs=tk.P("x"), out_specs=tk.P())
    with pytest.raises(NameError, match="unbound axis name: z"):
        toolkit.jit(f)(X)
    with pytest.raises(NameError, match="unbound axis name: y"):
        toolkit.jit(toolkit.shard_map(lambda a: toolkit.lax.axis_index("y"), mesh=tk.mesh, in_specs=tk.P("x"),
                                      out_specs=tk.P(), axis_names={"x"}))(X)


def test_in_specs_do_not_divide(libs):
    tk, jx = libs
    x = np.ones((6, 8), F32)
    with pytest.raises(ValueError, match="not evenly divisible") as jax_error:
        jax.jit(jax.shard_map(lambda a: a, mesh=jx.mesh, in_specs=jx.P("y"), out_specs=jx.P("y")))(x)
    assert "evenly divisible" in str(jax_error.value)
    with pytest.raises(ValueError, match="not evenly divisible"):
        toolkit.jit(toolkit.shard_map(lambda a: a, mesh=tk.mesh, in_specs=tk.P("y"), out_specs=tk.P("y")))(x)


def test_wrong_number_of_specs(libs):
    tk, jx = libs
    with pytest.raises(ValueError):
        jax.jit(jax.shard_map(lambda a: a, mesh=jx.mesh, in_specs=(jx.P("x"), jx.P("x")), out_specs=jx.P("x")))(X)
    with pytest.raises(ValueError, match="tree prefix"):
        toolkit.jit(toolkit.shard_map(lambda a: a, mesh=tk.mesh, in_specs=(tk.P("x"), tk.P("x")),
                                      out_specs=tk.P("x")))(X)
    with pytest.raises(ValueError, match="tree prefix"):
        toolkit.jit(toolkit.shard_map(lambda a: (a, a), mesh=tk.mesh, in_specs=tk.P("x"),
                                      out_specs=(tk.P("x"),) * 3))(X)


def test_out_specs_claim_replication_of_varying_value(libs):
    tk, jx = libs
    with pytest.raises(ValueError, match="require replication which can't be statically inferred"):
        jax.jit(jax.shard_map(lambda a: a * 2, mesh=jx.mesh, in_specs=jx.P("x", "y"), out_specs=jx.P("x")))(X)
    with pytest.raises(ValueError, match="require replication which can't be statically inferred"):
        toolkit.jit(toolkit.shard_map(lambda a: a * 2, mesh=tk.mesh, in_specs=tk.P("x", "y"),
                                      out_specs=tk.P("x")))(X)
    with pytest.raises(ValueError, match="mesh axis 'x'"):
        toolkit.jit(toolkit.shard_map(lambda a: a[:1] * 0 + toolkit.lax.axis_index("x"), mesh=tk.mesh,
                                      in_specs=tk.P(), out_specs=tk.P()))(X)
    # check_vma=False trusts the out_specs, as JAX does
    out = toolkit.jit(toolkit.shard_map(lambda a: a * 2, mesh=tk.mesh, in_specs=tk.P("x", "y"), out_specs=tk.P("x"),
                                        check_vma=False))(X)
    assert out.shape == (8, 2)
    # psum makes it invariant: accepted
    toolkit.jit(toolkit.shard_map(lambda a: toolkit.lax.psum(a, "y"), mesh=tk.mesh, in_specs=tk.P("x", "y"),
                                  out_specs=tk.P("x")))(X)


# --- GSPMD --------------------------------------------------------------------------------------


def test_gspmd_partitioner(libs, monkeypatch):
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "gspmd")

    def build(L):
        def body(a):
            g = L.lax.all_gather(a, "x", axis=0, tiled=True)
            return L.lax.psum(g, "y") + L.lax.axis_index("y").astype(a.dtype)
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=L.P("x", "y"))
    run_both(libs, build, X, check_sharding=False)
    text = toolkit.jit(build(libs[0])).lower(X).as_text()
    assert "SPMDFullToShardShape" in text and "SPMDShardToFullShape" in text
