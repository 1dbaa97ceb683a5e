"""Tests for toolkit.core.pytrees, with jax.tree_util as an oracle when importable."""

import collections
import dataclasses
import timeit

import pytest

from toolkit import tree_util
from toolkit.core.pytrees import NodeKind, PyTreeDef

Point = collections.namedtuple("Point", "x y")


class Box:
    def __init__(self, value, tag="t"):
        self.value = value
        self.tag = tag

    def __eq__(self, other):
        return type(other) is Box and other.value == self.value and other.tag == self.tag


tree_util.register_pytree_node(Box, lambda b: ((b.value,), b.tag), lambda tag, ch: Box(ch[0], tag))


@tree_util.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata=dict(static=True))


class Keyed:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Keyed and (self.a, self.b) == (other.a, other.b)


tree_util.register_pytree_with_keys(
    Keyed,
    lambda k: (((tree_util.GetAttrKey("a"), k.a), (tree_util.DictKey("bee"), k.b)), None),
    lambda aux, ch: Keyed(*ch),
)


@tree_util.register_static
class Static(str):
    pass


def sample_trees():
    return [
        1,
        None,
        (),
        [],
        {},
        (1,),
        (1, [2, 3]),
        {"b": 1, "a": (2, None)},
        Point(1, (2, 3)),
        collections.OrderedDict([("b", 1), ("a", 2)]),
        collections.defaultdict(list, {"b": 1, "a": 2}),
        [Box([1, 2])],
        (None, [None, 1]),
        {"x": {"y": [1, {"z": 2}]}},
        Params(1, (2, 3)),
        [Keyed(1, (2,))],
        [1, Static("s"), 2],
        {1: "a", 2: "b"},
    ]


@pytest.mark.parametrize("tree", sample_trees(), ids=lambda t: type(t).__name__)
def test_roundtrip(tree):
    leaves, treedef = tree_util.tree_flatten(tree)
    assert tree_util.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == len(leaves)
    assert tree_util.tree_structure(tree_util.tree_unflatten(treedef, leaves)) == treedef
    assert hash(tree_util.tree_structure(tree)) == hash(treedef)


def test_leaf_order_and_repr():
    leaves, treedef = tree_util.tree_flatten((1, {"b": 2, "a": None}, [3, Point(4, 5)]))
    assert leaves == [1, 2, 3, 4, 5]
    assert repr(treedef) == "PyTreeDef((*, {'a': None, 'b': *}, [*, CustomNode(namedtuple[Point], [*, *])]))"
    assert repr(tree_util.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tree_util.tree_structure(Box(1))) == "PyTreeDef(CustomNode(Box[t], [*]))"
    assert repr(tree_util.tree_structure(Params(1, 2))) == "PyTreeDef(CustomNode(Params[('p',)], [*, *]))"
    assert treedef.num_nodes == 10


def test_ordered_and_default_dict():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tree_util.tree_leaves(od) == [1, 2]
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    assert tree_util.tree_leaves(dd) == [2, 1]
    rebuilt = tree_util.tree_map(lambda x: x * 10, dd)
    assert type(rebuilt) is collections.defaultdict and rebuilt.default_factory is list
    assert rebuilt == {"a": 20, "b": 10}
    assert list(tree_util.tree_map(lambda x: x, od)) == ["b", "a"]


def test_key_paths():
    tree = {"a": [1, Point(2, 3)], "b": Box(4), "c": Keyed(5, 6)}
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(tree)[0]]
    assert paths == ["['a'][0]", "['a'][1].x", "['a'][1].y", "['b'][<flat index 0>]", "['c'].a", "['c']['bee']"]
    assert tree_util.keystr((tree_util.DictKey("a"), tree_util.SequenceKey(0), tree_util.GetAttrKey("n")), simple=True, separator="/") == "a/0/n"
    assert repr(tree_util.DictKey("a")) == "DictKey(key='a')"
    assert tree_util.SequenceKey(1) == tree_util.SequenceKey(1) and tree_util.SequenceKey(1) != tree_util.DictKey(1)
    assert tree_util.tree_map_with_path(lambda p, x: tree_util.keystr(p), [7, {"a": 8}]) == ["[0]", {"a": "[1]['a']"}]
    assert [tree_util.keystr(p) for p, _ in tree_util.tree_leaves_with_path(Params(1, 2))] == [".w", ".b"]


def test_is_leaf():
    assert tree_util.tree_leaves([1, None, 2]) == [1, 2]
    assert tree_util.tree_leaves([1, None, 2], is_leaf=lambda x: x is None) == [1, None, 2]
    assert tree_util.tree_leaves([(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple) and len(x) == 2) == [(1, 2), 3]
    assert tree_util.tree_leaves((1, 2), is_leaf=lambda x: True) == [(1, 2)]
    assert tree_util.tree_map(lambda x: x, [1, None], is_leaf=lambda x: x is None) == [1, None]


def test_tree_map_multiple_and_prefix():
    assert tree_util.tree_map(lambda x, y: x + y, (1, {"a": 2}), (10, {"a": 20})) == (11, {"a": 22})
    # The second tree may be deeper: the first tree's leaves receive whole subtrees.
    assert tree_util.tree_map(lambda x, y: (x, y), (1, 2), ([3, 4], 5)) == ((1, [3, 4]), (2, 5))
    assert tree_util.tree_map(lambda x, y: (x, y), (1, None), (2, None)) == ((1, 2), None)


def test_flatten_up_to_errors_name_path():
    treedef = tree_util.tree_structure((1, {"w": (1, 2)}))
    with pytest.raises(ValueError, match=r"^Tuple arity mismatch: 3 != 2; tuple: \(1, 2, 3\) at path \[1\]\['w'\]\.$"):
        treedef.flatten_up_to((1, {"w": (1, 2, 3)}))
    with pytest.raises(ValueError, match=r"Expected tuple, got \[1, 2\] at path \[1\]\['w'\]"):
        treedef.flatten_up_to((1, {"w": [1, 2]}))
    with pytest.raises(ValueError, match=r"Dict key mismatch; expected keys: \['w'\]; present keys: \['v'\] at path \[1\]"):
        treedef.flatten_up_to((1, {"v": (1, 2)}))
    with pytest.raises(ValueError, match=r"^Tuple arity mismatch: 3 != 2; tuple: \(1, 2, 3\)\.$"):
        treedef.flatten_up_to((1, 2, 3))
    with pytest.raises(ValueError, match=r"Expected None, got 3 at path \[0\]"):
        tree_util.tree_structure((None, 1)).flatten_up_to((3, 1))
    with pytest.raises(ValueError, match=r"Expected named tuple, got \(1, 2\)"):
        tree_util.tree_structure(Point(1, 2)).flatten_up_to((1, 2))
    with pytest.raises(ValueError, match=r"Custom node type mismatch"):
        tree_util.tree_structure(collections.OrderedDict(a=1)).flatten_up_to({"a": 1})
    with pytest.raises(ValueError, match=r"Mismatch custom node data: 'u' != 't'.* at path \[0\]"):
        tree_util.tree_structure([Box(1)]).flatten_up_to([Box(1, "u")])
    with pytest.raises(ValueError, match=r"List arity mismatch: 1 != 2; list: \[1\]"):
        tree_util.tree_map(lambda a, b: a, [1, 2], [1])
    assert treedef.flatten_up_to(((7, 8), {"w": (1, [2])})) == [(7, 8), 1, [2]]


def test_unflatten_errors():
    treedef = tree_util.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"):
        treedef.unflatten([1, 2])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3, got 4"):
        treedef.unflatten([1, 2, 3, 4])
    assert treedef.unflatten(iter([1, 2, 3])) == (1, [2, 3])


def test_registration_errors():
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration for <class 'tuple'>"):
        tree_util.register_pytree_node(tuple, lambda x: (x, None), lambda a, c: tuple(c))
    with pytest.raises(ValueError, match="Duplicate"):
        tree_util.register_pytree_node(Box, lambda b: ((), None), lambda a, c: Box(0))
    with pytest.raises(TypeError, match="data_fields and meta_fields are required"):
        tree_util.register_dataclass(object)
    with pytest.raises(TypeError, match="must both be specified"):
        tree_util.register_dataclass(Point, data_fields=["x"])

    @dataclasses.dataclass
    class Two:
        a: int
        b: int

    with pytest.raises(ValueError, match=r"Missing fields: \['b'\]"):
        tree_util.register_dataclass(Two, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match=r"must not overlap"):
        tree_util.register_dataclass(Two, data_fields=["a", "b"], meta_fields=["a"])
    tree_util.register_dataclass(Two, data_fields=["a"], meta_fields=["b"])
    assert tree_util.tree_leaves(Two(1, 2)) == [1]
    assert tree_util.tree_map(lambda x: x + 1, Two(1, 2)) == Two(2, 2)


def test_register_dataclass_decorator_with_arguments():
    @tree_util.register_dataclass(data_fields=["x"], meta_fields=["mode"])
    @dataclasses.dataclass
    class Layer:
        x: object
        mode: str

    assert tree_util.tree_flatten(Layer(3, "m"))[0] == [3]
    assert tree_util.tree_structure(Layer(3, "m")) != tree_util.tree_structure(Layer(3, "n"))


def test_unsortable_dict_keys():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree dictionary keys"):
        tree_util.tree_flatten({1: 1, "a": 2})


def test_subclasses_are_leaves():
    class D(dict):
        pass

    assert tree_util.tree_leaves(D(a=1)) == [D(a=1)]


def test_treedef_equality_and_hash():
    assert tree_util.tree_structure((1, 2)) == tree_util.tree_structure(("a", "b"))
    assert tree_util.tree_structure((1, 2)) != tree_util.tree_structure([1, 2])
    assert tree_util.tree_structure({"a": 1}) != tree_util.tree_structure({"b": 1})
    assert tree_util.tree_structure(Box(1, "x")) != tree_util.tree_structure(Box(1, "y"))
    assert tree_util.tree_structure(Point(1, 2)) != tree_util.tree_structure((1, 2))
    assert len({tree_util.tree_structure((1, [2])), tree_util.tree_structure((3, [4]))}) == 1
    assert tree_util.tree_structure(1) != 1


def test_treedef_helpers():
    assert tree_util.treedef_is_leaf(tree_util.tree_structure(1))
    assert tree_util.treedef_is_leaf(tree_util.tree_structure(None))
    assert not tree_util.treedef_is_leaf(tree_util.tree_structure((1,)))
    assert tree_util.tree_structure(1).is_leaf() and not tree_util.tree_structure(None).is_leaf()
    assert tree_util.all_leaves([1, 2]) and not tree_util.all_leaves([1, (2,)]) and not tree_util.all_leaves([None])
    assert tree_util.all_leaves([None], is_leaf=lambda x: x is None)
    assert tree_util.tree_all([1, (True, None)]) and not tree_util.tree_all([1, 0]) and tree_util.tree_all([])
    assert tree_util.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tree_util.tree_reduce(lambda a, b: a + b, [], 5) == 5
    assert repr(tree_util.treedef_tuple([tree_util.tree_structure(1), tree_util.tree_structure([1])])) == "PyTreeDef((*, [*]))"
    assert tree_util.treedef_children(tree_util.tree_structure((1, [2]))) == [tree_util.tree_structure(1), tree_util.tree_structure([2])]
    assert tree_util.tree_structure({"a": 1}).node_data() == (dict, ["a"])
    assert tree_util.tree_structure(1).node_data() is None
    assert tree_util.tree_structure(Box(1)).node_data() == (Box, "t")
    with pytest.raises(TypeError):
        PyTreeDef()


@pytest.mark.parametrize("tree", sample_trees(), ids=lambda t: type(t).__name__)
def test_walk_and_rebuild(tree):
    treedef = tree_util.tree_structure(tree)

    def rebuild(node):
        return PyTreeDef.from_node(node.node_kind, node.node_type, node.node_aux, [rebuild(c) for c in node.children()])

    rebuilt = rebuild(treedef)
    assert rebuilt == treedef and repr(rebuilt) == repr(treedef) and hash(rebuilt) == hash(treedef)
    assert isinstance(treedef.node_kind, NodeKind)


def test_from_node_errors():
    leaf = PyTreeDef.from_node("leaf")
    with pytest.raises(ValueError, match="Unknown pytree node kind 'bogus'"):
        PyTreeDef.from_node("bogus")
    with pytest.raises(ValueError, match="Dict node has 1 keys but 0 children"):
        PyTreeDef.from_node(NodeKind.DICT, dict, ("a",), [])
    with pytest.raises(ValueError, match="is not a registered custom pytree node type"):
        PyTreeDef.from_node(NodeKind.CUSTOM, int, None, [leaf])
    with pytest.raises(ValueError, match="needs a node_type class"):
        PyTreeDef.from_node(NodeKind.CUSTOM, None, None, [leaf])
    with pytest.raises(ValueError, match="Named tuple Point has 2 fields but 1 children"):
        PyTreeDef.from_node(NodeKind.NAMEDTUPLE, Point, None, [leaf])
    with pytest.raises(ValueError, match="children must be PyTreeDefs"):
        PyTreeDef.from_node(NodeKind.TUPLE, tuple, None, [1])
    # Dict children are put into sorted key order.
    assert PyTreeDef.from_node("dict", dict, ("b", "a"), [leaf, PyTreeDef.from_node("none")]) == tree_util.tree_structure(
        {"a": None, "b": 1}
    )


def test_no_pickle():
    import pickle

    with pytest.raises(TypeError, match="does not support pickling"):
        pickle.dumps(tree_util.tree_structure((1, 2)))


def test_flat_tuple_flatten_is_fast():
    import numpy as np

    args = (np.zeros(3), np.ones(3))
    best = min(timeit.repeat(lambda: tree_util.tree_flatten(args), number=20000, repeat=5)) / 20000
    # Target is < 1 µs; leave slack for loaded CI machines.
    assert best < 5e-6, best


# ------------------------------------------------------------------ jax oracle


def _jax_register_same(jtu):
    # Mirror our custom registrations in jax (idempotent within one process).
    for register in [
        lambda: jtu.register_pytree_node(Box, lambda b: ((b.value,), b.tag), lambda tag, ch: Box(ch[0], tag)),
        lambda: jtu.register_dataclass(Params),
        lambda: jtu.register_pytree_with_keys(
            Keyed,
            lambda k: (((jtu.GetAttrKey("a"), k.a), (jtu.DictKey("bee"), k.b)), None),
            lambda aux, ch: Keyed(*ch),
        ),
        lambda: jtu.register_static(Static),
    ]:
        try:
            register()
        except ValueError:
            pass


@pytest.mark.parametrize("tree", sample_trees(), ids=lambda t: type(t).__name__)
def test_matches_jax(tree):
    jax = pytest.importorskip("jax")
    jtu = jax.tree_util
    _jax_register_same(jtu)
    leaves, treedef = tree_util.tree_flatten(tree)
    jleaves, jtreedef = jtu.tree_flatten(tree)
    assert leaves == jleaves
    assert repr(treedef) == repr(jtreedef)
    assert treedef.num_leaves == jtreedef.num_leaves and treedef.num_nodes == jtreedef.num_nodes
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(tree)[0]]
    jpaths = [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(tree)[0]]
    assert paths == jpaths
    assert [tree_util.keystr(p, simple=True, separator="/") for p, _ in tree_util.tree_flatten_with_path(tree)[0]] == [
        jtu.keystr(p, simple=True, separator="/") for p, _ in jtu.tree_flatten_with_path(tree)[0]
    ]
    assert [repr(k) for p, _ in tree_util.tree_flatten_with_path(tree)[0] for k in p] == [
        repr(k) for p, _ in jtu.tree_flatten_with_path(tree)[0] for k in p
    ]
    assert tree_util.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(jtreedef)
    data, jdata = treedef.node_data(), jtreedef.node_data()
    assert (data is None) == (jdata is None)
    if data is not None:
        assert data[0] is jdata[0]
        assert data[1] == jdata[1]


def test_flatten_up_to_messages_match_jax_at_root():
    jax = pytest.importorskip("jax")
    cases = [((1, 2), (1, 2, 3)), ((1, 2), [1, 2]), ({"a": 1}, {"b": 1}), ([1, 2], [1]), (None, 1), (Point(1, 2), (1, 2))]
    for prefix, full in cases:
        with pytest.raises(ValueError) as ours:
            tree_util.tree_structure(prefix).flatten_up_to(full)
        with pytest.raises(ValueError) as theirs:
            jax.tree_util.tree_structure(prefix).flatten_up_to(full)
        assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_unflatten_does_not_alias_leaves():
    leaves = [1, 2]
    rebuilt = tree_util.tree_unflatten(tree_util.tree_structure([0, 0]), leaves)
    assert rebuilt == leaves and rebuilt is not leaves
    tree = [1, 2]
    flat, _ = tree_util.tree_flatten(tree)
    assert flat is not tree


def test_docstring_examples():
    import doctest

    import toolkit.core.pytrees as module

    assert doctest.testmod(module).failed == 0
