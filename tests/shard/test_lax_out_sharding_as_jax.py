"""``out_sharding=`` of ``toolkit.lax``'s ``broadcast``, ``broadcast_in_dim``, ``conv_general_dilated``, ``dot``,
``dot_general``, ``reduce``, ``reduce_sum`` and ``rng_bit_generator`` on an Explicit 8-device mesh, beside
``jax.lax`` 0.10.2 in the same run: the result's type (explicit sharding) and placement, its values, eagerly and
under jit, and JAX's errors (its ambiguous products and convolutions, the checks of ``out_sharding`` itself)."""

import numpy as np
import pytest

import toolkit
from toolkit.shard import NamedSharding, P

pytestmark = pytest.mark.multidevice

X = np.arange(32, dtype=np.float32).reshape(8, 4)
VEC = np.arange(4, dtype=np.float32)
KEY = np.arange(4, dtype=np.uint32)
IMAGES = np.linspace(-1, 1, 8 * 2 * 4 * 4, dtype=np.float32).reshape(8, 2, 4, 4)   # NCHW
KERNEL = np.linspace(-1, 1, 4 * 2 * 3 * 3, dtype=np.float32).reshape(4, 2, 3, 3)   # OIHW


# name -> (case(lax, P, *args), the arguments and the specs they are placed by)
CASES = {
    "broadcast": (lambda L, P, v: L.broadcast(v, (8,), out_sharding=P("x")), [(VEC, ())]),
    "broadcast_in_dim": (lambda L, P, v: L.broadcast_in_dim(v, (8, 4), (1,), out_sharding=P("x", "y")),
                         [(VEC, ())]),
    # contracting dimensions sharded on both sides: ambiguous without out_sharding (below)
    "dot": (lambda L, P, a, b: L.dot(a, b, out_sharding=P("x")), [(X, ("x", "y")), (X.T.copy(), ("y", None))]),
    "dot_dimension_numbers": (lambda L, P, a, b: L.dot(a, b, dimension_numbers=(((0,), (1,)), ((), ())),
                                                       out_sharding=P(None, "y")),
                              [(X, ("x", None)), (X.T.copy(), (None, "x"))]),
    "dot_general": (lambda L, P, a, b: L.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=P(None, "x")),
                    [(X, ("x", None)), (X.T.copy(), ())]),
    "reduce_sum": (lambda L, P, a: L.reduce_sum(a, (1,), out_sharding=P("y")), [(X, ("x", "y"))]),
    "reduce_monoid_sum": (lambda L, P, a: L.reduce(a, np.float32(0), L.add, (1,), out_sharding=P("y")),
                          [(X, ("x", "y"))]),
    # not a monoid (init 1 is not add's identity): JAX ignores out_sharding, the rule's type stands
    "reduce_not_monoid": (lambda L, P, a: L.reduce(a, np.float32(1), L.add, (1,), out_sharding=P("y")),
                          [(X, ("x", "y"))]),
    "rng_bit_generator": (lambda L, P, k: L.rng_bit_generator(k, (8, 4), out_sharding=P("x", "y")), [(KEY, ())]),
    # a sharded kernel: refused by the rule without out_sharding (below)
    "conv_general_dilated": (lambda L, P, a, b: L.conv_general_dilated(a, b, (1, 1), "SAME",
                                                                       out_sharding=P("x", "y")),
                             [(IMAGES, ("x",)), (KERNEL, ("x",))]),
}


def _run(jx, meshes, case, placed, jit=True):
    """``case`` with toolkit and with JAX, eagerly and under jit: per library, [(type, placement spec, values)] or
    the exception raised."""
    from jax.sharding import NamedSharding as JNamedSharding, PartitionSpec as JP
    results = []
    for lib in ("toolkit", "jax"):
        tm, jm = meshes
        if lib == "toolkit":
            L, mesh, Pc, put, typeof, set_mesh, jit_ = toolkit.lax, tm, P, toolkit.device_put, toolkit.typeof, \
                toolkit.set_mesh, toolkit.jit
            sharding = lambda s: NamedSharding(tm, P(*s))  # noqa: E731
        else:
            L, mesh, Pc, put, typeof, set_mesh, jit_ = jx.lax, jm, JP, jx.device_put, jx.typeof, jx.set_mesh, jx.jit
            sharding = lambda s: JNamedSharding(jm, JP(*s))  # noqa: E731
        with set_mesh(mesh):
            args = [put(a, sharding(s)) for a, s in placed]
            try:
                outs = [case(L, Pc, *args)]
                if jit:
                    outs.append(jit_(lambda *a: case(L, Pc, *a))(*args))
            except Exception as e:  # noqa: BLE001 — compared with JAX's below
                results.append(e)
                continue
            results.append([[(str(typeof(leaf)), tuple(leaf.sharding.spec), np.asarray(leaf))
                             for leaf in (out if isinstance(out, tuple) else (out,))] for out in outs])
    return results


def _assert_same_results(ours, theirs):
    if isinstance(theirs, Exception):
        # JAX's class by name (toolkit's ShardingTypeError and DuplicateSpecError are its own).
        names = [c.__name__ for c in type(theirs).__mro__]
        assert type(ours).__name__ in names, (ours, theirs)
        assert str(ours) == str(theirs), (ours, theirs)
        return
    assert not isinstance(ours, Exception), ours
    for our_out, their_out in zip(ours, theirs, strict=True):
        for (t_type, t_spec, t_value), (j_type, j_spec, j_value) in zip(our_out, their_out, strict=True):
            assert t_type == j_type
            assert t_spec + (None,) * (len(j_spec) - len(t_spec)) == j_spec  # JAX writes trailing Nones
            assert t_value.dtype == j_value.dtype
            np.testing.assert_allclose(t_value, j_value, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_sharding_types_places_and_computes_as_jax(jx, meshes, name):
    case, placed = CASES[name]
    ours, theirs = _run(jx, meshes, case, placed)
    assert not isinstance(theirs, Exception), theirs
    _assert_same_results(ours, theirs)


def test_every_lax_out_sharding_keyword_of_jax_is_here(jx):
    import inspect
    for name in ("broadcast", "broadcast_in_dim", "conv_general_dilated", "dot", "dot_general", "reduce",
                 "reduce_sum", "rng_bit_generator", "reshape"):
        assert "out_sharding" in inspect.signature(getattr(jx.lax, name)).parameters
        assert "out_sharding" in inspect.signature(getattr(toolkit.lax, name)).parameters


ERRORS = {
    # what out_sharding resolves: JAX's ShardingTypeErrors without it, with its words
    "dot_ambiguous": (lambda L, P, a, b: L.dot(a, b), [(X, ("x", "y")), (X.T.copy(), ("y", None))]),
    "conv_sharded_kernel": (lambda L, P, a, b: L.conv_general_dilated(a, b, (1, 1), "SAME"),
                            [(IMAGES, ("x",)), (KERNEL, ("x",))]),
    # out_sharding itself
    "not_a_sharding": (lambda L, P, a: L.reduce_sum(a, (1,), out_sharding="x"), [(X, ("x", "y"))]),
    "unknown_axis": (lambda L, P, a: L.broadcast_in_dim(a, (8, 4), (0, 1), out_sharding=P("z")), [(X, ())]),
    "axis_used_twice": (lambda L, P, a: L.dot_general(a, a.T, (((1,), (0,)), ((), ())), out_sharding=P("x", "x")),
                        [(X, ())]),
    "indivisible": (lambda L, P, a: L.broadcast(a, (3,), out_sharding=P("x")), [(X, ())]),
    "indivisible_bits": (lambda L, P, k: L.rng_bit_generator(k, (3, 4), out_sharding=P("x")), [(KEY, ())]),
    "reduce_other_monoid": (lambda L, P, a: L.reduce(a, -np.inf, L.max, (1,), out_sharding=P("y")),
                            [(X, ("x", "y"))]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_jax_errors(jx, meshes, name):
    case, placed = ERRORS[name]
    ours, theirs = _run(jx, meshes, case, placed, jit=False)
    assert isinstance(theirs, Exception), theirs
    _assert_same_results(ours, theirs)
