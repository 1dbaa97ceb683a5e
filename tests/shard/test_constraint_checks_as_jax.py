"""``with_sharding_constraint`` and ``reshard`` against JAX 0.10.2 on meshes mixing Explicit and Auto axes: which
specs each refuses (JAX's ``check_shardings_are_auto``, ``assert_shardings_equal`` and ``canonicalize_sharding``,
with their exception types and words), and what the accepted ones lay out — under ``set_mesh`` and under
``use_abstract_mesh`` alone with a committed argument, where the argument's devices place the computation.

Every case runs one program on both libraries (``_both``) and compares; JAX sees the eight CPU devices of
tests/shard/conftest.py.
"""

import re
import types

import numpy as np
import pytest

import toolkit
import toolkit.sharding as tsharding
from _oracle import raised, run_both

pytestmark = pytest.mark.multidevice

_X = np.arange(32.0, dtype=np.float32).reshape(8, 4)


@pytest.fixture(scope="module")
def both(jx):
    """``(toolkit, jax)`` namespaces: the sharding module, ``jit``, ``grad``, ``typeof``, ``set_mesh``, ``lax``,
    ``device_put``, ``reshard``, and the (2, 4) meshes over axes ("x", "y") of types (Explicit, Auto) ``mixed``,
    (Auto, Auto) ``auto`` and (Explicit, Explicit) ``explicit``."""
    import jax.sharding as jsharding

    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    namespaces = []
    for lib, s, reshard, name in ((toolkit, tsharding, toolkit.reshard, "toolkit"),
                                  (jx, jsharding, jsharding.reshard, "jax")):
        E, A = s.AxisType.Explicit, s.AxisType.Auto
        meshes = {k: lib.make_mesh((2, 4), ("x", "y"), axis_types=t)
                  for k, t in (("mixed", (E, A)), ("auto", (A, A)), ("explicit", (E, E)))}
        namespaces.append(types.SimpleNamespace(s=s, P=s.PartitionSpec, jit=lib.jit, set_mesh=lib.set_mesh,
                                                typeof=lib.typeof, grad=lib.grad,
                                                lax=lib.lax, device_put=lib.device_put, reshard=reshard,
                                                name=name, **meshes))
    return tuple(namespaces)


def _spec(array):
    """The result's spec as a tuple padded to its rank (JAX writes ``P('y',)`` where toolkit writes ``P('y', None)``)."""
    spec = tuple(array.sharding.spec)
    return spec + (None,) * (array.ndim - len(spec))


def _placed(array):
    """What a result's layout and values are: its spec, its devices' ids and its values."""
    return _spec(array), sorted(d.id for d in array.sharding.device_set), np.asarray(array).tolist()


# -- with_sharding_constraint: only Auto axes unless every axis is Explicit ------------------------------------------

@pytest.mark.parametrize("spec", [("x",), (("x", "y"),), ("x", "UNCONSTRAINED")], ids=["x", "xy", "x_unconstrained"])
def test_constraint_naming_an_explicit_axis_of_a_mixed_mesh_is_refused(both, spec):
    def program(L):
        P = L.P
        user = P(*[P.UNCONSTRAINED if e == "UNCONSTRAINED" else e for e in spec])
        with L.set_mesh(L.mixed):
            in_jit = raised(lambda: L.jit(lambda a: L.lax.with_sharding_constraint(a * 2, user))(_X))
        without_mesh = raised(lambda: L.lax.with_sharding_constraint(_X, L.s.NamedSharding(L.mixed, user)))
        return in_jit, without_mesh

    tk, jax = run_both(both, program)
    for (tk_type, tk_text), (jax_type, jax_text) in zip(tk, jax):
        assert tk_type == jax_type == "ValueError"
        assert "can only refer to Auto axes of the mesh" in jax_text
        assert "can only refer to Auto axes of the mesh" in tk_text and "reshard" in tk_text
        assert "Explicit, Auto" in tk_text


def test_constraint_with_explicit_axes_and_no_mesh_in_context_is_refused(both):
    # Outside an all-Explicit context mesh the constraint is not an assertion: naming an Explicit axis is refused.
    tk, jax = run_both(both, lambda L: raised(lambda: L.jit(
        lambda a: L.lax.with_sharding_constraint(a, L.s.NamedSharding(L.explicit, L.P("x"))))(_X)))
    assert tk[0] == jax[0] == "ValueError"
    assert "can only refer to Auto axes" in tk[1]


def _constraints_in(text):
    """The ``sdy.sharding_constraint`` shardings of a lowered module's text (``[{"x"}, {"y"}]``), in order."""
    return re.findall(r"sdy\.sharding_constraint %\S+ <@\w+, (\[.*?\])>", text)


def test_constraint_on_auto_axes_of_a_mixed_mesh_keeps_the_explicit_type(both):
    # The value is typed P('x', None); constraining its Auto axis y keeps that type, and the constraint lowers
    # over both axes (JAX merges the type's spec into the constraint's), UNCONSTRAINED on the typed dimension too.
    def program(L):
        with L.set_mesh(L.mixed):
            x = L.device_put(_X, L.P("x"))
            types_seen = []

            def f(a):
                b = L.lax.with_sharding_constraint(a * 2, L.P(None, "y"))
                c = L.lax.with_sharding_constraint(b + 1, L.P(L.P.UNCONSTRAINED, "y"))
                types_seen.extend(str(L.typeof(v)) for v in (b, c))
                return c
            lowered = L.jit(f).trace(x).lower()
            return types_seen, _constraints_in(lowered.as_text()), np.asarray(lowered.compile()(x)).tolist()

    tk, jax = run_both(both, program)
    assert tk[0] == jax[0] == ["float32[8@x,4]"] * 2
    # The user's constraints (those naming y); the type's own constraints around each op differ (JAX leaves an
    # Auto mesh's unnamed dimensions open, `{"x", ?}`, toolkit closes them), which is not this file's subject.
    assert [c for c in tk[1] if '"y"' in c] == [c for c in jax[1] if '"y"' in c] == ['[{"x"}, {"y"}]'] * 2
    assert tk[2] == jax[2]


def test_gradient_through_a_constraint_on_auto_axes(both):
    def program(L):
        with L.set_mesh(L.mixed):
            x = L.device_put(_X, L.P("x"))
            grad = L.jit(L.grad(lambda a: (L.lax.with_sharding_constraint(a * a, L.P(None, "y")) * 3).sum()))(x)
            return str(L.typeof(grad)), np.asarray(grad).tolist()

    tk, jax = run_both(both, program)
    assert tk == jax


def test_constraint_is_an_assertion_on_an_all_explicit_mesh(both):
    def program(L):
        with L.set_mesh(L.explicit):
            x = L.device_put(_X, L.P("x"))
            matching = _placed(L.jit(lambda a: L.lax.with_sharding_constraint(a * 2, L.P("x")))(x))
            other = raised(lambda: L.jit(lambda a: L.lax.with_sharding_constraint(a * 2, L.P("y")))(x))
            untyped = raised(lambda: L.jit(lambda a: L.lax.with_sharding_constraint(a * 2, L.P("x")))(_X))
        return matching, other, untyped

    tk, jax = run_both(both, program)
    assert tk[0] == jax[0]
    for (tk_type, tk_text), (jax_type, _) in zip(tk[1:], jax[1:]):
        assert tk_type == jax_type == "AssertionError"
        assert "acts as an assert when all axes of mesh are of type `Explicit`" in tk_text
    assert "('y', None)" in tk[1][1] and "(None, None)" in tk[2][1]


# -- reshard: only Explicit axes ------------------------------------------------------------------------------------

def test_reshard_to_auto_axes_is_refused(both):
    def program(L):
        with L.set_mesh(L.mixed):
            mixed_eager = raised(lambda: L.reshard(L.device_put(_X, L.P("x")), L.P(None, "y")))
            mixed_jit = raised(lambda: L.jit(lambda a: L.reshard(a, L.P(("x", "y"))))(_X))
        auto = raised(lambda: L.jit(lambda a: L.reshard(a, L.s.NamedSharding(L.auto, L.P("x"))))(_X))
        none = raised(lambda: L.reshard(_X, None))
        return mixed_eager, mixed_jit, auto, none

    tk, jax = run_both(both, program)
    assert [t for t, _ in tk] == [t for t, _ in jax] == ["ValueError"] * 4
    assert "cannot contain axis names that are of type Auto or Manual" in tk[0][1]
    assert "axis name: y of type: AxisType.Auto" in tk[0][1] and "axis name: y" in tk[1][1]
    assert "axis name: x of type: AxisType.Auto" in tk[2][1]
    assert "non-None" in tk[3][1]


def test_reshard_to_explicit_axes_of_a_mixed_mesh(both):
    def program(L):
        with L.set_mesh(L.mixed):
            return _placed(L.jit(lambda a: L.reshard(a * 2, L.P("x")))(_X))

    tk, jax = run_both(both, program)
    assert tk == jax


# -- use_abstract_mesh alone: a committed argument's devices place the computation ---------------------------------

@pytest.mark.parametrize("mesh_name, spec", [("mixed", (None, "y")), ("auto", ("x", "y")), ("explicit", ("x",))])
def test_constraint_over_the_abstract_mesh_runs_on_the_arguments_devices(both, mesh_name, spec):
    def program(L):
        mesh = getattr(L, mesh_name)
        x = L.device_put(_X, L.s.NamedSharding(mesh, L.P("x")))
        with L.s.use_abstract_mesh(mesh.abstract_mesh):
            return _placed(L.jit(lambda a: L.lax.with_sharding_constraint(a * 2, L.P(*spec)))(x))

    tk, jax = run_both(both, program)
    # On the mixed mesh the type fixes only 'x'; XLA lays the rest out ('y' too, in both libraries).
    assert tk == jax


def test_constraint_over_the_abstract_mesh_with_no_committed_argument(both):
    # An all-Auto abstract mesh does not place jit (JAX's get_ctx_mesh ignores it): one device, as in JAX.
    def program(L):
        with L.s.use_abstract_mesh(L.auto.abstract_mesh):
            out = L.jit(lambda a: L.lax.with_sharding_constraint(a * 2, L.P("x", "y")))(_X)
        return type(out.sharding).__name__, len(out.sharding.device_set), np.asarray(out).tolist()

    tk, jax = run_both(both, program)
    assert tk == jax


def test_reshard_over_the_abstract_mesh_runs_on_the_arguments_devices(both):
    def program(L):
        x = L.device_put(_X, L.s.NamedSharding(L.explicit, L.P("x")))
        with L.s.use_abstract_mesh(L.explicit.abstract_mesh):
            return _placed(L.jit(lambda a: L.reshard(a * 2, L.P(None, "y")))(x))

    tk, jax = run_both(both, program)
    assert tk == jax
