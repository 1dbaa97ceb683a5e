"""``toolkit.tree``, the ``tree_util`` additions and ``flatten_util.ravel_pytree``, side by side with JAX."""

from __future__ import annotations

import dataclasses
import functools
import operator

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import tree, tree_util
from toolkit.flatten_util import ravel_pytree

jax = pytest.importorskip("jax")
jnp = jax.numpy
import jax.flatten_util  # noqa: E402  (a submodule jax does not import itself)

TREES = [
    [1, (2, 3), {"b": 4, "a": None}],
    {"w": 1.0, "layers": [{"k": 2}, {"k": 3}]},
    (),
    5,
]


def test_tree_names_match_jax():
    assert sorted(tree.__all__) == sorted(n for n in dir(jax.tree) if not n.startswith("_"))
    missing = {n for n in dir(jax.tree_util) if not n.startswith("_")} - set(dir(tree_util))
    assert missing == {"default_registry"}, missing  # JAX's registry object: toolkit's is not public


@pytest.mark.parametrize("value", TREES, ids=range(len(TREES)))
def test_short_names_equal_jax(value):
    assert tree.leaves(value) == jax.tree.leaves(value)
    assert str(tree.structure(value)).replace("PyTreeDef", "") == str(jax.tree.structure(value)).replace(
        "PyTreeDef", "")
    assert tree.map(lambda x: x * 2, value) == jax.tree.map(lambda x: x * 2, value)
    leaves, treedef = tree.flatten(value)
    assert tree.unflatten(treedef, leaves) == value
    assert tree.all(value) == jax.tree.all(value)
    assert ([tree_util.keystr(p) for p, _ in tree.leaves_with_path(value)]
            == [jax.tree_util.keystr(p) for p, _ in jax.tree.leaves_with_path(value)])


def test_reduce_and_reduce_associative():
    value = [1, (2, 3), [4, 5, 6]]
    assert tree.reduce(operator.add, value) == jax.tree.reduce(operator.add, value) == 21
    assert tree.reduce(operator.add, value, 100) == 121
    # The pairing is JAX's (balanced), visible with a non-commutative operation.
    pair = lambda a, b: f"({a}{b})"  # noqa: E731
    assert tree.reduce_associative(pair, list("abcde")) == jax.tree.reduce_associative(pair, list("abcde"))
    assert tree.reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tree.reduce_associative(operator.add, [])


def test_transpose():
    outer = tree.structure([0, 0, 0])
    inner = tree.structure({"a": 0, "b": 0})
    value = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    assert tree.transpose(outer, inner, value) == jax.tree.transpose(
        jax.tree.structure([0, 0, 0]), jax.tree.structure({"a": 0, "b": 0}), value)
    assert tree.transpose(outer, None, value) == {"a": [1, 3, 5], "b": [2, 4, 6]}
    with pytest.raises(TypeError, match="Mismatch"):
        tree.transpose(outer, inner, [{"a": 1}, {"a": 3}, {"a": 5}])


def test_broadcast():
    assert tree.broadcast((1, 2), ((0, 0), {"a": 0})) == jax.tree.broadcast((1, 2), ((0, 0), {"a": 0}))
    with pytest.raises(ValueError):
        tree.broadcast((1, 2, 3), ((0, 0), {"a": 0}))


def test_is_leaf_takes_path():
    value = {"keep": [1, 2], "split": [3, 4]}
    is_leaf = lambda path, x: bool(path) and path[0].key == "keep"  # noqa: E731
    ours = tree.leaves_with_path(value, is_leaf, is_leaf_takes_path=True)
    theirs = jax.tree.leaves_with_path(value, is_leaf, is_leaf_takes_path=True)
    assert [(tree_util.keystr(p), x) for p, x in ours] == [(jax.tree_util.keystr(p), x) for p, x in theirs]
    mapped = tree.map_with_path(lambda p, x: len(p), value, is_leaf=is_leaf, is_leaf_takes_path=True)
    assert mapped == {"keep": 1, "split": [2, 2]}


def test_static_field_is_not_a_leaf():
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: float
        name: str = tree.static(default="add")

    assert tree.leaves(Op(1.0)) == [1.0]
    assert tree.map(lambda v: v + 1, Op(1.0, "mul")) == Op(2.0, "mul")


def test_register_pytree_node_class():
    @tree_util.register_pytree_node_class
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert tree.leaves(Pair(1, (2, 3))) == [1, 2, 3]
    result = toolkit.jit(lambda p: p.a + 2 * p.b)(Pair(tnp.ones(2), tnp.arange(2.0)))
    np.testing.assert_array_equal(np.asarray(result), [1.0, 3.0])
    with pytest.raises(TypeError, match="no tree_flatten"):
        tree_util.register_pytree_node_class(type("Bare", (), {"tree_unflatten": classmethod(lambda c, a, k: c)}))
    with pytest.raises(TypeError, match="expected a class"):
        tree_util.register_pytree_node_class(lambda: None)


def test_register_pytree_with_keys_class():
    @tree_util.register_pytree_with_keys_class
    class Named:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((tree_util.GetAttrKey("x"), self.x), (tree_util.GetAttrKey("y"), self.y)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert [tree_util.keystr(p) for p, _ in tree.leaves_with_path(Named(1, 2))] == [".x", ".y"]


def test_flatten_one_level_and_is_tree_node():
    value = {"b": [1, 2], "a": {"c": 3}}
    children, aux = tree_util.flatten_one_level(value)
    theirs = jax.tree_util.flatten_one_level(value)
    assert (list(children), tuple(aux)) == (list(theirs[0]), tuple(theirs[1]))
    keyed, _ = tree_util.flatten_one_level_with_keys([5, 6])
    assert [x for _, x in keyed] == [5, 6]
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tree_util.flatten_one_level(3)
    for typ in (tuple, list, dict, type(None), int, np.ndarray):
        assert tree_util.is_tree_node(typ) == jax.tree_util.is_tree_node(typ), typ


def test_partial_is_a_pytree_and_crosses_jit():
    add = tree_util.Partial(operator.add, tnp.asarray(1.0, tnp.float32))
    assert len(tree.leaves(add)) == 1
    out = toolkit.jit(lambda f, x: f(x))(add, tnp.asarray(2.0, tnp.float32))
    assert float(out) == 3.0
    returned = toolkit.jit(lambda x: tree_util.Partial(operator.mul, x))(tnp.asarray(4.0, tnp.float32))
    assert float(returned(2.0)) == 8.0
    # A partial inside a Partial stays whole (static), as JAX keeps it.
    nested = tree_util.Partial(functools.partial(operator.add, 1), 2)
    assert tree.leaves(nested) == jax.tree.leaves(jax.tree_util.Partial(functools.partial(operator.add, 1), 2))
    assert nested() == 3


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float32", "int32"), ("bfloat16", "float16")])
def test_ravel_pytree_matches_jax(dtypes):
    rng = np.random.default_rng(0)
    host = {"w": rng.normal(size=(2, 3)).astype(dtypes[0]), "b": (rng.normal(size=4) * 3).astype(dtypes[1])}
    ours, unravel = ravel_pytree({k: tnp.asarray(v) for k, v in host.items()})
    theirs, _ = jax.flatten_util.ravel_pytree({k: jnp.asarray(v) for k, v in host.items()})
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(np.asarray(ours, np.float64), np.asarray(theirs, np.float64))
    back = unravel(ours)
    for key, value in host.items():
        assert back[key].dtype == value.dtype and back[key].shape == value.shape


def test_ravel_pytree_errors_and_empty():
    flat, unravel = ravel_pytree([])
    assert flat.shape == (0,) and unravel(flat) == []
    flat, unravel = ravel_pytree([tnp.ones(3)])
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(flat.astype(tnp.float16))
    with pytest.raises(ValueError, match="shape"):
        unravel(flat[:2])
