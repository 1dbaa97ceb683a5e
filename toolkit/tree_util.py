"""Public pytree API (``jax.tree_util``): the core's flattening (:mod:`toolkit.core.pytrees`) and the
operations JAX builds on it — transposition, broadcasting, associative reduction, class registration, ``Partial``.

``toolkit.tree`` holds the short names (``toolkit.tree.map``, as ``jax.tree.map``).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from toolkit.core.pytrees import (  # noqa: F401
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    NodeKind,
    PyTreeDef,
    SequenceKey,
    _handler_for_type,
    all_leaves,
    broadcast_prefix,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_with_keys,
    register_static,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)
from toolkit.core.pytrees import __all__ as _core_names

__all__ = [*_core_names, "Partial", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
           "register_pytree_node_class", "register_pytree_with_keys_class", "tree_broadcast",
           "tree_reduce_associative", "tree_transpose"]

T = TypeVar("T")
C = TypeVar("C", bound=type)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any) -> Any:
    """Turn a tree of ``outer_treedef`` whose subtrees are all of ``inner_treedef`` inside out.

    ``inner_treedef=None`` takes the structure of the first subtree. A tree of
    another shape raises ``TypeError`` showing both structures, as JAX does.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    leaves, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [leaves[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten([outer_treedef.unflatten(column) for column in zip(*rows)])


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``prefix_tree`` with each leaf repeated over the subtree of ``full_tree`` it covers.

    >>> tree_broadcast((1, 2), ((0, 0), {"a": 0}))
    ((1, 1), {'a': 2})
    """
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf))


class _NoIdentity:
    """``tree_reduce_associative``'s default: an empty tree is an error."""


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *, identity: Any = _NoIdentity,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduce the leaves with an associative ``operation`` as a balanced tree (depth log n, as JAX).

    An empty tree gives ``identity``, or raises ``TypeError`` without one.

    >>> tree_reduce_associative(operator.add, [1, (2, 3)])
    6
    """
    values = tree_leaves(tree, is_leaf=is_leaf)
    if not values:
        if identity is _NoIdentity:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _halves(values, operation)


def _halves(values: list, operation: Callable[[Any, Any], Any]) -> Any:
    # Split at len // 2 and combine the halves: JAX's grouping, visible to a non-commutative operation.
    if len(values) == 1:
        return values[0]
    middle = len(values) // 2
    return operation(_halves(values[:middle], operation), _halves(values[middle:], operation))


def register_pytree_node_class(cls: C) -> C:
    """Register ``cls`` by its ``tree_flatten`` method and ``tree_unflatten`` classmethod; returns ``cls``.

    Use as a class decorator. A class missing either raises ``TypeError`` naming it.
    """
    _require_methods(cls, "tree_flatten", "tree_unflatten")
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls


def register_pytree_with_keys_class(cls: C) -> C:
    """Register ``cls`` by its ``tree_flatten_with_keys`` method (and ``tree_flatten`` when it has one)."""
    _require_methods(cls, "tree_flatten_with_keys", "tree_unflatten")
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten)  # type: ignore[attr-defined]
    return cls


def _require_methods(cls: Any, *names: str) -> None:
    if not isinstance(cls, type):
        raise TypeError(f"expected a class to register as a pytree node, got {cls!r}")
    missing = [name for name in names if not hasattr(cls, name)]
    if missing:
        raise TypeError(f"{cls.__name__} cannot be registered as a pytree node: it has no {' or '.join(missing)}")


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children of ``tree``'s root node and its metadata (dict: its sorted keys).

    A leaf raises ``ValueError``, as JAX: ``can't tree-flatten type: <class 'int'>``.

    >>> flatten_one_level({"b": [1], "a": 2})
    ([2, [1]], ('a', 'b'))
    """
    handler = _handler_for_type(type(tree))
    if handler is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = handler.flatten(tree)
    return list(children), aux


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """Like :func:`flatten_one_level`, each child with its key."""
    handler = _handler_for_type(type(tree))
    if handler is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    keyed, aux = handler.flatten_with_keys(tree)
    return list(keyed), aux


def is_tree_node(typ: type) -> bool:
    """True iff ``typ`` is a pytree node type: built in (tuple, list, dict, None, namedtuples) or registered."""
    return _handler_for_type(typ) is not None


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: the bound arguments are children, the function is static.

    So a ``Partial`` can be passed to and returned from ``jit``-compiled functions,
    as ``jax.tree_util.Partial``:

    >>> add_one = Partial(operator.add, 1)
    >>> tree_leaves(add_one), add_one(2)
    ([1], 3)
    """

    def __new__(klass, func: Callable[..., Any], *args: Any, **kw: Any) -> "Partial":
        # functools.partial merges the arguments of a partial it wraps into its own; a Partial of a partial would
        # then make the inner partial's arguments pytree children. Keep the given function whole (as JAX does):
        # it is the static part of the tree.
        if isinstance(func, functools.partial):
            func = _WholeFunction(func)
        return super().__new__(klass, func, *args, **kw)


class _WholeFunction:
    """A callable ``functools.partial`` does not look into (see ``Partial.__new__``); equal when its function is."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[..., Any]):
        self.function = function

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self.function(*args, **kw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _WholeFunction) and self.function == other.function

    def __hash__(self) -> int:
        return hash(self.function)

    def __repr__(self) -> str:
        return repr(self.function)


def _flatten_partial(partial_: Partial) -> tuple[tuple[tuple, dict], Callable[..., Any]]:
    return (partial_.args, partial_.keywords), partial_.func


def _unflatten_partial(func: Any, children: Any) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _flatten_partial, _unflatten_partial)
