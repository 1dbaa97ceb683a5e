"""Library functions that run as one compiled program when called outside a trace.

JAX wraps most of its ``jax.numpy``, ``jax.numpy.linalg`` and ``jax.nn``
functions in ``jit``: ``jnp.percentile(x, 30.0)`` called eagerly traces the
function once per signature and runs one executable. Binding its operations one
by one instead compiles one executable per operation (a percentile is ~15 of
them; XLA's fixed cost per compilation is ~10-100 ms), then dispatches each.
``@compiled_whole(static_argnames=...)`` gives a toolkit function JAX's
behaviour, with the same static arguments JAX gives it:

* outside every trace, the call goes through a ``toolkit.jit`` of the function
  (made on the first call; its cache keys the signature as any jit's);
* inside a trace that is lowered (``jit``, ``make_jaxpr``, control-flow bodies,
  ``ensure_compile_time_eval``), the function is called directly, so its
  operations are traced into the caller's program exactly as before (JAX's
  ``jit(inline=True)``; for its other jitted functions JAX emits a nested call
  that XLA inlines: toolkit's programs stay flat);
* inside the traces of an eager ``grad``, ``vjp``, ``jvp`` or ``vmap`` (run by
  their interpreters, an operation at a time: ``ProgramBuilder.interpreted``),
  it is a ``jit`` equation, as JAX's jitted function is there: differentiated or
  batched as one program and compiled once (an eager ``grad`` of a ``percentile``
  compiled 38 programs, one per operation; now 2, as JAX).

``toolkit.numpy`` and ``toolkit.nn`` sit below ``toolkit.stages``, so the
``jit`` is installed here by ``toolkit.dispatch`` (:func:`install_jit`), as the
eager handlers of :mod:`toolkit.core.tracing` are.
``tests/core/test_compiled_whole.py`` checks that every function JAX 0.10 jits is
compiled whole here with JAX's static argument names.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from toolkit.core import tracing

F = TypeVar("F", bound=Callable[..., Any])

#: ``toolkit.jit``, installed by ``toolkit.dispatch.install_eager_handlers``.
_jit: Callable[..., Any] | None = None


def install_jit(jit: Callable[..., Any]) -> None:
    """Compile the decorated functions' eager calls with ``jit`` (``toolkit.stages.jit``)."""
    global _jit
    _jit = jit


def compiled_whole(*, static_argnames: Sequence[str] = (), lists_as_tuples: bool = False,
                   prepare: Callable[[tuple, dict], tuple[tuple, dict]] | None = None) -> Callable[[F], F]:
    """Decorate a library function: an eager call compiles and runs it as one program (JAX's ``@jit``).

    ``static_argnames`` are the parameters that select the program (axes, modes,
    sizes, dtypes): the names JAX's ``jit`` of the same function makes static.
    Every other argument is traced (arrays, and Python scalars as weakly typed
    values, as under ``jit``).

    ``lists_as_tuples``: for a function JAX defines as a plain wrapper of a
    jitted helper (``jnp.sum`` of ``_reduce_sum``), whose wrapper turns list
    arguments (``axis=[0, 1]``, ``pad_width``) into the tuples its helper's
    static arguments must be; a static argument of a function JAX jits itself
    must be hashable as given (``ValueError`` otherwise, as in JAX).

    ``prepare(args, kwargs) -> (args, kwargs)``: what such a wrapper does with
    the arguments as given before calling its helper (``jnp.var`` checks and
    resolves ``ddof``/``correction`` on the values, which the helper traces).
    Eager calls only: inside a trace the function's own code sees the values.
    """
    def decorate(fun: F) -> F:
        parameters = inspect.signature(fun).parameters
        unknown = [n for n in static_argnames if n not in parameters]
        if unknown:
            raise TypeError(f"compiled_whole({fun.__qualname__}): no parameter named {', '.join(unknown)}")
        # The positions a static argument can be passed at (the parameters before any * or **).
        positional = [p.name for p in parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        static_positions = tuple(i for i, name in enumerate(positional) if name in static_argnames)
        jitted: Any = None
        state = tracing._state

        @functools.wraps(fun)
        def call(*args: Any, **kwargs: Any) -> Any:
            builders = state.builders
            if builders:
                # Inside a trace its operations join the caller's program, except where every trace is one that
                # grad or vmap runs with their interpreter (eagerly, an operation at a time): there it is a jit
                # equation, differentiated or batched and compiled whole, as JAX's jitted functions are.
                inline = prepare is not None or not all(b.interpreted for b in builders)
            else:
                # A tracer outside its trace (a leaked one) reaches the first operation, which reports it.
                inline = _any_tracer(args, kwargs)
            if inline:
                return fun(*args, **kwargs)
            return outside_traces(*args, **kwargs)

        def outside_traces(*args: Any, **kwargs: Any) -> Any:
            nonlocal jitted
            if jitted is None:
                if _jit is None:
                    raise RuntimeError("no jit installed for eager library calls; import toolkit")
                jitted = _jit(fun, static_argnames=tuple(static_argnames))
            if prepare is not None:
                args, kwargs = prepare(args, kwargs)
            if lists_as_tuples:
                args, kwargs = _static_lists_as_tuples(args, kwargs, static_positions, static_argnames)
            return jitted(*args, **kwargs)

        call.static_argnames = tuple(static_argnames)  # type: ignore[attr-defined]
        # The compiled call without call's checks, for a caller that knows it is outside every trace and holds
        # no tracer (toolkit.numpy's eager ufuncs, after checking their operands' types).
        call.outside_traces = outside_traces  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return decorate


def _static_lists_as_tuples(args: tuple, kwargs: dict, positions: tuple[int, ...],
                            names: Sequence[str]) -> tuple[tuple, dict]:
    """The call's static arguments with lists (nested too) as tuples."""
    # Plain loops: this runs on every eager call of such a function, and a generator in any() costs more.
    count = len(args)
    for i in positions:
        if i < count and type(args[i]) is list:
            args = tuple(_as_tuple(a) if i in positions else a for i, a in enumerate(args))
            break
    if kwargs:
        for name in names:
            if type(kwargs.get(name)) is list:
                kwargs = {k: _as_tuple(v) if k in names else v for k, v in kwargs.items()}
                break
    return args, kwargs


def _as_tuple(value: Any) -> Any:
    return tuple(_as_tuple(v) for v in value) if type(value) in (list, tuple) else value


def _any_tracer(args: tuple, kwargs: dict) -> bool:
    Tracer = tracing.Tracer
    for a in args:
        if isinstance(a, Tracer):
            return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, Tracer):
                return True
    return False


def unhashable_static_error(values: Sequence[Any]) -> ValueError:
    """JAX's error, word for word (jaxlib's call path: the value's ``str``), for the first static argument value
    that cannot be hashed: a jit's static arguments, and those of JAX's jitted helpers that toolkit checks."""
    for value in values:
        try:
            hash(value)
        except TypeError as exc:
            return ValueError("Non-hashable static arguments are not supported. An error occurred while trying to "
                              f"hash an object of type {type(value)}, {value}. The error was:\n"
                              f"{type(exc).__name__}: {exc}\n")
    return ValueError("Non-hashable static arguments are not supported.")


def check_static_hashable(*values: Any) -> None:
    """Raise :func:`unhashable_static_error` when a value JAX would pass as a static argument cannot be hashed."""
    for value in values:
        try:
            hash(value)
        except TypeError:
            raise unhashable_static_error(values) from None


def is_compiled_whole(fun: Any) -> bool:
    """Whether ``fun`` was decorated with :func:`compiled_whole`."""
    return hasattr(fun, "static_argnames") and hasattr(fun, "__wrapped__")
