"""A bare PartitionSpec under set_mesh wherever a sharding is accepted, against JAX 0.10."""

import numpy as np
import pytest

import toolkit
from toolkit import lax
from toolkit.shard import AxisType, NamedSharding, P, resolve_sharding

pytestmark = pytest.mark.multidevice

X = np.arange(32, dtype=np.float32).reshape(8, 4)
MESH_TYPES = {"explicit": AxisType.Explicit, "auto": AxisType.Auto}


def _meshes(jx, kind):
    from jax.sharding import AxisType as JAxisType
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    t = toolkit.make_mesh((2, 4), ("x", "y"), (MESH_TYPES[kind],) * 2)
    j = jx.make_mesh((2, 4), ("x", "y"), (getattr(JAxisType, MESH_TYPES[kind].name),) * 2)
    return t, j


def _same(t, j):
    assert str(toolkit.typeof(t)) == str(jx_typeof(j))
    pad = (None,) * t.ndim
    assert (tuple(t.sharding.spec) + pad)[:t.ndim] == (tuple(j.sharding.spec) + pad)[:t.ndim]
    assert t.sharding.mesh.axis_names == j.sharding.mesh.axis_names
    assert t.sharding.mesh.axis_types == tuple(MESH_TYPES[a.name.lower()] for a in j.sharding.mesh.axis_types)
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def jx_typeof(x):
    import jax
    return jax.typeof(x)


@pytest.mark.parametrize("kind", sorted(MESH_TYPES))
@pytest.mark.parametrize("spec", [P("x"), P(None, "y"), P("y", "x"), P()], ids=str)
def test_device_put(jx, kind, spec):
    from jax.sharding import PartitionSpec as JP
    tm, jm = _meshes(jx, kind)
    with toolkit.set_mesh(tm):
        t = toolkit.device_put(X, spec)
        tree = toolkit.device_put({"a": X, "b": X}, {"a": spec, "b": P()})
    with jx.set_mesh(jm):
        j = jx.device_put(X, JP(*spec))
    _same(t, j)
    assert t.sharding == NamedSharding(tm, spec)
    assert tree["a"].sharding == NamedSharding(tm, spec) and tree["b"].sharding == NamedSharding(tm, P())


@pytest.mark.parametrize("kind", sorted(MESH_TYPES))
def test_jit_in_and_out_shardings(jx, kind):
    from jax.sharding import PartitionSpec as JP
    tm, jm = _meshes(jx, kind)
    with toolkit.set_mesh(tm):
        t_in = toolkit.jit(lambda a: a * 2, in_shardings=P("x"))(X)
        t_out = toolkit.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P(None, "y"))(X)
        t_tree = toolkit.jit(lambda a, b: (a + b, a - b), in_shardings=(P("x"), P()),
                             out_shardings=(P("y"), None))(X, X)
        typed = toolkit.device_put(X, P("x"))
        t_retype = toolkit.jit(lambda a: a * 2, out_shardings=P("y"))(typed)
    with jx.set_mesh(jm):
        j_in = jx.jit(lambda a: a * 2, in_shardings=JP("x"))(X)
        j_out = jx.jit(lambda a: a * 2, in_shardings=JP("x"), out_shardings=JP(None, "y"))(X)
        j_tree = jx.jit(lambda a, b: (a + b, a - b), in_shardings=(JP("x"), JP()),
                        out_shardings=(JP("y"), None))(X, X)
        j_retype = jx.jit(lambda a: a * 2, out_shardings=JP("y"))(jx.device_put(X, JP("x")))
    assert str(toolkit.typeof(t_in)) == str(jx.typeof(j_in))
    np.testing.assert_array_equal(np.asarray(t_in), np.asarray(j_in))
    _same(t_out, j_out)
    _same(t_tree[0], j_tree[0])
    np.testing.assert_array_equal(np.asarray(t_tree[1]), np.asarray(j_tree[1]))
    _same(t_retype, j_retype)


def test_with_sharding_constraint_auto(jx):
    from jax.sharding import PartitionSpec as JP
    tm, jm = _meshes(jx, "auto")
    with toolkit.set_mesh(tm):
        t = toolkit.jit(lambda a: lax.with_sharding_constraint(a * 2, P("y")))(toolkit.device_put(X, P("x")))
        text = toolkit.jit(lambda a: lax.with_sharding_constraint(a * 2, P("y"))).lower(X).as_text()
    with jx.set_mesh(jm):
        j = jx.jit(lambda a: jx.lax.with_sharding_constraint(a * 2, JP("y")))(jx.device_put(X, JP("x")))
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))
    assert tuple(t.sharding.spec) == tuple(j.sharding.spec) or t.sharding.is_equivalent_to(
        NamedSharding(tm, P("y")), 2)
    assert "sharding_constraint" in text or "@Sharding" in text


def test_with_sharding_constraint_explicit_asserts_like_jax(jx):
    from jax.sharding import PartitionSpec as JP
    tm, jm = _meshes(jx, "explicit")
    with toolkit.set_mesh(tm):
        x = toolkit.device_put(X, P("x"))
        same = lax.with_sharding_constraint(x, P("x"))
        in_jit = toolkit.jit(lambda a: lax.with_sharding_constraint(a * 2, P("x")))(x)
        with pytest.raises(AssertionError) as terr:
            lax.with_sharding_constraint(x, P("y"))
        with pytest.raises(AssertionError):
            toolkit.jit(lambda a: lax.with_sharding_constraint(a * 2, P("y")))(x)
    with jx.set_mesh(jm):
        jx_ = jx.device_put(X, JP("x"))
        jsame = jx.lax.with_sharding_constraint(jx_, JP("x"))
        jin_jit = jx.jit(lambda a: jx.lax.with_sharding_constraint(a * 2, JP("x")))(jx_)
        with pytest.raises(AssertionError) as jerr:
            jx.lax.with_sharding_constraint(jx_, JP("y"))
    _same(same, jsame)
    _same(in_jit, jin_jit)
    assert str(terr.value).split("Please")[0].replace("PartitionSpec", "P") == \
        str(jerr.value).split("Please")[0]


def test_outside_a_mesh_is_an_error_naming_set_mesh(jx):
    """The exception type is JAX's for each caller: ValueError for device_put and reshard, RuntimeError for jit's
    shardings and with_sharding_constraint."""
    from jax.sharding import PartitionSpec as JP
    cases = [(lambda: toolkit.device_put(X, P("x")), lambda: jx.device_put(X, JP("x"))),
             (lambda: toolkit.jit(lambda a: a, in_shardings=P("x"))(X),
              lambda: jx.jit(lambda a: a, in_shardings=JP("x"))(X)),
             (lambda: toolkit.jit(lambda a: a, out_shardings=P("x"))(X),
              lambda: jx.jit(lambda a: a, out_shardings=JP("x"))(X)),
             (lambda: lax.with_sharding_constraint(X, P("x")), lambda: jx.lax.with_sharding_constraint(X, JP("x"))),
             (lambda: toolkit.reshard(X, P("x")), lambda: jx.reshard(X, JP("x")))]
    for ours, theirs in cases:
        with pytest.raises((ValueError, RuntimeError)) as jax_error:
            theirs()
        with pytest.raises(jax_error.type, match="set_mesh"):
            ours()
    with pytest.raises(RuntimeError, match="set_mesh"):
        resolve_sharding(P("x"), "somewhere")


def test_resolve_sharding_passes_shardings_through():
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    tm = toolkit.make_mesh((2, 4), ("x", "y"))
    s = NamedSharding(tm, P("x"))
    assert resolve_sharding(s, "x") is s
    assert resolve_sharding(None, "x") is None
    with pytest.raises(TypeError, match="PartitionSpec"):
        resolve_sharding("x", "device_put")
    with toolkit.set_mesh(tm):
        assert resolve_sharding(NamedSharding(tm.abstract_mesh, P("y")), "x") == NamedSharding(tm, P("y"))
