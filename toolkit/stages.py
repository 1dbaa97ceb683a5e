"""The stages of compilation, as ``jax.stages`` describes them.

``jit(f)`` gives a ``Wrapped``. For concrete or abstract arguments:

* ``Wrapped.trace(*args)`` → ``Traced``: the typed program (``.program``);
* ``Traced.lower()`` / ``Wrapped.lower(*args)`` → ``Lowered``: a StableHLO
  module, plus the named pass pipeline ``compile`` will run on it;
* ``Lowered.compile()`` → ``Compiled``: an XLA executable; calling it runs it.

``Wrapped.__call__`` does all of it once per abstract signature and caches
the executable, so the steady-state call is: flatten the arguments, look up
the signature, execute.

Example::

    >>> f = toolkit.jit(lambda x, y: x @ y + 1.0)
    >>> lowered = f.lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    >>> print(lowered.as_text())          # StableHLO
    >>> compiled = lowered.compile()
    >>> compiled.cost_analysis()["flops"]
"""

from __future__ import annotations

import functools
import inspect
import io
import os
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from jaxlib.mlir import ir

from toolkit import compiled_format, lowering
from toolkit.lowering import dims
from toolkit.array import Array
from toolkit.core import dtypes, sharding_rules, trace_cache, tracing, pytrees
from toolkit.core.avals import ShapedArray, ShapeDtypeStruct, aval_of, is_static_shape
from toolkit.core.program import Program
from toolkit.ir.context import shared_context
from toolkit.passes import dump as ir_dump
from toolkit.passes.default_pipeline import jit_pipeline, jit_pipeline_generation, jit_pipeline_text
from toolkit.passes.registry import registry_generation
from toolkit.passes.pipeline import Pipeline
from toolkit.runtime import arrays as runtime_arrays
from toolkit.runtime import executable as runtime_executable
from toolkit.shard.mesh import get_mesh


@dataclass(frozen=True)
class ArgInfo:
    """What ``args_info`` reports for one argument leaf: its abstract value and whether it is donated."""

    aval: ShapedArray
    donated: bool

    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype


# --- argument handling --------------------------------------------------------


def _canonical_argnums(fun: Callable, static_argnums: Any, static_argnames: Any) -> tuple[tuple[int, ...], tuple[str, ...]]:
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


def _leaf_aval(leaf: Any, path: str) -> ShapedArray:
    if type(leaf) is Array:
        return leaf.aval
    try:
        return aval_of(leaf)
    except TypeError:
        raise TypeError(f"argument {path} of type {type(leaf).__name__} is not a valid jit argument: only arrays, "
                        "numpy values, Python scalars and ShapeDtypeStruct (or pytrees of them) are; "
                        "mark non-array arguments static with static_argnums/static_argnames") from None


def _leaf_paths(tree: pytrees.PyTreeDef, static_positions: Sequence[int] = ()) -> list[str]:
    """Key paths of the leaves of an ``(args, kwargs)`` tree as users name them: ``args[1]['w']``, ``scale``.

    Positions count the user's positional arguments, static ones included.
    """
    dummy = pytrees.tree_unflatten(tree, list(range(tree.num_leaves)))
    dynamic_positions = [i for i in range(len(dummy[0]) + len(static_positions)) if i not in static_positions]
    paths = []
    for path, _ in pytrees.tree_flatten_with_path(dummy)[0]:
        head, first, *rest = path
        name = f"args[{dynamic_positions[first.idx]}]" if head.idx == 0 else str(first.key)
        paths.append(name + pytrees.keystr(tuple(rest)))
    return paths


def _leaf_placement(leaf: Any) -> Any:
    """The sharding a leaf insists on: a committed array's, or a spec's."""
    if type(leaf) is Array:
        return leaf._sharding if leaf._committed else None
    if type(leaf) is ShapeDtypeStruct:
        return leaf.sharding
    return None


class _Signature:
    """The dynamic arguments of one call: flat leaves, their tree and abstract values."""

    __slots__ = ("leaves", "tree", "avals", "shardings", "static_key", "static_args", "static_kwargs")

    def __init__(self, leaves, tree, avals, shardings, static_key, static_args, static_kwargs):
        self.leaves, self.tree, self.avals, self.shardings = leaves, tree, avals, shardings
        self.static_key, self.static_args, self.static_kwargs = static_key, static_args, static_kwargs


# --- the stages ---------------------------------------------------------------

_MISS = object()
#: function -> {signature and trace context: (program, out tree, captured values, builder)}: nested jit programs
_NESTED_PROGRAMS: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_TRACE_STATE = tracing._state
_environ_get = os.environ.get
_PARTITIONER_VARIABLE = "TOOLKIT_PARTITIONER"
_ANY_PARTITIONER = object()  # a fast-cache entry that is the same under every partitioner


def _compile_settings() -> tuple:
    """What a compilation depends on beyond the arguments: the jit pipeline and the partitioner.

    Part of the slow cache key: the pipeline as printed (plus the registry's
    generation, in case a pass name now means another class) and
    the partitioner ``$TOOLKIT_PARTITIONER`` selects (unset and ``shardy`` are one
    key: Shardy is the default). The fast path keys on the cheaper
    :func:`jit_pipeline_generation` instead and reads the variable (~1.5 µs,
    a missing key raises inside ``os.environ.get``) only for executables
    partitioned over several devices: with one partition the partitioner
    changes nothing (see :func:`_fast_entry`).
    """
    from toolkit.sharding_plan import partitioner_choice
    return (jit_pipeline_text(), registry_generation(), partitioner_choice())


def _fast_entry(compiled: "Compiled", partitioner: str | None) -> tuple["Compiled", Any]:
    """A fast-cache value: ``compiled`` and the ``$TOOLKIT_PARTITIONER`` a hit needs (any, when unpartitioned)."""
    return (compiled, partitioner if compiled._plan.num_partitions > 1 else _ANY_PARTITIONER)


_ONE_LEAF_TREE = pytrees.tree_structure((0,))  # what tree_flatten gives for the arguments of f(x)


def _dict_leaf_order(tree: Any, count: int) -> list | None:
    """For the tree of ``(d,)`` with ``d`` a dict of leaves: ``d``'s keys in leaf order, else None."""
    probe = pytrees.tree_unflatten(tree, list(range(count)))
    if type(probe) is not tuple or len(probe) != 1 or type(probe[0]) is not dict:
        return None
    items = probe[0]
    if len(items) != count or not all(type(i) is int for i in items.values()):
        return None
    return sorted(items, key=items.__getitem__)


def _output_builder(out_tree: Any, count: int) -> Callable[[list], Any] | None:
    """A quicker ``tree_unflatten(out_tree, leaves)`` for a flat dict, tuple or list of outputs, else None."""
    probe = pytrees.tree_unflatten(out_tree, list(range(count)))
    kind = type(probe)
    if kind is dict and list(probe.values()) == list(range(count)):  # unflatten gives keys in leaf order
        keys = tuple(probe)
        return lambda leaves: dict(zip(keys, leaves))
    if (kind is tuple or kind is list) and list(probe) == list(range(count)):
        return tuple if kind is tuple else list
    return None


def _fast_caller(compiled: "Compiled") -> Callable[[Sequence[Array]], Any]:
    """``compiled``'s fast call: flat argument Arrays already placed as compiled -> outputs, else ``_MISS``.

    Everything a call reads is bound once here (the executable's entry point,
    the result handlers, the expected argument shardings, the output types):
    a steady-state call is the identity checks of the arguments' shardings,
    PJRT's execute, the result handlers and the output ``Array``s.
    """
    execute = compiled._executable.execute_sharded
    handlers = compiled._handlers
    expected = tuple(compiled._arg_runtime_shardings)
    committed = compiled._plan.committed
    outputs = tuple(zip(compiled._out_avals, compiled._out_shardings))
    if len(expected) == 1 and compiled._single_output:  # f(x) -> y
        want, ((aval, sharding),) = expected[0], outputs

        def call_one(leaves: Sequence[Array]) -> Any:
            impl = leaves[0]._impl
            if impl._sharding is not want:
                return _MISS
            return Array(execute([impl]).consume_with_handlers(handlers)[0], aval, sharding, committed)
        return call_one

    out_tree = compiled._out_tree
    single = compiled._single_output
    build = None if single else _output_builder(out_tree, len(outputs))
    out_avals, out_shardings = tuple(compiled._out_avals), tuple(compiled._out_shardings)
    out_committed = (committed,) * len(outputs)
    expected_list = list(expected)

    # Per-leaf work in comprehensions, list comparisons and ``map`` (cheapest on CPython 3.11, measured:
    # with ten leaves an explicit loop costs as much as the rest of the call's Python).
    def call(leaves: Sequence[Array]) -> Any:
        impls = [a._impl for a in leaves]
        # Shardings as placed vs as compiled: identical objects in the steady state (outputs fed back,
        # arrays placed for this executable), compared by identity first; equal ones mean the same placement.
        if [impl._sharding for impl in impls] != expected_list:
            return _MISS
        outs = execute(impls).consume_with_handlers(handlers)
        if single:
            return Array(outs[0], outputs[0][0], outputs[0][1], committed)
        arrays = list(map(Array, outs, out_avals, out_shardings, out_committed))
        return build(arrays) if build is not None else pytrees.tree_unflatten(out_tree, arrays)
    return call


class Wrapped:
    """A function wrapped by ``jit``: call it, or ``trace``/``lower`` it explicitly."""

    _function_cache = True  # traces and lowerings go to toolkit.core.trace_cache (see _trace_key)

    def __init__(self, fun: Callable, *, static_argnums: Any = (), static_argnames: Any = (),
                 donate_argnums: Any = (), keep_unused: bool = False, in_shardings: Any = None,
                 out_shardings: Any = None, inline: bool = False):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        self.fun = fun
        self.static_argnums, self.static_argnames = _canonical_argnums(fun, static_argnums, static_argnames)
        self.donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums or ())
        overlap = set(self.donate_argnums) & set(self.static_argnums)
        if overlap:
            raise ValueError(f"arguments {sorted(overlap)} cannot be both static and donated")
        self.keep_unused = keep_unused
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.inline = inline  # called while tracing: inline the body instead of a `jit` call
        self.name = getattr(fun, "__name__", "fun")
        self._cache: dict[Any, Compiled] = {}
        # (tree, avals, pipeline generation) -> (Compiled, $TOOLKIT_PARTITIONER it needs or _ANY_PARTITIONER)
        self._fast_cache: dict[tuple, tuple[Compiled, Any]] = {}
        self._fast_generation = -1  # the jit pipeline generation of the entries in _fast_cache
        self._dict_leaf_orders: dict[tuple, tuple[Any, list | None]] = {}  # f(dict): keys -> (tree, order)
        self._last_single: tuple | None = None  # fast path for f(x): (aval, generation, fast-cache entry) of the last hit
        self._last_many: tuple | None = None  # other calls: (tree, generation, avals, fast-cache entry) of the last hit
        self._has_static = bool(self.static_argnums or self.static_argnames)
        functools.update_wrapper(self, fun, updated=())

    # -- signature -------------------------------------------------------------
    def _signature(self, args: tuple, kwargs: dict) -> _Signature:
        static_args: dict[int, Any] = {}
        static_kwargs: dict[str, Any] = {}
        if self._has_static:
            dyn_args = []
            for i, a in enumerate(args):
                if i in self.static_argnums:
                    static_args[i] = a
                else:
                    dyn_args.append(a)
            dyn_kwargs = {}
            for k, v in kwargs.items():
                if k in self.static_argnames:
                    static_kwargs[k] = v
                else:
                    dyn_kwargs[k] = v
            args, kwargs = tuple(dyn_args), dyn_kwargs
            try:
                static_key = (tuple(sorted(static_args.items())), tuple(sorted(static_kwargs.items())))
                hash(static_key)
            except TypeError as exc:
                raise ValueError(f"static arguments must be hashable: {exc}") from None
        else:
            static_key = None
        leaves, tree = pytrees.tree_flatten((args, kwargs))
        try:
            avals = tuple([leaf.aval if type(leaf) is Array else aval_of(leaf) for leaf in leaves])
        except TypeError:
            paths = _leaf_paths(tree, tuple(static_args))
            avals = tuple(_leaf_aval(leaf, paths[i]) for i, leaf in enumerate(leaves))
        shardings = tuple([_leaf_placement(leaf) for leaf in leaves])
        return _Signature(leaves, tree, avals, shardings, static_key, static_args, static_kwargs)

    # -- stages ----------------------------------------------------------------
    def trace(self, *args: Any, **kwargs: Any) -> "Traced":
        """Trace for these arguments (arrays or ``ShapeDtypeStruct`` specs)."""
        return self._trace(self._signature(args, kwargs))

    def _trace(self, sig: _Signature) -> "Traced":
        # Traces are cached by the function (toolkit.core.trace_cache), not by this jit object: a fresh
        # jit of a function traced before at this signature reuses its program, as jax.jit does.
        key = self._trace_key(sig)
        cached = trace_cache.TRACES.get(self.fun, key) if key is not None else None
        if cached is not None:
            program, out_tree, paths = cached
        else:
            program, out_tree, captured, paths = self._trace_program(sig)
            if key is not None and not captured:
                trace_cache.TRACES.put(self.fun, key, (program, out_tree, paths))
        donated = self._donated_leaves(sig)
        traced = Traced(self, program, sig.tree, out_tree, sig.avals, donated, paths, sig.shardings)
        traced._trace_key = key
        return traced

    def _trace_key(self, sig: _Signature) -> tuple | None:
        """Everything the trace of ``self.fun`` at ``sig`` depends on besides the function; None: not cached.

        The static argument positions and names, the tree, abstract values (with
        weak types and type shardings) and placements of the dynamic arguments, the
        static arguments' values and types (``1`` and ``1.0`` are equal and hash
        alike), the current mesh (``set_mesh``) and the ``out_sharding=``
        overrides in force. Not cached: traces inside another trace (they may
        capture its values) and symbolic shapes (dimension variables belong to
        their scope, which equality does not compare).
        """
        if not self._function_cache or _TRACE_STATE.builders \
                or not all([is_static_shape(a.shape) for a in sig.avals]):
            return None
        static_types = None
        if sig.static_key is not None:
            static_types = (tuple([(i, type(v)) for i, v in sorted(sig.static_args.items())]),
                            tuple([(k, type(v)) for k, v in sorted(sig.static_kwargs.items())]))
        return (self.static_argnums, self.static_argnames, sig.tree, sig.avals, sig.shardings, sig.static_key,
                static_types, get_mesh(), tuple(sharding_rules._overrides))

    def _trace_program(self, sig: _Signature) -> tuple[Program, pytrees.PyTreeDef, list, list[str]]:
        """The function traced at ``sig`` (static arguments put back): ``(program, out_tree, captured, paths)``."""
        paths = _leaf_paths(sig.tree, tuple(sig.static_args))
        out_tree_box: list[Any] = []

        def flat_fun(*tracers: Any) -> list[Any]:
            args, kwargs = pytrees.tree_unflatten(sig.tree, list(tracers))
            if self._has_static:
                merged = list(args)
                for i in sorted(sig.static_args):
                    merged.insert(i, sig.static_args[i])
                args = tuple(merged)
                kwargs = {**kwargs, **sig.static_kwargs}
            out_leaves, out_tree = pytrees.tree_flatten(self.fun(*args, **kwargs))
            out_tree_box.append(out_tree)
            for i, leaf in enumerate(out_leaves):
                if not (isinstance(leaf, (tracing.Tracer, Array, np.ndarray, np.generic))
                        or dtypes.is_python_scalar(leaf)):
                    raise TypeError(f"{self.name} returned a value of type {type(leaf).__name__} at output leaf "
                                    f"{i}; jit functions must return arrays (or pytrees of them)")
            return out_leaves

        program, captured = tracing.trace_flat(flat_fun, list(sig.avals),
                                               [f"argument {p} of {self.name}" for p in paths])
        return program, out_tree_box[0], list(captured), paths

    def _donated_leaves(self, sig: _Signature) -> tuple[bool, ...]:
        if not self.donate_argnums:
            return (False,) * len(sig.avals)
        args, kwargs = pytrees.tree_unflatten(sig.tree, list(range(len(sig.avals))))
        donated = [False] * len(sig.avals)
        dynamic_positions = [i for i in range(len(args) + len(sig.static_args)) if i not in sig.static_args]
        for position, arg in zip(dynamic_positions, args):
            if position in self.donate_argnums:
                for leaf in pytrees.tree_leaves(arg):
                    donated[leaf] = True
        return tuple(donated)

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """Trace and lower to StableHLO for these arguments."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes as a pytree of ``ShapeDtypeStruct``, without compiling."""
        return self.trace(*args, **kwargs).out_info

    # -- calling ---------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Fast path: positional pytrees of toolkit Arrays, looked up by (interned) structure and avals and
        # the jit pipeline's generation; a partitioned executable also checks the partitioner (changing
        # either compiles again). Never while tracing: a nested jit call is inlined into the enclosing program.
        if not kwargs and not self._has_static and not _TRACE_STATE.builders:
            first = type(args[0]) if len(args) == 1 else None
            if first is Array:  # f(x): no flatten; the same aval object as last time (x = f(x)): no hashing
                aval = args[0].aval
                last = self._last_single
                if last is not None and last[0] is aval and last[1] == jit_pipeline_generation():
                    entry = last[2]
                    if entry[1] is _ANY_PARTITIONER or entry[1] == _environ_get(_PARTITIONER_VARIABLE):
                        out = entry[0]._call_fast(args)
                        if out is not _MISS:
                            return out
                leaves, tree, avals = args, _ONE_LEAF_TREE, (aval,)
            else:
                known = self._dict_leaf_orders.get(tuple(args[0])) if first is dict else None
                if known is not None:  # f(params) with a dict seen before: its leaves without a flatten
                    tree, order = known
                    params = args[0]
                    leaves = list(params.values()) if order is None else list(map(params.__getitem__, order))
                else:
                    leaves, tree = pytrees.tree_flatten(args)
                avals = tuple([a.aval for a in leaves if type(a) is Array])
            if len(avals) == len(leaves):  # else a leaf that is not an Array: the full path
                generation = jit_pipeline_generation()
                last = self._last_many
                # The same tree and avals as the last hit (the same inputs, or outputs fed back): no hashing.
                # (A tuple comparison: identical avals compare by identity, in C.)
                remembered = last is not None and last[0] is tree and last[1] == generation and last[2] == avals
                entry = last[3] if remembered else self._fast_cache.get((tree, avals, generation))
                if entry is not None and (entry[1] is _ANY_PARTITIONER
                                          or entry[1] == _environ_get(_PARTITIONER_VARIABLE)):
                    if first is Array:
                        self._last_single = (avals[0], generation, entry)
                    else:  # also when remembered: equal but new aval objects (outputs fed back) come again
                        self._last_many = (tree, generation, avals, entry)
                    out = entry[0]._call_fast(leaves)
                    if out is not _MISS:
                        return out
        if tracing.is_tracing():
            if self.inline:
                return self.fun(*args, **kwargs)  # jit(..., inline=True): inline into the enclosing trace
            return self._call_in_trace(args, kwargs)  # nested jit: a `jit` call of its traced program
        generation = jit_pipeline_generation()  # read before compiling: a change meanwhile must miss
        settings = _compile_settings()
        sig = self._signature(args, kwargs)
        # The current mesh (set_mesh) gives bare PartitionSpecs and mesh-less shard_maps their meaning.
        context_mesh = get_mesh()
        key = (sig.tree, sig.avals, sig.shardings, sig.static_key, settings, context_mesh)
        compiled = self._cache.get(key)
        new = compiled is None
        if new:
            compiled = self._trace(sig).lower().compile()
            self._cache[key] = compiled
        # Into the fast cache when new, or when the fast path missed it (a pipeline changed and back).
        # Under a current mesh the fast path (which does not look at it) is not used.
        if (compiled._fast_ok and not kwargs and not self._has_static and context_mesh is None
                and (new or all(type(leaf) is Array for leaf in sig.leaves))):
            if generation != self._fast_generation:
                # Entries of an older pipeline can never hit again.
                self._fast_cache.clear()
                self._fast_generation = generation
            fast_tree = pytrees.tree_structure(args)
            self._fast_cache[(fast_tree, sig.avals, generation)] = _fast_entry(
                compiled, _environ_get(_PARTITIONER_VARIABLE))
            if len(args) == 1 and type(args[0]) is dict and len(self._dict_leaf_orders) < 64:
                keys = tuple(args[0])
                order = _dict_leaf_order(fast_tree, len(sig.leaves))
                if order is not None:  # None for the order: the dict's own (the leaves are its values())
                    self._dict_leaf_orders[keys] = (fast_tree, None if tuple(order) == keys else order)
        return compiled._call_flat(sig.leaves)

    def _call_in_trace(self, args: tuple, kwargs: dict) -> Any:
        """A call while tracing: a ``jit`` equation (``toolkit.lax.calls.jit_call_p``) of this function's program.

        The program is traced once per signature (and trace context) and reused, so
        calling the function twice lowers to two ``func.call``s of one private
        function, as in JAX. ``in_shardings``/``out_shardings`` become sharding
        constraints on the operands and results, as JAX makes them; static
        arguments select the program; donation means nothing inside a trace.
        """
        from toolkit.lax.calls import jit_call_p
        sig = self._signature(args, kwargs)
        leaves = list(sig.leaves)
        if self.in_shardings is not None:
            leaves = self._constrain_nested(leaves, sig.tree, "in_shardings")
        program, out_tree, captured = self._nested_program(sig)
        outs = jit_call_p.bind(*leaves, *captured, name=self.name, jaxpr=program)
        if self.out_shardings is not None:
            outs = self._constrain_nested(list(outs), out_tree, "out_shardings")
        return pytrees.tree_unflatten(out_tree, list(outs))

    def _constrain_nested(self, leaves: list, tree: pytrees.PyTreeDef, what: str) -> list:
        from toolkit.lax.sharding import with_sharding_constraint
        from toolkit.shard.resolve import resolve_tree
        from toolkit.sharding_plan import _flatten_prefix
        spec = resolve_tree(getattr(self, what), f"jit's {what}")
        if what == "in_shardings" and isinstance(spec, (list, tuple)):
            spec = (tuple(spec), {})  # a prefix of the positional arguments, as for the outer jit
        flat = _flatten_prefix(spec, tree, what)
        return [x if s is None else with_sharding_constraint(x, s) for x, s in zip(leaves, flat)]

    def _nested_program(self, sig: _Signature) -> tuple[Program, pytrees.PyTreeDef, list]:
        """This function's program for ``sig`` inside the current trace: ``(program, out_tree, captured)``."""
        from toolkit.core import sharding_rules
        from toolkit.lax import parallel
        builder = tracing.current_builder()
        key = (self.static_argnums, self.static_argnames, sig.tree, sig.avals, sig.static_key, get_mesh(),
               parallel.axis_context(), tuple(sharding_rules._overrides))
        try:
            table = _NESTED_PROGRAMS.setdefault(self.fun, {})  # per function, as JAX caches: jit(g) twice is one
        except TypeError:
            table = self.__dict__.setdefault("_nested_programs", {})
        try:
            entry = table.get(key)
        except TypeError:  # an unhashable part of the signature: no caching
            key, entry = None, None
        if entry is not None:
            program, out_tree, captured, owner = entry
            # A program that captured values of a trace is reused only in that trace.
            if not captured or (owner is builder and not owner.finished):
                return program, out_tree, captured
        program, out_tree, captured, _ = self._trace_program(sig)
        if key is not None:
            table[key] = (program, out_tree, captured, builder)
        return program, out_tree, captured

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # ``@jit`` on a method: bind ``self`` like a plain function would.
        return self if instance is None else functools.partial(self, instance)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast_cache.clear()

    def __repr__(self) -> str:
        return f"Wrapped({self.name})"


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        keep_unused: bool = False, in_shardings: Any = None, out_shardings: Any = None,
        inline: bool = False) -> Any:
    """Compile ``fun`` with XLA, tracing it once per abstract signature.

    Works as ``jit(f)``, ``jit(f, static_argnums=1)`` or as a decorator
    ``@jit`` / ``@partial(jit, static_argnames="n")``.

    Called inside another traced function, it is a ``jit`` equation of its own
    program, lowered to a ``func.call`` of a private function named after it (as
    JAX does); ``inline=True`` traces its body into the caller's program instead.

    Example::

        @toolkit.jit
        def f(x):
            return toolkit.numpy.tanh(x) * 2
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, keep_unused=keep_unused,
                                 in_shardings=in_shardings, out_shardings=out_shardings, inline=inline)
    return Wrapped(fun, static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, keep_unused=keep_unused, in_shardings=in_shardings,
                   out_shardings=out_shardings, inline=inline)


class Traced:
    """A traced function: its typed program and the trees of its inputs and outputs."""

    _trace_key: tuple | None = None  # its key in the trace cache (Wrapped._trace_key); None: not cached

    def __init__(self, wrapped: Wrapped, program: Program, in_tree: pytrees.PyTreeDef,
                 out_tree: pytrees.PyTreeDef, in_avals: Sequence[ShapedArray], donated: Sequence[bool],
                 arg_paths: Sequence[str], arg_shardings: Sequence[Any] | None = None):
        self._wrapped = wrapped
        self.program = program
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)
        self.donated = tuple(donated)
        self.arg_paths = tuple(arg_paths)
        self._arg_shardings = tuple(arg_shardings) if arg_shardings is not None else (None,) * len(in_avals)

    @property
    def fun_name(self) -> str:
        return self._wrapped.name

    @property
    def args_info(self) -> Any:
        """``(args, kwargs)`` pytree of ``ArgInfo`` (abstract value, donated)."""
        return pytrees.tree_unflatten(self.in_tree, [ArgInfo(a, d) for a, d in zip(self.in_avals, self.donated)])

    @property
    def out_info(self) -> Any:
        """The outputs as a pytree of ``ShapeDtypeStruct``."""
        return pytrees.tree_unflatten(
            self.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in self.program.out_avals])

    def as_text(self, source_info: bool = False) -> str:
        """The program, printed (``source_info=True`` adds file:line per equation)."""
        return self.program.pretty(source_info=source_info)

    def lower(self, *, platforms: Sequence[str] | None = None, dim_vars_as_arguments: bool = False,
              partitioner: str | None = None) -> "Lowered":
        """Lower the program to a StableHLO module.

        ``platforms`` (several: a platform-index argument) and ``dim_vars_as_arguments``
        (dimension variables passed in rather than computed) are what ``toolkit.export`` uses.
        ``partitioner`` (``"shardy"`` or ``"gspmd"``; default ``$TOOLKIT_PARTITIONER``, else
        ``"shardy"``, as JAX 0.10) picks the sharding form written and the XLA partitioner ``compile`` uses,
        e.g. ``jit(f, in_shardings=s).trace(x).lower(partitioner="shardy")``.
        """
        from toolkit.sharding_plan import partitioner_choice, plan_shardings
        plan = plan_shardings(self)
        plan.partitioner = partitioner_choice(partitioner)
        # Lowerings are cached with the trace they lower (toolkit.core.trace_cache): the bytecode is
        # kept, and each Lowered of a hit parses its own module when it is first asked for one.
        key = self._lowering_key(plan, platforms, dim_vars_as_arguments)
        cached = trace_cache.TRACES.get(self._wrapped.fun, key) if key is not None else None
        if cached is not None and cached[0] is self.program and _rules_unchanged(cached[3]):
            lowered = Lowered(self, None, cached[2], plan, platforms or (), source=cached[1])
            lowered._cache_key = key
            if ir_dump.dump_dir() or ir_dump.report_dir():
                lowered._timeline = ir_dump.start_timeline(f"jit_{self.fun_name}", traced=self.program.pretty,
                                                           module=lowered._module)
            return lowered
        kept = _kept_inputs(self.program, self._wrapped.keep_unused)
        module = self._lower_module(plan, kept, platforms, dim_vars_as_arguments)
        source = None
        if key is not None:
            buffer = io.BytesIO()
            module.operation.write_bytecode(buffer)
            source = buffer.getvalue()
            trace_cache.TRACES.put(self._wrapped.fun, key,
                                   (self.program, source, tuple(kept), _rules_snapshot(self.program)))
        lowered = Lowered(self, module, kept, plan, platforms or (), source=source)
        lowered._cache_key = key
        # TOOLKIT_DUMP_IR_TO / TOOLKIT_REPORT: the timeline compile() continues (None when both are unset).
        lowered._timeline = ir_dump.start_timeline(f"jit_{self.fun_name}", traced=self.program.pretty, module=module)
        return lowered

    def _lowering_key(self, plan: Any, platforms: Sequence[str] | None, dim_vars_as_arguments: bool) -> tuple | None:
        """The trace cache key of this lowering (None: not cached; see ``Wrapped._trace_key``).

        The trace's key (which fixes the program, the trees, argument types,
        placements and the current mesh) plus what the lowering adds: the
        function's name, ``keep_unused``, the donated inputs, jit's
        ``in_shardings``/``out_shardings``, the platforms, dimension variables as
        arguments or not, the partitioner and the devices. A hit also checks
        that it lowers this very program and that no lowering rule of its
        primitives was registered again since.
        """
        if self._trace_key is None:
            return None
        wrapped = self._wrapped
        try:
            shardings = (_frozen(wrapped.in_shardings), _frozen(wrapped.out_shardings))
        except TypeError:
            return None
        return ("lower", self._trace_key, wrapped.name, wrapped.keep_unused, self.donated, shardings,
                tuple(platforms) if platforms else None, bool(dim_vars_as_arguments), plan.partitioner,
                tuple(plan.devices))

    def _lower_module(self, plan: Any, kept: Sequence[int], platforms: Sequence[str] | None,
                      dim_vars_as_arguments: bool) -> ir.Module:
        from toolkit.passes.sharding_annotate import annotate_shardings, name_shardy_meshes
        program = _restrict_inputs(self.program, kept) if len(kept) != len(self.program.invars) else self.program
        with shared_context() as context:
            arg_attrs = [{} for _ in kept]
            taken: set[int] = set()
            for position, i in enumerate(kept):
                if self.donated[i]:
                    alias = _find_alias(self.in_avals[i], program.out_avals, taken)
                    if alias is not None:
                        arg_attrs[position]["tf.aliasing_output"] = ir.IntegerAttr.get(
                            ir.IntegerType.get_signless(32), alias)
            partitioned = plan.num_partitions > 1
            mesh_symbols = None
            if partitioned and plan.partitioner == "shardy":
                # @main's meshes are named first (@mesh, @mesh_0, ...), as JAX names them; the lowering
                # names the meshes only its ops use after them.
                mesh_symbols = name_shardy_meshes(
                    [(s, self.in_avals[i].ndim) for s, i in zip(plan.annotated_arg_shardings(kept), kept)]
                    + [(s, a.ndim) for s, a in zip(plan.annotated_out_shardings(), self.program.out_avals)]
                    + list(plan.constraint_shardings))
            module = lowering.lower_program(
                program, name=self.fun_name, result_names=_output_paths(self.out_tree), arg_attrs=arg_attrs,
                num_partitions=plan.num_partitions, platforms=tuple(platforms or (plan.platform,)), context=context,
                arg_names=[self.arg_paths[i] for i in kept], dim_vars_as_arguments=dim_vars_as_arguments,
                partitioner=plan.partitioner if partitioned else "gspmd", shardy_meshes=mesh_symbols)
            if partitioned:
                arg_shardings = plan.annotated_arg_shardings(kept)
                # The platform index and dimension-variable arguments come first and are not sharded.
                leading = (1 if platforms is not None and len(platforms) > 1 else 0) + (
                    len(dims.dim_var_names(self.in_avals)) if dim_vars_as_arguments else 0)
                arg_shardings = [None] * leading + list(arg_shardings)
                annotate_shardings(module, arg_shardings, plan.annotated_out_shardings(), mode=plan.partitioner,
                                   body_shardings=plan.constraint_shardings, mesh_symbols=mesh_symbols)
        return module


def _frozen(tree: Any) -> Any:
    """A hashable stand-in for a pytree of shardings (equal for equal trees); ``TypeError`` if there is none."""
    try:
        hash(tree)
        return (type(tree), tree)
    except TypeError:
        pass
    if isinstance(tree, (list, tuple)):
        return (type(tree), tuple(_frozen(t) for t in tree))
    if isinstance(tree, dict):
        return (dict, tuple(sorted((k, _frozen(v)) for k, v in tree.items())))
    raise TypeError(f"cannot key {type(tree).__name__}")


def _rules_snapshot(program: Program) -> tuple:
    """The lowering rules of every primitive ``program`` uses (sub-programs included), as registered now."""
    from toolkit.lowering.registry import LOWERINGS
    primitives = {eqn.primitive for eqn in program.walk()}
    return tuple((p, dict(LOWERINGS.get(p) or {})) for p in primitives)


def _rules_unchanged(snapshot: tuple) -> bool:
    from toolkit.lowering.registry import LOWERINGS
    return all([LOWERINGS.get(p) == rules for p, rules in snapshot])


def _kept_inputs(program: Program, keep_unused: bool) -> list[int]:
    if keep_unused:
        return list(range(len(program.invars)))
    used = {a.id for eqn in program.walk() for a in eqn.inputs if hasattr(a, "id")}
    used |= {a.id for a in program.outvars if hasattr(a, "id")}
    # Inputs with symbolic dimensions stay: the dimension variables are computed from their shapes.
    return [i for i, v in enumerate(program.invars) if v.id in used or not is_static_shape(v.aval.shape)]


def _restrict_inputs(program: Program, kept: Sequence[int]) -> Program:
    return Program(program.constvars, program.consts, [program.invars[i] for i in kept], program.outvars,
                   program.eqns)


def _find_alias(aval: ShapedArray, out_avals: Sequence[ShapedArray], taken: set[int]) -> int | None:
    """The first output not yet aliased that a donated input of ``aval``'s type can hold."""
    for j, out in enumerate(out_avals):
        if j not in taken and out.shape == aval.shape and out.dtype == aval.dtype:
            taken.add(j)
            return j
    return None


def _output_paths(out_tree: pytrees.PyTreeDef) -> list[str]:
    dummy = pytrees.tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
    return ["result" + pytrees.keystr(path) for path, _ in pytrees.tree_flatten_with_path(dummy)[0]]


class Lowered:
    """A lowered function: a StableHLO module and the pass pipeline ``compile`` runs on it."""

    _timeline = None  # toolkit.passes.dump.Timeline of this compilation when dumping or reporting
    _module_obj: ir.Module | None = None
    _source: bytes | None = None  # the module's bytecode, while no one has been handed the module (see _module)
    _cache_key: tuple | None = None  # its key in the trace cache (Traced._lowering_key); None: not cached

    def __init__(self, traced: Traced, module: ir.Module | None, kept_var_idx: Sequence[int], plan: Any,
                 platforms: Sequence[str] = (), *, source: bytes | None = None):
        # ``module`` may be None when ``source`` (its bytecode) is given: a cached lowering's module is
        # parsed when first asked for. ``source`` with a module must be that module's bytecode.
        self._traced = traced
        self._module_obj = module
        self._source = source
        self.kept_var_idx = tuple(kept_var_idx)
        self._plan = plan
        self.platforms = tuple(platforms) or (plan.platform,)
        #: The passes ``compile`` runs (user-extendable; see ``toolkit.passes.jit_pipeline``).
        self.pipeline: Pipeline = jit_pipeline()

    def _platform_pipeline(self) -> Pipeline:
        """For a multi-platform lowering: fold the platform index for the platform compiled for."""
        if len(self.platforms) == 1:
            return Pipeline()
        from toolkit.passes.pipeline import parse_pipeline
        if self._plan.platform not in self.platforms:
            raise ValueError(f"cannot compile for {self._plan.platform!r}: the module was lowered for "
                             f"{self.platforms}")
        return parse_pipeline(f"builtin.module(toolkit-platform-specialize{{platform={self._plan.platform} "
                              f"platforms={','.join(self.platforms)} quiet=true}})")

    in_tree = property(lambda self: self._traced.in_tree)
    out_tree = property(lambda self: self._traced.out_tree)
    args_info = property(lambda self: self._traced.args_info)
    out_info = property(lambda self: self._traced.out_info)

    def compiler_ir(self, dialect: str = "stablehlo") -> Any:
        """The module as an ``ir.Module`` (``"stablehlo"``) or HLO text (``"hlo"``)."""
        if dialect == "stablehlo":
            return self._module
        if dialect == "hlo":
            return runtime_executable.mlir_to_hlo_text(self._bytecode())
        raise ValueError(f"unknown dialect {dialect!r}; expected 'stablehlo' or 'hlo'")

    def as_text(self, dialect: str = "stablehlo", debug_info: bool = False) -> str:
        """The module as text; ``debug_info=True`` prints each op's source location."""
        if dialect == "stablehlo":
            return self._module.operation.get_asm(enable_debug_info=debug_info)
        if dialect == "hlo":
            return self.compiler_ir("hlo")
        raise ValueError(f"unknown dialect {dialect!r}; expected 'stablehlo' or 'hlo'")

    @property
    def _module(self) -> ir.Module:
        """The module, this ``Lowered``'s own: parsed from the cached bytecode on first use.

        Once handed out it may be changed in place (``compiler_ir()`` gives it to
        the user), so from then on the bytecode is written from it again.
        """
        module = self._module_obj
        if module is None and self._source is not None:
            with shared_context() as context:
                module = ir.Module.parse(self._source, context)
            self._module_obj = module
        self._source = None
        return module

    @_module.setter
    def _module(self, module: ir.Module | None) -> None:
        self._module_obj, self._source = module, None

    def _bytecode(self) -> bytes:
        source = self._source
        if source is not None:
            return source
        buffer = io.BytesIO()
        self._module.operation.write_bytecode(buffer)
        return buffer.getvalue()

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimate of the unoptimized module (``flops``, ``bytes accessed``, ...)."""
        return runtime_executable.hlo_cost_analysis(self._bytecode())

    def compile(self, compiler_options: Mapping[str, Any] | None = None) -> "Compiled":
        """Run the pass pipeline on a copy of the module, then compile it with XLA.

        ``compiler_options`` are XLA debug options, e.g. ``{"xla_cpu_enable_fast_math": False}``.
        """
        if compiler_options is not None and not isinstance(compiler_options, Mapping):
            raise TypeError(f"compiler_options must be a dict of XLA option names to values, got "
                            f"{type(compiler_options).__name__}")
        if not all(is_static_shape(a.shape) for a in self._traced.in_avals):
            return PolymorphicCompiled(self, compiler_options)
        pipeline = self._platform_pipeline() + self.pipeline
        timeline = ir_dump.timeline_for(self)  # None unless TOOLKIT_DUMP_IR_TO / TOOLKIT_REPORT is set
        # Executables are cached with the lowering they compile (as JAX's _cached_compilation): a fresh
        # jit(f)(x) of a function compiled before runs its executable without compiling again.
        # The cache holds a Compiled with no lowering (a template): a hit copies it for this lowering, so what
        # Compiled derives from the executable (result handlers, shardings, the fast caller) is made once.
        key = self._compile_key(pipeline, compiler_options) if timeline is None else None
        template = trace_cache.TRACES.get(self._traced._wrapped.fun, key) if key is not None else None
        if template is not None:
            return template._copy_for(self)
        module = self._module
        if pipeline.elements:
            with module.context:
                module = ir.Module.parse(self._bytecode())
        executable = _passes_then_xla(self, module, pipeline, compiler_options, timeline)
        compiled = Compiled(self, executable)
        compiled._compiler_options = compiler_options  # part of the key of a serialized executable
        if key is not None:
            # The copies a cache hit makes share the template's fast caller; this compilation makes its own
            # on its first fast call, as every Compiled does (Compiled._call_fast).
            template = compiled._copy_for(None)
            template._call_fast = _fast_caller(template)
            trace_cache.TRACES.put(self._traced._wrapped.fun, key, template)
        return compiled

    def _compile_key(self, pipeline: Pipeline, compiler_options: Mapping[str, Any] | None) -> tuple | None:
        """The trace cache key of this compilation; None (not cached) unless the module is the cached lowering's.

        The lowering's key plus the pass pipeline's text and the pass registry's
        generation (a pass redefined under its name changes it), the XLA options
        and the platform. Not cached once the module was handed out (``compiler_ir()`` may have
        changed it in place), nor while dumping or reporting (each compilation
        writes its own timeline).
        """
        if self._cache_key is None or self._source is None:
            return None
        try:
            options = tuple(sorted(compiler_options.items())) if compiler_options else ()
            hash(options)
        except TypeError:
            return None
        return ("compile", self._cache_key, str(pipeline), registry_generation(), options, self._plan.platform)


def _passes_then_xla(lowered: "Lowered", module: ir.Module, pipeline: Pipeline,
                     compiler_options: Mapping[str, Any] | None, timeline: Any) -> Any:
    """Run ``pipeline`` on ``module`` (a private copy), then compile it with XLA for ``lowered``'s plan.

    With dumping or reports on (``timeline``), the timeline is finished either
    way: on a failing pass or XLA error the report and the dump (XLA's
    scratch folder collected and removed) show how far it got, and the error
    propagates unchanged.
    """
    try:
        if pipeline.elements:
            pipeline.run(module, observe=timeline and timeline.observe)
        plan = lowered._plan
        executable = runtime_executable.compile_module(
            module.operation.get_asm(binary=True), plan.devices, num_partitions=plan.num_partitions,
            spmd=plan.num_partitions > 1, use_shardy=plan.partitioner == "shardy", compiler_options=compiler_options,
            propagate_output_shardings=plan.output_propagation(), dump_to=timeline and timeline.xla_dump_folder())
    except Exception as error:
        if timeline is not None:
            timeline.finish(module, failure=f"compilation failed: {type(error).__name__}: {error}")
        raise
    if timeline is not None:
        timeline.finish(module, lambda: runtime_executable.optimized_hlo_text(executable))
    return executable


class Compiled:
    """A compiled executable; call it with arguments of the signature it was lowered for."""

    _compiler_options: Mapping[str, Any] | None = None  # the XLA options it was compiled with

    def serialize(self) -> bytes:
        """The executable and its calling signature as bytes; ``toolkit.deserialize_compiled`` loads them.

        The container (a JSON header and PJRT's executable bytes, no pickle) is
        described in ``docs/compiled.md`` and ``toolkit/compiled_format.py``; it is
        keyed by the jaxlib version, platform, device kind and count and compile
        options, and loading refuses any mismatch.
        """
        return compiled_format.serialize(self)

    def __init__(self, lowered: Lowered, executable: Any, *, in_avals: Sequence[ShapedArray] | None = None,
                 out_avals: Sequence[ShapedArray] | None = None):
        self._lowered = lowered
        self._executable = executable
        traced = lowered._traced
        plan = lowered._plan
        # A specialization of a shape-polymorphic lowering has concrete avals of its own.
        self._in_avals = tuple(in_avals) if in_avals is not None else traced.in_avals
        self._kept = lowered.kept_var_idx
        self._paths = traced.arg_paths
        self._out_tree = traced.out_tree
        self._out_avals = list(out_avals) if out_avals is not None else traced.program.out_avals
        self._plan = plan
        self._arg_runtime_shardings = [plan.arg_runtime_sharding(i, self._in_avals[i]) for i in self._kept]
        self._arg_devices = [list(s._device_assignment) for s in self._arg_runtime_shardings]
        chosen = None
        if plan.num_partitions > 1:
            from toolkit.sharding_plan import shardings_from_hlo
            chosen = shardings_from_hlo(runtime_executable.output_shardings(executable), plan.devices,
                                        self._out_avals, plan.recovery_mesh())
        self._out_shardings = plan.out_shardings(self._out_avals, chosen)
        self._handlers = [runtime_arrays.result_handler(a, s._runtime_sharding(a.ndim))
                          for a, s in zip(self._out_avals, self._out_shardings)]
        self._donated = [traced.donated[i] for i in self._kept]
        # The fast call path applies when every input is kept and nothing is donated.
        self._fast_ok = len(self._kept) == len(self._in_avals) and not any(self._donated)
        self._single_output = self._out_tree == pytrees.tree_structure(0)

    def _copy_for(self, lowered: Lowered | None) -> "Compiled":
        """This executable as the compilation of ``lowered``, an equal lowering (the compile cache's key says so).

        Everything ``__init__`` derived (argument and output shardings, result
        handlers, the fast caller once made) depends only on what that key
        fixes, so the copy shares it; only the lowering it answers for differs.
        """
        compiled = object.__new__(Compiled)
        compiled.__dict__.update(self.__dict__)
        compiled._lowered = lowered
        return compiled

    in_tree = property(lambda self: self._lowered.in_tree)
    out_tree = property(lambda self: self._lowered.out_tree)
    args_info = property(lambda self: self._lowered.args_info)
    out_info = property(lambda self: self._lowered.out_info)

    def as_text(self) -> str:
        """The optimized HLO XLA compiled."""
        return runtime_executable.optimized_hlo_text(self._executable)

    def cost_analysis(self) -> dict[str, float]:
        return runtime_executable.cost_analysis(self._executable)

    def memory_analysis(self) -> Any:
        """XLA's memory statistics (argument, output, temp and generated-code sizes in bytes)."""
        return runtime_executable.memory_analysis(self._executable)

    def runtime_executable(self) -> Any:
        """The underlying PJRT loaded executable."""
        return self._executable

    @property
    def input_shardings(self) -> Any:
        """``(args, kwargs)`` pytree of the shardings XLA chose for the inputs."""
        from toolkit.sharding_plan import shardings_from_hlo
        chosen = runtime_executable.parameter_shardings(self._executable)
        per_kept = shardings_from_hlo(chosen, self._plan.devices, [self._in_avals[i] for i in self._kept],
                                      self._plan.recovery_mesh())
        flat = [None] * len(self._in_avals)
        for i, s in zip(self._kept, per_kept):
            flat[i] = s
        for i in range(len(flat)):
            if flat[i] is None:
                flat[i] = self._plan.arg_sharding(i, self._in_avals[i])
        return pytrees.tree_unflatten(self.in_tree, flat)

    @property
    def output_shardings(self) -> Any:
        """Pytree (like the outputs) of the shardings XLA gave the outputs."""
        from toolkit.sharding_plan import shardings_from_hlo
        chosen = runtime_executable.output_shardings(self._executable)
        return pytrees.tree_unflatten(self.out_tree, shardings_from_hlo(chosen, self._plan.devices, self._out_avals,
                                                                          self._plan.recovery_mesh()))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        wrapped = self._lowered._traced._wrapped
        sig = wrapped._signature(args, kwargs)
        if sig.tree != self.in_tree:
            raise TypeError(f"the compiled function {wrapped.name} was called with arguments of tree structure "
                            f"{sig.tree}, but it was compiled for {self.in_tree}")
        for i, (given, expected) in enumerate(zip(sig.avals, self._in_avals)):
            if given.shape != expected.shape or given.dtype != expected.dtype:
                raise TypeError(f"argument {self._paths[i]} of the compiled function {wrapped.name} has type "
                                f"{given.str_short()}, but it was compiled for {expected.str_short()}")
        return self._call_flat(sig.leaves)

    def _call_fast(self, leaves: Sequence[Array]) -> Any:
        """Call with the flat argument Arrays, already laid out as compiled; ``_MISS`` when they are not.

        The first call replaces this method, on the instance, by a closure over
        what every call reads (see :func:`_fast_caller`).
        """
        self._call_fast = call = _fast_caller(self)
        return call(leaves)

    def _call_flat(self, leaves: Sequence[Any]) -> Any:
        impls = []
        for position, i in enumerate(self._kept):
            leaf = leaves[i]
            rsharding = self._arg_runtime_shardings[position]
            if type(leaf) is Array and leaf._impl._sharding is rsharding:
                impls.append(leaf._impl)
            else:
                impls.append(self._place(leaf, position, i))
        outs = runtime_executable.execute(self._executable, impls, self._handlers)
        committed = self._plan.committed
        flat = [Array(impl, aval, sharding, committed)
                for impl, aval, sharding in zip(outs, self._out_avals, self._out_shardings)]
        return pytrees.tree_unflatten(self._out_tree, flat)

    def _place(self, leaf: Any, position: int, i: int) -> Any:
        aval = self._in_avals[i]
        sharding = self._plan.arg_sharding(i, aval)
        if type(leaf) is Array:
            self._plan.check_committed(leaf, i, self._paths[i])
            if leaf._impl.is_deleted():
                raise ValueError(f"argument {self._paths[i]} was donated to an earlier call and has been deleted")
            if leaf.sharding == sharding:
                return leaf._impl
            if not leaf.is_fully_addressable:  # spans other processes: nobody holds the value to re-slice
                if leaf.sharding.is_equivalent_to(sharding, aval.ndim):
                    return leaf._impl
                raise ValueError(f"argument {self._paths[i]} spans devices of other processes with sharding "
                                 f"{leaf.sharding}, but the computation needs {sharding}; it cannot be resharded "
                                 "while passed in: give jit that in_sharding, or reshard with toolkit.device_put")
            value = np.asarray(leaf)
        else:
            if not sharding.is_fully_addressable and not sharding.is_fully_replicated:
                raise ValueError(
                    f"argument {self._paths[i]}: passing non-trivial shardings for numpy inputs is not allowed in a "
                    "multi-process computation. Specify a replicated sharding, or make a global array with "
                    "toolkit.make_array_from_process_local_data(...) (each process's own rows) or "
                    f"toolkit.make_array_from_callback(...) (the same value everywhere). Got {aval.str_short()}")
            value = np.asarray(leaf, dtype=aval.dtype)
        from toolkit.shard import placement
        return placement.device_put_sharded(value, sharding, weak_type=aval.weak_type)


class PolymorphicCompiled:
    """``Lowered.compile()`` of a shape-polymorphic lowering: one XLA executable per concrete shape.

    Calling it binds the argument shapes into ``@main`` (``toolkit-bind-shapes``),
    refines the module to static shapes (``toolkit-refine-shapes``, which checks
    the shape assertions), runs the lowering's pass pipeline and compiles; the
    result is cached per shape. ``specialize(*args)`` returns that static
    ``Compiled`` for inspection (``as_text``, ``cost_analysis``, ...).
    """

    def __init__(self, lowered: Lowered, compiler_options: Mapping[str, Any] | None):
        self._lowered = lowered
        self._compiler_options = compiler_options
        self._specializations: dict[tuple, Compiled] = {}
        # (tree of the positional args, avals) -> Compiled whose _call_fast takes them: a call at a shape
        # seen before costs what a static call does (no signature, no checks, no specialization lookup).
        self._fast_cache: dict[tuple, Compiled] = {}
        self._last_single: tuple | None = None  # f(x): (aval, Compiled) of the last hit

    in_tree = property(lambda self: self._lowered.in_tree)
    out_tree = property(lambda self: self._lowered.out_tree)
    args_info = property(lambda self: self._lowered.args_info)
    out_info = property(lambda self: self._lowered.out_info)

    def _concrete_avals(self, sig: _Signature) -> tuple[ShapedArray, ...]:
        traced = self._lowered._traced
        if sig.tree != traced.in_tree:
            raise TypeError(f"the compiled function {traced.fun_name} was called with arguments of tree structure "
                            f"{sig.tree}, but it was compiled for {traced.in_tree}")
        for path, given, expected in zip(traced.arg_paths, sig.avals, traced.in_avals):
            mismatch = given.dtype != expected.dtype or len(given.shape) != len(expected.shape) or any(
                type(e) is int and g != e for g, e in zip(given.shape, expected.shape))
            if mismatch or not is_static_shape(given.shape):
                raise TypeError(f"argument {path} of the compiled function {traced.fun_name} has type "
                                f"{given.str_short()}, but it was compiled for {expected.str_short()}")
        return sig.avals

    def serialize(self) -> bytes:
        raise self._polymorphic("serialize()")

    def specialize(self, *args: Any, **kwargs: Any) -> Compiled:
        """The static executable for these (concrete) argument shapes."""
        sig = self._lowered._traced._wrapped._signature(args, kwargs)
        return self._specialization(self._concrete_avals(sig))

    def _specialization(self, avals: tuple[ShapedArray, ...]) -> Compiled:
        key = tuple((a.shape, a.dtype) for a in avals)
        compiled = self._specializations.get(key)
        if compiled is None:
            compiled = self._specializations[key] = self._compile_for(avals)
        return compiled

    def _compile_for(self, avals: tuple[ShapedArray, ...]) -> Compiled:
        from toolkit.lowering.types import tensor_type
        from toolkit.passes.pipeline import PipelineError, parse_pipeline
        lowered = self._lowered
        with lowered._module.context, ir.Location.unknown():
            module = ir.Module.parse(lowered._bytecode())
            types = ",".join(str(tensor_type(avals[i])) for i in lowered.kept_var_idx)
        bind = parse_pipeline(f"builtin.module(toolkit-bind-shapes{{types={types}}}, toolkit-refine-shapes)")
        timeline = ir_dump.timeline_for(lowered)  # None unless TOOLKIT_DUMP_IR_TO / TOOLKIT_REPORT is set
        try:
            (lowered._platform_pipeline() + bind).run(module, observe=timeline and timeline.observe)
        except PipelineError as error:
            if timeline is not None:
                timeline.finish(module, failure=f"shape specialization failed: {error}")
            raise ValueError(f"{lowered._traced.fun_name}: {error}") from None
        executable = _passes_then_xla(lowered, module, lowered.pipeline, self._compiler_options, timeline)
        main = next(op for op in module.body.operations if getattr(op, "name", None) is not None
                    and op.name.value == "main")
        result_types = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results
        out_avals = [ShapedArray(tuple(ir.RankedTensorType(t).shape), a.dtype, a.weak_type)
                     for t, a in zip(result_types, lowered._traced.program.out_avals)]
        compiled = Compiled(lowered, executable, in_avals=avals, out_avals=out_avals)
        compiled._compiler_options = self._compiler_options
        return compiled

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            if len(args) == 1 and type(args[0]) is Array:  # f(x), as Wrapped's fast path
                aval = args[0].aval
                last = self._last_single
                if last is not None and last[0] is aval:
                    out = last[1]._call_fast(args)
                    if out is not _MISS:
                        return out
                leaves, tree, avals = args, _ONE_LEAF_TREE, (aval,)
            else:
                leaves, tree = pytrees.tree_flatten(args)
                avals = tuple([a.aval for a in leaves if type(a) is Array])
            if len(avals) == len(leaves):
                compiled = self._fast_cache.get((tree, avals))
                if compiled is not None:
                    if len(avals) == 1 and tree is _ONE_LEAF_TREE:
                        self._last_single = (avals[0], compiled)
                    out = compiled._call_fast(leaves)
                    if out is not _MISS:
                        return out
        wrapped = self._lowered._traced._wrapped
        sig = wrapped._signature(args, kwargs)
        compiled = self._specialization(self._concrete_avals(sig))
        if compiled._fast_ok and not kwargs and not wrapped._has_static \
                and all(type(leaf) is Array for leaf in sig.leaves):
            self._fast_cache[(pytrees.tree_structure(args), sig.avals)] = compiled
        return compiled._call_flat(sig.leaves)

    def _polymorphic(self, what: str) -> Exception:
        return TypeError(f"{what} needs concrete shapes: this executable is shape-polymorphic; "
                         "use .specialize(*args) for the executable of given argument shapes")

    def as_text(self) -> str:
        raise self._polymorphic("as_text()")

    def cost_analysis(self) -> dict[str, float]:
        raise self._polymorphic("cost_analysis()")

    def memory_analysis(self) -> Any:
        raise self._polymorphic("memory_analysis()")

    def runtime_executable(self) -> Any:
        raise self._polymorphic("runtime_executable()")


# --- eager execution of single primitives --------------------------------------


def _params_key(params: dict[str, Any]) -> Any:
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


_eager_cache: dict[Any, tuple[Compiled, Any]] = {}  # values as in Wrapped._fast_cache
_eager_generation = -1  # the jit pipeline generation _eager_cache was compiled with


def _eager_handler(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    global _eager_generation
    avals = tuple(a.aval if type(a) is Array else aval_of(a) for a in args)
    placements = tuple(_leaf_placement(a) for a in args)  # eager ops run where committed inputs live
    params_key = _params_key(params)
    # Eager ops compile through the jit pipeline too: a new pipeline empties the cache.
    generation = jit_pipeline_generation()
    if generation != _eager_generation:
        _eager_cache.clear()
        _eager_generation = generation
    # The out_sharding= overrides in force type the result (toolkit.core.sharding_rules): part of the key.
    overrides = tuple(sharding_rules._overrides)
    key = (primitive, params_key, avals, placements, overrides) if params_key is not None else None
    entry = _eager_cache.get(key) if key is not None else None
    compiled = None
    if entry is not None and (entry[1] is _ANY_PARTITIONER or entry[1] == _environ_get(_PARTITIONER_VARIABLE)):
        compiled = entry[0]
    partitioner = _environ_get(_PARTITIONER_VARIABLE) if compiled is None else None
    if compiled is None:
        def run(*xs: Any) -> Any:
            out = primitive.bind(*xs, **params)
            return list(out) if primitive.multiple_results else out
        run.__name__ = primitive.name
        specs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=p) for a, p in zip(avals, placements)]
        wrapped = Wrapped(run, keep_unused=True)
        wrapped._function_cache = False  # `run` is new for every signature: kept here, never found again there
        compiled = wrapped.trace(*specs).lower().compile()
        if key is not None:
            _eager_cache[key] = _fast_entry(compiled, partitioner)
    out = compiled._call_flat(list(args))
    return list(out) if primitive.multiple_results else [out]


tracing.set_eager_handler(_eager_handler)


def _eager_call(fun: Callable[..., Any], *args: Any) -> Any:
    """Run a whole traceable function eagerly (``lax`` control flow and windowed reductions outside a trace)."""
    return jit(fun)(*args)


tracing.set_eager_call_handler(_eager_call)


def deserialize_compiled(data: bytes, *, compiler_options: Mapping[str, Any] | None = None) -> Compiled:
    """Load bytes of ``Compiled.serialize()``: a ``Compiled`` with the same trees, shardings and results.

    Refuses (``ValueError`` naming what differs) bytes written for another jaxlib,
    platform, device kind or count, or, when ``compiler_options`` is given, other
    XLA options; and corrupt bytes (the header's SHA-256 of the executable is
    checked before jaxlib parses it). Executables are code: load only files you trust.
    """
    return compiled_format.deserialize(data, _compiled_from_record, compiler_options=compiler_options)


def _compiled_from_record(record: compiled_format.CompiledRecord) -> Compiled:
    """A callable ``Compiled`` around a loaded executable: stage objects for its signature, no function."""
    def loaded(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a deserialized executable has no Python function to trace")
    loaded.__name__ = record.name
    traced = Traced(Wrapped(loaded), record.program, record.in_tree, record.out_tree, record.in_avals,
                    record.donated, record.arg_paths, [None] * len(record.in_avals))
    lowered = Lowered.__new__(Lowered)
    lowered._traced, lowered._module, lowered.kept_var_idx, lowered._plan = traced, None, record.kept, record.plan
    lowered.platforms = (record.plan.platform,)
    lowered.pipeline = None
    compiled = Compiled(lowered, record.executable, in_avals=record.in_avals, out_avals=record.out_avals)
    compiled._compiler_options = record.compiler_options
    return compiled
