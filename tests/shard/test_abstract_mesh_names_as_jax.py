"""``toolkit.sharding``'s ``AbstractDevice``, ``ManualAxisType`` and ``use_abstract_mesh`` against ``jax.sharding``'s
(JAX 0.10.2): construction, fields, equality, hash and repr, where an abstract device is accepted, the context
manager's effect on ``get_abstract_mesh()`` (eagerly and while ``jit`` traces) and the errors of misuse.

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

pytestmark = pytest.mark.multidevice


@pytest.fixture(scope="module")
def both(jx):
    """``(toolkit, jax)`` as namespaces of the names these tests use: the sharding module, ``jit``, ``set_mesh``,
    ``make_mesh``, ``numpy`` and the ``ShapeDtypeStruct``."""
    import jax.numpy as jnp
    import jax.sharding as jsharding

    import toolkit.numpy as tnp
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    tk = types.SimpleNamespace(s=tsharding, jit=toolkit.jit, set_mesh=toolkit.set_mesh, make_mesh=toolkit.make_mesh,
                               np=tnp, Spec=toolkit.ShapeDtypeStruct, name="toolkit")
    jax = types.SimpleNamespace(s=jsharding, jit=jx.jit, set_mesh=jx.set_mesh, make_mesh=jx.make_mesh, np=jnp,
                                Spec=jx.ShapeDtypeStruct, name="jax")
    return tk, jax


def _both(both, program):
    """``program(L)`` run on toolkit's names and on JAX's: the pair of results."""
    return tuple(program(lib) for lib in both)


def _raised(call):
    """``(exception type name, message)`` of what ``call()`` raises (``("no error", "")`` if nothing)."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - what is raised is the thing compared
        return type(error).__name__, str(error)
    return "no error", ""


# -- AbstractDevice -----------------------------------------------------------------------------------------------

def test_abstract_device_fields_equality_repr(both):
    def program(L):
        tpu = L.s.AbstractDevice(device_kind="TPU v6 lite", num_cores=1, platform="tpu")
        cpu = L.s.AbstractDevice("cpu", None, "cpu")
        return (repr(tpu), str(cpu), (tpu.device_kind, tpu.num_cores, tpu.platform),
                cpu == L.s.AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu"), cpu == tpu,
                hash(cpu) == hash(L.s.AbstractDevice("cpu", None, "cpu")), len({cpu, tpu, L.s.AbstractDevice(
                    "cpu", None, "cpu")}), dataclasses.astuple(tpu), dataclasses.replace(cpu, num_cores=4) == cpu,
                _raised(lambda: L.s.AbstractDevice("cpu")), _raised(lambda: setattr(cpu, "platform", "gpu")))
    ours, theirs = _both(both, program)
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
                _raised(lambda: L.s.AbstractMesh((2,), ("x",), abstract_device=None).__enter__()))
    ours, theirs = _both(both, program)
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
    ours, theirs = _both(both, program)
    assert ours == theirs
    assert ours[:2] == ["AbstractMesh((), axis_types=())", True] and ours[2] is None


def test_use_abstract_mesh_errors(both):
    def program(L):
        eight = L.s.AbstractMesh((2, 4), ("x", "y"))
        results = [_raised(lambda: L.s.use_abstract_mesh(L.make_mesh((2, 4), ("x", "y"))))[0]]
        with L.s.use_abstract_mesh(eight):
            results.append(_raised(lambda: L.s.use_abstract_mesh(L.s.AbstractMesh((4,), ("z",))).__enter__()))
            results.append(L.s.get_abstract_mesh() is eight)  # the refused mesh left the context as it was
        with L.set_mesh(L.make_mesh((2, 4), ("x", "y"))):
            results.append(_raised(lambda: L.s.use_abstract_mesh(L.s.AbstractMesh((2,), ("x",))).__enter__()))
        return results
    ours, theirs = _both(both, program)
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
    (t_seen, t_out, *t_rest), (j_seen, j_out, *j_rest) = _both(both, program)
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
    ours, theirs = _both(both, program)
    assert theirs == [True, False, False]
    assert ours == theirs


@pytest.mark.xfail(strict=True, reason="toolkit's bare-PartitionSpec and argument typing read get_mesh(), not "
                   "get_abstract_mesh() (toolkit/shard/resolve.py, toolkit/shard/explicit.py): tracing under an "
                   "Explicit abstract mesh alone does not type values over it as JAX does")
def test_explicit_abstract_mesh_types_a_trace(both):
    def program(L):
        explicit = L.s.AbstractMesh((2, 4), ("x", "y"), (L.s.AxisType.Explicit,) * 2)
        with L.s.use_abstract_mesh(explicit):
            info = L.jit(lambda v: L.np.zeros(8, out_sharding=L.s.PartitionSpec("x")) + v).trace(
                L.Spec((8,), L.np.float32)).out_info
        return repr(info.sharding.mesh), tuple(info.sharding.spec)
    ours, theirs = _both(both, program)
    assert ours == theirs


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
    ours, theirs = _both(both, program)
    assert ours == theirs
    assert ours[0] == "ManualAxisType(varying=frozenset({'x'}), unreduced=frozenset(), reduced=frozenset())"


def test_manual_axis_type_errors(both):
    def program(L):
        mat = L.s.ManualAxisType(varying={"x"})
        return [_raised(lambda: L.s.ManualAxisType(varying={"x"}, unreduced={"x"})),
                _raised(lambda: L.s.ManualAxisType(varying={"x"}, reduced={"x"})),
                _raised(lambda: mat.update(reduced={"x"})),
                _raised(lambda: L.s.ManualAxisType({"x"})),
                _raised(lambda: L.s.ManualAxisType(varying=("x",)))[0],
                _raised(lambda: L.s.ManualAxisType(varying=["x"], unreduced=["y"]))[0],
                _raised(lambda: L.s.ManualAxisType(reduced=["y"]))[0],
                _raised(lambda: setattr(mat, "varying", frozenset()))[0]]
    ours, theirs = _both(both, program)
    assert ours == theirs
    assert ours[0] == ("ValueError", "varying and unreduced cannot have common mesh axes. Got varying={'x'} and "
                       "unreduced={'x'}")
    assert ours[4:] == ["TypeError"] * 3 + ["AttributeError"]
    with pytest.raises(TypeError, match=r"ManualAxisType's varying must be a set of mesh axis names, got \('x',\)"):
        tsharding.ManualAxisType(varying=("x",))
