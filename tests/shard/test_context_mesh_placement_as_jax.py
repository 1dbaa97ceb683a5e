"""Under ``set_mesh`` (a concrete mesh, Explicit or Auto axes) a jit computation that no sharding places runs over
the mesh's devices, as JAX's: its results are ``NamedSharding``s over the mesh, its export records the mesh's size,
and an argument committed to other devices is JAX's ``ValueError``. Compared with JAX in the same run.
"""

import re
import types

import numpy as np
import pytest

import toolkit
import toolkit.export
import toolkit.sharding as tsharding
from _oracle import assert_same_typed, raised, run_both

pytestmark = pytest.mark.multidevice


@pytest.fixture(scope="module")
def both(jx):
    """``(toolkit, jax)`` as namespaces of the names these tests use."""
    import jax.numpy as jnp
    import jax.sharding as jsharding

    import toolkit.numpy as tnp
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    tk = types.SimpleNamespace(s=tsharding, jit=toolkit.jit, grad=toolkit.grad, set_mesh=toolkit.set_mesh,
                               make_mesh=toolkit.make_mesh, np=tnp, Spec=toolkit.ShapeDtypeStruct,
                               device_put=toolkit.device_put, devices=toolkit.devices, lax=toolkit.lax,
                               export=toolkit.export.export, name="toolkit")
    jax = types.SimpleNamespace(s=jsharding, jit=jx.jit, grad=jx.grad, set_mesh=jx.set_mesh, make_mesh=jx.make_mesh,
                                np=jnp, Spec=jx.ShapeDtypeStruct, device_put=jx.device_put, devices=jx.devices,
                                lax=jx.lax, export=jx.export.export, name="jax")
    return tk, jax


def _placement(array):
    """What a comparison of two libraries' result placements compares: the sharding's kind, spec, mesh and
    committedness."""
    s = array.sharding
    mesh = getattr(s, "mesh", None)
    where = None if mesh is None else (mesh.axis_names, mesh.devices.shape, tuple(t.name for t in mesh.axis_types))
    return type(s).__name__, str(getattr(s, "spec", None)), where, array.committed


def _replicated(placement):
    """A placement with a replicated spec written ``P()`` (JAX writes ``P(None,)`` for some types)."""
    kind, spec, where, committed = placement
    return kind, "P()" if spec.strip("P(,)").replace("None", "").replace(",", "").strip() == "" else spec, where, \
        committed


def _mesh(L, axis_type):
    return L.make_mesh((2, 4), ("x", "y"), axis_types=(getattr(L.s.AxisType, axis_type),) * 2)


@pytest.mark.parametrize("axis_type", ["Explicit", "Auto"])
def test_unplaced_jit_runs_over_the_context_mesh(both, axis_type):
    """Uncommitted inputs (numpy, a Python scalar), a rank-2 result, a reduction, a constant and a gradient: values
    and placements as JAX's; the same function called outside the mesh before and after is on one device."""
    def program(L):
        def fun(v, w, c):
            return v * c, (w @ w.T).sum(axis=1), L.np.float32(3), L.grad(lambda u: (u * u).sum())(v)
        jitted = L.jit(fun)
        w = np.arange(8, dtype=np.float32).reshape(2, 4)
        before = jitted(np.ones(8, np.float32), w, 2.0)
        with L.set_mesh(_mesh(L, axis_type)):
            inside = jitted(np.linspace(-1, 1, 8, dtype=np.float32), w, 2.0)
        after = jitted(np.ones(8, np.float32), w, 2.0)
        return inside, [_placement(r) for r in inside], [_placement(r) for r in before + after]
    (ours, ours_placed, ours_out), (theirs, theirs_placed, theirs_out) = run_both(both, program)
    for o, t in zip(ours, theirs):
        assert_same_typed(o, t)
    # Every result is replicated over the mesh and committed, as JAX's. Over Explicit axes JAX's spec is its type's,
    # P() or P(None, ...) by the op that made the value (a reduction's P(), a product's P(None,)); toolkit does not
    # type unsharded values and says P(None, ...) for every one: the reduction's spec alone differs.
    assert [_replicated(p) for p in ours_placed] == [_replicated(p) for p in theirs_placed]
    exact = [0, 2, 3] if axis_type == "Explicit" else [0, 1, 2, 3]
    assert [ours_placed[i] for i in exact] == [theirs_placed[i] for i in exact]
    assert ours_out == theirs_out


def test_committed_arguments_on_the_mesh_keep_their_sharding(both):
    def program(L):
        mesh = _mesh(L, "Explicit")
        with L.set_mesh(mesh):
            x = L.device_put(np.arange(8, dtype=np.float32), L.s.NamedSharding(mesh, L.s.PartitionSpec("x")))
            out = L.jit(lambda a, b: (a * b, b + 1))(x, np.ones(8, np.float32))
        return [np.asarray(o) for o in out], [_placement(o) for o in out]
    ours, theirs = run_both(both, program)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1] == theirs[1]


@pytest.mark.x64
def test_float64_over_the_context_mesh(both):
    def program(L):
        with L.set_mesh(_mesh(L, "Auto")):
            out = L.jit(lambda v: L.np.sin(v) * 2)(np.linspace(0, 1, 8))
        return out, _placement(out)
    (ours, ours_placed), (theirs, theirs_placed) = run_both(both, program)
    assert_same_typed(ours, theirs, rtol=1e-15)
    assert ours_placed == theirs_placed


def _normalized(error):
    """An error's type and message, the argument named as each library names it (JAX: ``x``, toolkit: its
    path ``args[0]``; the function: JAX by its qualified name, toolkit by its name) and JAX's source location of a body placement left out."""
    kind, message = error
    message = re.sub(r"argument \S+ of \S+ with", "argument _ of _ with", message)
    return kind, re.sub(r" at \S+:\d+.*$", "", message)


def test_placements_on_other_devices_are_refused(both):
    """An argument committed elsewhere (one device, or after another), an ``in_sharding`` or ``out_sharding``
    over other devices, a constraint inside over a smaller mesh: JAX's ``ValueError`` naming both device lists."""
    def program(L):
        mesh = _mesh(L, "Explicit")
        small = L.make_mesh((4,), ("z",), axis_types=(L.s.AxisType.Auto,), devices=L.devices()[:4])
        v = np.ones(8, np.float32)
        with L.set_mesh(mesh):
            on3 = L.device_put(v, L.devices()[3])
            errors = [raised(lambda: L.jit(lambda x: x * 2)(on3)),
                      raised(lambda: L.jit(lambda x, y: x * y)(v, on3)),
                      raised(lambda: L.jit(lambda x: x * 2, in_shardings=L.s.SingleDeviceSharding(L.devices()[0]))(v)),
                      raised(lambda: L.jit(lambda x: x * 2,
                                           out_shardings=L.s.NamedSharding(small, L.s.PartitionSpec("z")))(v))]
        # Under an Auto mesh: over Explicit axes a constraint is an assertion on the type, checked first.
        with L.set_mesh(_mesh(L, "Auto")):
            errors.append(raised(lambda: L.jit(lambda x: L.lax.with_sharding_constraint(
                x, L.s.NamedSharding(small, L.s.PartitionSpec("z"))))(v)))
        return errors
    ours, theirs = run_both(both, program)
    assert [_normalized(e) for e in ours] == [_normalized(e) for e in theirs]
    assert all(kind == "ValueError" and "jit's context mesh with device ids [0, 1, 2, 3, 4, 5, 6, 7]" in message
               for kind, message in ours)


def test_export_under_set_mesh_records_the_mesh_size(both):
    def program(L):
        results = []
        for axis_type in ("Explicit", "Auto"):
            with L.set_mesh(_mesh(L, axis_type)):
                exp = L.export(L.jit(lambda v: v * 2))(L.Spec((8,), np.float32))
                out = exp.call(np.arange(8, dtype=np.float32))
            results.append((exp.nr_devices, exp.in_shardings_hlo, exp.out_shardings_hlo, np.asarray(out).tolist(),
                            _placement(out)))
        return results
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert [r[0] for r in ours] == [8, 8]


@pytest.mark.parametrize("axis_type", ["Explicit", "Auto"])
def test_eager_ops_under_set_mesh(both, axis_type):
    """Eager operations (primitives, library functions, a Python scalar operand, a host array, random) run over
    the context mesh, as JAX's; the same operations after the block run on one device again (no executable or
    kept operand made over the mesh answers outside it), and an argument committed elsewhere is JAX's error."""
    def program(L):
        mesh = _mesh(L, axis_type)
        x0 = L.device_put(np.ones(8, np.float32), L.devices()[0])

        def ops():
            out = [L.np.ones(8) * 2, L.np.arange(8.0), L.np.sin(np.ones(8, np.float32)), L.np.ones((8, 4)).sum(0),
                   L.lax.cumsum(L.np.ones(8)), L.np.ones(8) + 1.5]
            return [_replicated(_placement(a)) for a in out] + [np.asarray(out[-1]).tolist()]
        with L.set_mesh(mesh):
            inside = ops()
            committed_elsewhere = raised(lambda: x0 * 2)
        return inside, committed_elsewhere[0], ops()
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[0][0][2] is not None and ours[2][0][2] is None


def test_jit_under_the_deprecated_mesh_context_manager(both):
    def program(L):
        with pytest.warns(DeprecationWarning) if L.name == "jax" else _nothing(), _mesh(L, "Explicit"):
            return _placement(L.jit(lambda v: v * 2)(np.ones(8, np.float32)))
    ours, theirs = run_both(both, program)
    assert ours == theirs


def _nothing():
    import contextlib
    return contextlib.nullcontext()
