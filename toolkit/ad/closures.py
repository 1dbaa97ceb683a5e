"""Autodiff helpers built on traced programs: ``closure_convert``, ``custom_gradient``, ``linear_transpose``,
``fwd_and_bwd`` (JAX 0.10.2's signatures and contracts).

Each traces a user function into a ``Program`` (inside the enclosing trace, if
any): the values it closes over that belong to an enclosing trace are the
program's captured inputs, which these helpers hand back explicitly
(``closure_convert``'s hoisted constants, ``custom_gradient``'s residuals, a
transposed function's or ``fwd_and_bwd``'s residual leaves), so the results can
cross ``custom_vjp`` and ``jit`` boundaries as arrays.

Example::

    @toolkit.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)

    toolkit.grad(f)(3.0)     # 3.0
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from toolkit.ad.api import vjp
from toolkit.ad.custom_derivatives import custom_vjp
from toolkit.ad.interpret import eval_program
from toolkit.ad.transpose import backward_pass
from toolkit.ad.values import instantiate, tangent_aval
from toolkit.core import dtypes, pytrees, tracing
from toolkit.core.avals import ShapedArray, aval_of, leaf_avals
from toolkit.core.program import Program

__all__ = ["closure_convert", "custom_gradient", "linear_transpose", "fwd_and_bwd"]


class _Traced:
    """A function traced at flat avals: its program, trees, and the enclosing traces' values it captured.

    Compared by identity (it is the static part of the pytrees below, so a ``jit``
    that receives one traces once per traced function).
    """

    __slots__ = ("program", "in_tree", "out_tree", "captured", "__weakref__")

    def __init__(self, fun: Callable[..., Any], in_tree: Any, avals: Sequence[ShapedArray], what: str):
        box: list[Any] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            out = fun(*pytrees.tree_unflatten(in_tree, list(leaves)))
            out_leaves, out_tree = pytrees.tree_flatten(out)
            for i, leaf in enumerate(out_leaves):
                try:
                    aval_of(leaf)
                except TypeError:
                    raise TypeError(f"{what}: output leaf {i} of type {type(leaf).__name__} is not an array") \
                        from None
            box.append(out_tree)
            return out_leaves

        self.program: Program
        self.program, self.captured = tracing.trace_flat(flat_fun, list(avals))
        self.in_tree = in_tree
        self.out_tree = box[0]

    def check_inputs(self, leaves_tree: Any, what: str) -> None:
        if leaves_tree != self.in_tree:
            raise TypeError(f"The inputs to the closure produced by {what} must have the same Pytree structure as "
                            f"the example arguments passed when {what} was called. Expected {self.in_tree}, but "
                            f"got {leaves_tree}")


def _maybe_perturbed(x: Any) -> bool:
    """Whether ``x`` (a captured value) may carry a derivative: a traced value of a floating or complex type
    (JAX's ``_maybe_perturbed`` for a staged value: integer and boolean ones have float0 tangents)."""
    return isinstance(x, tracing.Tracer) and dtypes.is_inexact(x.aval.dtype)


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``fun`` with the traced floating values it closes over made explicit, as ``jax.closure_convert``.

    Returns ``(converted, hoisted)``: ``converted(*args, *hoisted)`` computes
    ``fun(*args)`` for ``args`` with the structure, shapes and dtypes of
    ``example_args``, and ``hoisted`` lists the values of enclosing traces
    (those that may carry derivatives: floating or complex) ``fun`` closes over,
    so ``fun`` can be passed to a ``custom_vjp`` function as arguments that are
    differentiated. Outside any trace nothing is hoisted. Calling ``converted``
    with another structure is a ``TypeError``; ``fun`` not callable, or an
    example leaf that is not an array, also.
    """
    if not callable(fun):
        raise TypeError(f"closure_convert: expected a callable function, got {type(fun).__name__}")
    flat_args, in_tree = pytrees.tree_flatten(example_args)
    traced = _Traced(fun, in_tree, leaf_avals(flat_args, "closure_convert"), "closure_convert")
    hoist = [_maybe_perturbed(c) for c in traced.captured]
    closed = [c for c, h in zip(traced.captured, hoist) if not h]
    hoisted = [c for c, h in zip(traced.captured, hoist) if h]
    num_hoisted = len(hoisted)

    def converted(*args_and_hoisted: Any) -> Any:
        if len(args_and_hoisted) < num_hoisted:
            raise TypeError(f"closure_convert: the converted function takes the arguments then {num_hoisted} "
                            f"hoisted values, got {len(args_and_hoisted)} arguments in all")
        split = len(args_and_hoisted) - num_hoisted
        args, given = args_and_hoisted[:split], iter(args_and_hoisted[split:])
        leaves, tree = pytrees.tree_flatten(tuple(args))
        traced.check_inputs(tree, "closure_convert")
        remaining = iter(closed)
        captured = [next(given) if h else next(remaining) for h in hoist]
        outs = eval_program(traced.program, list(leaves) + captured)
        return pytrees.tree_unflatten(traced.out_tree, outs)

    converted.__name__ = getattr(fun, "__name__", "converted")
    converted.__qualname__ = getattr(fun, "__qualname__", "converted")
    return converted, hoisted


class _Residuals:
    """A traced function and the captured values it is applied with: a pytree whose leaves are the values
    (``custom_gradient``'s residuals, ``fwd_and_bwd``'s, a transposed function's constants)."""

    __slots__ = ("traced", "values")

    def __init__(self, traced: _Traced, values: Sequence[Any]):
        self.traced = traced
        self.values = list(values)

    def apply(self, *args: Any) -> Any:
        leaves, tree = pytrees.tree_flatten(tuple(args))
        if tree != self.traced.in_tree:
            raise TypeError(f"expected arguments of structure {self.traced.in_tree}, got {tree}")
        return pytrees.tree_unflatten(self.traced.out_tree, eval_program(self.traced.program,
                                                                         list(leaves) + self.values))


def _unflatten_residuals(traced: Any, values: Any) -> _Residuals:
    return _Residuals(traced, list(values))


pytrees.register_pytree_node(_Residuals, lambda r: (r.values, r.traced), _unflatten_residuals)


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """A function whose reverse-mode derivative is the one ``fun`` returns, as ``jax.custom_gradient``.

    ``fun(*args)`` returns ``(value, vjp)``: ``vjp(cotangent)`` returns one
    cotangent per positional argument (a tuple; with one argument, a bare
    cotangent is taken as that argument's, as in JAX). The
    result is a ``custom_vjp`` function: ``f(*args)`` is ``value``; under
    ``grad``/``vjp`` the cotangents are ``vjp``'s, traced at the value's tangent
    types during the forward pass (so ``vjp`` may close over the forward pass's
    values, but not branch on them). Forward mode is refused, as ``custom_vjp``'s.
    """
    if not callable(fun):
        raise TypeError(f"custom_gradient: expected a callable function, got {type(fun).__name__}")

    def _pair(out: Any) -> tuple[Any, Any]:
        if not (isinstance(out, (tuple, list)) and len(out) == 2 and callable(out[1])):
            raise TypeError("custom_gradient: the function must return a pair (value, vjp function), got "
                            f"{type(out).__name__}")
        return out[0], out[1]

    def primal(*args: Any, **kwargs: Any) -> Any:
        return _pair(fun(*args, **kwargs))[0]

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, _Residuals]:
        ans, rule = _pair(fun(*args, **kwargs))
        ans_leaves, ans_tree = pytrees.tree_flatten((ans,))
        avals = [tangent_aval(aval_of(x)) for x in ans_leaves]
        traced = _Traced(lambda *cts: rule(*cts), ans_tree, avals, "custom_gradient's vjp")
        return ans, _Residuals(traced, traced.captured)

    def bwd(residuals: _Residuals, cotangent: Any) -> Any:
        cts = residuals.apply(cotangent)
        if pytrees.treedef_is_leaf(residuals.traced.out_tree):
            cts = (cts,)  # JAX: a single cotangent returned bare is the one argument's
        return cts

    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        if hasattr(fun, attribute):
            setattr(primal, attribute, getattr(fun, attribute))
    wrapped = custom_vjp(primal)
    wrapped.defvjp(fwd, bwd)
    return wrapped


class _Transposed:
    """``linear_transpose``'s result: ``f_transpose(out_cotangent) -> input cotangents``; a pytree whose leaves
    are the values of enclosing traces the linear function closes over (``jax.tree_util.Partial``'s role)."""

    __slots__ = ("residuals", "in_avals", "out_avals")

    def __init__(self, residuals: _Residuals, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]):
        self.residuals = residuals
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)

    def __call__(self, out_cotangent: Any) -> Any:
        traced = self.residuals.traced
        leaves, tree = pytrees.tree_flatten(out_cotangent)
        if tree != traced.out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected {traced.out_tree} but got "
                            f"{tree}")
        for leaf, aval in zip(leaves, self.out_avals):
            got = aval_of(leaf)
            if tuple(got.shape) != tuple(aval.shape) or got.dtype != aval.dtype:
                raise TypeError("cotangent type does not match function output, expected "
                                f"{[a.str_short() for a in self.out_avals]} but got "
                                f"{[aval_of(x).str_short() for x in leaves]}")
        cts = backward_pass(traced.program, len(self.in_avals), self.residuals.values, list(leaves),
                            transpose_names=True)
        cts = [instantiate(ct, aval) for ct, aval in zip(cts, self.in_avals)]
        return pytrees.tree_unflatten(traced.in_tree, cts)

    def __repr__(self) -> str:
        return f"linear_transpose({getattr(self.residuals.traced.program, 'name', 'fun')})"


def _unflatten_transposed(avals: Any, children: Any) -> _Transposed:
    return _Transposed(list(children)[0], avals[0], avals[1])


pytrees.register_pytree_node(_Transposed, lambda t: ([t.residuals], (t.in_avals, t.out_avals)), _unflatten_transposed)


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The transpose of the linear function ``fun`` at the types of ``primals``, as ``jax.linear_transpose``.

    ``primals`` are a pytree of arrays or ``ShapeDtypeStruct``-likes (only
    shapes and dtypes are read). Returns ``f_transpose(out_cotangent)``, which
    returns a tuple with the structure of ``primals`` (the input cotangents, in
    the primals' dtypes); ``fun`` must be linear in its arguments (a nonlinear
    operation on them has no transpose rule: ``DifferentiationError``). The
    inputs and outputs must be all floating/complex or all integer
    (``TypeError``); a cotangent of another structure or type is a
    ``TypeError``; ``reduce_axes`` is deprecated in JAX (``NotImplementedError``).
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    if not callable(fun):
        raise TypeError(f"linear_transpose: expected a callable function, got {type(fun).__name__}")
    flat, in_tree = pytrees.tree_flatten(primals)
    traced_avals = leaf_avals(flat, "linear_transpose")  # weak types kept: they type what fun computes
    traced = _Traced(fun, in_tree, traced_avals, "linear_transpose")
    in_avals = [ShapedArray(tuple(a.shape), a.dtype) for a in traced_avals]
    out_avals = [ShapedArray(tuple(a.shape), a.dtype) for a in traced.program.out_avals]
    all_dtypes = [a.dtype for a in in_avals + out_avals]
    if not (all(dtypes.is_inexact(d) for d in all_dtypes)
            or all(np.issubdtype(d, np.integer) for d in all_dtypes)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], and integer -> "
                        f"integer functions, but got {[a.dtype for a in in_avals]} -> {[a.dtype for a in out_avals]}.")
    return _Transposed(_Residuals(traced, traced.captured), in_avals, out_avals)


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The forward and backward passes of ``fun`` as two functions, as ``jax.fwd_and_bwd``.

    ``fwd(*primals)`` returns ``(fun(*primals), residuals)`` (``(out,
    residuals, aux)`` with ``has_aux``), and ``bwd(residuals, out_cotangent)``
    the cotangents of the positional arguments ``argnums`` (an int: one; a
    sequence: a tuple), as ``vjp``'s pullback. ``residuals`` is a pytree of
    arrays (it can cross ``jit``). ``jitted`` (default): both run compiled,
    ``bwd`` compiled once for every ``residuals`` of one ``fwd`` signature.
    Keyword arguments to ``fwd`` are a ``TypeError`` (JAX ignores them).
    """
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd: expected a callable function, got {type(fun).__name__}")
    if isinstance(argnums, (int, np.integer)):
        nums: tuple[int, ...] = (int(argnums),)
    else:
        try:
            nums = tuple(int(a) for a in argnums)
        except TypeError:
            raise TypeError(f"fwd_and_bwd: argnums must be an int or a sequence of ints, got {argnums!r}") from None
    single = isinstance(argnums, (int, np.integer))

    def fwd_impl(*args: Any) -> tuple[Any, ...]:
        for a in nums:
            if not -len(args) <= a < len(args):
                raise ValueError(f"fwd_and_bwd: argnums {argnums} is out of bounds for a call with {len(args)} "
                                 "positional arguments")
        positions = [a % len(args) for a in nums]

        def partial_fun(*diff: Any) -> Any:
            full = list(args)
            for i, value in zip(positions, diff):
                full[i] = value
            return fun(*full)

        result = vjp(partial_fun, *(args[i] for i in positions), has_aux=has_aux)
        out, f_vjp = result[0], result[1]
        # The pullback traced at the output's types: its residuals are the values it captured.
        out_avals = [aval_of(leaf).strip_weak_type() for leaf in pytrees.tree_leaves(out)]
        converted = _Traced(f_vjp, pytrees.tree_structure((out,)), out_avals, "fwd_and_bwd")
        residuals = _Residuals(converted, converted.captured)
        return (out, residuals, result[2]) if has_aux else (out, residuals)

    def bwd_impl(residuals: Any, out_cotangent: Any) -> Any:
        if not isinstance(residuals, _Residuals):
            raise TypeError(f"fwd_and_bwd: bwd takes the residuals fwd returned, got {type(residuals).__name__}")
        g = residuals.apply(out_cotangent)
        return g[0] if single else g

    if not jitted:
        def fwd(*args: Any, **kwargs: Any) -> Any:
            _no_kwargs(kwargs)
            return fwd_impl(*args)
        return fwd, bwd_impl

    def fwd_jitted(*args: Any, **kwargs: Any) -> Any:
        _no_kwargs(kwargs)
        # Compiled through the installed jit (ad sits below jit): cached per function and argument types.
        return fwd_impl(*args) if tracing.is_tracing() else tracing.eager_call(fwd_impl, *args)

    def bwd_jitted(residuals: Any, out_cotangent: Any) -> Any:
        if tracing.is_tracing():
            return bwd_impl(residuals, out_cotangent)
        return tracing.eager_call(bwd_impl, residuals, out_cotangent)

    return fwd_jitted, bwd_jitted


def _no_kwargs(kwargs: dict) -> None:
    if kwargs:
        raise TypeError(f"fwd_and_bwd: fwd takes positional arguments only, got keyword arguments {sorted(kwargs)}")
