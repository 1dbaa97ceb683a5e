"""PartitionSpec and AbstractMesh: no devices needed."""

import pickle

import pytest

from toolkit.core import pytrees
from toolkit.shard import UNCONSTRAINED, AbstractMesh, AxisType, NamedSharding, P, PartitionSpec


def test_canonical_entries():
    assert P(("x",)) == P("x")
    assert P(()) == P(None)
    assert P(["x", "y"]) == P(("x", "y"))
    assert P("x", None) == ("x", None)
    assert repr(P("x", None, ("y", "z"))) == "P('x', None, ('y', 'z'))"  # JAX's
    assert repr(P("x")) == "P('x',)" and repr(P()) == "P()" and str(P(None, P.UNCONSTRAINED)) == "P(None, UNCONSTRAINED)"
    assert hash(P("x")) == hash(P(("x",)))


def test_tuple_behaviour():
    spec = P("x", None, ("a", "b"))
    assert len(spec) == 3 and spec[0] == "x" and list(spec) == ["x", None, ("a", "b")]
    assert spec.index(None) == 1 and spec.index(("a", "b")) == 2 and spec.index(("x",)) == 0
    assert spec.count(None) == 1
    assert P("x") + P("y") == P("x", "y") and isinstance(P("x") + ("y",), PartitionSpec)
    assert ("y",) + P("x") == P("y", "x")
    assert P.UNCONSTRAINED is UNCONSTRAINED and repr(UNCONSTRAINED) == "UNCONSTRAINED"
    assert pickle.loads(pickle.dumps(P("x", UNCONSTRAINED))) == P("x", UNCONSTRAINED)


def test_is_a_pytree_leaf():
    leaves, treedef = pytrees.tree_flatten({"a": P("x", None), "b": (P(), 1)})
    assert leaves == [P("x", None), P(), 1]
    assert pytrees.tree_map(lambda s: s, [P("x")]) == [P("x")]


def test_bad_entries():
    with pytest.raises(TypeError, match="axis names only"):
        P(("x", None))
    with pytest.raises(TypeError, match="another PartitionSpec"):
        P(P("x"))


def test_abstract_mesh():
    mesh = AbstractMesh((2, 4), ("x", "y"))
    assert mesh.size == 8 and dict(mesh.shape) == {"x": 2, "y": 4}
    assert mesh.axis_types == (AxisType.Auto, AxisType.Auto)
    assert mesh.axis_size("y") == 4
    with pytest.raises(ValueError, match="'z' is not in the mesh"):
        mesh.axis_size("z")
    with pytest.raises(ValueError, match="no devices"):
        mesh.devices
    with pytest.raises(ValueError, match="2 axis sizes"):
        AbstractMesh((2, 4), ("x",))
    s = NamedSharding(mesh, P(None, "y"))
    assert s.shard_shape((4, 8)) == (4, 2) and s.num_devices == 8
    assert s.is_equivalent_to(NamedSharding(AbstractMesh((2, 4), ("x", "y")), P(None, "y")), 2)
    assert not s.is_fully_replicated
    assert NamedSharding(mesh, P()).is_fully_replicated
