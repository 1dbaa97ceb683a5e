"""``toolkit.custom_batching``: functions with their own ``vmap`` rule (as ``jax.custom_batching``).

    @toolkit.custom_batching.custom_vmap
    def f(x, y):
        return x + y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        return xs * ys, True          # the outputs, and which of them are batched

    toolkit.vmap(f)(xs, ys)           # xs * ys; f(x, y) alone is x + y

Called outside any trace, the function runs as written. Traced (under ``jit``, ``vmap``, ``jvp``) it
records a ``custom_vmap_call`` (``toolkit/lax/custom_batching.py``) whose batching rule is the user's:
``vmap`` of it, also through ``jit`` and nested ``vmap``, runs the rule. Forward mode works (the JVP of
the rule is the rule of the JVP); reverse mode is refused, as JAX's (combine with ``custom_vjp``).
:func:`sequential_vmap` batches by a loop (``lax.map``) over the batched arguments.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from toolkit.core import pytrees, tracing
from toolkit.core.avals import aval_of, leaf_avals
from toolkit.lax import control_flow
from toolkit.lax.custom_batching import FlatVmapRule, custom_vmap_call_p

__all__ = ["custom_vmap", "sequential_vmap"]


def _rule_name(rule: Any) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


class custom_vmap:  # noqa: N801 - jax.custom_batching.custom_vmap's name
    """A function whose batching under ``vmap`` is the rule given with :meth:`def_vmap` (JAX's ``custom_vmap``).

    The rule is called ``rule(axis_size, in_batched, *args)``: ``in_batched`` is a list (one entry per
    argument) of pytrees of bools matching the arguments, True where that leaf has the batch dimension
    (in front); unbatched leaves are passed as they are. It returns ``(out, out_batched)``: the outputs
    (the function's output structure, batched leaves with the batch dimension in front) and a matching
    pytree of bools. Calling the function before :meth:`def_vmap` is an ``AttributeError``; a rule whose
    output structure or shapes do not match is a ``ValueError`` naming the rule.
    """

    fun: Callable[..., Any]
    vmap_rule: Callable[..., tuple[Any, Any]] | None

    def __init__(self, fun: Callable[..., Any]):
        if not callable(fun):
            raise TypeError(f"custom_vmap takes a function, got {type(fun).__name__}: {fun!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
        """Set the vmap rule (see the class); returns ``vmap_rule`` unchanged, so it works as a decorator."""
        if not callable(vmap_rule):
            raise TypeError(f"def_vmap takes a function, got {type(vmap_rule).__name__}: {vmap_rule!r}")
        self.vmap_rule = vmap_rule
        return vmap_rule

    def _resolve(self, args: tuple, kwargs: dict) -> tuple:
        # JAX binds the signature on every call: a wrong arity is a TypeError before anything is traced.
        name = getattr(self.fun, "__name__", "fun")
        try:
            signature = inspect.signature(self.fun)
        except (TypeError, ValueError):  # no signature to check (some builtins): positional arguments only
            if kwargs:
                raise TypeError(f"custom_vmap function {name} has no signature to resolve keyword arguments "
                                f"{sorted(kwargs)} against") from None
            return args
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"The input arguments to the custom_vmap-decorated function {name} could not be "
                            f"resolved to positional-only arguments. Binding failed with the error:\n{e}") from None
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(f"The input arguments to the custom_vmap-decorated function {name} could not be "
                            f"resolved to positional-only arguments: keyword-only {sorted(bound.kwargs)}")
        return tuple(bound.args)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``fun(*args)``; under ``vmap`` the rule computes the batched result instead."""
        name = getattr(self.fun, "__name__", "fun")
        args = self._resolve(args, kwargs)
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        if not tracing.is_tracing():
            return self.fun(*args)  # eagerly nothing batches it
        leaves, in_tree = pytrees.tree_flatten(args)
        avals = leaf_avals(leaves, f"custom_vmap function {name}")
        out_trees: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            out = self.fun(*pytrees.tree_unflatten(in_tree, list(xs)))
            out_leaves, out_tree = pytrees.tree_flatten(out)
            for i, leaf in enumerate(out_leaves):
                try:
                    aval_of(leaf)
                except TypeError:
                    raise TypeError(f"custom_vmap function {name}: output leaf {i} of type "
                                    f"{type(leaf).__name__} is not an array") from None
            out_trees.append(out_tree)
            return out_leaves

        call, captured = tracing.trace_flat(flat_fun, avals)
        out_tree = out_trees[0]
        rule = self.vmap_rule

        def flat_rule(axis_size: Any, in_batched: list[bool], xs: list[Any]) -> tuple[list[Any], list[bool]]:
            batched_args = pytrees.tree_unflatten(in_tree, xs)
            batched_flags = list(pytrees.tree_unflatten(in_tree, in_batched))
            result = rule(axis_size, batched_flags, *batched_args)
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise ValueError(f"custom vmap rule ({_rule_name(rule)}) must return a pair (outputs, "
                                 f"out_batched), got {result!r}")
            out, out_batched = result
            flat_outs, tree1 = pytrees.tree_flatten(out)
            flat_batched, tree2 = pytrees.tree_flatten(out_batched)
            if tree1 != tree2:
                raise ValueError(f"structure of output value and output batching specification returned by custom "
                                 f"vmap rule ({_rule_name(rule)}) do not match.\nOutput values: {tree1}\n"
                                 f"Batching spec: {tree2}")
            if tree1 != out_tree:
                raise ValueError(f"structure of output returned by custom vmap rule ({_rule_name(rule)}) does not "
                                 f"match that of original custom-vmapped function.\nOriginal output: {out_tree}\n"
                                 f"Rule output: {tree1}")
            for i, b in enumerate(flat_batched):
                if not isinstance(b, bool):
                    raise ValueError(f"custom vmap rule ({_rule_name(rule)}): out_batched leaf {i} must be a bool, "
                                     f"got {b!r}")
            return flat_outs, flat_batched

        outs = custom_vmap_call_p.bind(*leaves, *captured, call=call, rule=FlatVmapRule(_rule_name(rule), flat_rule),
                                       num_consts=len(captured))
        return pytrees.tree_unflatten(out_tree, list(outs))


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` as a :class:`custom_vmap` whose rule loops: under ``vmap`` it is called once per batch element
    (``lax.map`` over the batched arguments, the unbatched ones passed whole); every output is batched."""
    g = custom_vmap(f)

    @g.def_vmap
    def rule(axis_size: Any, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        del axis_size
        leaves, tree = pytrees.tree_flatten(list(args))
        flags = pytrees.tree_leaves(in_batched)
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(mapped_slices: list[Any]) -> Any:
            it = iter(mapped_slices)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return g(*pytrees.tree_unflatten(tree, full))

        out = control_flow.map(one, mapped)
        return out, pytrees.tree_map(lambda _: True, out)

    return g

