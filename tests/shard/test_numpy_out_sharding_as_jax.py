"""``out_sharding=`` of ``toolkit.numpy``'s ``bincount``, ``broadcast_to``, ``percentile``, ``repeat``,
``tensordot`` and ``linalg.tensordot`` on an Explicit (2, 4) mesh, beside ``jax.numpy`` 0.10.2: the same values,
typed and placed as JAX's, eagerly and under jit, with JAX's errors (and ``repeat``'s typing under a mesh without
``out_sharding``)."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

pytestmark = pytest.mark.multidevice

M = np.arange(32, dtype=np.float32).reshape(8, 4) / 3
V = np.arange(8, dtype=np.float32)
B = np.arange(16, dtype=np.float32).reshape(4, 4) - 5
COUNTS = np.array([0, 1, 1, 3, 2, 2, 2, 7], np.int32)

# Each case: the inputs, each with its spec's entries (put there first), and (numpy module, PartitionSpec, *inputs)
# -> the result, with out_sharding given.
CASES = {
    "bincount": ([(COUNTS, ("x",)), (V, ("x",))],
                 lambda m, P, c, w: m.bincount(c, w, length=8, out_sharding=P())),
    "broadcast_to": ([(V, ("x",))], lambda m, P, v: m.broadcast_to(v, (4, 8), out_sharding=P("y", "x"))),
    "broadcast_to_same_shape": ([(V, ())], lambda m, P, v: m.broadcast_to(v, (8,), out_sharding=P("y"))),
    "percentile": ([(M, ("x",))], lambda m, P, a: m.percentile(a, 30.0, axis=1, out_sharding=P("y"))),
    "percentile_keepdims": ([(M, ("x",))], lambda m, P, a: m.percentile(a, np.array([25.0, 60.0], np.float32),
                                                                       axis=0, keepdims=True,
                                                                       out_sharding=P(None, None, "y"))),
    "repeat": ([(M, ("x",))], lambda m, P, a: m.repeat(a, 2, axis=1, out_sharding=P("x", "y"))),
    "repeat_total_length": ([(M, ("x",))], lambda m, P, a: m.repeat(a, np.array([1, 2, 0, 1]), axis=1,
                                                                   total_repeat_length=8, out_sharding=P(None, "y"))),
    "repeat_flat": ([(M, ("x",))], lambda m, P, a: m.repeat(a, 2, out_sharding=P("y"))),
    "tensordot": ([(M, ("x",)), (B, (None, "y"))], lambda m, P, a, b: m.tensordot(a, b, 1, out_sharding=P("x", "y"))),
    "tensordot_contracting_sharded": ([(M, (None, "y")), (B, ("y",))],
                                      lambda m, P, a, b: m.tensordot(a, b, 1, out_sharding=P("x"))),
    "linalg.tensordot": ([(M, ("x",)), (B, ())],
                         lambda m, P, a, b: m.linalg.tensordot(a, b, axes=([1], [0]), preferred_element_type=np.float32,
                                                               out_sharding=P(None, "y"))),
    # No out_sharding under an Explicit mesh: the result keeps the input's type (the axis repeated is not sharded).
    "repeat_keeps_type": ([(M, ("x",))], lambda m, P, a: m.repeat(a, np.array([1, 0, 2, 1]), axis=1)),
}


def _run(lib, m, mesh, P, case, jit):
    inputs, fn = case
    with lib.set_mesh(mesh):
        xs = [lib.device_put(x, P(*spec)) for x, spec in inputs]
        return lib.jit(lambda *a: fn(m, P, *a))(*xs) if jit else fn(m, P, *xs)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_sharding_types_and_values_as_jax(jx, meshes, name, jit):
    from jax.sharding import PartitionSpec as JP
    from toolkit.shard import P
    tm, jm = meshes
    ours = _run(toolkit, tnp, tm, P, CASES[name], jit)
    theirs = _run(jx, jx.numpy, jm, JP, CASES[name], jit)
    assert str(toolkit.typeof(ours)) == str(jx.typeof(theirs))
    assert tuple(ours.sharding.spec) == tuple(theirs.sharding.spec) and ours.sharding.mesh == tm
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_every_jax_numpy_out_sharding_keyword_is_here(jx):
    import inspect
    for mod, ours in ((jx.numpy, tnp), (jx.numpy.linalg, tnp.linalg)):
        for name in dir(mod):
            f = getattr(mod, name)
            if name.startswith("_") or not callable(f) or isinstance(f, type) or not hasattr(ours, name):
                continue
            try:
                has = "out_sharding" in inspect.signature(f).parameters
            except (TypeError, ValueError):
                continue
            if has:
                assert "out_sharding" in inspect.signature(getattr(ours, name)).parameters, name


ERRORS = {
    # Broadcasting may not move the axes a dimension is split over: JAX's ValueError naming both types.
    "broadcast_to_moves_axis": lambda m, put, P: m.broadcast_to(put(V, P("x")), (4, 8), out_sharding=P("y", None)),
    "broadcast_to_other_axis": lambda m, put, P: m.broadcast_to(put(V, P("x")), (8,), out_sharding=P("y")),
    # Counts of every shard add into every bin: the result must be replicated.
    "bincount_sharded": lambda m, put, P: m.bincount(put(COUNTS, P("x")), length=8, out_sharding=P("y")),
    "bincount_weights_type": lambda m, put, P: m.bincount(put(COUNTS, P("x")), put(V, P("y")), length=8),
    # Not a PartitionSpec or NamedSharding: JAX asserts.
    "percentile_string": lambda m, put, P: m.percentile(M, 30.0, axis=1, out_sharding="x"),
    "percentile_unknown_axis": lambda m, put, P: m.percentile(M, 30.0, axis=1, out_sharding=P("z")),
    "tensordot_indivisible": lambda m, put, P: m.tensordot(M[:6], B, 1, out_sharding=P("y")),
    # Without out_sharding under an Explicit mesh: repeating along a sharded dimension.
    "repeat_sharded_axis": lambda m, put, P: m.repeat(put(M, P("x")), 2, axis=0),
    "repeat_flattened_sharded": lambda m, put, P: m.repeat(put(M, P("x")), 2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_out_sharding_errors_as_jax(jx, meshes, name):
    from jax.sharding import PartitionSpec as JP
    from toolkit.shard import P
    tm, jm = meshes
    case = ERRORS[name]
    with jx.set_mesh(jm):
        with pytest.raises(Exception) as want:
            case(jx.numpy, jx.device_put, JP)
    with toolkit.set_mesh(tm):
        with pytest.raises(Exception) as got:
            case(tnp, toolkit.device_put, P)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    if name == "bincount_weights_type":
        # JAX prints these types with its mesh's axis types: the words before them are the same.
        assert str(got.value).split("=")[0] == str(want.value).split("=")[0]
    elif name.startswith("tensordot"):
        assert "does not evenly divide the dimension size 6" in str(got.value) and \
            "does not evenly divide the dimension size 6" in str(want.value)
    else:
        assert str(got.value) == str(want.value)
