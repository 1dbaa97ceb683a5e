"""Explicit sharding ("sharding in types") on a (2, 4) mesh of Explicit axes, checked against JAX 0.10."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.core.avals import ShapedArray
from toolkit.core.sharding_types import SHARDING_RULES, ShardingTypeError
from toolkit.shard import AxisType, NamedSharding, P

pytestmark = pytest.mark.multidevice

X = np.arange(32, dtype=np.float32).reshape(8, 4)
W = (np.arange(32, dtype=np.float32).reshape(4, 8) - 10) / 7
B = np.linspace(-3, 3, 8).astype(np.float32)


def test_make_mesh_defaults_to_explicit(tmesh):
    assert tmesh.axis_types == (AxisType.Explicit, AxisType.Explicit)
    assert tmesh.explicit_axes == ("x", "y")


# -- typeof --------------------------------------------------------------------------------------------

SPECS = [P("x"), P(None, "y"), P("x", "y"), P("y", "x"), P(("x", "y")), P(("y", "x")), P(None, "x"), P()]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_typeof_of_placed_arrays_matches_jax(tmesh, jx, jmesh, spec):
    from jax.sharding import PartitionSpec as JP
    with toolkit.set_mesh(tmesh):
        t = toolkit.device_put(X, spec)
    with jx.set_mesh(jmesh):
        j = jx.device_put(X, JP(*spec))
    assert str(toolkit.typeof(t)) == str(jx.typeof(j))
    assert repr(toolkit.typeof(t)) == repr(jx.typeof(j))
    assert tuple(toolkit.typeof(t).sharding.spec) == tuple(jx.typeof(j).sharding.spec)
    np.testing.assert_array_equal(np.asarray(t), X)


def test_typeof_of_host_values_matches_jax(jx):
    assert str(toolkit.typeof(1.0)) == str(jx.typeof(1.0)) == "~float32[]"
    assert str(toolkit.typeof(np.ones(3, np.float32))) == str(jx.typeof(np.ones(3, np.float32)))


def test_short_form(tmesh):
    with toolkit.set_mesh(tmesh):
        t = toolkit.device_put(X, P(("x", "y")))
    assert toolkit.typeof(t).str_short() == "f32[8@(x,y),4]"


def test_untyped_avals_unchanged():
    a = ShapedArray((2, 3), np.float32)
    assert a.sharding is None
    assert a == ShapedArray((2, 3), np.float32) and hash(a) == hash(ShapedArray((2, 3), np.float32))
    assert repr(a) == "ShapedArray(float32[2,3])"


def test_auto_mesh_arrays_are_untyped(tmesh):
    auto = toolkit.make_mesh((2, 4), ("x", "y"), (AxisType.Auto, AxisType.Auto))
    t = toolkit.device_put(X, NamedSharding(auto, P("x")))
    assert toolkit.typeof(t).sharding is None
    assert str(toolkit.typeof(t)) == "float32[8,4]"


# -- the MLP ----------------------------------------------------------------------------------------

def _mlp(api, typeof, record):
    def f(x, w, b):
        h = x @ w
        record.append(("dot", str(typeof(h))))
        h = h + b
        record.append(("bias", str(typeof(h))))
        r = api.maximum(h, 0.0)
        record.append(("relu", str(typeof(r))))
        s = r.sum(axis=1)
        record.append(("sum1", str(typeof(s))))
        record.append(("sum", str(typeof(r.sum()))))
        return s, r
    return f


def test_mlp_types_shardings_values_match_jax(tmesh, jx, jmesh):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    trec, jrec = [], []
    with toolkit.set_mesh(tmesh):
        x, w, b = toolkit.device_put(X, P("x")), toolkit.device_put(W, P(None, "y")), toolkit.device_put(B, P("y"))
        tin = [str(toolkit.typeof(a)) for a in (x, w, b)]
        ts, tr = toolkit.jit(_mlp(tnp, toolkit.typeof, trec))(x, w, b)
    with jx.set_mesh(jmesh):
        jx_, jw, jb = jx.device_put(X, JP("x")), jx.device_put(W, JP(None, "y")), jx.device_put(B, JP("y"))
        jin = [str(jx.typeof(a)) for a in (jx_, jw, jb)]
        js, jr = jx.jit(_mlp(jnp, jx.typeof, jrec))(jx_, jw, jb)
    assert tin == jin
    assert trec == jrec
    for t, j in ((ts, js), (tr, jr)):
        assert str(toolkit.typeof(t)) == str(jx.typeof(j))
        assert tuple(t.sharding.spec) == tuple(j.sharding.spec)
        assert t.sharding.mesh.axis_names == j.sharding.mesh.axis_names
        np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-5)


def test_mlp_eager_matches_jax(tmesh, jx, jmesh):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    trec, jrec = [], []
    with toolkit.set_mesh(tmesh):
        x, w, b = toolkit.device_put(X, P("x")), toolkit.device_put(W, P(None, "y")), toolkit.device_put(B, P("y"))
        ts, _ = _mlp(tnp, toolkit.typeof, trec)(x, w, b)
    with jx.set_mesh(jmesh):
        js, _ = _mlp(jnp, jx.typeof, jrec)(jx.device_put(X, JP("x")), jx.device_put(W, JP(None, "y")),
                                           jx.device_put(B, JP("y")))
    assert trec == jrec
    assert tuple(ts.sharding.spec) == tuple(js.sharding.spec)
    np.testing.assert_allclose(np.asarray(ts), np.asarray(js), rtol=1e-5)


def test_jit_annotates_explicit_types(tmesh):
    with toolkit.set_mesh(tmesh):
        x, w = toolkit.device_put(X, P("x")), toolkit.device_put(W, P(None, "y"))
        text = toolkit.jit(lambda x, w: (x @ w).sum(axis=1)).lower(x, w).as_text()
    assert 'sdy.sharding<@mesh, [{"x"}, {}]>' in text or "devices=[2,1,4]" in text
    assert 'sdy.sharding<@mesh, [{"x"}]>' in text or "{devices=[2,4]<=[8] last_tile_dim_replicate}" in text


# -- errors where JAX raises ---------------------------------------------------------------------

def _both_raise(tmesh, jx, jmesh, tfun, jfun):
    from jax._src.core import ShardingTypeError as JaxShardingTypeError
    from jax.sharding import PartitionSpec as JP
    with toolkit.set_mesh(tmesh):
        with pytest.raises(ShardingTypeError) as terr:
            tfun(lambda a, s: toolkit.device_put(a, s))
    with jx.set_mesh(jmesh):
        with pytest.raises(JaxShardingTypeError) as jerr:
            jfun(lambda a, s: jx.device_put(a, JP(*s)))
    return str(terr.value), str(jerr.value)


def test_ambiguous_dot_raises_like_jax(tmesh, jx, jmesh):
    import jax.numpy as jnp
    a = np.ones((8, 8), np.float32)
    t, j = _both_raise(tmesh, jx, jmesh, lambda put: put(a, P(None, "y")) @ put(a, P("y")),
                       lambda put: put(a, P(None, "y")) @ put(a, P("y")))
    assert t == j
    t, j = _both_raise(tmesh, jx, jmesh, lambda put: toolkit.jit(tnp.matmul)(put(a, P(None, "y")), put(a, P("y"))),
                       lambda put: jx.jit(jnp.matmul)(put(a, P(None, "y")), put(a, P("y"))))
    assert t == j


def test_dot_duplicate_axis_raises_like_jax(tmesh, jx, jmesh):
    a = np.ones((8, 8), np.float32)
    t, j = _both_raise(tmesh, jx, jmesh, lambda put: put(a, P("x")) @ put(a, P(None, "x")),
                       lambda put: put(a, P("x")) @ put(a, P(None, "x")))
    assert t == j


def test_elementwise_mismatch_raises_like_jax(tmesh, jx, jmesh):
    a = np.ones((8, 8), np.float32)
    t, j = _both_raise(tmesh, jx, jmesh, lambda put: put(a, P("x")) + put(a, P(None, "x")),
                       lambda put: put(a, P("x")) + put(a, P(None, "x")))
    assert t == j
    t, j = _both_raise(tmesh, jx, jmesh, lambda put: put(a, P("x")) * put(a, P("y")),
                       lambda put: put(a, P("x")) * put(a, P("y")))
    assert "incompatible shardings for broadcasting" in t and "incompatible shardings for broadcasting" in j


def test_unsupported_reshape_raises_like_jax(tmesh, jx, jmesh):
    t, j = _both_raise(tmesh, jx, jmesh, lambda put: put(X, P(None, "y")).reshape(32),
                       lambda put: put(X, P(None, "y")).reshape(32))
    assert t.startswith("This reshape is not supported") and j.startswith("This reshape is not supported")
    assert t.split("Got")[1] == j.split("Got")[1]


def test_cumulative_over_sharded_axis_raises_like_jax(tmesh, jx, jmesh):
    import jax.numpy as jnp
    t, j = _both_raise(tmesh, jx, jmesh, lambda put: tnp.cumsum(put(X, P("x")), axis=0),
                       lambda put: jnp.cumsum(put(X, P("x")), axis=0))
    assert t == j


def test_indivisible_spec_raises(tmesh, jx, jmesh):
    from jax.sharding import PartitionSpec as JP
    with toolkit.set_mesh(tmesh), pytest.raises(ValueError):
        toolkit.device_put(np.ones((6, 4), np.float32), P("y"))
    with jx.set_mesh(jmesh), pytest.raises(ValueError):
        jx.device_put(np.ones((6, 4), np.float32), JP("y"))


def test_axis_used_twice_raises(tmesh):
    with toolkit.set_mesh(tmesh), pytest.raises(toolkit.shard.DuplicateSpecError, match="duplicate entries for `x`"):
        toolkit.device_put(X, P("x", "x"))


def test_mixing_meshes_raises(tmesh):
    other = toolkit.make_mesh((4, 2), ("x", "y"))
    with toolkit.set_mesh(tmesh):
        a = toolkit.device_put(X, P("x"))
    with toolkit.set_mesh(other):
        b = toolkit.device_put(X, P("x"))
    with pytest.raises(ShardingTypeError, match="Mesh for all inputs should be equal"):
        toolkit.jit(lambda a, b: a + b).trace(a, b)


def test_primitive_without_rule_names_it(tmesh):
    from toolkit.lax.custom_call import custom_call_p
    assert custom_call_p not in SHARDING_RULES
    with toolkit.set_mesh(tmesh):
        x = toolkit.device_put(X, P("x"))
        with pytest.raises(ShardingTypeError, match="`custom_call` has no sharding rule"):
            toolkit.jit(lambda x: lax.custom_call("foo", toolkit.ShapeDtypeStruct((8, 4), np.float32), x)).trace(x)


# -- propagation through the lax families ----------------------------------------------------------

CASES = {
    "reshape_split": lambda np_, x, y: x.reshape(2, 4, 4),
    "reshape_merge": lambda np_, x, y: x.reshape(32),
    "transpose": lambda np_, x, y: x.T,
    "broadcast": lambda np_, x, y: np_.broadcast_to(x[None], (3, 8, 4)),
    "expand_dims": lambda np_, x, y: x[:, None, :],
    "sum0": lambda np_, x, y: x.sum(0),
    "sum1": lambda np_, x, y: x.sum(1),
    "max1": lambda np_, x, y: x.max(1),
    "argmax": lambda np_, x, y: np_.argmax(x, axis=1),
    "convert": lambda np_, x, y: x.astype(np_.int32),
    "where": lambda np_, x, y: np_.where(x > 3, x, 0.0),
    "concat0": lambda np_, x, y: np_.concatenate([x, x], 0),
    "concat1": lambda np_, x, y: np_.concatenate([x, x], 1),
    "slice1": lambda np_, x, y: x[:, :2],
    "pad1": lambda np_, x, y: np_.pad(x, ((0, 0), (1, 1))),
    "pad0": lambda np_, x, y: np_.pad(x, ((1, 1), (0, 0))),
    "mul_mixed": lambda np_, x, y: x * y,
    "exp": lambda np_, x, y: np_.exp(x / 32),
    "sort": lambda np_, x, y: np_.sort(x, axis=1),
    "zeros": lambda np_, x, y: np_.zeros((8, 4)) + x,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rules_match_jax(tmesh, jx, jmesh, name):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    fun = CASES[name]
    with toolkit.set_mesh(tmesh):
        t = fun(tnp, toolkit.device_put(X, P("x")), toolkit.device_put(X, P(None, "y")))
        tj = toolkit.jit(lambda a, b: fun(tnp, a, b))(toolkit.device_put(X, P("x")), toolkit.device_put(X, P(None, "y")))
    with jx.set_mesh(jmesh):
        j = fun(jnp, jx.device_put(X, JP("x")), jx.device_put(X, JP(None, "y")))
    assert str(toolkit.typeof(t)) == str(jx.typeof(j))
    assert str(toolkit.typeof(tj)) == str(jx.typeof(j))
    assert tuple(tj.sharding.spec) == tuple(j.sharding.spec)
    np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tj), np.asarray(j), rtol=1e-6)


# -- out_sharding= ---------------------------------------------------------------------------------

def test_matmul_out_sharding_matches_jax(tmesh, jx, jmesh):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    with toolkit.set_mesh(tmesh):
        ta, tb = toolkit.device_put(a, P(None, "y")), toolkit.device_put(a, P("y"))
        t = tnp.matmul(ta, tb, out_sharding=P("y"))
        tj = toolkit.jit(lambda p, q: tnp.matmul(p, q, out_sharding=P("x")))(ta, tb)
        tg = tnp.dot(ta, tb, out_sharding=P(None, "x"))
    with jx.set_mesh(jmesh):
        ja, jb = jx.device_put(a, JP(None, "y")), jx.device_put(a, JP("y"))
        j = jnp.matmul(ja, jb, out_sharding=JP("y"))
        jj = jx.jit(lambda p, q: jnp.matmul(p, q, out_sharding=JP("x")))(ja, jb)
        jg = jx.lax.dot_general(ja, jb, (((1,), (0,)), ((), ())), out_sharding=JP(None, "x"))
    for tt, jj_ in ((t, j), (tj, jj), (tg, jg)):
        assert str(toolkit.typeof(tt)) == str(jx.typeof(jj_))
        assert tuple(tt.sharding.spec) == tuple(jj_.sharding.spec)
        np.testing.assert_allclose(np.asarray(tt), np.asarray(jj_), rtol=1e-6)


# -- reshard, auto_axes, explicit_axes --------------------------------------------------------------

@pytest.mark.parametrize("spec", [P(None, "y"), P("y"), P(), P(("x", "y"))], ids=str)
def test_reshard_matches_jax(tmesh, jx, jmesh, spec):
    from jax.sharding import PartitionSpec as JP
    from jax.sharding import reshard as jreshard
    with toolkit.set_mesh(tmesh):
        x = toolkit.device_put(X, P("x"))
        t = toolkit.reshard(x, spec)
        tj = toolkit.jit(lambda a: toolkit.reshard(a * 2, spec))(x)
        tn = toolkit.reshard(x, NamedSharding(tmesh, spec))
    with jx.set_mesh(jmesh):
        jx_ = jx.device_put(X, JP("x"))
        j = jreshard(jx_, JP(*spec))
        jj = jx.jit(lambda a: jreshard(a * 2, JP(*spec)))(jx_)
    for tt, jj_ in ((t, j), (tj, jj), (tn, j)):
        assert str(toolkit.typeof(tt)) == str(jx.typeof(jj_))
        assert tuple(tt.sharding.spec) == tuple(jj_.sharding.spec)
        np.testing.assert_array_equal(np.asarray(tt), np.asarray(jj_))


def test_auto_axes_matches_jax(tmesh, jx, jmesh):
    from jax.sharding import PartitionSpec as JP
    from jax.sharding import auto_axes as jauto
    trec, jrec = [], []

    def body(typeof, rec):
        def f(a):
            rec.append(str(typeof(a)))
            return a.reshape(32)  # not allowed on 8,4@y with explicit axes; fine when Auto
        return f

    with toolkit.set_mesh(tmesh):
        y = toolkit.device_put(X, P(None, "y"))
        t = toolkit.jit(toolkit.auto_axes(body(toolkit.typeof, trec), out_sharding=P("x")))(y)
        te = toolkit.auto_axes(lambda a: a * 2, out_sharding=P("y"))(y)
    with jx.set_mesh(jmesh):
        jy = jx.device_put(X, JP(None, "y"))
        j = jx.jit(jauto(body(jx.typeof, jrec), out_sharding=JP("x")))(jy)
        je = jauto(lambda a: a * 2, out_sharding=JP("y"))(jy)
    assert trec == jrec
    for tt, jj in ((t, j), (te, je)):
        assert str(toolkit.typeof(tt)) == str(jx.typeof(jj))
        assert tuple(tt.sharding.spec) == tuple(jj.sharding.spec)
        np.testing.assert_array_equal(np.asarray(tt), np.asarray(jj))


def test_explicit_axes_matches_jax(tmesh, jx):
    from jax.sharding import AxisType as JAxisType
    from jax.sharding import PartitionSpec as JP
    from jax.sharding import explicit_axes as jexplicit
    trec, jrec = [], []
    tauto = toolkit.make_mesh((2, 4), ("x", "y"), (AxisType.Auto, AxisType.Auto))
    jauto = jx.make_mesh((2, 4), ("x", "y"), (JAxisType.Auto, JAxisType.Auto))

    def body(typeof, rec):
        def f(a):
            rec.append(str(typeof(a)))
            out = a * 2
            rec.append(str(typeof(out)))
            return out
        return f

    with toolkit.set_mesh(tauto):
        x = toolkit.device_put(X, P("x"))
        assert str(toolkit.typeof(x)) == "float32[8,4]"
        t = toolkit.jit(toolkit.explicit_axes(body(toolkit.typeof, trec), in_sharding=P("x")))(x)
    with jx.set_mesh(jauto):
        jx_ = jx.device_put(X, JP("x"))
        j = jx.jit(jexplicit(body(jx.typeof, jrec), in_sharding=JP("x")))(jx_)
    assert trec == jrec
    assert str(toolkit.typeof(t)) == str(jx.typeof(j))
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


# -- control flow and autodiff -------------------------------------------------------------------------

def test_control_flow_and_grad_match_jax(tmesh, jx, jmesh):
    from jax.sharding import PartitionSpec as JP
    import jax.numpy as jnp

    def cases(api, lax_, grad, put, spec):
        x = put(X, spec("x"))
        return [lax_.cond(True, lambda a: a, lambda a: a * 2, x),
                lax_.fori_loop(0, 3, lambda i, a: a * 2, x),
                lax_.scan(lambda c, a: (c + a, a * 2), put(np.zeros(4, np.float32), spec("y")),
                          put(X, spec(None, "y")))[0],
                grad(lambda v: (v * v).sum())(x)]

    with toolkit.set_mesh(tmesh):
        ts = cases(tnp, lax, toolkit.grad, toolkit.device_put, P)
        tj = toolkit.jit(lambda: cases(tnp, lax, toolkit.grad, toolkit.device_put, P))()
    with jx.set_mesh(jmesh):
        js = cases(jnp, jx.lax, jx.grad, jx.device_put, JP)
    for t, j in zip(ts, js):
        assert str(toolkit.typeof(t)) == str(jx.typeof(j))
        np.testing.assert_allclose(np.asarray(t), np.asarray(j))
    for t, j in zip(tj, js):
        np.testing.assert_allclose(np.asarray(t), np.asarray(j))


def test_scan_over_sharded_leading_axis_raises_like_jax(tmesh, jx, jmesh):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    with toolkit.set_mesh(tmesh), pytest.raises(ValueError) as terr:
        lax.scan(lambda c, a: (c + a, a), tnp.zeros(4, np.float32), toolkit.device_put(X, P("x")))
    with jx.set_mesh(jmesh), pytest.raises(ValueError) as jerr:
        jx.lax.scan(lambda c, a: (c + a, a), jnp.zeros(4, np.float32), jx.device_put(X, JP("x")))
    assert str(terr.value) == str(jerr.value)
