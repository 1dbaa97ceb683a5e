"""The structure of a call, apart from its values: jit's static arguments, leaf names, result-tree builders.

* :func:`infer_argnums_and_argnames` matches jit's static arguments up both
  ways (each position also by its parameter's name, and each name by position);
  :func:`unhashable_static_error` (``toolkit.core.compiled_whole``'s) is JAX's
  error, word for word, for a static value that cannot be hashed.
* :func:`argument_paths` names the leaves of an ``(args, kwargs)`` tree as
  users do (``args[1]['w']``, ``scale``), for error messages.
* :func:`dict_leaf_order`, :func:`output_builder` and
  :func:`native_output_builder` are the quick ways ``toolkit.dispatch``'s fast
  path finds a dict argument's leaves and builds a result tree (a flat
  container directly, a large built-in tree through jaxlib's C++ pytrees).

Nothing here looks at arrays: the trees come from ``toolkit.core.pytrees``.
"""

from __future__ import annotations

import re

import inspect
from typing import Any, Callable, Sequence

from toolkit.core import pytrees
from toolkit.core.compiled_whole import unhashable_static_error  # noqa: F401 - toolkit.dispatch's, from here
from toolkit.runtime import native_pytrees

#: Argument and result trees from this many leaves flatten and unflatten through jaxlib's C++ pytrees
#: (``toolkit.runtime.native_pytrees``); smaller ones are quicker through toolkit's interned structures.
NATIVE_FLATTEN_MIN_LEAVES = 16


def infer_argnums_and_argnames(fun: Callable, static_argnums: Any,
                               static_argnames: Any) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """jit's static arguments both ways: each position also by its parameter's name, and each name by position."""
    argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums or ())
    argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames or ())
    if not argnums and not argnames:
        return (), ()  # nothing to match up: skip inspect.signature (~50 µs, on every jit(f))
    try:
        parameters = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return argnums, argnames
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = set(argnames)
    nums = set(argnums)
    for i in argnums:
        if 0 <= i < len(positional):
            names.add(positional[i])
    for name in argnames:
        if name in positional:
            nums.add(positional.index(name))
    return tuple(sorted(nums)), tuple(sorted(names))


_FLAT_INDEX = re.compile(r"<flat index ([^>]+)>")


def path_name(path: pytrees.KeyPath) -> str:
    """A key path as JAX writes it in argument names and ``jax.result_info``: ``keystr``, with a flattened index
    (a custom node registered without keys) as ``[0]`` rather than ``[<flat index 0>]``."""
    return _FLAT_INDEX.sub(r"\1", pytrees.keystr(path))


#: (tree, static positions) -> its argument paths: a new jit of a function traces an argument structure seen
#: before (a fresh function object, the same parameters), and naming its leaves was ~10% of a small trace. A node
#: type is registered once (a second registration raises), so equal trees name their leaves alike — up to keys
#: equal but printed apart (``{1: x}``, ``{1.0: x}``), which the trace cache and JAX's own caches also take as one.
_PATHS: dict[tuple[pytrees.PyTreeDef, tuple[int, ...]], tuple[str, ...]] = {}


def argument_paths(tree: pytrees.PyTreeDef, static_positions: Sequence[int] = ()) -> list[str]:
    """Key paths of the leaves of an ``(args, kwargs)`` tree as users name them: ``args[1]['w']``, ``scale``.

    Positions count the user's positional arguments, static ones included.
    """
    key = (tree, tuple(static_positions))
    paths = _PATHS.get(key)
    if paths is None:
        paths = tuple(_argument_paths(tree, key[1]))
        if len(_PATHS) >= 1_000:
            _PATHS.clear()
        _PATHS[key] = paths
    return list(paths)


def _argument_paths(tree: pytrees.PyTreeDef, static_positions: tuple[int, ...]) -> list[str]:
    dummy = pytrees.structure_of(tree, list(range(tree.num_leaves)))
    dynamic_positions = [i for i in range(len(dummy[0]) + len(static_positions)) if i not in static_positions]
    paths = []
    for path, _ in pytrees.tree_flatten_with_path(dummy)[0]:
        head, first, *rest = path
        name = f"args[{dynamic_positions[first.idx]}]" if head.idx == 0 else str(first.key)
        paths.append(name + path_name(tuple(rest)))
    return paths


def dict_leaf_order(tree: Any, count: int) -> list | None:
    """For the tree of ``(d,)`` with ``d`` a dict of leaves: ``d``'s keys in leaf order, else None."""
    probe = pytrees.structure_of(tree, list(range(count)))
    if type(probe) is not tuple or len(probe) != 1 or type(probe[0]) is not dict:
        return None
    items = probe[0]
    if len(items) != count or not all(type(i) is int for i in items.values()):
        return None
    return sorted(items, key=items.__getitem__)


def output_builder(out_tree: Any, count: int) -> Callable[[list], Any] | None:
    """A quicker ``tree_unflatten(out_tree, leaves)`` for a flat dict, tuple or list of outputs, else None."""
    probe = pytrees.structure_of(out_tree, list(range(count)))
    kind = type(probe)
    if kind is dict and list(probe.values()) == list(range(count)):  # unflatten gives keys in leaf order
        keys = tuple(probe)
        return lambda leaves: dict(zip(keys, leaves))
    if (kind is tuple or kind is list) and list(probe) == list(range(count)):
        return tuple if kind is tuple else list
    return None


def native_output_builder(out_tree: Any, count: int) -> Callable[[list], Any] | None:
    """``tree_unflatten(out_tree, leaves)`` through jaxlib's C++ pytrees, for a large tree of built-in nodes.

    None when the tree is small (toolkit's own is as quick) or has custom nodes (only toolkit knows those).
    """
    if count < NATIVE_FLATTEN_MIN_LEAVES or not pytrees.is_builtin_structure(out_tree):
        return None
    native = native_pytrees.flatten(pytrees.tree_unflatten(out_tree, list(range(count))))
    if native is None or native[0] != list(range(count)):
        return None
    return native[1].unflatten
