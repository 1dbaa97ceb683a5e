"""toolkit.lax.full (jax.lax.full): dtype and weak type as JAX gives them, sharding= eagerly and as a type."""

import numpy as np
import pytest

import toolkit
from toolkit.shard import NamedSharding, P

jax = pytest.importorskip("jax")


@pytest.mark.parametrize("args", [((2, 3), 3.0), ((2, 3), 3), ((2, 3), 3.0, np.int32), ((4,), True),
                                  ((), 2.5, np.float16), ((2,), np.float32(1.5))], ids=str)
def test_values_and_types_match_jax(args):
    ours, theirs = toolkit.lax.full(*args), jax.lax.full(*args)
    assert str(toolkit.typeof(ours)) == str(jax.typeof(theirs))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    traced = toolkit.jit(lambda: toolkit.lax.full(*args)).trace().out_info
    assert traced == toolkit.ShapeDtypeStruct(np.shape(theirs), theirs.dtype, weak_type=theirs.weak_type)


def test_python_bools_are_never_weakly_typed():
    assert str(toolkit.typeof(toolkit.numpy.asarray(True))) == str(jax.typeof(jax.numpy.asarray(True))) == "bool[]"
    assert not toolkit.device_put(False).weak_type


def test_sharding_places_eagerly_and_types_under_explicit_axes(mesh):
    placed = toolkit.lax.full((8, 4), 2.0, np.float32, sharding=NamedSharding(mesh, P("x")))
    assert placed.sharding.is_equivalent_to(NamedSharding(mesh, P("x")), 2) and len(placed.addressable_shards) == 8
    np.testing.assert_array_equal(np.asarray(placed), np.full((8, 4), 2.0, np.float32))
    explicit = toolkit.make_mesh((2, 4), ("x", "y"))
    with toolkit.set_mesh(explicit):
        x = toolkit.device_put(np.ones((8, 4), np.float32), P("x"))
        out = toolkit.jit(lambda a: a + toolkit.lax.full(a.shape, 1.0, a.dtype, sharding=toolkit.typeof(a).sharding))(x)
    assert str(toolkit.typeof(out)) == "float32[8@x,4]"
    np.testing.assert_array_equal(np.asarray(out), np.full((8, 4), 2.0, np.float32))


def test_fill_value_must_be_a_scalar():
    with pytest.raises(TypeError, match=r"full must be called with scalar fill_value, got fill_value.shape \(2,\)"):
        toolkit.lax.full((2,), np.ones(2))
