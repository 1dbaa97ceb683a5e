"""What jit keeps beyond one jit object: the keys and entries of its caches by function.

``jax.jit`` caches by the Python function, not by the jit object; so does
toolkit. Traces, lowerings and executables go to
``toolkit.core.trace_cache.TRACES`` (the function held weakly):

* ``(f, trace_key(...))`` -> :class:`TraceEntry`;
* ``(f, lowering_key(...))`` -> :class:`LoweringEntry`;
* ``(f, compile_key(...))`` -> a ``Compiled`` template (``Lowered.compile``
  copies it for each lowering that hits);
* ``(f, fast_path_key(...))`` -> the ``FastPath`` the jit objects of ``f``
  with the same options share (:func:`shared_fast_path`).

A jit called while tracing another function is a call of its own program,
kept per function, signature and trace context as a :class:`NestedProgram`
(:func:`nested_program`).

Each key function's docstring says what its key holds; ``docs/architecture.md``
says why.
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from toolkit.core import pytrees, sharding_types, trace_cache, tracing
from toolkit import monitoring
from toolkit.core.config import cache_state, flag_value
from toolkit.core.avals import is_static_shape
from toolkit.core.program import Program
from toolkit.core.program_checks import check_program
from toolkit.lax import parallel
from toolkit.lowering.registry import LOWERINGS
from toolkit.passes import dump as ir_dump
from toolkit.passes.registry import registry_generation
from toolkit.shard.mesh import mesh_context

if TYPE_CHECKING:  # only named in annotations: dispatch reaches toolkit.array, which this module need not
    from toolkit.dispatch import ArgumentSignature

_TRACE_STATE = tracing._state


# --- traces, lowerings and executables, by function (core.trace_cache.TRACES) ------------------


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """A cached trace: the program, its output tree and the argument paths it was traced with."""

    program: Program
    out_tree: pytrees.PyTreeDef
    paths: list[str]


@dataclass(frozen=True, slots=True)
class LoweringEntry:
    """A cached lowering: of which program, the module's bytecode, the inputs kept, the lowering rules used."""

    program: Program
    bytecode: bytes
    kept: tuple[int, ...]
    rules: tuple  # rules_snapshot(program) when lowered


def trace_key(wrapped: Any, sig: ArgumentSignature) -> tuple | None:
    """Everything the trace of ``wrapped.fun`` at ``sig`` depends on besides the function; None: not cached.

    The static argument positions and names, the tree, abstract values (with
    weak types and type shardings) and placements of the dynamic arguments, the
    static arguments' values and types (``1`` and ``1.0`` are equal and hash
    alike), the current mesh (``set_mesh``), the ``out_sharding=``
    overrides in force and the configuration flags traces depend on
    (``cache_state()``: a function traced with x64 off is traced again with it on). Not cached: traces inside another trace (they may
    capture its values) and symbolic shapes (dimension variables belong to
    their scope, which equality does not compare).
    """
    if not wrapped._function_cache or _TRACE_STATE.builders \
            or not all([is_static_shape(a.shape) for a in sig.avals]):
        return None
    static_types = None
    if sig.static_key is not None:
        static_types = (tuple([(i, type(v)) for i, v in sorted(sig.static_args.items())]),
                        tuple([(k, type(v)) for k, v in sorted(sig.static_kwargs.items())]))
    return (wrapped.static_argnums, wrapped.static_argnames, sig.tree, sig.avals, sig.shardings, sig.static_key,
            static_types, mesh_context(), tuple(sharding_types._overrides), cache_state())


def lowering_key(traced: Any, plan: Any, platforms: Sequence[str] | None,
                 dim_vars_as_arguments: bool) -> tuple | None:
    """The cache key of ``traced``'s lowering (None: not cached).

    The trace's key (which fixes the program, the trees, argument types,
    placements and the current mesh) plus what the lowering adds: the
    function's name, ``keep_unused``, the donated inputs, jit's
    ``in_shardings``/``out_shardings``, the platforms, dimension variables as
    arguments or not, the partitioner and the devices. A hit also checks
    that it lowers this very program and that no lowering rule of its
    primitives was registered again since (:func:`rules_unchanged`).
    """
    if traced._trace_key is None:
        return None
    wrapped = traced._wrapped
    try:
        shardings = (hashable_shardings(wrapped.in_shardings), hashable_shardings(wrapped.out_shardings))
    except TypeError:
        return None
    return ("lower", traced._trace_key, wrapped.name, wrapped.keep_unused, traced.donated, shardings,
            tuple(platforms) if platforms else None, bool(dim_vars_as_arguments), plan.partitioner,
            tuple(plan.devices))


def compile_key(lowered: Any, pipeline: Any, compiler_options: Mapping[str, Any] | None) -> tuple | None:
    """The cache key of ``lowered``'s compilation; None (not cached) unless its module is the cached lowering's.

    The lowering's key plus the pass pipeline's text and the pass registry's
    generation (a pass redefined under its name changes it), the XLA options
    and the platform. Not cached once the module was handed out (``compiler_ir()`` may have
    changed it in place).
    """
    if lowered._cache_key is None or lowered._source is None:
        return None
    try:
        options = tuple(sorted(compiler_options.items())) if compiler_options else ()
        hash(options)
    except TypeError:
        return None
    return ("compile", lowered._cache_key, str(pipeline), registry_generation(), options, lowered._plan.platform)


def fast_path_key(wrapped: Any) -> tuple | None:
    """The key of the fast path ``wrapped`` shares with the other jit objects of its function; None: not shared.

    Everything of the jit object a call's executable depends on besides the
    function and the arguments: its class, static and donated arguments,
    ``keep_unused``, ``inline``, ``in_shardings``/``out_shardings``, its XLA ``compiler_options``, and whether
    it finds executables by module (eager execution's). Jit objects whose traces
    are not cached by function (``_function_cache``) do not share.
    """
    if not wrapped._function_cache:
        return None
    try:
        shardings = (hashable_shardings(wrapped.in_shardings), hashable_shardings(wrapped.out_shardings))
    except TypeError:
        return None
    options = tuple(sorted(wrapped.compiler_options.items())) if wrapped.compiler_options else ()
    try:
        hash(options)
    except TypeError:
        return None
    return ("fast path", type(wrapped), wrapped._executables_by_module, wrapped.static_argnums,
            wrapped.static_argnames, wrapped.donate_argnums, wrapped.keep_unused, wrapped.inline, shardings, options)


def shared_fast_path(wrapped: Any) -> Any:
    """The ``toolkit.dispatch.FastPath`` of every jit object of ``wrapped.fun`` with ``wrapped``'s options.

    ``jax.jit``'s caches are per function, so a fresh ``jit(f)(x)`` of a function
    called before finds its executable without tracing; here the jit objects of
    one function share the fast path their calls filled, and such a call costs
    what a repeated one does. The first object's fast path is kept in ``TRACES``
    under the function (weakly: it goes with the function, or when the cache
    drops it). Its entries hold executables detached from their lowering
    (``toolkit.dispatch.detached``), which leads to a jit object and would keep
    the function alive. ``wrapped``'s own fast path when :func:`fast_path_key`
    is None, the function cannot be held weakly, or IR dumps or pipeline reports
    are on (each compilation of a fresh jit object writes its timeline, as each
    of its lowerings does).
    """
    key = fast_path_key(wrapped)
    if key is None or ir_dump.dump_dir() or ir_dump.report_dir():
        return wrapped._fast_path
    shared = trace_cache.TRACES.get(wrapped.fun, key)
    if shared is None:
        shared = wrapped._fast_path
        trace_cache.TRACES.put(wrapped.fun, key, shared)
    return shared


def donated_leaves(wrapped: Any, sig: ArgumentSignature) -> tuple[bool, ...]:
    """Per dynamic leaf of a call of ``wrapped`` with signature ``sig``: whether ``donate_argnums`` names its argument."""
    if not wrapped.donate_argnums:
        return (False,) * len(sig.avals)
    args, kwargs = pytrees.structure_of(sig.tree, list(range(len(sig.avals))))
    donated = [False] * len(sig.avals)
    dynamic_positions = [i for i in range(len(args) + len(sig.static_args)) if i not in sig.static_args]
    for position, arg in zip(dynamic_positions, args):
        if position in wrapped.donate_argnums:
            for leaf in pytrees.tree_leaves(arg):
                donated[leaf] = True
    return tuple(donated)


def hashable_shardings(tree: Any) -> Any:
    """A hashable stand-in for a pytree of shardings (equal for equal trees); ``TypeError`` if there is none."""
    try:
        hash(tree)
        return (type(tree), tree)
    except TypeError:
        pass
    if isinstance(tree, (list, tuple)):
        return (type(tree), tuple(hashable_shardings(t) for t in tree))
    if isinstance(tree, dict):
        return (dict, tuple(sorted((k, hashable_shardings(v)) for k, v in tree.items())))
    raise TypeError(f"cannot key {type(tree).__name__}")


def rules_snapshot(program: Program) -> tuple:
    """The lowering rules of every primitive ``program`` uses (sub-programs included), as registered now."""
    primitives = {eqn.primitive for eqn in program.walk()}
    return tuple((p, dict(LOWERINGS.get(p) or {})) for p in primitives)


def rules_unchanged(snapshot: tuple) -> bool:
    return all([LOWERINGS.get(p) == rules for p, rules in snapshot])


# --- nested jit programs -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NestedProgram:
    """A jit's program traced inside another trace: the program, out tree, captured values, the trace's builder."""

    program: Program
    out_tree: pytrees.PyTreeDef
    captured: list
    owner: Any  # the ProgramBuilder it was traced in: a program that captured its values is reused only there


#: function -> {nested_program_key: NestedProgram}, per function as JAX caches (jit(g) twice is one program)
NESTED_PROGRAMS: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def nested_program(wrapped: Any, sig: ArgumentSignature) -> tuple[Program, pytrees.PyTreeDef, list]:
    """``wrapped``'s program for ``sig`` inside the current trace: ``(program, out_tree, captured)``.

    Traced once per static argument positions and names, tree, avals, static
    arguments, current mesh, ``shard_map`` axis context and ``out_sharding=``
    overrides, and reused unless it captured values of another trace.
    """
    builder = tracing.current_builder()
    key: tuple | None = (wrapped.static_argnums, wrapped.static_argnames, sig.tree, sig.avals, sig.static_key, mesh_context(),
           parallel.axis_context(), tuple(sharding_types._overrides), cache_state())
    try:
        table = NESTED_PROGRAMS.setdefault(wrapped.fun, {})
    except TypeError:  # a function that cannot be weakly referenced: cached on the jit object
        table = wrapped.__dict__.setdefault("_nested_programs", {})
    try:
        entry = table.get(key)
    except TypeError:  # an unhashable part of the signature: no caching
        key, entry = None, None
    if entry is not None and (not entry.captured or (entry.owner is builder and not builder.finished)):
        return entry.program, entry.out_tree, entry.captured
    program, out_tree, captured, _ = wrapped._trace_program(sig)
    if key is not None:
        table[key] = NestedProgram(program, out_tree, captured, builder)
    return program, out_tree, captured


# --- a trace-cache miss: what JAX's flags ask of it -------------------------------------------------------------

#: The components of a trace key (trace_key's tuple), by what a user changed to make them differ.
_KEY_PARTS = ("static_argnums", "static_argnames", "the arguments' tree structure", "the arguments' types",
              "the arguments' shardings", "the static arguments' values", "the static arguments' types",
              "the current mesh", "the out_sharding overrides", "the configuration flags")
_SEEN_KEYS: "weakref.WeakKeyDictionary[Any, list[tuple]]" = weakref.WeakKeyDictionary()


def trace_on_miss(wrapped: Any, sig: ArgumentSignature, key: tuple | None) -> tuple[Program, Any, list, list[str]]:
    """Trace ``wrapped`` at ``sig`` (a trace-cache miss): ``wrapped._trace_program(sig)``, under JAX's flags.

    ``jax_no_tracing`` refuses it (``RuntimeError``, JAX's text); ``jax_explain_cache_misses`` logs why it
    missed (the first trace of the function, or which parts of the closest earlier key differ); the trace is
    timed as JAX's ``/jax/core/compile/jaxpr_trace_duration`` event and logged per ``jax_log_compiles``.
    """
    if flag_value("jax_no_tracing"):
        raise RuntimeError(f"re-tracing function {wrapped.name} for `jit`, but 'no_tracing' is set")
    _explain_miss(wrapped, key)
    checking = flag_value("jax_check_tracer_leaks")
    before = _live_tracer_ids() if checking else set()
    with monitoring.timed_phase("Finished tracing {fun_name} for jit in {elapsed_time:.9f} sec", wrapped.name,
                                monitoring.JAXPR_TRACE_EVENT):
        result = wrapped._trace_program(sig)
    if checking:
        _check_leaks(wrapped.name, before)
    if flag_value("jax_enable_checks"):  # JAX's core.check_jaxpr after tracing
        check_program(result[0], f"the trace of {wrapped.name}")
    return result


def _live_tracer_ids() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, tracing.Tracer)}


def _check_leaks(name: str, before: set[int]) -> None:
    """``UnexpectedTracerError`` when a tracer made by the trace just finished is still referenced (JAX's leak
    check, ``jax_check_tracer_leaks``): the error names each leaked tracer and what refers to it."""
    gc.collect()
    active = set(map(id, tracing._state.builders))  # an enclosing trace's tracers are still in use
    leaked = [o for o in gc.get_objects() if isinstance(o, tracing.Tracer) and id(o) not in before
              and id(o._builder) not in active]
    if not leaked:
        return
    lines = []
    for tracer in leaked[:8]:
        holders = [type(r).__name__ for r in gc.get_referrers(tracer) if r is not leaked]
        lines.append(f"{tracer._describe()}, referred to by: {', '.join(holders) or 'nothing known'}")
    del leaked
    raise tracing.UnexpectedTracerError(f"Leaked trace of {name} for jit. Leaked tracer(s):\n\n" + "\n".join(lines))


def _explain_miss(wrapped: Any, key: tuple | None) -> None:
    try:
        seen = _SEEN_KEYS.setdefault(wrapped.fun, [])
    except TypeError:  # a callable that takes no weak reference: no history to explain with
        seen = []
    # Uncached traces (eager ops' one-off jits, traces inside traces, symbolic shapes) have no cache to miss.
    if key is not None and flag_value("jax_explain_cache_misses"):
        where = f"{wrapped.name} defined at {_definition_site(wrapped.fun)}"
        if not seen:
            reason = f"never seen function:\n    {where}"
        else:
            closest = min(seen, key=lambda old: sum(a != b for a, b in zip(old, key)))
            parts = [_KEY_PARTS[i] for i, (a, b) in enumerate(zip(closest, key)) if a != b]
            reason = (f"for {where}\n  all previously seen cache keys are different. Closest previous key "
                      f"differs in: {', '.join(parts)}")
        monitoring.logger.warning("TRACING CACHE MISS at %s because:\n  %s", where, reason)
    if key is not None:
        seen.append(key)
        del seen[:-16]  # the latest keys are enough to name the closest one


def _definition_site(fun: Any) -> str:
    code = getattr(fun, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else repr(fun)
