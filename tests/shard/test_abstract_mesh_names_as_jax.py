"""``toolkit.sharding``'s ``AbstractDevice``, ``ManualAxisType`` and ``use_abstract_mesh`` against ``jax.sharding``'s
(JAX 0.10.2): construction, fields, equality, hash and repr, where an abstract device is accepted, the context
manager's effect on ``get_abstract_mesh()`` (eagerly and while ``jit`` traces) and the errors of misuse; and
tracing under an abstract mesh alone: bare ``PartitionSpec``s typing values over it, lowering refused without
platforms, ``export`` over it.

Every case runs the same program on both libraries (``_both``) and compares what comes out; JAX sees the eight
CPU devices of tests/shard/conftest.py.
"""

import dataclasses
import pickle
import types

import numpy as np
import pytest

import toolkit
import toolkit.sharding as tsharding
from _oracle import raised, run_both

pytestmark = pytest.mark.multidevice


@pytest.fixture(scope="module")
def both(jx):
    """``(toolkit, jax)`` as namespaces of the names these tests use: the sharding module, ``jit``, ``set_mesh``,
    ``make_mesh``, ``numpy``, the ``ShapeDtypeStruct``, ``typeof`` and ``lax``."""
    import jax.numpy as jnp
    import jax.sharding as jsharding

    import toolkit.numpy as tnp
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    tk = types.SimpleNamespace(s=tsharding, jit=toolkit.jit, set_mesh=toolkit.set_mesh, make_mesh=toolkit.make_mesh,
                               np=tnp, Spec=toolkit.ShapeDtypeStruct, typeof=toolkit.typeof, lax=toolkit.lax,
                               devices=toolkit.devices, name="toolkit")
    jax = types.SimpleNamespace(s=jsharding, jit=jx.jit, set_mesh=jx.set_mesh, make_mesh=jx.make_mesh, np=jnp,
                                Spec=jx.ShapeDtypeStruct, typeof=jx.typeof, lax=jx.lax, devices=jx.devices, name="jax")
    return tk, jax


# -- AbstractDevice -----------------------------------------------------------------------------------------------

def test_abstract_device_fields_equality_repr(both):
    def program(L):
        tpu = L.s.AbstractDevice(device_kind="TPU v6 lite", num_cores=1, platform="tpu")
        cpu = L.s.AbstractDevice("cpu", None, "cpu")
        return (repr(tpu), str(cpu), (tpu.device_kind, tpu.num_cores, tpu.platform),
                cpu == L.s.AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu"), cpu == tpu,
                hash(cpu) == hash(L.s.AbstractDevice("cpu", None, "cpu")), len({cpu, tpu, L.s.AbstractDevice(
                    "cpu", None, "cpu")}), dataclasses.astuple(tpu), dataclasses.replace(cpu, num_cores=4) == cpu,
                raised(lambda: L.s.AbstractDevice("cpu")), raised(lambda: setattr(cpu, "platform", "gpu")))
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[0] == "AbstractDevice(device_kind=TPU v6 lite, num_cores=1, platform=tpu)"
    assert ours[-2][0] == "TypeError" and ours[-1][0] == "FrozenInstanceError"


def test_abstract_mesh_carries_an_abstract_device(both):
    def program(L):
        explicit = (L.s.AxisType.Explicit,) * 2
        device = L.s.AbstractDevice("TPU v6 lite", 1, "tpu")
        bare = L.s.AbstractMesh((2, 4), ("x", "y"), explicit)
        on_tpu = L.s.AbstractMesh((2, 4), ("x", "y"), explicit, abstract_device=device)
        concrete = L.make_mesh((2, 4), ("x", "y")).abstract_mesh
        return (repr(on_tpu), on_tpu.abstract_device == device, bare.abstract_device,
                on_tpu == bare, on_tpu == bare.update(abstract_device=device),
                hash(on_tpu) == hash(bare.update(abstract_device=device)),
                on_tpu.update(axis_sizes=(4, 2)).abstract_device == device,  # update keeps the device
                on_tpu.update(abstract_device=None) == bare,  # unless told otherwise
                repr(concrete), repr(concrete.abstract_device), concrete == bare,
                concrete == bare.update(abstract_device=L.s.AbstractDevice("cpu", None, "cpu")),
                repr(L.s.Mesh(np.empty((), dtype=object), ()).abstract_mesh),
                raised(lambda: L.s.AbstractMesh((2,), ("x",), abstract_device=None).__enter__()))
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[0] == ("AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), device_kind=TPU v6 lite, "
                       "num_cores=1, platform=tpu)")
    assert ours[-1] == ("ValueError", "AbstractMesh does not implement __enter__")
    # Pickling keeps the device (JAX's __getnewargs_ex__).
    on_tpu = tsharding.AbstractMesh((8,), ("d",), abstract_device=tsharding.AbstractDevice("TPU v6 lite", 1, "tpu"))
    assert pickle.loads(pickle.dumps(on_tpu)) == on_tpu


def test_abstract_mesh_refuses_a_device_that_is_not_abstract():
    # JAX stores anything and fails when printing the mesh; toolkit refuses it where it is given.
    with pytest.raises(TypeError, match="abstract_device must be an AbstractDevice or None, got 'cpu'"):
        tsharding.AbstractMesh((2,), ("x",), abstract_device="cpu")


# -- use_abstract_mesh and get_abstract_mesh ------------------------------------------------------------------------

def test_use_abstract_mesh_sets_get_abstract_mesh(both):
    def program(L):
        seen = [repr(L.s.get_abstract_mesh()), L.s.get_abstract_mesh().empty]
        outer = L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)
        same_size = L.s.AbstractMesh((8,), ("z",))
        with L.s.use_abstract_mesh(outer) as bound:
            # No concrete mesh comes with it (toolkit's get_mesh() says so with None, JAX's with an empty Mesh).
            seen += [bound, L.s.get_abstract_mesh() is outer, L.s.get_mesh() is None or L.s.get_mesh().empty]
            with L.s.use_abstract_mesh(same_size):
                seen.append(repr(L.s.get_abstract_mesh()))
                with L.s.use_abstract_mesh(L.s.AbstractMesh((), ())):  # an empty mesh may come and go
                    seen.append(repr(L.s.get_abstract_mesh()))
                    with L.s.use_abstract_mesh(L.s.AbstractMesh((4,), ("w",))):
                        seen.append(repr(L.s.get_abstract_mesh()))
            seen.append(L.s.get_abstract_mesh() is outer)
        seen.append(L.s.get_abstract_mesh().empty)
        mesh = L.make_mesh((2, 4), ("x", "y"))
        with L.set_mesh(mesh):
            seen += [repr(L.s.get_abstract_mesh()), L.s.get_abstract_mesh() == mesh.abstract_mesh]
            with L.s.use_abstract_mesh(outer):
                # Only the abstract mesh changes: the concrete one stays.
                seen += [L.s.get_abstract_mesh() is outer, L.s.get_mesh() is mesh]
            seen.append(L.s.get_abstract_mesh() == mesh.abstract_mesh)
            with L.s.use_abstract_mesh(same_size):
                with L.set_mesh(mesh):  # set_mesh inside use_abstract_mesh: the innermost wins, then restored
                    seen.append(L.s.get_abstract_mesh() == mesh.abstract_mesh)
                seen.append(L.s.get_abstract_mesh() is same_size)
        seen.append(L.s.get_abstract_mesh().empty)
        return seen
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[:2] == ["AbstractMesh((), axis_types=())", True] and ours[2] is None


def test_use_abstract_mesh_errors(both):
    def program(L):
        eight = L.s.AbstractMesh((2, 4), ("x", "y"))
        results = [raised(lambda: L.s.use_abstract_mesh(L.make_mesh((2, 4), ("x", "y"))))[0]]
        with L.s.use_abstract_mesh(eight):
            results.append(raised(lambda: L.s.use_abstract_mesh(L.s.AbstractMesh((4,), ("z",))).__enter__()))
            results.append(L.s.get_abstract_mesh() is eight)  # the refused mesh left the context as it was
        with L.set_mesh(L.make_mesh((2, 4), ("x", "y"))):
            results.append(raised(lambda: L.s.use_abstract_mesh(L.s.AbstractMesh((2,), ("x",))).__enter__()))
        return results
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[1] == ("ValueError", "use_abstract_mesh cannot change the size of the mesh. Got new mesh: "
                       "AbstractMesh('z': 4, axis_types=(Auto,)) with size=4 and prev mesh: "
                       "AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto)) with size=8")
    # Not an AbstractMesh: JAX's ValueError and its words (the class printed is each library's own).
    for lib in both:
        with pytest.raises(ValueError, match=r"Expected mesh of type `jax.sharding.AbstractMesh`. Got type: .*Mesh"):
            lib.s.use_abstract_mesh(lib.make_mesh((2, 4), ("x", "y")))
        with pytest.raises(ValueError, match="Got type: <class 'str'>"):
            lib.s.use_abstract_mesh("x")


def test_get_abstract_mesh_while_jit_traces(both):
    """A function ``jit`` traces under ``use_abstract_mesh`` sees that mesh; the program computes the same."""
    def program(L):
        seen = []

        def double(v):
            seen.append(repr(L.s.get_abstract_mesh()))
            return v * 2

        auto = L.s.AbstractMesh((2, 4), ("x", "y"))
        x = L.np.arange(8.0, dtype=L.np.float32)
        with L.s.use_abstract_mesh(auto):
            out = L.jit(double)(x)
        with L.set_mesh(L.make_mesh((2, 4), ("x", "y"))), L.s.use_abstract_mesh(auto):
            info = L.jit(lambda v: double(v) + 1).trace(L.Spec((8,), L.np.float32)).out_info
        return seen, np.asarray(out), str(out.dtype), (info.shape, str(info.dtype))
    (t_seen, t_out, *t_rest), (j_seen, j_out, *j_rest) = run_both(both, program)
    assert t_seen == j_seen == ["AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto))"] * 2
    np.testing.assert_array_equal(t_out, j_out)
    assert t_rest == j_rest


def test_jit_traces_again_under_another_abstract_mesh(both):
    def program(L):
        seen = []

        def add_one(v):
            seen.append(L.s.get_abstract_mesh().empty)
            return v + 1

        wrapped, x = L.jit(add_one), L.np.ones(8, L.np.float32)
        wrapped(x)
        wrapped(x)  # from the fast path
        with L.s.use_abstract_mesh(L.s.AbstractMesh((8,), ("z",))):
            wrapped(x)  # traced again: the fast path does not answer under a context
            wrapped(x)
        with L.set_mesh(L.make_mesh((8,), ("z",))):
            wrapped(x)  # the concrete mesh's abstract mesh (with its device kind) is another context again
        wrapped(x)
        return seen
    ours, theirs = run_both(both, program)
    assert theirs == [True, False, False]
    assert ours == theirs


def _types_traced(L, fun, *specs, **jit_options):
    """The types (``str(typeof(...))``) of ``fun``'s results, read while ``L.jit(fun, **jit_options)`` traces it
    on ``specs`` (the types themselves, where ``Traced.out_info`` gives shardings)."""
    seen = []

    def recorded(*args):
        out = fun(*args)
        seen.append(str(L.typeof(out)))
        return out
    L.jit(recorded, **jit_options).trace(*specs)
    return seen[0]


def test_explicit_abstract_mesh_types_a_trace(both):
    def program(L):
        explicit = L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)
        seen = []

        def fun(v):
            out = L.np.zeros(8, out_sharding=L.s.PartitionSpec("x")) + v
            seen.append(L.typeof(out).sharding)
            return out
        with L.s.use_abstract_mesh(explicit):
            L.jit(fun).trace(L.Spec((8,), L.np.float32))
        return repr(seen[0].mesh), tuple(seen[0].spec), seen[0].mesh is explicit or seen[0].mesh == explicit
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours == ("AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))", ("x",), True)


def test_trace_out_info_carries_the_type_sharding(both):
    def program(L):
        explicit = L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)
        with L.s.use_abstract_mesh(explicit):
            info = L.jit(lambda v: L.np.zeros(8, out_sharding=L.s.PartitionSpec("x")) + v).trace(
                L.Spec((8,), L.np.float32)).out_info
        return repr(info.sharding.mesh), tuple(info.sharding.spec)
    ours, theirs = run_both(both, program)
    assert ours == theirs


def test_trace_out_info_shardings_as_jax(both):
    """``Traced.out_info``'s shardings: the ``out_shardings`` asked for, else the type's over an all-Explicit mesh,
    else none (an Auto mesh, no mesh)."""
    def info(out_info):
        sharding = out_info.sharding
        if sharding is None:
            return None
        mesh = sharding.mesh
        return (type(mesh).__name__, mesh.axis_names, tuple(str(t) for t in mesh.axis_types), tuple(sharding.spec))

    def program(L):
        P, spec = L.s.PartitionSpec, L.Spec((8,), L.np.float32)
        results = [info(L.jit(lambda v: v * 2).trace(spec).out_info)]
        with L.set_mesh(L.make_mesh((2, 4), ("x", "y"))):
            results += [info(L.jit(lambda v: L.s.reshard(v * 2, P("x"))).trace(spec).out_info),
                        info(L.jit(lambda v: v * 2, out_shardings=P("y")).trace(spec).out_info),
                        info(L.jit(lambda v: v * 2).trace(spec).out_info)]
        with L.set_mesh(L.make_mesh((2, 4), ("x", "y"), axis_types=(L.s.AxisType.Auto,) * 2)):
            results += [info(L.jit(lambda v: v * 2).trace(spec).out_info),
                        info(L.jit(lambda v: v * 2, out_shardings=P("y")).trace(spec).out_info)]
        return results
    ours, theirs = run_both(both, program)
    # An unsharded value under an all-Explicit mesh is untyped in toolkit (replicated by default); JAX types it
    # replicated over the mesh, and so does toolkit's out_info.
    assert ours[3] == theirs[3] == ("AbstractMesh", ("x", "y"), ("AxisType.Explicit", "AxisType.Explicit"), (None,))
    assert ours == theirs
    assert theirs[1] == ("AbstractMesh", ("x", "y"), ("AxisType.Explicit", "AxisType.Explicit"), ("x",))


def test_bare_specs_resolve_against_the_abstract_mesh(both):
    """Under an abstract mesh alone, ``out_sharding=``, ``reshard``, ``with_sharding_constraint`` and jit's
    shardings given as bare ``PartitionSpec``s (or ``NamedSharding``s over it) type the trace as JAX's do."""
    def program(L):
        E, A, P = L.s.AxisType.Explicit, L.s.AxisType.Auto, L.s.PartitionSpec
        explicit = L.s.AbstractMesh((2, 4), ("x", "y"), (E, E))
        mixed = L.s.AbstractMesh((2, 4), ("x", "y"), (E, A))
        spec = L.Spec((8, 4), L.np.float32)
        typed = L.Spec((8, 4), L.np.float32, sharding=L.s.NamedSharding(explicit, P("x")))
        results = []
        with L.s.use_abstract_mesh(explicit):
            results += [
                _types_traced(L, lambda v: L.s.reshard(v, P(None, "y")), spec),
                _types_traced(L, lambda v: L.s.reshard(v, L.s.NamedSharding(explicit, P("y", "x"))), spec),
                _types_traced(L, lambda v: L.np.ones((8, 4), out_sharding=P("x", "y")) * v, spec),
                _types_traced(L, lambda v: v * 2, typed),  # an argument typed over the abstract mesh
                _types_traced(L, lambda v: L.lax.with_sharding_constraint(v, P("x")), typed),  # as its type: passes
                _types_traced(L, lambda v: v.T, typed),
                _types_traced(L, lambda v: v + 1, spec, in_shardings=P("x"), out_shardings=P("y")),
                raised(lambda: _types_traced(L, lambda v: L.np.zeros(8, out_sharding=P("q")), spec)),
                raised(lambda: _types_traced(L, lambda v: L.np.zeros(3, out_sharding=P("x")), spec))[0],
            ]
        with L.s.use_abstract_mesh(mixed):
            results += [
                _types_traced(L, lambda v: L.s.reshard(v, P("x")), spec),
                _types_traced(L, lambda v: L.lax.with_sharding_constraint(v, P(None, "y")), spec),
                raised(lambda: _types_traced(L, lambda v: L.np.zeros(8, out_sharding=P("y")), spec))[0],
            ]
        return results
    ours, theirs = run_both(both, program)
    assert ours[:7] == theirs[:7] == ["float32[8,4@y]", "float32[8@y,4@x]", "float32[8@x,4@y]", "float32[8@x,4]",
                                      "float32[8@x,4]", "float32[4,8@x]", "float32[8,4]"]
    # An axis not in the mesh: JAX's type and words (JAX's adds where the call was).
    assert ours[7] == theirs[7] == ("ValueError", "Resource axis: q of P('q',) is not found in mesh: ('x', 'y').")
    assert ours[8:] == theirs[8:] == ["ValueError", "float32[8@x,4]", "float32[8,4]", "ValueError"]


def test_auto_abstract_mesh_alone(both):
    """An all-Auto abstract mesh: a sharding constraint's spec means it (untyped), jit's bare specs do not (JAX's
    ``get_ctx_mesh`` ignores such a mesh; JAX refuses at trace, toolkit when planning the lowering)."""
    def program(L):
        P = L.s.PartitionSpec
        auto = L.s.AbstractMesh((2, 4), ("x", "y"))
        spec = L.Spec((8,), L.np.float32)
        with L.s.use_abstract_mesh(auto):
            return [_types_traced(L, lambda v: L.lax.with_sharding_constraint(v, P("x")), spec),
                    raised(lambda: L.jit(lambda v: v, in_shardings=P("x")).trace(spec).lower())[0],
                    raised(lambda: L.jit(lambda v: v, out_shardings=P("x")).trace(spec).lower())[0]]
    ours, theirs = run_both(both, program)
    assert ours == theirs == ["float32[8]", "RuntimeError", "RuntimeError"]


def test_lowering_over_an_abstract_mesh_alone_needs_platforms(both):
    def program(L):
        explicit = L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)
        x = L.np.arange(8.0, dtype=L.np.float32)
        spec = L.Spec((8,), L.np.float32)
        with L.s.use_abstract_mesh(explicit):
            results = [raised(lambda: L.jit(lambda v: v * 2).trace(spec).lower()),
                       raised(lambda: L.jit(lambda v: L.s.reshard(v, L.s.PartitionSpec("x"))).trace(spec).lower()),
                       raised(lambda: L.jit(lambda v: v * 2)(x)),
                       raised(lambda: x + 1)]  # eager operations run as jit computations
        # With a concrete mesh the abstract one only types: lowering needs no platforms.
        with L.set_mesh(L.make_mesh((2, 4), ("x", "y"))), L.s.use_abstract_mesh(explicit):
            results.append(raised(lambda: L.jit(lambda v: v * 2).trace(spec).lower()))
        return results
    ours, theirs = run_both(both, program)
    context = "AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))"
    for (t_type, t_message), (j_type, j_message) in zip(ours, theirs):
        assert t_type == j_type
        if j_type != "no error":
            # JAX's words, with toolkit's argument name (``platforms``, not ``lowering_platforms``).
            assert j_message.endswith("is required when only AbstractMesh exists in a jitted computation. Got "
                                      f"context mesh: {context}")
            assert t_message == ("Passing platforms via toolkit.export or jit(f).trace(*args).lower(platforms=...) "
                                 "is required when only AbstractMesh exists in a jitted computation. Got context "
                                 f"mesh: {context}")
    assert [t for t, _ in ours] == ["ValueError"] * 4 + ["no error"]


def test_lowering_for_platforms_over_an_abstract_mesh_alone(both):
    """``trace(...).lower(platforms)`` under ``use_abstract_mesh`` alone is JAX's module over the mesh; its
    ``compile`` needs ``device_assignment=`` (JAX's ``RuntimeError`` without it) and then runs on those devices,
    in their order, with JAX's values and specs."""
    def program(L):
        explicit = L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)
        platforms = {"lowering_platforms" if L.name == "jax" else "platforms": ("cpu",)}
        with L.s.use_abstract_mesh(explicit):
            lowered = L.jit(lambda v: L.np.zeros(8, out_sharding=L.s.PartitionSpec("x")) + v).trace(
                L.Spec((8,), L.np.float32)).lower(**platforms)
            text = lowered.as_text()
            refused = raised(lambda: lowered.compile())
        devices = L.devices()[:8]
        results = []
        for order in (devices, devices[::-1]):
            out = lowered.compile(device_assignment=tuple(order))(np.arange(8, dtype=np.float32))
            # Each device's piece (JAX 0.10.2's result, typed over the abstract mesh, cannot be read whole:
            # np.asarray asks its sharding is_fully_addressable, which JAX does not implement for an AbstractMesh).
            if L.name == "jax":
                pieces = {next(iter(a.devices())).id: np.asarray(a).tolist() for a in out._arrays}
            else:
                pieces = {s.device.id: np.asarray(s.data).tolist() for s in out.addressable_shards}
            results.append((pieces, str(out.sharding.spec)))
        return "mhlo.num_partitions = 8" in text, 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text, refused, results
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[:2] == (True, True) and ours[2][0] == "RuntimeError"
    # The reversed order puts the first half of the values on devices 7..4.
    assert ours[3][0][0][0] == [0.0, 1.0, 2.0, 3.0] and ours[3][1][0][7] == [0.0, 1.0, 2.0, 3.0]


def test_device_assignment_of_the_wrong_size_over_an_abstract_mesh(both):
    """Fewer devices than the abstract mesh has positions: toolkit's ``ValueError`` naming both counts (JAX
    0.10.2 compiles and fails in XLA's HLO verifier)."""
    tk, _ = both
    with tk.s.use_abstract_mesh(tk.s.AbstractMesh((2, 4), ("x", "y"), (tk.s.AxisType.Explicit,) * 2)):
        lowered = tk.jit(lambda v: tk.np.zeros(8, out_sharding=tk.s.PartitionSpec("x")) + v).trace(
            tk.Spec((8,), np.float32)).lower(platforms=("cpu",))
    with pytest.raises(ValueError, match=r"has 8 positions, but 4 devices were given"):
        lowered.compile(device_assignment=tuple(tk.devices()[:4]))


def test_compile_device_assignment_must_match_a_placed_lowering(both):
    """``compile(device_assignment=)`` of a lowering placed on devices accepts those devices and refuses others
    with JAX's ``ValueError``."""
    def program(L):
        lowered = L.jit(lambda v: v * 2).lower(np.ones(4, np.float32))
        ok = np.asarray(lowered.compile(device_assignment=(L.devices()[0],))(np.ones(4, np.float32))).tolist()
        return ok, raised(lambda: lowered.compile(device_assignment=(L.devices()[1],)))
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[1][0] == "ValueError" and "must match the device_assignment calculated" in ours[1][1]


def _named_fields(named):
    """A recorded export sharding as comparable fields: the mesh's axes and device, the spec (JAX records a
    ``NamedSharding``, toolkit its wire form ``ExportedNamedSharding``)."""
    if named is None:
        return None
    spec = named.partitions if hasattr(named, "partitions") else tuple(named.spec)
    return (tuple(named.mesh.axis_sizes), tuple(named.mesh.axis_names), named.mesh.abstract_device,
            tuple(spec), named.memory_kind)


def test_export_over_an_abstract_mesh_alone(both, jx):
    """``export(jit(f), platforms=["cpu"])`` under ``use_abstract_mesh`` alone records what JAX's does: the mesh's
    size as ``nr_devices``, the requested shardings over the abstract mesh (no device), a result sharded only by
    its type unspecified."""
    import toolkit.export

    def program(L):
        P = L.s.PartitionSpec
        export = jx.export.export if L.name == "jax" else toolkit.export.export
        explicit = L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)
        spec = L.Spec((8,), L.np.float32)
        typed = L.Spec((8,), L.np.float32, sharding=L.s.NamedSharding(explicit, P("x")))
        cases = [(L.jit(lambda v: L.np.zeros(8, out_sharding=P("x")) + v), spec),
                 (L.jit(lambda v: L.s.reshard(v, P("y"))), spec),
                 (L.jit(lambda v: v * 2, in_shardings=P("x"), out_shardings=P("y")), spec),
                 (L.jit(lambda v: v * 2), typed)]
        results = []
        with L.s.use_abstract_mesh(explicit):
            for fun, arg in cases:
                exp = export(fun, platforms=["cpu"])(arg)
                results.append((exp.nr_devices, tuple(exp.platforms), [_named_fields(s) for s in exp._in_named_shardings],
                                [_named_fields(s) for s in exp._out_named_shardings]))
                if all(s is None for s in exp._in_named_shardings + exp._out_named_shardings):
                    results.append((exp.in_shardings_hlo, exp.out_shardings_hlo))
        return results
    ours, theirs = run_both(both, program)
    assert ours == theirs
    mesh = ((2, 4), ("x", "y"), None)
    assert ours[:4] == [(8, ("cpu",), [None], [None]), ((None,), (None,))] * 2
    assert ours[4] == (8, ("cpu",), [(*mesh, ("x",), None)], [(*mesh, ("y",), None)])
    assert ours[5] == (8, ("cpu",), [(*mesh, ("x",), None)], [None])  # the result typed P("x") only


def test_export_of_an_unplaced_function_over_an_abstract_mesh(both, jx):
    import toolkit.export

    def program(L):
        export = jx.export.export if L.name == "jax" else toolkit.export.export
        with L.s.use_abstract_mesh(L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)):
            return export(L.jit(lambda v: v * 2), platforms=["cpu"])(L.Spec((8,), L.np.float32)).nr_devices
    ours, theirs = run_both(both, program)
    assert ours == theirs == 8


# -- ManualAxisType -------------------------------------------------------------------------------------------------

def test_manual_axis_type_fields_equality_repr(both):
    def program(L):
        mat = L.s.ManualAxisType(varying=frozenset({"x"}))
        split = L.s.ManualAxisType(varying={"x"}, unreduced={"y"}, reduced={"z"})
        empty = L.s.ManualAxisType()
        mesh = L.s.AbstractMesh((2, 2, 2), ("x", "y", "w"), (L.s.AxisType.Manual, L.s.AxisType.Manual,
                                                             L.s.AxisType.Auto))
        return (repr(mat), repr(empty), repr(split), type(split.varying).__name__,
                mat == L.s.ManualAxisType(varying={"x"}), mat is L.s.ManualAxisType(varying={"x"}),
                hash(mat) == hash(L.s.ManualAxisType(varying=frozenset(["x"]))), mat == empty,
                empty.empty, mat.empty, L.s.ManualAxisType(varying=set()).empty, sorted(split.vur),
                repr(split.to_ct_mat()), repr(mat.update(reduced={"y"})), repr(split.update(varying=frozenset())),
                sorted(mat.invarying(mesh)), sorted(empty.invarying(mesh)),
                repr(L.s.ManualAxisType(unreduced={"y"})), repr(L.s.ManualAxisType(unreduced={"y"}, reduced={"y"})),
                pickle.loads(pickle.dumps(split)) is split)
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[0] == "ManualAxisType(varying=frozenset({'x'}), unreduced=frozenset(), reduced=frozenset())"


def test_manual_axis_type_errors(both):
    def program(L):
        mat = L.s.ManualAxisType(varying={"x"})
        return [raised(lambda: L.s.ManualAxisType(varying={"x"}, unreduced={"x"})),
                raised(lambda: L.s.ManualAxisType(varying={"x"}, reduced={"x"})),
                raised(lambda: mat.update(reduced={"x"})),
                raised(lambda: L.s.ManualAxisType({"x"})),
                raised(lambda: L.s.ManualAxisType(varying=("x",)))[0],
                raised(lambda: L.s.ManualAxisType(varying=["x"], unreduced=["y"]))[0],
                raised(lambda: L.s.ManualAxisType(reduced=["y"]))[0],
                raised(lambda: setattr(mat, "varying", frozenset()))[0]]
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[0] == ("ValueError", "varying and unreduced cannot have common mesh axes. Got varying={'x'} and "
                       "unreduced={'x'}")
    assert ours[4:] == ["TypeError"] * 3 + ["AttributeError"]
    with pytest.raises(TypeError, match=r"ManualAxisType's varying must be a set of mesh axis names, got \('x',\)"):
        tsharding.ManualAxisType(varying=("x",))
