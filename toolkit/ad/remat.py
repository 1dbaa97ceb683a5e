"""``toolkit.checkpoint`` (alias ``remat``) and ``checkpoint_name``: trade computation for memory.

``checkpoint(f)`` traces ``f`` into one ``checkpoint`` equation
(``toolkit/lax/calls.py``). Reverse mode saves only its inputs (and what the
``policy`` allows, see ``toolkit.checkpoint_policies``) and recomputes the rest
in the backward pass, inside a ``checkpoint`` marked ``differentiated`` that
lowers behind a ``stablehlo.optimization_barrier`` when ``prevent_cse`` (so XLA
cannot merge it back into the forward pass). Without differentiation it is
``f``, inline.

Example::

    layer = toolkit.checkpoint(lambda w, x: tnp.tanh(x @ w),
                               policy=toolkit.checkpoint_policies.dots_saveable)
    toolkit.grad(lambda w, x: tnp.sum(layer(w, layer(w, x))))(w, x)
    print(toolkit.make_jaxpr(toolkit.grad(lambda x: tnp.sum(toolkit.checkpoint(tnp.sin)(x))))(x))
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from toolkit.core import tracing, pytrees
from toolkit.lax import calls

__all__ = ["checkpoint", "remat", "checkpoint_name"]


class _Removed:
    """The default of a keyword JAX removed: any value passed for it, even ``False``, is refused (JAX's DeprecatedArg)."""

    def __repr__(self) -> str:
        return "DeprecatedArg"


_REMOVED = _Removed()


def checkpoint(fun: Callable[..., Any], *, prevent_cse: bool = True, policy: Callable[..., bool] | None = None,
               static_argnums: int | Sequence[int] = (), static_argnames: str | Sequence[str] = (),
               concrete: Any = _REMOVED) -> Callable[..., Any]:
    """``fun`` whose intermediate values reverse mode recomputes rather than saves (``jax.checkpoint``).

    ``policy(prim, *avals, **params) -> bool`` says which equations' results may
    be saved (``None``: none); ``static_argnums`` and ``static_argnames`` are the
    arguments (by position, by name) that are Python values, not arrays.
    ``concrete`` was removed in JAX 0.10: passing it at all is JAX's ``NotImplementedError``.
    """
    if concrete is not _REMOVED:
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and removed in JAX v0.10.0. "
            "In its place please use `static_argnums`; for details refer to "
            "https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")
    if not callable(fun):
        raise TypeError(f"checkpoint: expected a callable function, got {type(fun).__name__}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    name = getattr(fun, "__name__", "fun")
    if names:  # a static name passed by position is static too (JAX's resolve_argnums)
        try:
            parameters = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            parameters = []
        static += tuple(i for i, p in enumerate(parameters) if p.name in names and i not in static
                        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not tracing.is_tracing():
            return fun(*args, **kwargs)
        body = fun
        if names and any(k in names for k in kwargs):
            body = functools.partial(fun, **{k: v for k, v in kwargs.items() if k in names})
            kwargs = {k: v for k, v in kwargs.items() if k not in names}
        program, out_tree, captured, leaves = tracing.trace_with_static_args(
            body, args, kwargs, [i for i in static if i < len(args)], f"checkpoint of {name}")
        outs = calls.checkpoint_p.bind(*leaves, *captured, jaxpr=program, prevent_cse=bool(prevent_cse),
                                       differentiated=False, policy=policy)
        return pytrees.tree_unflatten(out_tree, list(outs))

    return wrapped


remat = checkpoint


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` (a pytree of arrays), named ``name`` for the policies ``save_only_these_names`` and the like."""
    if not tracing.is_tracing():
        return x
    return pytrees.tree_map(lambda leaf: calls.name_p.bind(leaf, name=name), x)
