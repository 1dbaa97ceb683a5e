"""Pytrees: nested containers of leaves, flattened to a list plus a structure.

A pure-Python implementation of the public API and semantics of
``jax.tree_util`` (leaf order, ``PyTreeDef`` repr, key paths, registration),
with no dependency on jaxlib.

Built-in nodes (same as JAX):

* ``tuple`` and ``list`` — children in order;
* ``dict`` — children in *sorted key* order;
* ``None`` — a node with no children (so ``tree_leaves([1, None]) == [1]``);
* named tuples (any ``tuple`` subclass with ``_fields``) — children in field
  order, key paths ``.field``;
* ``collections.OrderedDict`` — children in insertion order (a custom node);
* ``collections.defaultdict`` — children in sorted key order (a custom node).

Every other type is a leaf unless registered with :func:`register_pytree_node`,
:func:`register_pytree_with_keys`, :func:`register_dataclass` or
:func:`register_static`. Registration is by exact type: subclasses of ``dict``
or ``list`` are leaves unless registered themselves.

Example::

    >>> leaves, treedef = tree_flatten((1, {"b": 2, "a": None}))
    >>> leaves
    [1, 2]
    >>> treedef
    PyTreeDef((*, {'a': None, 'b': *}))
    >>> tree_unflatten(treedef, [10, 20])
    (10, {'a': None, 'b': 20})

Walking and rebuilding a structure (for serializers)
----------------------------------------------------
Each ``PyTreeDef`` node exposes:

* ``node_kind`` — a :class:`NodeKind` (``LEAF``, ``NONE``, ``TUPLE``, ``LIST``,
  ``DICT``, ``NAMEDTUPLE``, ``CUSTOM``); ``OrderedDict``, ``defaultdict``,
  registered dataclasses and every other registered class are ``CUSTOM``;
* ``node_type`` — the Python class of the node (``None`` for a leaf);
* ``node_aux`` — the node's static data: the key tuple for ``DICT``; the
  auxiliary data returned by the flatten function for ``CUSTOM`` (for
  ``OrderedDict`` the key tuple, for ``defaultdict`` ``(default_factory,
  keys)``, for dataclasses the tuple of meta-field values); ``None`` otherwise;
* ``children()`` — the child ``PyTreeDef`` s.

``PyTreeDef.from_node(kind, node_type, node_aux, children)`` rebuilds a node
from exactly those four values, so ``from_node(t.node_kind, t.node_type,
t.node_aux, t.children()) == t`` for every ``t``.

Why one module of ~1,200 lines: ``PyTreeDef``, the node registry, flattening
and unflattening are one data structure with one set of invariants (the node
kinds, leaf order, the flatten cache), and the fastest path through them is
shared by every ``jit`` call; split across modules, each piece would reach
into the others' private fields. The key-path API (``*_with_path``, ``keystr``)
and the tree utilities (``tree_map``, ``tree_reduce``, ...) are thin layers on
that structure and stay beside it, as in ``jax._src.tree_util``.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
from typing import Any, Callable, Final, Hashable, Iterable, Literal, Sequence

__all__ = [
    "NodeKind",
    "PyTreeDef",
    "SequenceKey",
    "DictKey",
    "GetAttrKey",
    "FlattenedIndexKey",
    "KeyEntry",
    "KeyPath",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "tree_reduce",
    "tree_all",
    "tree_flatten_with_path",
    "tree_leaves_with_path",
    "tree_map_with_path",
    "keystr",
    "treedef_is_leaf",
    "treedef_children",
    "treedef_tuple",
    "all_leaves",
    "register_pytree_node",
    "register_pytree_with_keys",
    "register_dataclass",
    "register_static",
]


# --------------------------------------------------------------------------
# Key path entries
# --------------------------------------------------------------------------


class SequenceKey:
    """Key of a child of a tuple or list: prints as ``[idx]``.

    >>> str(SequenceKey(0))
    '[0]'
    """

    __slots__ = ("idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx: int):
        self.idx = idx

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def __repr__(self) -> str:
        return f"SequenceKey(idx={self.idx!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is SequenceKey and other.idx == self.idx

    def __hash__(self) -> int:
        return hash((SequenceKey, self.idx))


class DictKey:
    """Key of a child of a mapping: prints as ``['a']`` (the key's repr).

    >>> str(DictKey("a"))
    "['a']"
    """

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key: Hashable):
        self.key = key

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def __repr__(self) -> str:
        return f"DictKey(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is DictKey and other.key == self.key

    def __hash__(self) -> int:
        return hash((DictKey, self.key))


class GetAttrKey:
    """Key of an attribute child (named tuples, dataclasses): prints as ``.name``.

    >>> str(GetAttrKey("x"))
    '.x'
    """

    __slots__ = ("name",)
    __match_args__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f".{self.name}"

    def __repr__(self) -> str:
        return f"GetAttrKey(name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is GetAttrKey and other.name == self.name

    def __hash__(self) -> int:
        return hash((GetAttrKey, self.name))


class FlattenedIndexKey:
    """Key of the i-th child of a custom node registered without keys.

    >>> str(FlattenedIndexKey(2))
    '[<flat index 2>]'
    """

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key: int):
        self.key = key

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"

    def __repr__(self) -> str:
        return f"FlattenedIndexKey(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is FlattenedIndexKey and other.key == self.key

    def __hash__(self) -> int:
        return hash((FlattenedIndexKey, self.key))


KeyEntry = Any  # SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey | user key
KeyPath = tuple


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as a string, like ``jax.tree_util.keystr``.

    >>> keystr((DictKey("a"), SequenceKey(0)))
    "['a'][0]"
    >>> keystr((DictKey("a"), SequenceKey(0)), simple=True, separator="/")
    'a/0'
    """
    if not simple:
        return separator.join(map(str, keys))
    return separator.join(map(_simple_key_str, keys))


def _simple_key_str(key: KeyEntry) -> str:
    match key:
        case SequenceKey(idx=k) | DictKey(key=k) | GetAttrKey(name=k) | FlattenedIndexKey(key=k):
            return str(k)
        case _:
            return str(key)


# --------------------------------------------------------------------------
# Node kinds and the registry
# --------------------------------------------------------------------------


class NodeKind(str, enum.Enum):
    """What a ``PyTreeDef`` node is. A ``str`` enum so it serializes as text."""

    LEAF = "leaf"
    NONE = "none"
    TUPLE = "tuple"
    LIST = "list"
    DICT = "dict"
    NAMEDTUPLE = "namedtuple"
    CUSTOM = "custom"


_LEAF = NodeKind.LEAF
_NONE = NodeKind.NONE
_TUPLE = NodeKind.TUPLE
_LIST = NodeKind.LIST
_DICT = NodeKind.DICT
_NAMEDTUPLE = NodeKind.NAMEDTUPLE
_CUSTOM = NodeKind.CUSTOM


class _NodeHandler:
    """How to take one node type apart and put it back together."""

    __slots__ = ("kind", "node_type", "flatten", "flatten_with_keys", "unflatten")

    def __init__(self, kind, node_type, flatten, flatten_with_keys, unflatten):
        self.kind = kind
        self.node_type = node_type
        # flatten(x) -> (children iterable, aux)
        self.flatten = flatten
        # flatten_with_keys(x) -> (iterable of (key, child), aux)
        self.flatten_with_keys = flatten_with_keys
        # unflatten(aux, children list) -> x
        self.unflatten = unflatten


def _sorted_keys(mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError as error:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from error


def _dict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], tuple(keys)


def _dict_flatten_with_keys(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], tuple(keys)


def _ordereddict_flatten(d):
    keys = tuple(d)
    return [d[k] for k in keys], keys


def _ordereddict_flatten_with_keys(d):
    keys = tuple(d)
    return [(DictKey(k), d[k]) for k in keys], keys


def _defaultdict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, tuple(keys))


def _defaultdict_flatten_with_keys(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, tuple(keys))


def _sequence_flatten_with_keys(x):
    return [(SequenceKey(i), c) for i, c in enumerate(x)], None


_NONE_HANDLER = _NodeHandler(_NONE, type(None), lambda x: ((), None), lambda x: ((), None), lambda aux, ch: None)
_TUPLE_HANDLER = _NodeHandler(_TUPLE, tuple, lambda x: (x, None), _sequence_flatten_with_keys, lambda aux, ch: tuple(ch))
_LIST_HANDLER = _NodeHandler(_LIST, list, lambda x: (x, None), _sequence_flatten_with_keys, lambda aux, ch: list(ch))
_DICT_HANDLER = _NodeHandler(
    _DICT, dict, _dict_flatten, _dict_flatten_with_keys, lambda keys, ch: dict(zip(keys, ch))
)

# Exact type -> handler, for everything registered (built-ins included).
_registry: dict[type, _NodeHandler] = {
    type(None): _NONE_HANDLER,
    tuple: _TUPLE_HANDLER,
    list: _LIST_HANDLER,
    dict: _DICT_HANDLER,
}

# Exact type -> handler or None (leaf); a memo over `_registry` plus the
# named-tuple rule, so the hot path is one dict lookup per object.
_handler_cache: dict[type, _NodeHandler | None] = dict(_registry)


class _Missing(enum.Enum):
    """The "not in `_handler_cache`" sentinel: an enum member, so `is _MISSING` narrows the lookup's type."""

    MISSING = enum.auto()


_MISSING: Final = _Missing.MISSING


def _namedtuple_fields(cls: type) -> tuple[str, ...]:
    """The field names of a named tuple class (a tuple subclass with ``_fields``)."""
    return getattr(cls, "_fields")


def _namedtuple_handler(cls: type) -> _NodeHandler:
    def flatten_with_keys(x):
        return [(GetAttrKey(name), child) for name, child in zip(cls._fields, x)], None

    return _NodeHandler(_NAMEDTUPLE, cls, lambda x: (x, None), flatten_with_keys, lambda aux, ch: cls(*ch))


def _handler_for_type(cls: type) -> _NodeHandler | None:
    handler = _handler_cache.get(cls, _MISSING)
    if handler is not _MISSING:
        return handler
    handler = _registry.get(cls)
    if handler is None and issubclass(cls, tuple) and hasattr(cls, "_fields"):
        handler = _namedtuple_handler(cls)
    _handler_cache[cls] = handler
    return handler


def _register(nodetype: type, handler: _NodeHandler) -> None:
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = handler
    _handler_cache.pop(nodetype, None)
    global _registry_generation
    _registry_generation += 1


#: Counts registrations: a structure remembered as built-in-only may change meaning when one of its named
#: tuple types is registered later (``toolkit.dispatch`` forgets its C++ structures then).
_registry_generation = 0


def registry_generation() -> int:
    """How many node types have been registered so far (changes whenever a registration changes flattening)."""
    return _registry_generation


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]] | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(x) -> (children, aux_data)``; ``unflatten_func(aux_data,
    children) -> x``. ``aux_data`` must be hashable and comparable with
    ``==``: it is part of the ``PyTreeDef``. Without ``flatten_with_keys_func``,
    children get :class:`FlattenedIndexKey` key paths.
    Raises ``ValueError`` if the type is already registered.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, ch: Pair(*ch))
    >>> tree_leaves(Pair(1, (2, 3)))
    [1, 2, 3]
    """

    def default_flatten_with_keys(x):
        children, aux = flatten_func(x)
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux

    _register(
        nodetype,
        _NodeHandler(
            _CUSTOM,
            nodetype,
            flatten_func,
            flatten_with_keys_func or default_flatten_with_keys,
            unflatten_func,
        ),
    )


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node whose children have key paths.

    ``flatten_with_keys(x) -> ([(key, child), ...], aux_data)``. ``flatten_func``
    is an optional faster variant without keys.

    >>> class Point:
    ...     def __init__(self, x, y): self.x, self.y = x, y
    >>> register_pytree_with_keys(
    ...     Point,
    ...     lambda p: (((GetAttrKey("x"), p.x), (GetAttrKey("y"), p.y)), None),
    ...     lambda aux, ch: Point(*ch))
    >>> [keystr(path) for path, _ in tree_leaves_with_path(Point(1, 2))]
    ['.x', '.y']
    """
    if flatten_func is None:

        def flatten_func(x):
            keyed_children, aux = flatten_with_keys(x)
            return [child for _, child in keyed_children], aux

    _register(nodetype, _NodeHandler(_CUSTOM, nodetype, flatten_func, flatten_with_keys, unflatten_func))


_register(
    collections.OrderedDict,
    _NodeHandler(
        _CUSTOM,
        collections.OrderedDict,
        _ordereddict_flatten,
        _ordereddict_flatten_with_keys,
        lambda keys, ch: collections.OrderedDict(zip(keys, ch)),
    ),
)
_register(
    collections.defaultdict,
    _NodeHandler(
        _CUSTOM,
        collections.defaultdict,
        _defaultdict_flatten,
        _defaultdict_flatten_with_keys,
        lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch)),
    ),
)


def register_dataclass(
    nodetype: type | None = None,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
):
    """Register a dataclass-like class: ``data_fields`` are children, ``meta_fields`` static.

    For a ``dataclasses.dataclass``, both field lists may be omitted: fields
    whose ``metadata`` has ``static=True`` are meta fields, all others are
    data fields. The aux data is the tuple of meta-field values; key paths are
    ``.field``. Usable as a decorator (with or without arguments).

    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: Any
    ...     name: str = dataclasses.field(default="p", metadata=dict(static=True))
    >>> tree_structure(Params(1.0))
    PyTreeDef(CustomNode(Params[('p',)], [*]))
    """
    if nodetype is None:
        return lambda cls: register_dataclass(cls, data_fields, meta_fields, drop_fields)
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be specified when either "
                f"is specified. Got data_fields={data_fields!r} meta_fields={meta_fields!r}."
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when nodetype is not "
                f"a dataclass. Got nodetype={nodetype!r}."
            )
        all_fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in all_fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in all_fields if f.metadata.get("static", False)]
    data_fields = tuple(data_fields)
    meta_fields = tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init_fields:
            message = "data_fields and meta_fields must include all dataclass fields with ``init=True`` and only them."
            if missing := init_fields - given:
                message += f" Missing fields: {sorted(missing)}. Add them to drop_fields to suppress this error."
            if unexpected := given - init_fields:
                message += f" Unexpected fields: {sorted(unexpected)}."
            raise ValueError(message)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields: {sorted(overlap)}.")

    def flatten(x):
        return [getattr(x, name) for name in data_fields], tuple(getattr(x, name) for name in meta_fields)

    def flatten_with_keys(x):
        return (
            [(GetAttrKey(name), getattr(x, name)) for name in data_fields],
            tuple(getattr(x, name) for name in meta_fields),
        )

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    _register(nodetype, _NodeHandler(_CUSTOM, nodetype, flatten, flatten_with_keys, unflatten))
    return nodetype


def register_static(cls: type) -> type:
    """Register ``cls`` as a node with no children whose instances are aux data.

    Instances must be hashable; they become part of the ``PyTreeDef`` (static).

    >>> @register_static
    ... class Mode(str): pass
    >>> tree_leaves([1, Mode("train")])
    [1]
    """
    _register(cls, _NodeHandler(_CUSTOM, cls, lambda x: ((), x), lambda x: ((), x), lambda aux, ch: aux))
    return cls


# --------------------------------------------------------------------------
# PyTreeDef
# --------------------------------------------------------------------------


def _aux_equal(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # e.g. arrays as aux data: ambiguous truth value
        return False


class PyTreeDef:
    """The structure of a pytree: a tree of nodes whose leaves are ``*``.

    Immutable, hashable; two treedefs are equal iff they have the same node
    kinds, node types, node aux data and children. ``repr`` matches JAX, e.g.
    ``PyTreeDef((*, {'a': *}))``. See the module docstring for walking
    (``node_kind``, ``node_type``, ``node_aux``, ``children()``) and
    rebuilding (:meth:`from_node`) a structure.
    """

    __slots__ = ("_kind", "_handler", "_aux", "_children", "num_leaves", "num_nodes", "_hash")

    _kind: NodeKind
    _handler: _NodeHandler | None  # None only for a leaf
    _aux: Any
    _children: tuple[PyTreeDef, ...]
    num_leaves: int
    num_nodes: int
    _hash: int | None  # computed on the first hash()

    def __init__(self):
        raise TypeError("PyTreeDef cannot be constructed directly; use tree_structure or PyTreeDef.from_node.")

    # -- walking -----------------------------------------------------------

    @property
    def node_kind(self) -> NodeKind:
        """The kind of the root node."""
        return self._kind

    @property
    def node_type(self) -> type | None:
        """The Python class of the root node (``None`` for a leaf)."""
        handler = self._handler
        return None if handler is None else handler.node_type

    @property
    def node_aux(self) -> Any:
        """The root node's static data (dict keys, custom aux data, or None)."""
        return self._aux

    def children(self) -> list[PyTreeDef]:
        """The treedefs of the root's children (empty for a leaf)."""
        return list(self._children)

    def node_data(self) -> tuple[type, Any] | None:
        """``(node_type, aux)`` as JAX returns it; dict keys as a list; None for a leaf."""
        if self._kind is _LEAF:
            return None
        if self._kind is _DICT:
            return (dict, list(self._aux))
        assert self._handler is not None  # every node but a leaf has a handler
        return (self._handler.node_type, self._aux)

    def is_leaf(self) -> bool:
        """True iff this treedef is a single leaf ``*`` (``None`` is not a leaf)."""
        return self._kind is _LEAF

    @staticmethod
    def from_node(
        kind: NodeKind | str,
        node_type: type | None = None,
        node_aux: Any = None,
        children: Iterable[PyTreeDef] = (),
    ) -> PyTreeDef:
        """Build a treedef node from its kind, type, aux data and children.

        ``node_type`` is needed for ``NAMEDTUPLE`` (the class) and ``CUSTOM``
        (a registered class); ``node_aux`` is the key sequence for ``DICT`` and
        the aux data for ``CUSTOM``. Raises ``ValueError`` on inconsistent input.

        >>> leaf = PyTreeDef.from_node(NodeKind.LEAF)
        >>> PyTreeDef.from_node("dict", dict, ("a",), [leaf])
        PyTreeDef({'a': *})
        """
        try:
            kind = NodeKind(kind)
        except ValueError:
            raise ValueError(f"Unknown pytree node kind {kind!r}; expected one of {[k.value for k in NodeKind]}.")
        children = tuple(children)
        for child in children:
            if not isinstance(child, PyTreeDef):
                raise ValueError(f"PyTreeDef.from_node children must be PyTreeDefs, got {child!r}.")
        if kind is _LEAF:
            if children:
                raise ValueError("A leaf node has no children.")
            return _LEAF_DEF
        if kind is _NONE:
            if children:
                raise ValueError("A None node has no children.")
            return _NONE_DEF
        if kind is _TUPLE:
            return _make_node(_TUPLE_HANDLER, None, children)
        if kind is _LIST:
            return _make_node(_LIST_HANDLER, None, children)
        if kind is _DICT:
            keys = tuple(node_aux or ())
            if len(keys) != len(children):
                raise ValueError(f"Dict node has {len(keys)} keys but {len(children)} children.")
            pairs = sorted(zip(keys, children), key=lambda pair: pair[0]) if keys else []
            return _make_node(_DICT_HANDLER, tuple(k for k, _ in pairs), tuple(c for _, c in pairs))
        if not isinstance(node_type, type):
            raise ValueError(f"A {kind.value} node needs a node_type class, got {node_type!r}.")
        handler = _handler_for_type(node_type)
        if handler is None or handler.kind is not kind:
            raise ValueError(f"{node_type!r} is not a registered {kind.value} pytree node type.")
        if kind is _NAMEDTUPLE and len(children) != len(_namedtuple_fields(node_type)):
            raise ValueError(
                f"Named tuple {node_type.__name__} has {len(_namedtuple_fields(node_type))} fields"
                f" but {len(children)} children."
            )
        return _make_node(handler, node_aux if kind is _CUSTOM else None, children)

    # -- flatten / unflatten ---------------------------------------------------

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a tree of this structure from ``leaves`` (exactly ``num_leaves``)."""
        if type(leaves) is not list:
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            which = "few" if len(leaves) < self.num_leaves else "many"
            raise ValueError(f"Too {which} leaves for PyTreeDef; expected {self.num_leaves}, got {len(leaves)}")
        kind = self._kind
        if kind is _LEAF:
            return leaves[0]
        if self.num_nodes == self.num_leaves + 1:  # all children are leaves
            if kind is _TUPLE:
                return tuple(leaves)
            if kind is _LIST:
                return list(leaves)  # never alias the caller's list
        return _unflatten(self, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` down to this treedef's leaves (subtrees stay whole).

        Raises ``ValueError`` naming the mismatch and its key path, e.g.
        ``Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3) at path [1]['w'].``
        """
        out: list[Any] = []
        try:
            _flatten_up_to(self, tree, out)
        except _UpToMismatch as mismatch:
            path = keystr(tuple(reversed(mismatch.reversed_path)))
            message = mismatch.message
            if path:
                message = f"{message} at path {path}"
            raise ValueError(message + "." + mismatch.suffix) from None
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The treedef with ``inner`` in place of each of this treedef's leaves.

        >>> tree_structure((1, 2)).compose(tree_structure([1]))
        PyTreeDef(([*], [*]))
        """
        if self._kind is _LEAF:
            return inner
        if not self._children or self._handler is None:
            return self
        return _make_node(self._handler, self._aux, tuple(child.compose(inner) for child in self._children))

    # -- comparison ------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if (
            self._kind is not other._kind
            or self.num_leaves != other.num_leaves
            or self.num_nodes != other.num_nodes
            or self.node_type is not other.node_type
        ):
            return False
        if not _aux_equal(self._aux, other._aux):
            return False
        return all(a == b for a, b in zip(self._children, other._children))

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            try:
                aux_hash = hash(self._aux)
            except TypeError:  # unhashable aux data: fall back to structure only
                aux_hash = 0
            node_type = None if self._handler is None else self._handler.node_type
            h = hash((self._kind, node_type, aux_hash, self._children))
            self._hash = h
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_repr(self)})"

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("PyTreeDef does not support pickling; serialize it with node_kind/from_node.")


def _new_def(kind, handler, aux, children, num_leaves, num_nodes) -> PyTreeDef:
    treedef = object.__new__(PyTreeDef)
    treedef._kind = kind
    treedef._handler = handler
    treedef._aux = aux
    treedef._children = children
    treedef.num_leaves = num_leaves
    treedef.num_nodes = num_nodes
    treedef._hash = None
    return treedef


_LEAF_DEF = _new_def(_LEAF, None, None, (), 1, 1)
_NONE_DEF = _new_def(_NONE, _NONE_HANDLER, None, (), 0, 1)
_EMPTY_DICT_DEF = _new_def(_DICT, _DICT_HANDLER, (), (), 0, 1)

# (handler, arity) -> treedef of that node with only leaf children. Interning
# these makes the common case (a tuple of arrays) allocation-free.
_flat_defs: dict[tuple[_NodeHandler, int], PyTreeDef] = {}


def _flat_def(handler: _NodeHandler, arity: int) -> PyTreeDef:
    key = (handler, arity)
    treedef = _flat_defs.get(key)
    if treedef is None:
        treedef = _new_def(handler.kind, handler, None, (_LEAF_DEF,) * arity, arity, arity + 1)
        if len(_flat_defs) < 4096:
            _flat_defs[key] = treedef
    return treedef


# (handler, str keys) -> dict treedef with only leaf children. Only str keys:
# interning by `==` would conflate keys like 1 and True.
_flat_dict_defs: dict[tuple[_NodeHandler, tuple], PyTreeDef] = {}


def _flat_node(handler: _NodeHandler, aux, arity: int) -> PyTreeDef:
    """The treedef of a node whose ``arity`` children are all leaves."""
    kind = handler.kind
    if aux is None and kind is not _CUSTOM:
        key = (handler, arity)
        treedef = _flat_defs.get(key)
        if treedef is None:
            treedef = _flat_def(handler, arity)
        return treedef
    if kind is _DICT:
        dict_key = (handler, aux)
        treedef = _flat_dict_defs.get(dict_key)
        if treedef is None:
            treedef = _new_def(kind, handler, aux, (_LEAF_DEF,) * arity, arity, arity + 1)
            if len(_flat_dict_defs) < 4096 and all(type(k) is str for k in aux):
                _flat_dict_defs[dict_key] = treedef
        return treedef
    return _new_def(kind, handler, aux, (_LEAF_DEF,) * arity, arity, arity + 1)


# (handler, aux, children) -> treedef, for nested built-in structures. Children are interned
# first, so equal structures come out as the *same* object and compare (and hash) in O(1):
# jit looks its executables up by the treedef of the arguments on every call.
_nested_defs: dict[tuple, PyTreeDef] = {}


def _make_node(handler: _NodeHandler, aux, children: tuple) -> PyTreeDef:
    kind = handler.kind
    if kind is _NONE:
        return _NONE_DEF
    num_leaves = 0
    num_nodes = 1
    for child in children:
        num_leaves += child.num_leaves
        num_nodes += child.num_nodes
    if aux is None and num_leaves == len(children) and num_nodes == num_leaves + 1 and kind is not _CUSTOM:
        return _flat_def(handler, len(children))
    # Only str dict keys: interning by `==` would conflate keys like 1 and True.
    if kind is not _CUSTOM and (aux is None or (kind is _DICT and all(type(k) is str for k in aux))):
        key = (handler, aux, children)
        treedef = _nested_defs.get(key)
        if treedef is None:
            treedef = _new_def(kind, handler, aux, children, num_leaves, num_nodes)
            if len(_nested_defs) < 4096:
                _nested_defs[key] = treedef
        return treedef
    return _new_def(kind, handler, aux, children, num_leaves, num_nodes)


def _node_repr(treedef: PyTreeDef) -> str:
    kind = treedef._kind
    if kind is _LEAF:
        return "*"
    if kind is _NONE:
        return "None"
    children = [_node_repr(c) for c in treedef._children]
    if kind is _TUPLE:
        if len(children) == 1:
            return f"({children[0]},)"
        return "(" + ", ".join(children) + ")"
    if kind is _LIST:
        return "[" + ", ".join(children) + "]"
    if kind is _DICT:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(treedef._aux, children)) + "}"
    handler = treedef._handler
    assert handler is not None  # every node but a leaf has a handler
    if kind is _NAMEDTUPLE:
        return f"CustomNode(namedtuple[{handler.node_type.__name__}], [{', '.join(children)}])"
    return f"CustomNode({handler.node_type.__name__}[{treedef._aux}], [{', '.join(children)}])"


# --------------------------------------------------------------------------
# Flattening
# --------------------------------------------------------------------------


def _flatten_into(tree: Any, leaves: list, is_leaf) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF_DEF
    handler = _handler_cache.get(type(tree), _MISSING)
    if handler is _MISSING:
        handler = _handler_for_type(type(tree))
    if handler is None:
        leaves.append(tree)
        return _LEAF_DEF
    kind = handler.kind
    if kind is _TUPLE or kind is _LIST:
        children = tree
        aux = None
    elif kind is _NAMEDTUPLE:
        # The fields as a plain tuple: a named tuple may override len()/iter() (a single spatial Rotation refuses
        # len(), as SciPy's), where JAX's C++ reads the tuple itself.
        children = tuple.__getitem__(tree, slice(None))
        aux = None
    elif kind is _DICT:
        if not tree:
            return _EMPTY_DICT_DEF
        aux = tuple(_sorted_keys(tree))
        children = [tree[k] for k in aux]
    elif kind is _NONE:
        return _NONE_DEF
    else:
        children, aux = handler.flatten(tree)
        if type(children) is not list and type(children) is not tuple:
            children = list(children)
    if is_leaf is None:
        get = _handler_cache.get
        for child in children:
            if get(type(child), _MISSING) is not None:
                break
        else:
            leaves.extend(children)
            return _flat_node(handler, aux, len(children))
    return _make_node(handler, aux, tuple([_flatten_into(child, leaves, is_leaf) for child in children]))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], PyTreeDef]:
    """Flatten ``tree`` into its leaves (depth first, left to right) and structure.

    ``is_leaf(x)`` returning True stops the descent at ``x`` (also for ``None``).

    >>> tree_flatten([1, (2, None)])
    ([1, 2], PyTreeDef([*, (*, None)]))
    """
    tree_type = type(tree)
    if is_leaf is None and (tree_type is tuple or tree_type is list):
        # Hot path (jit argument tuples): a flat sequence of leaves.
        get = _handler_cache.get
        for child in tree:
            if get(type(child), _MISSING) is not None:
                break
        else:
            key = (_TUPLE_HANDLER if tree_type is tuple else _LIST_HANDLER, len(tree))
            treedef = _flat_defs.get(key)
            if treedef is None:
                treedef = _flat_def(*key)
            return list(tree), treedef
        result = _flatten_two_levels(tree, tree_type)
        if result is not None:
            return result
    leaves: list[Any] = []
    treedef = _flatten_into(tree, leaves, is_leaf)
    return leaves, treedef


# (root type, child signature) -> treedef, for `_flatten_two_levels`.
_two_level_defs: dict[tuple, PyTreeDef] = {}
_LEAF_CHILD: Final = 0
_EMPTY_DICT_CHILD: Final = 1


def _flatten_two_levels(tree, tree_type) -> tuple[list, PyTreeDef] | None:
    """Hot path for jit's ``(args, kwargs)``: a sequence whose children are leaves,
    flat tuples/lists of leaves, or empty dicts. None if the tree is not of that form."""
    get = _handler_cache.get
    leaves: list[Any] = []
    signature: list[Literal[0, 1] | tuple[type, int]] = []  # per child: _LEAF_CHILD, _EMPTY_DICT_CHILD or (type, arity)
    for child in tree:
        child_type = type(child)
        handler = get(child_type, _MISSING)
        if handler is None:
            leaves.append(child)
            signature.append(_LEAF_CHILD)
        elif child_type is tuple or child_type is list:
            for grandchild in child:
                if get(type(grandchild), _MISSING) is not None:
                    return None
            leaves.extend(child)
            signature.append((child_type, len(child)))
        elif child_type is dict and not child:
            signature.append(_EMPTY_DICT_CHILD)
        else:
            return None
    key = (tree_type, tuple(signature))
    treedef = _two_level_defs.get(key)
    if treedef is None:
        children = []
        for entry in signature:
            if isinstance(entry, tuple):
                children.append(_flat_def(_TUPLE_HANDLER if entry[0] is tuple else _LIST_HANDLER, entry[1]))
            elif entry is _LEAF_CHILD:
                children.append(_LEAF_DEF)
            else:
                children.append(_EMPTY_DICT_DEF)
        root_handler = _TUPLE_HANDLER if tree_type is tuple else _LIST_HANDLER
        treedef = _make_node(root_handler, None, tuple(children))
        if len(_two_level_defs) < 4096:
            _two_level_defs[key] = treedef
    return leaves, treedef


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in flattening order.

    >>> tree_leaves({"b": 1, "a": [2, 3]})
    [2, 3, 1]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The ``PyTreeDef`` of ``tree``.

    >>> tree_structure((1, {"a": 2}))
    PyTreeDef((*, {'a': *}))
    """
    return tree_flatten(tree, is_leaf)[1]


class StructureOnly:
    """A custom node's stand-in in :func:`structure_of`: its class (``node_type``) and its children."""

    __slots__ = ("node_type", "children")

    def __init__(self, node_type: type, children: list) -> None:
        self.node_type, self.children = node_type, children

    def __repr__(self) -> str:
        return f"StructureOnly({self.node_type.__name__}, {self.children!r})"


def structure_of(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """``treedef`` unflattened from placeholder ``leaves`` (ints, zeros) to read its structure: argument key paths,
    prefix broadcasting, output layouts. As :func:`tree_unflatten`, except that a custom node whose unflatten refuses
    the placeholders (a class whose constructor checks its arrays: JAX calls it with real values, so such classes
    work there) becomes a :class:`StructureOnly` holding its children, whose key paths are flattened indices."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"structure_of: {len(leaves)} leaves for a treedef of {treedef.num_leaves}")
    return _structure_of(treedef, iter(leaves))


def _structure_of(treedef: PyTreeDef, leaves_iter: Any) -> Any:
    if treedef._kind is _LEAF:
        return next(leaves_iter)
    children = [_structure_of(child, leaves_iter) for child in treedef._children]
    handler = treedef._handler
    assert handler is not None  # every node but a leaf has a handler
    if treedef._kind is not _CUSTOM:
        return handler.unflatten(treedef._aux, children)
    try:
        return handler.unflatten(treedef._aux, children)
    except Exception:  # noqa: BLE001 - whatever the user's class raises for placeholders
        return StructureOnly(handler.node_type, children)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Inverse of :func:`tree_flatten`.

    >>> tree_unflatten(tree_structure((0, [0])), ["a", "b"])
    ('a', ['b'])
    """
    return treedef.unflatten(leaves)


def _unflatten(treedef: PyTreeDef, leaves_iter) -> Any:
    kind = treedef._kind
    if kind is _LEAF:
        return next(leaves_iter)
    children = [_unflatten(child, leaves_iter) for child in treedef._children]
    handler = treedef._handler
    assert handler is not None  # every node but a leaf has a handler
    return handler.unflatten(treedef._aux, children)


class _UpToMismatch(Exception):
    """Internal: raised at a mismatch, collects the key path while unwinding."""

    def __init__(self, message: str, suffix: str = ""):
        self.message = message
        self.suffix = suffix
        self.reversed_path: list[KeyEntry] = []


_NONE_PREFIX_HINT = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a tree-prefix of "
    "non-None values. To obtain the previous behavior, you can usually write:\n"
    "  tree_map(lambda x, y: None if x is None else f(x, y), a, b, is_leaf=lambda x: x is None)"
)


def _flatten_up_to(treedef: PyTreeDef, tree: Any, out: list) -> None:
    kind = treedef._kind
    if kind is _LEAF:
        out.append(tree)
        return
    if kind is _NONE:
        if tree is not None:
            raise _UpToMismatch(f"Expected None, got {tree!r}", _NONE_PREFIX_HINT)
        return
    children_defs = treedef._children
    keyed: list[tuple[KeyEntry, Any]]
    if kind is _TUPLE or kind is _LIST:
        expected_type = tuple if kind is _TUPLE else list
        name = expected_type.__name__
        if type(tree) is not expected_type:
            raise _UpToMismatch(f"Expected {name}, got {tree!r}")
        if len(tree) != len(children_defs):
            raise _UpToMismatch(f"{name.capitalize()} arity mismatch: {len(tree)} != {len(children_defs)}; {name}: {tree!r}")
        keyed = [(SequenceKey(i), c) for i, c in enumerate(tree)]
    elif kind is _DICT:
        if type(tree) is not dict:
            raise _UpToMismatch(f"Expected dict, got {tree!r}")
        expected_keys = treedef._aux
        if len(tree) != len(expected_keys) or any(k not in tree for k in expected_keys):
            raise _UpToMismatch(
                f"Dict key mismatch; expected keys: {list(expected_keys)!r}; present keys: {_sorted_keys(tree)!r}"
            )
        keyed = [(DictKey(k), tree[k]) for k in expected_keys]
    elif kind is _NAMEDTUPLE:
        handler = treedef._handler
        assert handler is not None  # every node but a leaf has a handler
        node_type = handler.node_type
        if not (isinstance(tree, tuple) and hasattr(type(tree), "_fields")):
            raise _UpToMismatch(f"Expected named tuple, got {tree!r}")
        if type(tree) is not node_type:
            raise _UpToMismatch(f"Named tuple type mismatch: expected type: {node_type!r}, tuple: {tree!r}")
        if len(tree) != len(children_defs):
            raise _UpToMismatch(f"Named tuple arity mismatch: {len(tree)} != {len(children_defs)}; tuple: {tree!r}")
        keyed = [(GetAttrKey(n), c) for n, c in zip(_namedtuple_fields(node_type), tree)]
    else:
        handler = treedef._handler
        assert handler is not None  # every node but a leaf has a handler
        if type(tree) is not handler.node_type:
            raise _UpToMismatch(f"Custom node type mismatch: expected type: {handler.node_type!r}, value: {tree!r}")
        keyed_children, aux = handler.flatten_with_keys(tree)
        keyed = list(keyed_children)
        if not _aux_equal(aux, treedef._aux):
            raise _UpToMismatch(f"Mismatch custom node data: {aux!r} != {treedef._aux!r}; value: {tree!r}")
        if len(keyed) != len(children_defs):
            raise _UpToMismatch(f"Custom node arity mismatch: {len(keyed)} != {len(children_defs)}; value: {tree!r}")
    for child_def, (key, child) in zip(children_defs, keyed):
        try:
            _flatten_up_to(child_def, child, out)
        except _UpToMismatch as mismatch:
            mismatch.reversed_path.append(key)
            raise


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise; ``rest`` trees must have ``tree``'s structure as a prefix.

    >>> tree_map(lambda x, y: x + y, (1, {"a": 2}), (10, {"a": 20}))
    (11, {'a': 22})
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves_lists = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves_lists)])


_NO_INITIALIZER = object()


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INITIALIZER,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``functools.reduce`` over the leaves of ``tree``.

    >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)])
    6
    """
    import functools

    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, tree_leaves(tree, is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True iff every leaf is truthy (True for a tree with no leaves).

    >>> tree_all([True, (1, None)])
    True
    """
    return all(tree_leaves(tree, is_leaf))


# --------------------------------------------------------------------------
# Key paths
# --------------------------------------------------------------------------


def _flatten_with_path_into(tree, path: tuple, out: list, is_leaf, takes_path: bool = False) -> PyTreeDef:
    if is_leaf is not None and (is_leaf(path, tree) if takes_path else is_leaf(tree)):
        out.append((path, tree))
        return _LEAF_DEF
    handler = _handler_for_type(type(tree))
    if handler is None:
        out.append((path, tree))
        return _LEAF_DEF
    keyed_children, aux = handler.flatten_with_keys(tree)
    return _make_node(
        handler, aux, tuple([_flatten_with_path_into(child, path + (key,), out, is_leaf, takes_path)
                             for key, child in keyed_children])
    )


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, but each leaf comes with its key path.

    ``is_leaf_takes_path=True``: ``is_leaf`` is called as ``is_leaf(key_path, subtree)``.

    >>> paths_and_leaves, _ = tree_flatten_with_path({"a": [1]})
    >>> [(keystr(p), x) for p, x in paths_and_leaves]
    [("['a'][0]", 1)]
    """
    out: list[tuple[KeyPath, Any]] = []
    treedef = _flatten_with_path_into(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, treedef


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of ``tree``."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like :func:`tree_map`, but ``f`` receives the key path first.

    >>> tree_map_with_path(lambda path, x: keystr(path), [7, {"a": 8}])
    ['[0]', {'a': "[1]['a']"}]
    """
    keyed_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    paths = [p for p, _ in keyed_leaves]
    leaves = [x for _, x in keyed_leaves]
    all_leaves_lists = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(p, *xs) for p, *xs in zip(paths, *all_leaves_lists)])


# --------------------------------------------------------------------------
# Treedef helpers
# --------------------------------------------------------------------------


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True iff ``treedef`` has a single node (a leaf, ``None`` or an empty container), as JAX."""
    return treedef.num_nodes == 1


def is_builtin_structure(treedef: PyTreeDef) -> bool:
    """True iff every node of ``treedef`` is a built-in one (``None``, tuple, list, named tuple, or a dict
    whose keys are all ``str``).

    Such a structure flattens the same through any registry that knows only
    those nodes (jaxlib's C++ one included), which ``toolkit.dispatch`` relies
    on; ``OrderedDict``, ``defaultdict`` and registered classes are custom nodes,
    and other dict keys are left out because equal keys of different types
    (``1`` and ``True``) would make equal C++ structures.
    """
    kind = treedef._kind
    if kind is _CUSTOM or (kind is _DICT and not all(type(k) is str for k in treedef._aux)):
        return False
    return all(is_builtin_structure(child) for child in treedef._children)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The child treedefs of the root."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have the given treedefs.

    >>> treedef_tuple([tree_structure(1), tree_structure([1])])
    PyTreeDef((*, [*]))
    """
    return PyTreeDef.from_node(_TUPLE, tuple, None, treedefs)


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True iff every element of ``iterable`` is itself a leaf (``None`` is not).

    >>> all_leaves([1, 2]), all_leaves([1, (2,)])
    (True, False)
    """
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if _handler_for_type(type(x)) is not None:
            return False
    return True


def broadcast_prefix(prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """One entry per leaf of ``full_tree``: the ``prefix_tree`` leaf that covers it.

    ``prefix_tree`` must be a pytree prefix of ``full_tree`` (jit's ``in_shardings``
    and ``device_put``'s shardings are given this way). A mismatch raises
    ``ValueError`` naming its key path.

    Example::

        >>> broadcast_prefix((1, 2), ((0, 0), {"a": 0}))
        [1, 1, 2]
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf=is_leaf)
    subtrees = prefix_def.flatten_up_to(full_tree)
    result: list[Any] = []
    for value, subtree in zip(prefix_leaves, subtrees):
        result.extend([value] * len(tree_leaves(subtree)))
    return result


_register(StructureOnly, _NodeHandler(
    _CUSTOM, StructureOnly, lambda s: (s.children, s.node_type),
    lambda s: ([(FlattenedIndexKey(i), c) for i, c in enumerate(s.children)], s.node_type),
    lambda node_type, children: StructureOnly(node_type, list(children))))
