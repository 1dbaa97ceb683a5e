"""Traces of control-flow bodies, kept per body function (JAX's ``_initial_style_jaxpr`` cache).

``lax.scan(f, ...)``, ``while_loop``, ``cond`` and ``switch`` trace their
functions into sub-programs every time they are called inside a trace. An eager
``vmap`` traces the user's function afresh on every call, so a ``scan`` inside it
made a new body program each time, and the batched program built from it was
compiled again (~20 ms a call) where JAX, which keeps each body's trace by
function, compiles once.

A body's trace is kept for its function, its argument tree and types, the call
site (the user's frames that led to it, which its operations' locations name),
the ``compute_on`` type, the current mesh, ``shard_map`` axis context,
``out_sharding=`` overrides and configuration (x64), when everything it
captured from outside is a constant: a reuse captures the same constant values
again in the current trace. A body that uses a traced value of the enclosing
trace (a closure over a ``jit`` argument) is traced every time, as before. As
in JAX, a function's Python code runs at its first trace only (here: from that
call site): a body reading a global changed since sees the value of its first
trace.

The rules of the transformations keep what they derive from a body here too
(:func:`derived`, the body program as owner): the JVPs of ``cond``, ``while`` and
``scan`` bodies, the backward programs of ``cond`` and ``scan``
(``toolkit.ad.rules.control_flow``), and every batched body
(``toolkit.batching.interpret.batch_subprogram``).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, NamedTuple, Sequence

from toolkit.core import pytrees, sharding_types, tracing
from toolkit.core.config import cache_state
from toolkit.lax import parallel
from toolkit.shard.mesh import mesh_context


class _Kept(NamedTuple):
    value: Any  # a body's (program, out_tree), or what a transformation rule derived from a program
    constants: tuple  # the values its captured inputs stood for, in order


_TRACES: "weakref.WeakKeyDictionary[Any, dict[tuple, _Kept]]" = weakref.WeakKeyDictionary()
#: How many traces one function (or program) keeps, oldest first out (each holds its program and constants).
MAX_PER_OWNER = 64


def context_key(in_tree: pytrees.PyTreeDef | None, in_avals: tuple) -> tuple:
    """What a body's trace depends on besides its function (not its role: both branches of a ``cond`` may be
    one function, traced once). The call site is part of it: each operation's location names the user's lines
    that led to it (``user_source_info``, interned, or a transformation's source override), which another call
    site must not inherit; so is the ``compute_on`` type its operations record."""
    source = tracing.current_source_override() or tracing.user_source_info(tracing.current_builder())
    return (in_tree, in_avals, source, tracing.current_compute_type(), mesh_context(), parallel.axis_context(),
            tuple(sharding_types._overrides), cache_state())


def find(owner: Any, key: tuple) -> tuple[Any, list[Any]] | None:
    """What was kept for ``owner`` (a function, or a program) and ``key``: ``(value, captured tracers of the
    current trace)``, None if nothing was."""
    try:
        entry = _TRACES.get(owner, {}).get(key)
    except TypeError:  # an owner that cannot be weakly referenced, or an unhashable key: not kept
        return None
    if entry is None:
        return None
    builder = tracing.current_builder()
    if builder is None:  # outside a trace (a rule run eagerly): only what captured nothing
        return (entry.value, []) if not entry.constants else None
    return entry.value, [builder.to_tracer(value) for value in entry.constants]


def keep(owner: Any, key: tuple, value: Any, captured: list[Any]) -> None:
    """Keep ``value`` when every captured value is a constant (else it depends on the enclosing trace)."""
    constants = tracing.concrete_args(captured)
    if constants is None:
        return
    try:
        table = _TRACES.setdefault(owner, {})
        table[key] = _Kept(value, tuple(constants))
    except TypeError:
        return  # not weakly referenceable (a builtin), or an unhashable key: traced each time
    if len(table) > MAX_PER_OWNER:  # a long-lived function traced at ever new types or call sites: the oldest out
        table.pop(next(iter(table)), None)


def derived(owners: Sequence[Any], key: tuple, build: Callable[[], tuple[Any, Sequence[Any]]]) -> tuple[Any, list[Any]]:
    """``build()`` -> ``(value, captured)``, kept for the programs ``owners`` (by identity) and ``key`` in the
    current context (:func:`context_key`): what a transformation rule derives from a body (its JVP, its batched
    version, its backward program) is then derived once, and its executable compiled once, for a function
    transformed eagerly again and again (``jvp(f)``, ``vmap(grad(f))``, ``hessian(f)``).

    ``key`` must hold everything else ``build`` reads (masks of nonzero tangents or batched values, types).
    """
    full = (tuple(map(id, owners)),) + key + context_key(None, ())
    found = find(owners[0], full)
    if found is not None:
        (refs, value), captured = found
        if all(ref() is owner for ref, owner in zip(refs, owners)):  # ids of the same, live programs
            return value, captured
    value, made = build()
    keep(owners[0], full, (tuple(weakref.ref(o) for o in owners), value), list(made))
    return value, list(made)


def clear() -> None:
    """Forget every kept trace (``toolkit.clear_caches``)."""
    _TRACES.clear()
