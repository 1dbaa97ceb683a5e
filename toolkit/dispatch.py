"""How a call reaches an executable: the arguments of a call, jit's fast path, eager execution.

* :func:`signature_of` flattens a call's arguments into an
  :class:`ArgumentSignature` (leaves, tree, abstract values, placements, the
  static arguments split off), checking that each leaf can be a jit argument
  (``toolkit.call_trees`` names the leaves as users do, ``args[1]['w']``).
* :class:`FastPath` is what a ``Wrapped`` (or a shape-polymorphic
  ``Compiled``) remembers of earlier calls, so that a steady-state call of
  toolkit Arrays is: look up the tree and avals, check the placements, execute
  (the closure :func:`fast_caller` makes). Its entries are named records
  (:class:`FastEntry`, :class:`DictLeafOrder`, :class:`LastSingle`,
  :class:`LastMany`). Other calls seen before (static or keyword arguments,
  host scalars, numpy arrays) are found by :meth:`FastPath.call_general`.
* :func:`call_compiled` is ``Compiled.__call__``: the checks against what was
  compiled, or the executable's own fast path for a call seen before.
* :func:`place_argument` moves a leaf where an executable expects it (the
  full call path, ``Compiled._call_flat``).
* :func:`install_eager_handlers` makes ``toolkit.core.tracing`` run
  primitives, and whole ``lax`` functions, outside a trace through ``jit``
  (one cached executable per primitive, parameters and argument types).

This module sits below ``toolkit.stages``: it knows a ``Compiled`` by the
attributes it reads, and is handed ``jit`` (``stages`` installs the eager
handlers with its own).

Why one module (over 800 lines): the three paths call executables the same
way (``fast_caller``, ``FastEntry``, the partitioner check), and each of its
sections needs ``toolkit.array``, which imports ``toolkit.stages`` in a
function: a module split off (tried: eager execution alone) joins the import
cycle array → stages → dispatch, which ``tests/test_import_layers.py`` keeps
to five modules.
"""

from __future__ import annotations

import contextlib
import math
import operator
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from toolkit.array import Array
from toolkit.call_trees import (NATIVE_FLATTEN_MIN_LEAVES, argument_paths, dict_leaf_order, native_output_builder,
                                output_builder, unhashable_static_error)
from toolkit.core import compiled_whole, dtypes, pytrees, sharding_types, tracing
from toolkit.core.config import cache_state, enable_x64, flag_value, host_to_device_unguarded
from toolkit.core.avals import ShapedArray, ShapeDtypeStruct, abstract_token, aval_of
from toolkit.passes.default_pipeline import jit_pipeline_generation
from toolkit.runtime import arrays as runtime_arrays, native_pytrees
from toolkit.shard import placement
from toolkit.shard.mesh import OPEN_CONTEXTS, get_concrete_mesh, mesh_context, mesh_context_is_empty
from toolkit.shard.resolve import abstract_only_context

#: What a fast call returns when its arguments are not laid out as compiled: take the full path.
MISS = object()
_AVAL_OF = operator.attrgetter("aval")
#: The variable that picks the partitioner (``shardy``, the default, or ``gspmd``).
PARTITIONER_VARIABLE = "TOOLKIT_PARTITIONER"
#: The partitioner of a :class:`FastEntry` that is the same under every partitioner (one partition).
ANY_PARTITIONER = object()
#: What ``tree_flatten`` gives for the arguments of ``f(x)`` (trees are interned: compared by identity).
ONE_LEAF_TREE = pytrees.tree_structure((0,))
TWO_LEAF_TREE = pytrees.tree_structure((0, 0))  # (interned: the object tree_flatten gives two positional leaves)

_PYTHON_SCALARS = frozenset({int, float, bool, complex})
#: Host scalar types (Python's and numpy's): :func:`place_argument` uploads each value once (0-d arrays too).
_HOST_SCALARS = _PYTHON_SCALARS | {t for t in np.sctypeDict.values() if issubclass(t, np.number) or t is np.bool_}
#: Leaves besides Arrays that :meth:`FastPath.call_general` takes: host values whose aval is their type and shape.
_GENERAL_HOST_LEAVES = _HOST_SCALARS | {np.ndarray}
#: (Python scalar type, ``cache_state()``) -> its weakly typed aval (bool's is not weak); (shape, dtype,
#: ``cache_state()``) -> a numpy array's (its dtype canonicalized). At most HOST_AVALS_MAX, then they start over.
_HOST_AVALS: dict[tuple, ShapedArray] = {}
HOST_AVALS_MAX = 4096
#: The most :attr:`FastPath.general_entries` kept (then they start over): static arguments can take any number
#: of values.
GENERAL_ENTRIES_MAX = 256

_environ_get = os.environ.get


# --- the arguments of a call ----------------------------------------------------


@dataclass(slots=True)  # not frozen: made on every full call, and a frozen __init__ costs ~1 µs more
class ArgumentSignature:
    """The arguments of one call: the dynamic ones flat (leaves, tree, abstract values, placements), the static ones."""

    leaves: list
    tree: pytrees.PyTreeDef
    avals: tuple[ShapedArray, ...]
    shardings: tuple  # per leaf, the sharding it insists on (see leaf_placement), else None
    static_key: tuple | None  # the static arguments, hashable; None when there are none
    static_args: dict[int, Any]  # position -> value
    static_kwargs: dict[str, Any]  # name -> value


def signature_of(args: tuple, kwargs: dict, static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...]) -> ArgumentSignature:
    """Split off the static arguments, flatten the rest; ``TypeError`` naming a leaf that is no jit argument."""
    static_args: dict[int, Any] = {}
    static_kwargs: dict[str, Any] = {}
    if static_argnums or static_argnames:
        dyn_args = []
        for i, a in enumerate(args):
            if i in static_argnums:
                static_args[i] = a
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in static_argnames:
                static_kwargs[k] = v
            else:
                dyn_kwargs[k] = v
        args, kwargs = tuple(dyn_args), dyn_kwargs
        try:
            static_key = (tuple(sorted(static_args.items())), tuple(sorted(static_kwargs.items())))
            hash(static_key)
        except TypeError:
            raise unhashable_static_error(list(static_args.values()) + list(static_kwargs.values())) from None
    else:
        static_key = None
    leaves, tree = pytrees.tree_flatten((args, kwargs))
    try:
        avals = tuple([leaf.aval if type(leaf) is Array else aval_of(leaf) for leaf in leaves])
    except TypeError:
        paths = argument_paths(tree, tuple(static_args))
        avals = tuple(_leaf_aval(leaf, paths[i]) for i, leaf in enumerate(leaves))
    shardings = tuple([leaf_placement(leaf) for leaf in leaves])
    return ArgumentSignature(leaves, tree, avals, shardings, static_key, static_args, static_kwargs)


def _leaf_aval(leaf: Any, path: str) -> ShapedArray:
    if type(leaf) is Array:
        return leaf.aval
    try:
        return aval_of(leaf)
    except TypeError:
        raise TypeError(f"argument {path} of type {type(leaf).__name__} is not a valid jit argument: only arrays, "
                        "numpy values, Python scalars and ShapeDtypeStruct (or pytrees of them) are; "
                        "mark non-array arguments static with static_argnums/static_argnames") from None


def leaf_placement(leaf: Any) -> Any:
    """The sharding a leaf insists on: a committed array's, or a spec's."""
    if type(leaf) is Array:
        return leaf._sharding if leaf._committed else None
    if type(leaf) is ShapeDtypeStruct:
        return leaf.sharding
    return None


# --- the fast path -----------------------------------------------------------------
#
# The records below are never changed once made: a new one replaces the old, so a thread always reads
# a consistent one (a hit's aval, generation and entry from the same call). Slots make their fields
# as cheap to read as a tuple's items. The last-hit records are made on every hit of their kind, so
# they are not frozen: a frozen dataclass's __init__ (object.__setattr__ per field) costs ~0.6 µs more.


@dataclass(frozen=True, slots=True)
class FastEntry:
    """An executable an earlier call compiled, and the ``$TOOLKIT_PARTITIONER`` a hit needs."""

    compiled: Any  # toolkit.stages.Compiled
    partitioner: Any  # the variable's value when compiled (str or None), or ANY_PARTITIONER


def fast_entry(compiled: Any, partitioner: str | None) -> FastEntry:
    """``compiled`` as a fast-cache entry: with one partition the partitioner changes nothing (any will do)."""
    return FastEntry(compiled, partitioner if compiled._plan.num_partitions > 1 else ANY_PARTITIONER)


def detached(compiled: Any) -> Any:
    """A copy of ``compiled`` without its lowering, for caches that outlive its jit object.

    The lowering leads to the jit object and its function: a fast path kept by
    function (``toolkit.jit_cache.shared_fast_path``) holding it would keep the
    function alive. A fast path reads only what the executable was compiled for.
    """
    copy = compiled._copy_for(None)
    copy.__dict__.pop("_own_fast_path", None)  # Compiled.__call__'s, whose entries hold the compiled itself
    return copy


@dataclass(frozen=True, slots=True)
class DictLeafOrder:
    """For ``f(d)`` with ``d`` a flat dict of a set of keys seen before: the tree and ``d``'s keys in leaf order."""

    tree: pytrees.PyTreeDef
    order: list | None  # None: the dict's own order (its values() are the leaves)


@dataclass(slots=True)
class LastSingle:
    """The last hit of ``f(x)``: ``x``'s aval object, the jit pipeline generation, the entry."""

    aval: ShapedArray
    generation: int
    state: tuple  # toolkit.core.config.cache_state() when it hit (x64 on or off)
    entry: FastEntry
    # The entry's fast caller when it runs on one device whatever the partitioner (``Wrapped.__call__`` calls it
    # at once), else None.
    call: Callable[[Sequence[Array]], Any] | None = None


@dataclass(frozen=True, slots=True)
class KeptScalar:
    """A Python scalar argument of the last general hit, and the device array :func:`place_argument` keeps for it."""

    kind: type  # int, float or bool
    value: float  # (an int or a bool too)
    array: Array

    def matches(self, given: Any) -> bool:
        """``given`` is this value: the same type, equal, and for a float zero the same sign (``0.0 == -0.0``).
        NaN equals nothing: such calls take the general key."""
        if type(given) is not self.kind or not given == self.value:
            return False
        return bool(given) or self.kind is not float or math.copysign(1.0, given) == math.copysign(1.0, self.value)


#: Python scalars a :class:`LastGeneral` record keeps by value.
_KEPT_SCALARS = (int, float, bool)


@dataclass(frozen=True, slots=True)
class KeptHostArray:
    """A numpy argument of the last general hit of exactly its parameter's type, on one device: a later numpy
    value of the same shape and dtype is put there as :func:`place_argument` puts it (jaxlib's transfer guard
    sees every upload)."""

    shape: tuple
    dtype: np.dtype
    aval: ShapedArray  # the parameter's
    rsharding: Any
    devices: tuple

    def placed(self, given: np.ndarray) -> Array:
        value = given if given.flags.c_contiguous else np.ascontiguousarray(given)
        return Array(runtime_arrays.put_shards(self.aval, self.rsharding, (value,), self.devices), self.aval)


@dataclass(slots=True)
class LastGeneral:
    """The last hit of :meth:`FastPath.call_general` on Arrays, Python scalars and static arguments only.

    Compared again position by position (an Array's aval object, a scalar by :meth:`KeptScalar.matches`, a static
    value of the same type and equal) instead of building and hashing the general key.
    """

    args: tuple  # per position: the static value, the Array's aval, a KeptScalar or a KeptHostArray
    kwargs: dict  # the static keyword arguments' values
    kwarg_avals: dict  # the other keyword arguments' (Arrays') avals, by name in sorted order (flattening's)
    generation: int
    state: tuple
    call: Callable[[Sequence[Array]], Any]
    scalars: bool = False  # whether args holds a KeptScalar (only used while host uploads are unguarded)


@dataclass(slots=True)
class LastMany:
    """The last hit of any other call: the tree, the jit pipeline generation, the avals, the entry."""

    tree: pytrees.PyTreeDef
    generation: int
    state: tuple  # toolkit.core.config.cache_state() when it hit
    avals: tuple[ShapedArray, ...]
    entry: FastEntry


class FastPath:
    """The executables of earlier calls, found from the positional arguments without a signature.

    Calls whose positional arguments are pytrees of toolkit Arrays are looked
    up by (interned) tree structure, avals and the jit pipeline's generation; a
    partitioned executable also checks ``$TOOLKIT_PARTITIONER`` (changing
    either compiles again). The last hit is remembered by its aval objects
    (``x = f(x)`` feeds back outputs whose avals are the executable's own), so a
    repeated call compares identities instead of hashing. The owner asks
    :meth:`call` first (not with keyword or static arguments, nor while
    tracing), then :meth:`call_general`; on :data:`MISS` it takes its full
    path and hands what that compiled to :meth:`remember_call`.
    """

    __slots__ = ("entries", "generation", "dict_leaf_orders", "last_single", "last_many", "keyed_on_config",
                 "native_trees", "native_generation", "static_argnums", "static_argnames", "general_entries",
                 "last_general", "last_general_entry")

    def __init__(self, keyed_on_config: bool = True, static_argnums: tuple[int, ...] = (),
                 static_argnames: tuple[str, ...] = ()) -> None:
        #: Whether what a call runs depends on the configuration (``cache_state()``: x64 on or off): a function's
        #: does (it is traced in the mode of the call), a compiled program's does not.
        self.keyed_on_config = keyed_on_config
        self.static_argnums, self.static_argnames = static_argnums, static_argnames  # the owner's (jit's)
        # Calls :meth:`call` does not take (keyword or static arguments, host scalar or numpy leaves), keyed by
        # general_key: (tree, avals, static arguments, pipeline generation, config state) -> entry.
        self.general_entries: dict[tuple, FastEntry] = {}
        self.entries: dict[tuple, FastEntry] = {}  # (tree, avals, pipeline generation, config state) -> entry
        self.generation = -1  # the jit pipeline generation of the entries
        self.dict_leaf_orders: dict[tuple, DictLeafOrder] = {}  # f(dict): its keys -> tree and leaf order
        self.last_single: LastSingle | None = None
        self.last_many: LastMany | None = None
        self.last_general: LastGeneral | None = None
        self.last_general_entry: FastEntry | None = None  # the entry of the last general-key hit
        # jaxlib's C++ structure of remembered arguments -> toolkit's (built-in nodes only, checked when
        # remembered): a large tree flattens in C++, ~7x faster than toolkit's Python walk.
        self.native_trees: dict[Any, pytrees.PyTreeDef] = {}
        self.native_generation = pytrees.registry_generation()  # a registration since may change their meaning

    def call(self, args: tuple) -> Any:
        """The outputs of a remembered executable on ``args``; :data:`MISS` if there is none or they do not fit."""
        if not self.entries:  # nothing remembered (a function called with numpy values only): no flatten
            return MISS
        first = type(args[0]) if len(args) == 1 else None
        # The flags traces depend on (x64): one prebuilt tuple unless an override block is open somewhere.
        state = cache_state() if self.keyed_on_config else ()
        leaves: Sequence[Any]
        avals: tuple[ShapedArray, ...]
        entry: FastEntry | None
        if first is Array:  # f(x): no flatten; the same aval object as last time (x = f(x)): no hashing
            aval = args[0].aval
            last = self.last_single
            if last is not None and last.aval is aval and last.generation == jit_pipeline_generation() \
                    and last.state is state:
                entry = last.entry
                if entry.partitioner is ANY_PARTITIONER or entry.partitioner == _environ_get(PARTITIONER_VARIABLE):
                    out = entry.compiled._call_fast(args)
                    if out is not MISS:
                        return out
            leaves, tree, avals = args, ONE_LEAF_TREE, (aval,)
        elif len(args) == 2 and type(args[0]) is Array and type(args[1]) is Array:  # f(x, y): an eager binary ufunc
            leaves, tree, avals = args, TWO_LEAF_TREE, (args[0].aval, args[1].aval)
        else:
            known = self.dict_leaf_orders.get(tuple(args[0])) if first is dict else None
            if known is not None:  # f(params) with a dict seen before: its leaves without a flatten
                tree, order = known.tree, known.order
                params = args[0]
                leaves = list(params.values()) if order is None else list(map(params.__getitem__, order))
            else:
                native = native_pytrees.flatten(args) if self.native_trees else None
                known_tree = self.native_trees.get(native[1]) if native is not None else None
                if known_tree is not None and self.native_generation == pytrees.registry_generation():
                    leaves, tree = native[0], known_tree  # type: ignore[index]
                else:
                    leaves, tree = pytrees.tree_flatten(args)
            avals = tuple([a.aval for a in leaves if type(a) is Array])
        if len(avals) != len(leaves):  # a leaf that is not an Array: the full path
            return MISS
        generation = jit_pipeline_generation()
        last_many = self.last_many
        # The same tree and avals as the last hit (the same inputs, or outputs fed back): no hashing.
        # (A tuple comparison: identical avals compare by identity, in C.)
        if last_many is not None and last_many.tree is tree and last_many.generation == generation \
                and last_many.state is state and last_many.avals == avals:
            entry = last_many.entry
        else:
            last_many = None
            entry = self.entries.get((tree, avals, generation, state))
        if entry is None or not (entry.partitioner is ANY_PARTITIONER
                                 or entry.partitioner == _environ_get(PARTITIONER_VARIABLE)):
            return MISS
        out = entry.compiled._call_fast(leaves)  # (the first fast call makes the compiled's fast caller)
        if first is Array:
            self.last_single = LastSingle(avals[0], generation, state, entry, entry.compiled._call_fast
                                          if entry.partitioner is ANY_PARTITIONER else None)
        elif last_many is not None:  # the last hit again: its avals are these (outputs fed back), compared by
            last_many.avals = avals  # identity next time, without a new record
        else:
            self.last_many = LastMany(tree, generation, state, avals, entry)
        return out

    def call_last_general(self, args: tuple, kwargs: dict) -> Any:
        """A call equal to the last :meth:`call_general` hit (see :class:`LastGeneral`), compared position by
        position, under the same jit pipeline and configuration; else :data:`MISS`. The caller has checked that no
        trace is open and that this thread has no mesh context (``Wrapped.__call__`` asks this first)."""
        last = self.last_general
        if last is None or last.generation != jit_pipeline_generation() \
                or last.state is not (cache_state() if self.keyed_on_config else ()):
            return MISS
        leaves = self._same_as_last(last, args, kwargs)
        return MISS if leaves is None else last.call(leaves)

    def call_general(self, args: tuple, kwargs: dict, last_tried: bool = False) -> Any:
        """A call :meth:`call` does not take, answered by an executable an equal call compiled; else :data:`MISS`.

        Equal: the same tree, avals and static arguments (hashed), under the
        same jit pipeline and configuration, no current mesh. Host scalars and
        numpy leaves are placed as the full path places them
        (:func:`place_argument`); Arrays must already be placed as compiled.
        ``last_tried``: the caller asked :meth:`call_last_general` already (not twice on a call that alternates).
        """
        # A mesh context open in any thread: the keyed way (one list read; the context checked only then).
        if not self.general_entries or (OPEN_CONTEXTS[0] and not mesh_context_is_empty()):
            return MISS
        if not last_tried:
            out = self.call_last_general(args, kwargs)
            if out is not MISS:
                return out
        generation = jit_pipeline_generation()
        state = cache_state() if self.keyed_on_config else ()
        general = self.general_key(args, kwargs)
        if general is None:
            return MISS
        leaves, key, _ = general
        entry = self.general_entries.get(key + (generation, state))
        if entry is None or not (entry.partitioner is ANY_PARTITIONER
                                 or entry.partitioner == _environ_get(PARTITIONER_VARIABLE)):
            return MISS
        compiled = entry.compiled
        if all(type(leaf) is Array for leaf in leaves):
            out = compiled._call_fast(leaves)
            if out is MISS:
                return MISS
        else:
            expected = compiled._arg_runtime_shardings
            for i, leaf in enumerate(leaves):  # an Array placed elsewhere may be committed there: the full path
                if type(leaf) is Array and leaf._impl._sharding is not expected[i]:  # decides
                    return MISS
            out = compiled._call_flat(leaves)
        # Remembered when the same entry hits twice in a row: calls that alternate (x.sum(0), x.sum(1)) would
        # otherwise rebuild the record on every call and never use it.
        if entry is self.last_general_entry:
            self._remember_last_general(args, kwargs, generation, state, entry)
        self.last_general_entry = entry
        return out

    def _same_as_last(self, last: LastGeneral, args: tuple, kwargs: dict) -> list | None:
        """The Array leaves of a call equal to the ``last`` general hit (see :class:`LastGeneral`), else None."""
        if len(args) != len(last.args) or len(kwargs) != len(last.kwargs) + len(last.kwarg_avals):
            return None
        leaves = []
        argnums = self.static_argnums
        try:
            for i, (given, kept) in enumerate(zip(args, last.args)):
                if i in argnums:
                    if type(given) is not type(kept) or not given == kept:
                        return None
                elif type(given) is Array and given.aval is kept:
                    leaves.append(given)
                elif type(kept) is KeptScalar and kept.matches(given):
                    leaves.append(kept.array)
                elif type(given) is np.ndarray and type(kept) is KeptHostArray and given.shape == kept.shape \
                        and given.dtype == kept.dtype:
                    leaves.append(kept.placed(given))
                else:
                    return None
            for name, value in kwargs.items():
                kept = last.kwargs.get(name, MISS)
                if kept is MISS:
                    if type(value) is not Array or value.aval is not last.kwarg_avals.get(name):
                        return None
                elif type(value) is not type(kept) or not value == kept:
                    return None
        except Exception:  # noqa: BLE001 - a value whose == is not a bool (an array): the general path decides
            return None
        if last.scalars and not host_to_device_unguarded():  # a transfer guard sees every upload, as in JAX
            return None
        if last.kwarg_avals:  # flattened after the positional leaves, by name
            leaves += [kwargs[name] for name in last.kwarg_avals]
        return leaves

    def _remember_last_general(self, args: tuple, kwargs: dict, generation: int, state: tuple,
                               entry: FastEntry) -> None:
        """Remember a hit on Arrays, Python scalars and numpy arrays (dynamic arguments; a numpy array of exactly
        its parameter's type) and static values only, for :meth:`_same_as_last`."""
        if entry.partitioner is not ANY_PARTITIONER:
            return
        static, kwarg_avals = {}, {}
        for name in sorted(kwargs):
            value = kwargs[name]
            if name in self.static_argnames:
                static[name] = value
            elif type(value) is Array:
                kwarg_avals[name] = value.aval
            else:
                return
        argnums = self.static_argnums
        compiled = entry.compiled
        kept: list = []
        leaf = 0  # each dynamic positional argument is one leaf, flattened first
        for i, value in enumerate(args):
            if i in argnums:
                kept.append(value)
                continue
            kind = type(value)
            if kind is Array:
                kept.append(value.aval)
            elif kind in _KEPT_SCALARS:
                placed = placed_host_scalar(compiled, value, leaf, leaf)
                if placed is None:
                    return
                kept.append(KeptScalar(kind, value, Array(placed, compiled._in_avals[leaf])))
            elif kind is np.ndarray and value.ndim:
                host = _kept_host_array(compiled, value, leaf)
                if host is None:
                    return
                kept.append(host)
            else:
                return
            leaf += 1
        if "_call_fast" not in compiled.__dict__:  # its fast caller, made now (Compiled._call_fast makes it on a call)
            compiled._call_fast = fast_caller(compiled)
        self.last_general = LastGeneral(tuple(kept), static, kwarg_avals, generation, state, compiled._call_fast,
                                        any(type(k) is KeptScalar for k in kept))

    def general_key(self, args: tuple, kwargs: dict) -> tuple[list, tuple, tuple] | None:
        """``(leaves, (tree, avals, static arguments), (dynamic args, dynamic kwargs))`` of a call: the start of its
        :attr:`general_entries` key (the pipeline generation and config state follow), and what was flattened;
        None when it cannot have one (an unhashable
        static argument, a leaf that is not an Array, host scalar or numpy value: the full path handles those)."""
        static: tuple = ()
        if self.static_argnums or self.static_argnames:
            argnums, argnames = self.static_argnums, self.static_argnames
            static = (tuple([(i, a) for i, a in enumerate(args) if i in argnums]),
                      tuple(sorted([(k, v) for k, v in kwargs.items() if k in argnames])))
            if static[0]:
                args = tuple([a for i, a in enumerate(args) if i not in argnums])
            if static[1]:
                kwargs = {k: v for k, v in kwargs.items() if k not in argnames}
            try:
                hash(static)
            except TypeError:
                return None
        dynamic = (args, kwargs)
        # A large tree seen before flattens in C++ (see _remember_native), else in toolkit's Python.
        native = native_pytrees.flatten(dynamic) if self.native_trees else None
        tree = self.native_trees.get(native[1]) if native is not None else None
        if tree is not None and self.native_generation == pytrees.registry_generation():
            leaves = native[0]  # type: ignore[index]
        else:
            leaves, tree = pytrees.tree_flatten(dynamic)
        avals = []
        state = cache_state()
        for leaf in leaves:
            kind = type(leaf)
            if kind is Array:
                avals.append(leaf.aval)
            elif kind in _PYTHON_SCALARS or kind is np.ndarray:
                # Its aval depends on its type (an array's shape and dtype) and the x64 mode only: made once.
                host_key = (kind, state) if kind is not np.ndarray else (leaf.shape, leaf.dtype, state)
                aval = _HOST_AVALS.get(host_key)
                if aval is None:
                    try:
                        aval = aval_of(leaf)
                    except (TypeError, ValueError):  # an array of a type jit does not take: the full path says so
                        return None
                    if len(_HOST_AVALS) >= HOST_AVALS_MAX:
                        _HOST_AVALS.clear()
                    _HOST_AVALS[host_key] = aval
                avals.append(aval)
            elif kind in _GENERAL_HOST_LEAVES:
                try:
                    avals.append(aval_of(leaf))
                except (TypeError, ValueError):  # an array of a type jit does not take: the full path says so
                    return None
            else:
                return None
        return leaves, (tree, tuple(avals), static), dynamic

    def remember_general(self, args: tuple, kwargs: dict, compiled: Any, generation: int, partitioner: Any,
                         state: tuple) -> None:
        """Answer later calls equal to this one (see :meth:`call_general`) with ``compiled``.

        ``generation`` and ``state`` are the jit pipeline's generation and the
        ``cache_state()`` when the call began (as for :meth:`remember`).
        """
        if flag_value("jax_no_execution"):  # the fast paths do not check it: keep such calls on the full path
            return
        general = self.general_key(args, kwargs)
        if general is None:
            return
        if len(self.general_entries) >= GENERAL_ENTRIES_MAX:  # static arguments can take unboundedly many values
            self.general_entries.clear()
        leaves, key, dynamic = general
        self.general_entries[key + (generation, state if self.keyed_on_config else ())] = fast_entry(compiled, partitioner)
        self._remember_native(dynamic, leaves, key[0])

    def remember_call(self, args: tuple, kwargs: dict, leaves: Sequence[Any], avals: tuple[ShapedArray, ...],
                      compiled: Any, generation: int, partitioner: Any, state: tuple) -> None:
        """Remember a call the full path answered: :meth:`remember` for positional Arrays, else
        :meth:`remember_general` (when every input of ``compiled`` is kept: it places arguments by position)."""
        if kwargs or self.static_argnums or self.static_argnames or not all(type(a) is Array for a in leaves):
            if compiled._fast_ok:
                self.remember_general(args, kwargs, compiled, generation, partitioner, state)
        else:
            self.remember(args, len(leaves), avals, compiled, generation, partitioner, state)

    def remember(self, args: tuple, leaf_count: int, avals: tuple[ShapedArray, ...], compiled: Any,
                 generation: int, partitioner: Any, state: tuple) -> None:
        """Answer later calls like ``args`` (positional, ``leaf_count`` leaves of ``avals``) with ``compiled``.

        ``generation`` is the jit pipeline's when the call began (a change since
        must miss); ``partitioner`` the ``$TOOLKIT_PARTITIONER`` it compiled
        under, or :data:`ANY_PARTITIONER`; ``state`` the ``cache_state()`` it
        was traced under (ignored when not ``keyed_on_config``).
        """
        if not self.keyed_on_config:
            state = ()
        if flag_value("jax_no_execution"):  # the fast path does not check it: keep such calls on the full path
            return
        if generation != self.generation:
            # Entries of an older pipeline can never hit again.
            self.entries.clear()
            self.generation = generation
        leaves, tree = pytrees.tree_flatten(args)
        self.entries[(tree, avals, generation, state)] = fast_entry(compiled, partitioner)
        self._remember_native(args, leaves, tree)
        if len(args) == 1 and type(args[0]) is dict and len(self.dict_leaf_orders) < 64:
            keys = tuple(args[0])
            order = dict_leaf_order(tree, leaf_count)
            if order is not None:
                self.dict_leaf_orders[keys] = DictLeafOrder(tree, None if tuple(order) == keys else order)

    def _remember_native(self, args: tuple, leaves: list, tree: pytrees.PyTreeDef) -> None:
        """Let later calls flatten ``args``' structure in C++, when that gives exactly toolkit's leaves."""
        if self.native_generation != pytrees.registry_generation():
            self.native_trees.clear()
            self.native_generation = pytrees.registry_generation()
        if len(leaves) < NATIVE_FLATTEN_MIN_LEAVES or not pytrees.is_builtin_structure(tree):
            return
        native = native_pytrees.flatten(args)
        if native is None or len(native[0]) != len(leaves) or not all(map(operator.is_, native[0], leaves)):
            return
        if len(self.native_trees) >= 64:
            self.native_trees.clear()
        self.native_trees[native[1]] = tree

    def clear(self) -> None:
        """Forget every cached entry (``Wrapped.clear_cache`` calls it)."""
        self.entries.clear()
        self.general_entries.clear()
        self.dict_leaf_orders.clear()
        self.native_trees.clear()
        self.last_single = self.last_many = self.last_general = self.last_general_entry = None


def fast_caller(compiled: Any) -> Callable[[Sequence[Array]], Any]:
    """``compiled``'s fast call: flat argument Arrays already placed as compiled -> outputs, else :data:`MISS`.

    Everything a call reads is bound once here (the executable's entry point,
    the result handlers, the expected argument shardings, the output types):
    a steady-state call is the identity checks of the arguments' shardings,
    PJRT's execute, the result handlers and the output ``Array``s.
    """
    if compiled._has_tokens:  # tokens in or out: the full path (Compiled._call_flat) passes and makes them
        return _always_miss
    execute = compiled._executable.execute_sharded
    handlers = compiled._handlers
    expected = tuple(compiled._arg_runtime_shardings)
    committed = compiled._plan.committed
    outputs = tuple(zip(compiled._out_avals, compiled._out_shardings))
    count = len(compiled._in_avals)
    # Arguments the program does not read (jit(zeros_like)) are passed over, as by _call_flat and as JAX's fast path
    # skips them: they neither place the computation nor commit it (sharding_plan). Only the general caller below
    # handles them, passing the kept ones.
    kept = None if len(compiled._kept) == count else tuple(compiled._kept)
    if len(expected) == 1 and compiled._single_output and kept is None:  # f(x) -> y
        want, ((aval, sharding),) = expected[0], outputs

        def call_one(leaves: Sequence[Array]) -> Any:
            impl = leaves[0]._impl
            if impl._sharding is not want:
                return MISS
            return Array(execute([impl]).consume_with_handlers(handlers)[0], aval, sharding, committed)
        return call_one

    out_tree = compiled._out_tree
    single = compiled._single_output
    if len(expected) == 2 and single and kept is None:  # f(x, y) -> z: an eager binary op
        want_x, want_y = expected
        (aval, sharding), = outputs

        def call_two(leaves: Sequence[Array]) -> Any:
            if len(leaves) != 2:
                return MISS
            x, y = leaves[0]._impl, leaves[1]._impl
            if x._sharding is not want_x or y._sharding is not want_y:
                return call(leaves)  # equal shardings that are not the same objects: compared by the general call
            return Array(execute([x, y]).consume_with_handlers(handlers)[0], aval, sharding, committed)
    build = None if single else output_builder(out_tree, len(outputs))
    if build is None and not single:
        build = native_output_builder(out_tree, len(outputs))
    out_avals, out_shardings = tuple(compiled._out_avals), tuple(compiled._out_shardings)
    out_committed = (committed,) * len(outputs)
    expected_list = list(expected)

    # Per-leaf work in comprehensions, list comparisons and ``map`` (cheapest on CPython 3.11, measured:
    # with ten leaves an explicit loop costs as much as the rest of the call's Python).
    def call(leaves: Sequence[Array]) -> Any:
        if kept is None:
            impls = [a._impl for a in leaves]
        elif len(leaves) == count:
            impls = [leaves[i]._impl for i in kept]
        else:
            return MISS
        # Shardings as placed vs as compiled: identical objects in the steady state (outputs fed back,
        # arrays placed for this executable), compared by identity first; equal ones mean the same placement.
        if [impl._sharding for impl in impls] != expected_list:
            return MISS
        outs = execute(impls).consume_with_handlers(handlers)
        if single:
            return Array(outs[0], outputs[0][0], outputs[0][1], committed)
        arrays = list(map(Array, outs, out_avals, out_shardings, out_committed))
        return build(arrays) if build is not None else pytrees.tree_unflatten(out_tree, arrays)
    return call_two if len(expected) == 2 and single and kept is None else call


def _always_miss(leaves: Sequence[Array]) -> Any:
    return MISS


def call_compiled(compiled: Any, args: tuple, kwargs: dict) -> Any:
    """``Compiled.__call__``: ``compiled`` run on a call's arguments, checked against what it was compiled for.

    A ``TypeError`` names the tree or the argument (shape or dtype) that
    differs. Positional Arrays laid out as in an earlier call go through the
    executable's own :class:`FastPath` (no signature, no checks: the tree and
    avals are those of a checked call).
    """
    wrapped = compiled._lowered._traced._wrapped
    positional = not kwargs and not wrapped._has_static
    fast = compiled.__dict__.get("_own_fast_path")
    if positional and fast is not None:
        out = fast.call(args)
        if out is not MISS:
            return out
    sig = wrapped._signature(args, kwargs)
    if sig.tree != compiled.in_tree:
        raise TypeError(f"the compiled function {wrapped.name} was called with arguments of tree structure "
                        f"{sig.tree}, but it was compiled for {compiled.in_tree}")
    for i, (given, expected) in enumerate(zip(sig.avals, compiled._in_avals)):
        if given.shape != expected.shape or given.dtype != expected.dtype \
                or (given is abstract_token) != (expected is abstract_token):
            raise TypeError(f"argument {compiled._paths[i]} of the compiled function {wrapped.name} has type "
                            f"{given.str_short()}, but it was compiled for {expected.str_short()}")
    if positional and compiled._positional_fast_ok and all(type(leaf) is Array for leaf in sig.leaves):
        if fast is None:
            fast = compiled._own_fast_path = FastPath(keyed_on_config=False)  # the program is fixed: x64 or not
        fast.remember(args, len(sig.leaves), sig.avals, compiled, jit_pipeline_generation(), ANY_PARTITIONER, ())
    return compiled._call_flat(sig.leaves)


# --- the full path: arguments placed as compiled ----------------------------------------

#: (value's bytes, aval, id of the runtime sharding) -> (that sharding, the device array holding the value):
#: see :func:`place_argument`.
_PLACED_SCALARS: dict[tuple, Any] = {}
#: The most host scalars kept on devices (then they start over).
PLACED_SCALARS_MAX = 1024


def _kept_host_array(compiled: Any, value: np.ndarray, i: int) -> KeptHostArray | None:
    """Numpy argument ``value`` (leaf and parameter ``i`` of ``compiled``) as a :class:`LastGeneral` record keeps it,
    when :func:`place_argument` puts it as it is (its parameter's exact type, one device); else None."""
    aval = compiled._in_avals[i]
    if compiled._plan.num_partitions != 1 or value.dtype != aval.dtype or value.shape != aval.shape \
            or len(compiled._arg_devices[i]) != 1:
        return None
    return KeptHostArray(value.shape, value.dtype, aval, compiled._arg_runtime_shardings[i],
                         tuple(compiled._arg_devices[i]))


def placed_host_scalar(compiled: Any, leaf: Any, i: int, position: int) -> Any:
    """The device array kept for host scalar ``leaf`` as leaf ``i`` (parameter ``position``) of ``compiled``,
    uploaded on first use; None when it is not a host scalar or is not kept (see :func:`place_argument`)."""
    kind = type(leaf)
    if (kind in _HOST_SCALARS or kind is np.ndarray and leaf.ndim == 0) and compiled._plan.num_partitions == 1 \
            and not compiled._donated[position] and host_to_device_unguarded():
        # A host scalar (clip(x, 0, 1)'s bounds, mean's count): uploaded once per value, type and placement and
        # kept, as device arrays never change (a donated one would be deleted; a transfer guard must see every
        # upload).
        devices = compiled._arg_devices[position]
        if len(devices) == 1:
            aval = compiled._in_avals[i]
            value = np.asarray(leaf, dtype=aval.dtype)  # raises as place_argument does for an int it cannot hold
            rsharding = compiled._arg_runtime_shardings[position]
            # The sharding by identity (kept in the entry, so its id is not reused while it is there): jaxlib's
            # hash of a sharding can change after it is first taken (when jax is imported in the process).
            key = (value.tobytes(), aval, id(rsharding))
            kept = _PLACED_SCALARS.get(key)
            if kept is not None and kept[0] is rsharding:
                return kept[1]
            if len(_PLACED_SCALARS) >= PLACED_SCALARS_MAX:
                _PLACED_SCALARS.clear()
            placed = runtime_arrays.put_shards(aval, rsharding, (value,), devices)
            _PLACED_SCALARS[key] = (rsharding, placed)
            return placed
    return None


def place_argument(compiled: Any, leaf: Any, i: int, position: int) -> Any:
    """Leaf ``i`` (the executable's parameter ``position``) of a call of ``compiled`` as the runtime array it takes:
    checked, moved or uploaded."""
    placed = placed_host_scalar(compiled, leaf, i, position)
    if placed is not None:
        return placed
    aval = compiled._in_avals[i]
    plan = compiled._plan
    kind = type(leaf)
    if kind is np.ndarray and plan.num_partitions == 1 and leaf.dtype == aval.dtype \
            and leaf.shape == aval.shape and leaf.flags.c_contiguous:
        devices = compiled._arg_devices[position]
        if len(devices) == 1:  # a numpy array of exactly the parameter's type, for one device: put as it is
            # (jaxlib aliases an aligned buffer; its transfer guard applies): none of the checks below can fail.
            return runtime_arrays.put_shards(aval, compiled._arg_runtime_shardings[position], (leaf,), devices)
    path = compiled._paths[i]
    sharding = plan.arg_sharding(i, aval)
    if type(leaf) is Array:
        plan.check_committed(leaf, i, path)
        if leaf._impl.is_deleted():
            raise ValueError(f"argument {path} was donated to an earlier call and has been deleted")
        if leaf.sharding == sharding:
            return leaf._impl
        if not leaf.is_fully_addressable:  # spans other processes: nobody holds the value to re-slice
            if leaf.sharding.is_equivalent_to(sharding, aval.ndim):
                return leaf._impl
            raise ValueError(f"argument {path} spans devices of other processes with sharding "
                             f"{leaf.sharding}, but the computation needs {sharding}; it cannot be resharded "
                             "while passed in: give jit that in_sharding, or reshard with toolkit.device_put")
        value = np.asarray(leaf)
    else:
        if not sharding.is_fully_addressable and not sharding.is_fully_replicated:
            raise ValueError(
                f"argument {path}: passing non-trivial shardings for numpy inputs is not allowed in a "
                "multi-process computation. Specify a replicated sharding, or make a global array with "
                "toolkit.make_array_from_process_local_data(...) (each process's own rows) or "
                f"toolkit.make_array_from_callback(...) (the same value everywhere). Got {aval.str_short()}")
        value = np.asarray(leaf, dtype=aval.dtype)
    return placement.device_put_sharded(value, sharding, weak_type=aval.weak_type)


# --- eager execution ------------------------------------------------------------------------

#: Families whose primitives are pure and deterministic: applied to host scalars only (``x + 1``'s
#: ``broadcast_in_dim`` of the 1), their small results are computed once and kept.
CONSTANT_FAMILIES = frozenset({"elementwise", "structural"})
#: The most bytes of results kept per such constant (1,024 of them at most).
CONSTANT_MAX_BYTES = 4096
#: The most executables of eager primitives kept (JAX's primitive cache keeps as many); an entry whose parameters
#: hold programs is ~24 KB beside its executable, which toolkit.executables_by_module shares.
EAGER_ENTRIES = 4096


@dataclass(frozen=True, slots=True)
class EagerHit:
    """A primitive's last eager cache hit on uncommitted Arrays: its parameters, their avals, the config, the entry."""

    params: dict[str, Any]
    avals: tuple[ShapedArray, ...]  # of uncommitted Arrays (placements: none)
    state: tuple  # toolkit.core.config.cache_state() of the hit, compared by identity
    entry: FastEntry


class EagerExecutables:
    """How primitives and ``lax`` functions run outside a trace: compiled with ``jit``, one executable each.

    A primitive is compiled alone, once per primitive, parameters, argument
    types and placements (eager ops run where committed inputs live) and the
    ``out_sharding=`` overrides in force; a new jit pipeline empties the cache
    (eager ops compile through it too).
    """

    def __init__(self, jit: Callable[..., Any]):
        self._jit = jit
        self._cache: dict[tuple, FastEntry] = {}
        self._generation = -1  # the jit pipeline generation the cache was compiled with
        # (key, host values) -> outputs of a primitive whose operands are all host scalars (x + 1's
        # weakly typed 1): computed once, not uploaded and executed on every use. Same generation as _cache.
        self._constants: dict[tuple, list[Any]] = {}
        # primitive -> its last cache hit with Arrays (same generation as _cache): a loop's op compares identities.
        self._last_hits: dict[Any, EagerHit] = {}

    def run_primitive(self, primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
        """``primitive.bind(*args, **params)`` outside a trace: its outputs as a list."""
        # The usual eager op, uncommitted Arrays in and an executable compiled before: its fast caller, found by
        # the general path's key below (which handles every other case, and the misses).
        for a in args:
            if type(a) is not Array or a._committed:
                break
        else:
            if self._generation == jit_pipeline_generation() and not sharding_types._overrides \
                    and not OPEN_CONTEXTS[0]:
                avals = tuple(map(_AVAL_OF, args))
                state = cache_state()
                last = self._last_hits.get(primitive)
                # The primitive's last hit again (a loop's op: the same aval objects): no hashing of the key. Its
                # state is the prebuilt cache_state() tuple it was checked under (jax_no_execution off included).
                if last is not None and last.state is state and last.avals == avals and last.params == params:
                    result = last.entry.compiled._call_fast(args)
                    if result is not MISS:
                        return list(result) if primitive.multiple_results else [result]
                hit = self._cache.get((primitive, _params_key(params), avals, (None,) * len(args), (), state))
                if hit is not None and hit.partitioner is ANY_PARTITIONER and not flag_value("jax_no_execution"):
                    self._last_hits[primitive] = EagerHit(params, avals, state, hit)
                    result = hit.compiled._call_fast(args)
                    if result is not MISS:
                        return list(result) if primitive.multiple_results else [result]
        params_key = _params_key(params)
        if OPEN_CONTEXTS[0] and abstract_only_context() is not None:
            # use_abstract_mesh alone: JAX refuses to run an op there (no devices), and planning the op's
            # computation says so; no executable or constant kept from outside may answer instead.
            params_key = None
        generation = jit_pipeline_generation()
        if generation != self._generation:
            self._cache.clear()
            self._constants.clear()
            self._last_hits.clear()
            self._generation = generation
        # The out_sharding= overrides in force type the result (toolkit.core.sharding_types): part of the key.
        overrides = tuple(sharding_types._overrides) if sharding_types._overrides else ()
        # The flags traces depend on (x64): a primitive's rule may read them (its result dtype). Under a mesh
        # context, the context too: set_mesh's mesh places the op (as JAX's), an abstract mesh types it.
        state = cache_state()
        if OPEN_CONTEXTS[0]:
            state = (state, mesh_context(), get_concrete_mesh())
        # Host scalars only, of a pure and deterministic family: the small result computed once (kept below).
        # Their values (with types) determine their avals and placements: the key needs neither.
        constant_key = None
        # (Not under a host-to-device transfer guard: there every use uploads the scalars, checked or logged.)
        if args and params_key is not None and not primitive.effectful and primitive.family in CONSTANT_FAMILIES \
                and host_to_device_unguarded():
            values = _host_scalar_values(args)
            if values is not None:
                constant_key = (primitive, params_key, values, overrides, state)
                outs = self._constants.get(constant_key)
                # Arrays are immutable, but may be deleted (delete(), donation): then computed again.
                if outs is not None and not any(out._impl.is_deleted() for out in outs):
                    return list(outs)
        avals = tuple([a.aval if type(a) is Array else aval_of(a) for a in args])
        placements = tuple([(a._sharding if a._committed else None) if type(a) is Array else leaf_placement(a)
                            for a in args])
        key = (primitive, params_key, avals, placements, overrides, state) if params_key is not None else None
        entry = self._cache.get(key) if key is not None else None
        compiled = None
        if entry is not None and (entry.partitioner is ANY_PARTITIONER
                                  or entry.partitioner == _environ_get(PARTITIONER_VARIABLE)):
            compiled = entry.compiled
        if compiled is None:
            partitioner = _environ_get(PARTITIONER_VARIABLE)

            def run(*xs: Any) -> Any:
                out = primitive.bind(*xs, **params)
                return list(out) if primitive.multiple_results else out
            run.__name__ = primitive.name
            # A token (toolkit.lax.after_all's operand) is its own spec: a shape and dtype would make it bool[0].
            specs = [a if a is abstract_token else ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=p)
                     for a, p in zip(avals, placements)]
            wrapped = self._jit(run, keep_unused=True)
            wrapped._function_cache = False  # `run` is new for every signature: kept here, never found again there
            wrapped._executables_by_module = True  # parameters holding programs made on each call: same module
            # An array made 64-bit under x64 on keeps its type after (as in JAX): its specs must not be
            # canonicalized to 32 bits (one primitive's types do not depend on the mode otherwise).
            wide = any(a.dtype in dtypes.TO_32BIT for a in avals)
            with enable_x64() if wide else contextlib.nullcontext():
                compiled = wrapped.trace(*specs).lower().compile()
            if key is not None:
                if len(self._cache) >= EAGER_ENTRIES:
                    # The oldest out: an eager loop whose ops carry programs made on each call (jvp of a cond)
                    # adds an entry per call, and memory must not grow with the number of calls.
                    del self._cache[next(iter(self._cache))]
                self._cache[key] = fast_entry(compiled, partitioner)
        # Arrays placed as compiled (the usual case): the executable's fast caller, as a jit call's.
        # (Not while jax_no_execution refuses runs: the fast caller does not check it; the full path does.)
        out: Any = compiled._call_fast(args) if all(type(a) is Array for a in args) \
            and not flag_value("jax_no_execution") else MISS
        if out is MISS:
            out = compiled._call_flat(list(args))
        outs = list(out) if primitive.multiple_results else [out]
        if constant_key is not None and all(type(o) is Array for o in outs) \
                and sum(o.aval.size * o.aval.dtype.itemsize for o in outs) <= CONSTANT_MAX_BYTES:
            if len(self._constants) >= 1024:
                self._constants.clear()
            self._constants[constant_key] = outs
            return list(outs)
        return outs

    def clear(self) -> None:
        """Forget every executable and kept constant (``toolkit.clear_caches``)."""
        self._cache.clear()
        self._constants.clear()
        self._last_hits.clear()

    def run_function(self, fun: Callable[..., Any], *args: Any) -> Any:
        """A whole traceable function outside a trace (``lax`` control flow and windowed reductions): ``jit(fun)``.

        ``fun`` is often made for this call (a closure over programs traced or transformed now): its
        executable is found by its module when an equal one was compiled (``toolkit.executables_by_module``).
        """
        wrapped = self._jit(fun)
        wrapped._executables_by_module = True
        return wrapped(*args)


def _host_scalar_values(args: Sequence[Any]) -> tuple | None:
    """Operands that are all host scalars (Python or 0-d numpy) as a hashable key, else None.

    A value's type, dtype and bytes tell it apart (``1`` and ``True``, ``0.0``
    and ``-0.0``, NaN payloads, ``float32`` and ``float64``).
    """
    values = []
    for a in args:
        kind = type(a)
        if kind is int or kind is float or kind is bool or kind is complex:
            values.append((kind, np.asarray(a).tobytes()) if kind is float or kind is complex else (kind, a))
        elif (kind is np.ndarray or isinstance(a, np.generic)) and a.ndim == 0:
            values.append((a.dtype, a.tobytes()))
        else:
            return None
    return tuple(values)


def _params_key(params: dict[str, Any]) -> Any:
    if not params:
        return ()
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


#: The executables of eager execution (installed by ``toolkit.stages``, which owns ``jit``).
EAGER_EXECUTABLES: EagerExecutables | None = None


def install_eager_handlers(jit: Callable[..., Any]) -> EagerExecutables:
    """Make ``toolkit.core.tracing`` run primitives and functions outside a trace with ``jit``'s executables."""
    global EAGER_EXECUTABLES
    executables = EAGER_EXECUTABLES = EagerExecutables(jit)
    tracing.set_eager_handler(executables.run_primitive)
    tracing.set_eager_call_handler(executables.run_function)
    compiled_whole.install_jit(jit)
    return executables
