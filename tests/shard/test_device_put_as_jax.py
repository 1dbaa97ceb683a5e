"""``toolkit.device_put`` with JAX 0.10.2's parameters (``device=``, ``src=``, ``donate=``, ``may_alias=``) and
inside traces (``jit``, ``grad``, ``vmap``), where it is JAX's ``device_put_p``: the value itself, its sharding
placing the computation. Side by side with JAX in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit.shard import AxisType, NamedSharding, P

pytestmark = pytest.mark.multidevice

X = np.arange(32, dtype=np.float32).reshape(8, 4)


@pytest.fixture
def meshes(jx):
    from jax.sharding import AxisType as JAxisType
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")

    def make(kind):
        t = toolkit.make_mesh((2, 4), ("x", "y"), (kind,) * 2)
        j = jx.make_mesh((2, 4), ("x", "y"), (getattr(JAxisType, kind.name),) * 2)
        return t, j
    return make


def _same_placement(t, j):
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))
    assert [d.id for d in t.sharding._device_assignment] == [d.id for d in j.sharding._device_assignment]
    if hasattr(j.sharding, "spec"):
        assert tuple(t.sharding.spec) == tuple(j.sharding.spec)


def test_inside_jit_a_sharding_places_the_computation_and_the_value_is_unchanged(jx, meshes):
    from jax.sharding import NamedSharding as JNamedSharding, PartitionSpec as JP
    tm, jm = meshes(AxisType.Auto)
    ours = toolkit.jit(lambda x: toolkit.device_put(x * 2, NamedSharding(tm, P("x", "y"))))
    theirs = jx.jit(lambda x: jx.device_put(x * 2, JNamedSharding(jm, JP("x", "y"))))
    # JAX's result is replicated over the mesh: inside jit its device_put annotates nothing.
    _same_placement(ours(X), theirs(X))
    assert "custom_call" not in ours.lower(X).as_text() and "num_partitions = 8" in ours.lower(X).as_text()


def test_inside_jit_a_device_does_not_place_the_computation(jx):
    ours = toolkit.jit(lambda x: toolkit.device_put(x + 1, toolkit.devices()[3]))(X)
    theirs = jx.jit(lambda x: jx.device_put(x + 1, jx.devices()[3]))(X)
    _same_placement(ours, theirs)
    assert ours.sharding.device_set == {toolkit.devices()[0]}


def test_inside_jit_on_an_explicit_mesh_the_sharding_is_the_type(jx, meshes):
    from jax.sharding import NamedSharding as JNamedSharding, PartitionSpec as JP
    tm, jm = meshes(AxisType.Explicit)
    seen = {}

    def ours(x):
        y = toolkit.device_put(x * 2, NamedSharding(tm, P(None, "y")))
        seen["toolkit"] = str(toolkit.typeof(y))
        return y

    def theirs(x):
        y = jx.device_put(x * 2, JNamedSharding(jm, JP(None, "y")))
        seen["jax"] = str(jx.typeof(y))
        return y

    _same_placement(toolkit.jit(ours)(X), jx.jit(theirs)(X))
    assert seen["toolkit"] == seen["jax"] == "float32[8,4@y]"


def test_inside_jit_a_sharding_that_does_not_divide_the_shape_fails_as_jax(jx, meshes):
    from jax.sharding import NamedSharding as JNamedSharding, PartitionSpec as JP
    tm, jm = meshes(AxisType.Auto)
    with pytest.raises(ValueError, match="does not divide it evenly"):
        toolkit.jit(lambda x: toolkit.device_put(x, NamedSharding(tm, P("y"))))(np.ones(6, np.float32))
    with pytest.raises(ValueError, match="should evenly divide"):
        jx.jit(lambda x: jx.device_put(x, JNamedSharding(jm, JP("y"))))(np.ones(6, np.float32))


def test_grad_and_vmap_through_device_put_as_jax(jx, meshes):
    from jax.sharding import NamedSharding as JNamedSharding, PartitionSpec as JP
    tm, jm = meshes(AxisType.Auto)
    ts, js = NamedSharding(tm, P("x")), JNamedSharding(jm, JP("x"))

    def loss(m, put, s):
        return lambda x: (put(x * x, s) * 3).sum()

    for jit_t, jit_j in ((lambda f: f, lambda f: f), (toolkit.jit, jx.jit)):
        np.testing.assert_allclose(jit_t(toolkit.grad(loss(toolkit, toolkit.device_put, ts)))(X),
                                   jit_j(jx.grad(loss(jx, jx.device_put, js)))(X))
        ours = jit_t(toolkit.vmap(lambda r: toolkit.device_put(r * 2, toolkit.devices()[0])))(X)
        theirs = jit_j(jx.vmap(lambda r: jx.device_put(r * 2, jx.devices()[0])))(X)
        np.testing.assert_array_equal(ours, theirs)
    ours = toolkit.jit(toolkit.vmap(lambda r: toolkit.device_put(r, NamedSharding(tm, P("y")))))(X)
    theirs = jx.jit(jx.vmap(lambda r: jx.device_put(r, JNamedSharding(jm, JP("y")))))(X)
    _same_placement(ours, theirs)


def test_device_keyword_donate_and_may_alias(jx):
    devices = toolkit.devices()
    x = toolkit.device_put(X, device=devices[0])
    assert toolkit.device_put(x, device=devices[0]) is x  # already there: may alias
    copy = toolkit.device_put(x, devices[0], may_alias=False)
    assert copy is not x and not x.is_deleted()
    copy.delete()  # its own buffer: x lives on
    np.testing.assert_array_equal(x, X)
    moved = toolkit.device_put(x, devices[1], donate=True)
    # Donated: toolkit deletes the input (JAX on CPU keeps it: donation is best effort there).
    assert x.is_deleted() and moved.sharding.device_set == {devices[1]}
    np.testing.assert_array_equal(moved, X)
    tree = {"a": toolkit.device_put(X), "b": toolkit.device_put(X)}
    out = toolkit.device_put(tree, devices[2], donate={"a": True, "b": False}, src=devices[0])
    assert tree["a"].is_deleted() and not tree["b"].is_deleted()
    assert out["b"].sharding.device_set == {devices[2]}
    for put in (toolkit.device_put, jx.device_put):
        with pytest.raises(ValueError, match="may_alias and donate cannot be True at the same time"):
            put(np.ones(2), donate=True, may_alias=True)


def test_a_memory_other_than_the_devices_inside_jit_places_the_result():
    # As JAX's on CPU (tests/shard/test_device_put_memory_kind_in_jit_as_jax.py compares the cases with JAX).
    assert toolkit.jit(lambda x: toolkit.device_put(x, toolkit.memory.Space.Host))(X).sharding.memory_kind == \
        "pinned_host"


def test_device_queries_take_jax_keywords(jx):
    assert toolkit.devices(backend="cpu") == toolkit.devices("cpu") == toolkit.devices()
    client = toolkit.devices()[0].client
    assert toolkit.devices(backend=client) == toolkit.devices()
    assert toolkit.device_count(backend="cpu") == jx.device_count(backend="cpu")
    assert toolkit.local_device_count(backend="cpu") == jx.local_device_count(backend="cpu")
    assert toolkit.process_index(backend="cpu") == jx.process_index(backend="cpu") == 0
    assert toolkit.process_count(backend="cpu") == jx.process_count(backend="cpu") == 1
    assert [d.id for d in toolkit.local_devices(0)] == [d.id for d in jx.local_devices(0)]
    assert [d.id for d in toolkit.local_devices(process_index=0, backend="cpu")] == list(range(8))
    with pytest.warns(UserWarning, match="renamed from `host_id` to `process_index`"):
        assert toolkit.local_devices(host_id=0) == toolkit.local_devices()
    for query in (toolkit.local_devices, jx.local_devices):
        with pytest.raises(ValueError, match="Unknown process_index 3"):
            query(3)
    with pytest.raises(TypeError, match="platform name such as 'cpu' or a PJRT client"):
        toolkit.devices(backend=3)


CREATION = {
    "zeros": lambda m, d: m.zeros((8, 4), device=d), "ones": lambda m, d: m.ones(8, m.int32, device=d),
    "full": lambda m, d: m.full(8, 3.0, device=d), "empty": lambda m, d: m.empty((8,), device=d),
    "zeros_like": lambda m, d: m.zeros_like(X, device=d), "ones_like": lambda m, d: m.ones_like(X, device=d),
    "full_like": lambda m, d: m.full_like(X, 2, device=d), "empty_like": lambda m, d: m.empty_like(X, device=d),
    "arange": lambda m, d: m.arange(8, device=d), "eye": lambda m, d: m.eye(8, device=d),
    "array": lambda m, d: m.array(X, device=d), "asarray": lambda m, d: m.asarray(X, device=d),
    "astype": lambda m, d: m.astype(m.asarray(X), m.int32, device=d),
    "linspace": lambda m, d: m.linspace(0, 1, 8, device=d),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_functions_take_device_as_jax(jx, meshes, name):
    from jax.sharding import NamedSharding as JNamedSharding, PartitionSpec as JP
    tm, jm = meshes(AxisType.Auto)
    case = CREATION[name]
    _same_placement(case(toolkit.numpy, toolkit.devices()[5]), case(jx.numpy, jx.devices()[5]))
    _same_placement(case(toolkit.numpy, NamedSharding(tm, P("x"))), case(jx.numpy, JNamedSharding(jm, JP("x"))))
    # Inside jit the values are JAX's, and the computation stays where JAX's does.
    _same_placement(toolkit.jit(lambda: case(toolkit.numpy, toolkit.devices()[5]))(),
                    jx.jit(lambda: case(jx.numpy, jx.devices()[5]))())


def test_creation_device_errors_as_jax(jx, meshes):
    tm, jm = meshes(AxisType.Explicit)
    for m, devices, mesh in ((toolkit, toolkit.devices(), tm), (jx, jx.devices(), jm)):
        with pytest.raises(ValueError, match="Only one of `device` or `out_sharding` can be set"):
            m.numpy.zeros(8, device=devices[0], out_sharding=m.sharding.NamedSharding(mesh, m.sharding.PartitionSpec()))
        with pytest.raises(ValueError if m is toolkit else AttributeError):  # JAX's: 'str' has no _is_concrete
            m.numpy.zeros(8, device="cpu")
    with toolkit.set_mesh(tm):
        explicit = toolkit.numpy.asarray(X, out_sharding=P("x"))
    assert str(toolkit.typeof(explicit)) == "float32[8@x,4]"
