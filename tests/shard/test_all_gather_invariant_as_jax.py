"""``lax.all_gather(..., to="invarying")`` (JAX's ``all_gather_invariant``) inside ``shard_map`` on 8 CPU devices,
compared with jax 0.10 in the same run.

The invariant gather gathers as the varying one does (the same ``stablehlo.all_gather``), but its result is typed
as the same on every device of the gathered axes: ``out_specs`` may leave them out, and its transpose is this
device's block of the cotangent (a ``dynamic_slice`` at ``axis_index``), not a ``psum_scatter``. Each program is
written once over a namespace ``L`` (toolkit's or jax's) and run by both.
"""

import re

import numpy as np
import pytest

import toolkit

jax = pytest.importorskip("jax")  # 8 CPU devices for both libraries: tests/shard/conftest.py

F32 = np.float32
X = np.arange(64, dtype=F32).reshape(8, 8)


# libs (toolkit's and JAX's namespaces over the (2, 4) mesh) and shardy: tests/shard/conftest.py
pytestmark = pytest.mark.usefixtures("shardy")


def _norm(spec, ndim):
    entries = list(spec) + [None] * (ndim - len(spec))
    return tuple(tuple(e) if isinstance(e, (tuple, list)) else e for e in entries)


def run_both(libs, build, *args, jit=True):
    """``build(L)`` returns a function; run it (jitted unless ``jit=False``) with each library and compare the
    outputs' values, dtypes and output shardings' specs."""
    tk, jx = libs
    f_tk, f_jx = build(tk), build(jx)
    out_tk = (toolkit.jit(f_tk) if jit else f_tk)(*args)
    out_jx = (jax.jit(f_jx) if jit else f_jx)(*args)
    leaves_tk = toolkit.tree_util.tree_leaves(out_tk)
    leaves_jx = jax.tree_util.tree_leaves(out_jx)
    assert len(leaves_tk) == len(leaves_jx)
    for a, b in zip(leaves_tk, leaves_jx):
        assert (a.shape, np.asarray(a).dtype) == (b.shape, np.asarray(b).dtype)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)
        if hasattr(a, "sharding") and hasattr(b.sharding, "spec"):
            assert _norm(a.sharding.spec, a.ndim) == _norm(b.sharding.spec, b.ndim), (a.sharding, b.sharding)
    return out_tk, out_jx


def _gather(L, axes, **kw):
    return lambda a: L.lax.all_gather(a, axes, to="invarying", **kw)


# --- values, and out_specs without the gathered axes ------------------------------------------


@pytest.mark.parametrize("partitioner", ["shardy", "gspmd"])
def test_values_out_specs_leave_the_gathered_axes_out(libs, partitioner, monkeypatch):
    monkeypatch.setenv("TOOLKIT_PARTITIONER", partitioner)

    def build(L):
        def body(a):  # a: (4, 2) block, varying over x and y
            return (L.lax.all_gather(a + 1.0, "y", to="invarying", axis=0, tiled=True),   # (16, 2) {x}
                    L.lax.all_gather(a, "y", to="invarying", axis=1, tiled=True),         # (4, 8) {x}
                    L.lax.all_gather(a, "y", to="invarying", axis=0),                     # (4, 4, 2) {x}
                    L.lax.all_gather(a, "y", to="invarying", axis=-1),                    # (4, 2, 4) {x}
                    L.lax.all_gather(a, "x", to="invarying", axis=1, tiled=True),         # (4, 4) {y}
                    L.lax.all_gather(a, ("x", "y"), to="invarying", tiled=True),          # (32, 2) {}
                    L.lax.all_gather(a, ("y", "x"), to="invarying", axis=1, tiled=True))  # (4, 16) {}
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"),
                           out_specs=(L.P("x"), L.P("x"), L.P(None, "x"), L.P("x"), L.P(None, "y"), L.P(), L.P()))
    run_both(libs, build, X)


def test_eager_pytree_and_invariant_operand(libs):
    # An operand invariant over the gathered axis is made to vary over it first (JAX's automatic pvary); a
    # pytree is gathered leaf by leaf; the result may also be given out_specs that name the gathered axis.
    def build(L):
        def body(a, w):  # a varies over x only; w is replicated
            return L.lax.all_gather({"a": a * 2.0, "w": w}, "y", to="invarying", tiled=True)
        return L.shard_map(body, mesh=L.mesh, in_specs=(L.P("x"), L.P()),
                           out_specs={"a": L.P("x"), "w": L.P("y")})
    run_both(libs, build, X, np.arange(6, dtype=F32).reshape(3, 2), jit=False)


@pytest.mark.x64
def test_float64_and_int(libs):
    def build(L):
        def body(a, i):
            return L.lax.all_gather(a, "y", to="invarying"), L.lax.all_gather(i, "x", to="invarying", tiled=True)
        return L.shard_map(body, mesh=L.mesh, in_specs=(L.P("x", "y"), L.P("y")), out_specs=(L.P("x"), L.P("y")))
    out_tk, _ = run_both(libs, build, X.astype(np.float64), np.arange(16, dtype=np.int32).reshape(8, 2))
    assert out_tk[0].dtype == np.float64 and out_tk[1].dtype == np.int32


def test_out_specs_refused_where_the_result_still_varies(libs):
    # Gathering over "y" leaves the value varying over "x": out_specs P() is refused by both (check_vma=True),
    # and accepted with check_vma=False, where the gather is the same.
    for L in libs:
        f = L.shard_map(_gather(L, "y", tiled=True), mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=L.P())
        with pytest.raises(ValueError, match=r"out_specs.*(replicat|vary|varying)"):
            L.jit(f)(X)

    def build(L):
        return L.shard_map(_gather(L, "y", tiled=True), mesh=L.mesh, in_specs=L.P("x", "y"),
                           out_specs=L.P("x"), check_vma=False)
    run_both(libs, build, X)


# --- the lowering -------------------------------------------------------------------------------


def _gathers(text):
    """The ``stablehlo.all_gather`` ops of a module's text, without their result names."""
    return [re.sub(r"%[\w#]+", "%_", line.split("=", 1)[1].strip()) for line in text.splitlines()
            if "stablehlo.all_gather" in line]


@pytest.mark.parametrize("check_vma", [True, False])
def test_lowers_to_the_same_all_gather_as_jax(libs, check_vma):
    texts = []
    for L in libs:
        def body(a):
            return (L.lax.all_gather(a, "y", to="invarying", tiled=True),
                    L.lax.all_gather(a, ("y", "x"), to="invarying", axis=1))
        f = L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=(L.P("x"), L.P()),
                        check_vma=check_vma)
        texts.append(L.jit(f).lower(X).as_text())
    ours, theirs = map(_gathers, texts)
    assert len(ours) == 2 and ours == theirs, (ours, theirs)


# --- derivatives --------------------------------------------------------------------------------


W = np.arange(64, dtype=F32).reshape(2, 4, 4, 2) / 100.0


@pytest.mark.parametrize("check_vma", [True, False])
def test_grad_around_the_shard_map(libs, check_vma):
    # The transpose takes this device's block of the (replicated) cotangent. With check_vma=False JAX divides
    # the cotangent of an output replicated over "y" by its 4 devices and still slices: toolkit agrees.
    def build(L):
        def body(a, w):  # w: this x-row's weights, replicated over y
            g = L.lax.all_gather(L.np.sin(a), "y", to="invarying", axis=1)           # (4, 4, 2)
            t = L.lax.all_gather(a, ("y", "x"), to="invarying", axis=0, tiled=True)  # (32, 2)
            return (L.np.sum(g * w[0]) + L.np.sum(t * t))[None]

        def loss(a, w):
            return L.shard_map(body, mesh=L.mesh, in_specs=(L.P("x", "y"), L.P("x")), out_specs=L.P("x"),
                               check_vma=check_vma)(a, w).sum()
        return L.grad(loss, argnums=(0, 1))
    run_both(libs, build, X, W)


def test_grad_inside_the_body_and_jvp(libs):
    def build(L):
        def body(a, w):
            da = L.grad(lambda b: L.np.sum(L.lax.all_gather(b, "y", to="invarying", tiled=True) ** 2 * w))(a)
            _, tangent = L.jvp(lambda b: L.lax.all_gather(b, "y", to="invarying", tiled=True), (a,), (a * 0.5,))
            return da, tangent
        return L.shard_map(body, mesh=L.mesh, in_specs=(L.P("x", "y"), L.P()), out_specs=(L.P("x", "y"), L.P("x")))
    run_both(libs, build, X, np.arange(32, dtype=F32).reshape(16, 2))


# --- vmap ---------------------------------------------------------------------------------------


def test_vmap_inside_the_body(libs):
    def build(L):
        def body(a):  # a: (4, 2) block; map its columns, gather each over "y"
            per_column = L.vmap(lambda r: L.lax.all_gather(r, "y", to="invarying"), in_axes=1, out_axes=1)(a)
            gathered_rows = L.vmap(lambda r: L.lax.all_gather(r, "y", to="invarying", tiled=True))
            grads = L.grad(lambda b: L.np.sum(L.np.cos(gathered_rows(b))))(a)  # vmap inside grad
            return per_column, grads
        return L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=(L.P("x"), L.P("x", "y")))
    run_both(libs, build, X)


def test_over_a_vmap_axis_is_refused(libs):
    # JAX's all_gather_invariant needs a shard_map's manual axis: eagerly its pvary raises ValueError.
    v = np.arange(12, dtype=F32).reshape(3, 4)
    tk, jx = libs
    with pytest.raises(ValueError, match="pvary should be called under jax.shard_map"):
        jax.vmap(lambda r: jax.lax.all_gather(r, "i", to="invarying"), axis_name="i")(v)
    with pytest.raises(ValueError, match="vmap binds"):
        toolkit.vmap(lambda r: toolkit.lax.all_gather(r, "i", to="invarying"), axis_name="i")(v)


# --- errors and trivial cases ------------------------------------------------------------------


def test_errors_and_empty_axes(libs):
    for L in libs:
        def body(a, L=L):
            empty = L.lax.all_gather(a, (), to="invarying")  # no axes: the value itself
            assert empty.shape == a.shape
            with pytest.raises(NotImplementedError):  # JAX's bare one: no groups with to="invarying"
                L.lax.all_gather(a, "y", to="invarying", axis_index_groups=[[0, 1], [2, 3]])
            if L.name == "toolkit":  # to="reduced" (JAX's reduced types) stays refused in toolkit
                with pytest.raises(NotImplementedError, match="all_gather_reduced"):
                    L.lax.all_gather(a, "y", to="reduced")
            with pytest.raises(ValueError, match="out of bounds"):
                L.lax.all_gather(a, "y", to="invarying", axis=3)
            with pytest.raises(ValueError, match="out of bounds"):
                L.lax.all_gather(a, "y", to="invarying", axis=2, tiled=True)
            with pytest.raises(ValueError, match="Allowed `to` values"):
                L.lax.all_gather(a, "y", to="invariant")
            with pytest.raises(NameError, match="unbound axis name: z"):
                L.lax.all_gather(a, "z", to="invarying")
            return empty
        L.jit(L.shard_map(body, mesh=L.mesh, in_specs=L.P("x", "y"), out_specs=L.P("x", "y")))(X)
