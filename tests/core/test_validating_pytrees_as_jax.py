"""Custom pytree classes whose constructor checks its children, and named tuples that override ``len()``, through
``jit``, ``grad``, ``vmap`` and lowering, beside JAX 0.10.2 (which calls unflatten with real values there).

toolkit read argument names, output layouts and prefixes by unflattening placeholder ints, so such a class failed
("Box needs an array, got int") where JAX runs; ``pytrees.structure_of`` keeps the structure without its checks.
"""

import typing

import numpy as np
import pytest

import toolkit
from toolkit.core import pytrees

jax = pytest.importorskip("jax")


def _box_class(register):
    class Box:
        def __init__(self, x):
            if not hasattr(x, "shape"):
                raise TypeError(f"Box needs an array, got {type(x).__name__}")
            self.x = x

        def tree_flatten(self):
            return (self.x,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)
    return register(Box)


class Pair(typing.NamedTuple):
    a: typing.Any
    b: typing.Any

    def __len__(self):  # as SciPy's single Rotation: a named tuple that refuses len()
        raise TypeError("a single Pair has no len()")


@pytest.mark.parametrize("lib", ["toolkit", "jax"])
def test_a_validating_class_through_jit_grad_and_vmap(lib):
    m = toolkit if lib == "toolkit" else jax
    Box = _box_class(m.tree_util.register_pytree_node_class)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(m.jit(lambda b: Box(b.x * 2))(Box(x)).x, x * 2)
    np.testing.assert_array_equal(m.jit(lambda v: Box(v + 1))(x).x, x + 1)
    np.testing.assert_array_equal(m.grad(lambda b: (b.x ** 2).sum())(Box(x)).x, 2 * x)
    assert m.vmap(lambda b: Box(b.x * 2))(Box(np.ones((2, 3), np.float32))).x.shape == (2, 3)
    assert m.jit(lambda b: Box(b.x), donate_argnums=0).lower(Box(x)) is not None


def test_the_lowered_names_of_a_validating_class_are_jaxs():
    ours = _box_class(toolkit.tree_util.register_pytree_node_class)
    theirs = _box_class(jax.tree_util.register_pytree_node_class)
    x = np.ones(3, np.float32)
    text = toolkit.jit(lambda b: ours(b.x * 2)).lower(ours(x)).as_text()
    jax_text = jax.jit(lambda b: theirs(b.x * 2)).lower(theirs(x)).as_text()
    # JAX writes a flattened index as [0] in names (linear_util._clean_keystr_arg_names), not keystr's text.
    assert 'jax.result_info = "result[0]"' in text and 'jax.result_info = "result[0]"' in jax_text


def test_a_named_tuple_that_refuses_len_flattens_as_jaxs():
    pair = Pair(np.ones(2, np.float32), np.zeros(2, np.float32))
    ours, theirs = pytrees.tree_flatten_with_path(pair), jax.tree_util.tree_flatten_with_path(pair)
    assert [pytrees.keystr(p) for p, _ in ours[0]] == [jax.tree_util.keystr(p) for p, _ in theirs[0]] == [".a", ".b"]
    out = toolkit.jit(lambda p: Pair(p.a + 1, p.b))(pair)
    assert type(out) is Pair
    np.testing.assert_array_equal(out.a, 2.0)


def test_structure_of_keeps_what_a_class_refuses_as_structure_only():
    Box = _box_class(toolkit.tree_util.register_pytree_node_class)
    _, tree = pytrees.tree_flatten({"w": Box(np.ones(2)), "n": 3})
    skeleton = pytrees.structure_of(tree, range(tree.num_leaves))
    assert isinstance(skeleton["w"], pytrees.StructureOnly) and skeleton["w"].node_type is Box
    assert [pytrees.keystr(p) for p, _ in pytrees.tree_flatten_with_path(skeleton)[0]] == \
        ["['n']", "['w'][<flat index 0>]"]
    with pytest.raises(ValueError, match="2 leaves for a treedef of 2|leaves"):
        pytrees.structure_of(tree, range(3))
