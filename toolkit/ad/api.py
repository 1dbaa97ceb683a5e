"""User-facing differentiation: ``jvp``, ``linearize``, ``vjp``, ``grad``, ``value_and_grad``.

The signatures and pytree conventions are ``jax``'s. Each function traces the
user's function into a ``Program`` with ``toolkit.core.tracing.trace_flat``
(nested inside the enclosing trace, if any, so ``jit(grad(f))`` and
``grad(grad(f))`` work) and runs an interpreter over it: ``jvp_program`` for
forward mode, ``vjp_program`` for reverse mode. Outside any trace the
interpreters run eagerly, one primitive at a time. A function that needs its
arguments' values (Python control flow on them, data-dependent sizes) is traced
again with them known, as JAX's eager transformations see them (``NEEDS_VALUES``).

Example::

    import toolkit, toolkit.numpy as tnp
    df = toolkit.grad(lambda x: tnp.sum(tnp.sin(x)))
    df(np.ones(3, np.float32))             # cos(1) three times
    toolkit.jit(df)(np.ones(3, np.float32))
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from toolkit.ad.registry import JVP_RULES
from toolkit.ad.jvp import jvp_program
from toolkit.ad.values import Zero, instantiate, is_differentiable
from toolkit.ad.vjp import vjp_program
from toolkit.core import dtypes, tracing, pytrees
from toolkit.core.avals import aval_of, leaf_avals
from toolkit.core.error_classes import NonConcreteBooleanIndexError
from toolkit.ad.interpret import eval_program
from toolkit.array import Array, device_put
from toolkit.lax import elementwise as lax_elementwise

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad"]


#: Rewrites a traced program needs before it is differentiated, given the values its inputs stand for:
#: ``prepare(program, flat_args) -> program``. ``shard_map`` registers one that makes the mixing of
#: replicated and device-varying values explicit (``pvary``) inside its bodies, so reverse mode sums the
#: cotangents of replicated values as JAX does.
PREPARE_FOR_DIFFERENTIATION: list[Callable[[Any, list], Any]] = []


#: What a function raises when it needs the values of its traced arguments (JAX's concrete_or_error).
NEEDS_VALUES = (tracing.ConcretizationTypeError, tracing.TracerIntegerConversionError, NonConcreteBooleanIndexError)


class _TracedFunction:
    """A user function traced at the avals of its flattened arguments."""

    out_tree: pytrees.PyTreeDef  # the outputs' structure, set by the trace in __init__

    def __init__(self, fun: Callable[..., Any], args: Sequence[Any], has_aux: bool, what: str):
        if not callable(fun):
            raise TypeError(f"{what}: expected a callable function, got {type(fun).__name__}")
        flat_args, in_tree = pytrees.tree_flatten(tuple(args))
        avals = leaf_avals(flat_args, what)
        self.aux_tree: pytrees.PyTreeDef | None = None
        self.aux_kept: dict[int, Any] = {}  # aux leaves that are not traced values, by flat index
        self.num_out = 0

        def flat_fun(*leaves: Any) -> list[Any]:
            out = fun(*pytrees.tree_unflatten(in_tree, list(leaves)))
            if has_aux:
                if not (isinstance(out, (tuple, list)) and len(out) == 2):
                    raise TypeError(f"{what} with has_aux=True: the function must return a pair (output, aux), "
                                    f"got {type(out).__name__}")
                out, aux = out
            out_leaves, self.out_tree = pytrees.tree_flatten(out)
            self.num_out = len(out_leaves)
            aux_leaves: list[Any] = []
            if has_aux:
                # Traced aux values leave through the program's outputs (never differentiated), so they
                # come back as values of the caller's context rather than as tracers of this inner trace.
                # Any other leaf (a string, a Python number, a numpy array: anything JAX's has_aux passes
                # through) is kept aside and handed back unchanged.
                all_aux, self.aux_tree = pytrees.tree_flatten(aux)
                self.aux_kept = {i: leaf for i, leaf in enumerate(all_aux) if not isinstance(leaf, tracing.Tracer)}
                aux_leaves = [leaf for leaf in all_aux if isinstance(leaf, tracing.Tracer)]
            for i, leaf in enumerate(out_leaves):
                try:
                    aval_of(leaf)
                except TypeError:
                    raise TypeError(f"{what}: output leaf {i} of type {type(leaf).__name__} is not an array") \
                        from None
            return out_leaves + aux_leaves

        try:
            self.program, captured = tracing.trace_flat(flat_fun, avals, interpreted=True)
        except NEEDS_VALUES:
            # JAX's eager grad and jvp trace with the arguments' values at hand: Python control flow on them,
            # int() of them and data-dependent sizes (unique, nonzero) work outside jit. toolkit traces at
            # types first (one program, cached by the interpreters); when the function needs values, it is
            # traced again with them known: its program is then the path these arguments take.
            # Only where JAX has values: outside every trace, or inside a concrete one (an eager grad of a grad).
            # Under jit even a constant argument's operations are staged, so JAX's raise there too.
            known = [tracing.known_value(a) for a in flat_args]
            if not tracing.values_visible() or all(k is None for k in known):
                raise
            self.program, captured = tracing.trace_flat(flat_fun, avals, interpreted=True, known=known)
        self.in_tree = in_tree
        self.flat_args = list(flat_args) + list(captured)
        JVP_RULES.load_all()  # rule modules add to PREPARE_FOR_DIFFERENTIATION (shard_map's vma analysis)
        for prepare in PREPARE_FOR_DIFFERENTIATION:
            self.program = prepare(self.program, self.flat_args)
        self.num_explicit = len(flat_args)

    def split(self, outs: Sequence[Any]) -> tuple[Any, Any]:
        """The output tree and the aux tree (None without has_aux) from the program's outputs."""
        out = pytrees.tree_unflatten(self.out_tree, list(outs[:self.num_out]))
        if self.aux_tree is None:
            return out, None
        traced_aux = iter(outs[self.num_out:])
        aux_leaves = [self.aux_kept[i] if i in self.aux_kept else next(traced_aux)
                      for i in range(self.aux_tree.num_leaves)]
        return out, pytrees.tree_unflatten(self.aux_tree, aux_leaves)


def _check_tangent(primal: Any, tangent: Any, index: int) -> None:
    p, t = aval_of(primal), aval_of(tangent)
    if tuple(p.shape) != tuple(t.shape):
        raise ValueError(f"jvp: primal and tangent leaf {index} must have equal shapes, got primal {p.str_short()} "
                         f"and tangent {t.str_short()}")
    if is_differentiable(p) and p.dtype != t.dtype:
        raise TypeError(f"jvp: primal and tangent leaf {index} must have equal dtypes, got primal "
                        f"{p.str_short()} and tangent {t.str_short()}")


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(fun(*primals), J·tangents)``: the Jacobian-vector product (forward mode).

    ``primals`` and ``tangents`` are tuples or lists of the same tree of arrays.

    Example::

        y, dy = toolkit.jvp(tnp.sin, (x,), (np.ones_like(x),))   # dy == cos(x)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primal and tangent arguments must be tuples or lists, got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    primal_leaves, primal_tree = pytrees.tree_flatten(tuple(primals))
    tangent_leaves, tangent_tree = pytrees.tree_flatten(tuple(tangents))
    if primal_tree != tangent_tree:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree structure, got {primal_tree} "
                        f"and {tangent_tree}")
    for i, (p, t) in enumerate(zip(primal_leaves, tangent_leaves)):
        _check_tangent(p, t, i)
    traced = _TracedFunction(fun, primals, has_aux, "jvp")
    tangents_in = list(tangent_leaves) + [Zero(aval_of(c)) for c in traced.flat_args[traced.num_explicit:]]
    with tracing.transform_name_stack("jvp"):  # ops named jvp()/..., as JAX's
        outs, out_tangents = jvp_program(traced.program, traced.flat_args, tangents_in)
    out, aux = traced.split(outs)
    out_t = pytrees.tree_unflatten(traced.out_tree, [instantiate(t) for t in out_tangents[:traced.num_out]])
    return (out, out_t, aux) if has_aux else (out, out_t)


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``.

    ``f_jvp`` re-runs the forward-mode interpreter at the fixed primals (it is
    linear in the tangents; under ``jit`` XLA shares the primal computations).

    Example::

        y, f_jvp = toolkit.linearize(tnp.sin, x)
        f_jvp(np.ones_like(x))   # cos(x)
    """
    traced = _TracedFunction(fun, primals, has_aux, "linearize")
    with tracing.transform_name_stack("jvp"):  # JAX linearizes with jvp: its primal ops are jvp()/... too
        outs = eval_program(traced.program, traced.flat_args)
    out, aux = traced.split(outs)
    primal_leaves = traced.flat_args[:traced.num_explicit]

    def f_jvp(*tangents: Any) -> Any:
        leaves, tree = pytrees.tree_flatten(tuple(tangents))
        if tree != traced.in_tree:
            raise TypeError(f"linearize: the tangents' structure {tree} does not match the primals' {traced.in_tree}")
        for i, (p, t) in enumerate(zip(primal_leaves, leaves)):
            _check_tangent(p, t, i)
        tangents_in = list(leaves) + [Zero(aval_of(c)) for c in traced.flat_args[traced.num_explicit:]]
        with tracing.transform_name_stack("jvp"):
            _, out_tangents = jvp_program(traced.program, traced.flat_args, tangents_in)
        return pytrees.tree_unflatten(traced.out_tree, [instantiate(t) for t in out_tangents[:traced.num_out]])

    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False, reduce_axes: Sequence[Any] = ()
        ) -> tuple[Any, ...]:
    """``(fun(*primals), f_vjp)`` where ``f_vjp(cotangent)`` returns one cotangent per primal (a tuple).

    The cotangent has the structure, shapes and dtypes of ``fun``'s output.
    Integer and boolean primals get zero cotangents of their own dtype.

    Example::

        y, f_vjp = toolkit.vjp(lambda x, w: x @ w, x, w)
        dx, dw = f_vjp(np.ones_like(y))

    ``reduce_axes``: removed from JAX; anything but empty is JAX's ``NotImplementedError``.
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    traced = _TracedFunction(fun, primals, has_aux, "vjp")
    active = [i < traced.num_explicit for i in range(len(traced.flat_args))]
    outs, backward = vjp_program(traced.program, traced.flat_args, active, transform_names=True)
    out_avals = traced.program.out_avals
    in_avals = traced.program.in_avals[:traced.num_explicit]

    def f_vjp(cotangent: Any) -> tuple[Any, ...]:
        leaves, tree = pytrees.tree_flatten(cotangent)
        if tree != traced.out_tree:
            raise TypeError(f"vjp: the cotangent's structure {tree} does not match the output's {traced.out_tree}")
        for i, (leaf, aval) in enumerate(zip(leaves, out_avals)):
            got = aval_of(leaf)
            if tuple(got.shape) != tuple(aval.shape) or (is_differentiable(aval) and got.dtype != aval.dtype):
                raise ValueError(f"vjp: cotangent leaf {i} has type {got.str_short()} but the output is "
                                 f"{aval.str_short()}")
        cts = [ct if is_differentiable(a) else Zero(a) for ct, a in zip(leaves, out_avals)]
        cts_in = backward(cts + [Zero(a) for a in out_avals[traced.num_out:]])
        cts_in = [instantiate(ct) if not isinstance(ct, Zero) else instantiate(Zero(a))
                  for ct, a in zip(cts_in[:traced.num_explicit], in_avals)]
        return pytrees.tree_unflatten(traced.in_tree, cts_in)

    out, aux = traced.split(outs)
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _argnums_tuple(argnums: int | Sequence[int], nargs: int, what: str) -> tuple[int, ...]:
    many = not isinstance(argnums, (int, np.integer))
    nums = (int(argnums),) if isinstance(argnums, (int, np.integer)) else tuple(int(a) for a in argnums)
    if not nums and many:
        raise ValueError(f"{what}: argnums must not be empty")
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{what}: argnums {argnums} is out of bounds for a call with {nargs} positional "
                             f"arguments")
    return tuple(a % nargs for a in nums)


def _weak_like(gradient: Any, primal: Any) -> Any:
    """``gradient`` weakly typed when ``primal`` is (a Python float, a weak array): JAX's ``grad(f)(3.)`` is a
    weak float32, the cotangent having the primal's abstract value."""
    if not dtypes.is_weakly_typed(primal) or getattr(gradient, "weak_type", True):
        return gradient
    if getattr(gradient, "dtype", None) != aval_of(primal).dtype:
        return gradient
    return lax_elementwise.convert_element_type(gradient, gradient.dtype, weak_type=True)


def _as_array(value: Any) -> Any:
    """``value`` as a toolkit ``Array`` (placed on the default device), unless it is one or a tracer."""
    if isinstance(value, (tracing.Tracer, Array)):
        return value
    return device_put(np.asarray(value))


def check_input_dtype_revderiv(name: str, holomorphic: bool, allow_int: bool, x: Any) -> None:
    """JAX's check of an input ``x`` that reverse mode (``grad``, ``jacrev``) differentiates, with its messages."""
    dtype = aval_of(x).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, but got {dtype.name}.")
    if not dtypes.is_inexact(dtype) and not allow_int:
        raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                        f"np.inexact), but got {dtype.name}. If you want to use Boolean- or integer-valued inputs, "
                        "use vjp or set allow_int to True.")


def check_output_dtype_revderiv(name: str, holomorphic: bool, x: Any) -> None:
    """JAX's check of an output ``x`` that reverse mode (``grad``, ``jacrev``) differentiates, with its messages."""
    dtype = aval_of(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, but got "
                            f"{dtype.name}.")
    elif dtypes.is_complex(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
                        f"got {dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex outputs, use toolkit.vjp "
                        "directly.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
                        f"got {dtype.name}. For differentiation of functions with integer outputs, use toolkit.vjp "
                        "directly.")


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False, reduce_axes: Sequence[Any] = ()
                   ) -> Callable[..., Any]:
    """A function returning ``(fun(*args), gradient)`` (``((value, aux), gradient)`` with ``has_aux``).

    ``fun`` must return a real scalar. The gradient is taken with respect to
    the positional arguments ``argnums`` (an int: one gradient; a tuple: a
    tuple of gradients), each a pytree of floating arrays. ``holomorphic=True``:
    complex inputs and a complex scalar output, and the gradient is the complex
    derivative (the cotangent 1 is not conjugated), as JAX's.

    Example::

        loss, grads = toolkit.value_and_grad(loss_fn)(params, batch)

    ``reduce_axes``: removed from JAX; anything but empty is JAX's ``NotImplementedError``.
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    if not callable(fun):
        raise TypeError(f"value_and_grad: expected a callable function, got {type(fun).__name__}")
    what = "grad"

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), what)
        for a in nums:
            for leaf in pytrees.tree_leaves(args[a]):
                check_input_dtype_revderiv(what, holomorphic, allow_int, leaf)

        def partial_fun(*diff_args: Any) -> Any:
            full = list(args)
            for a, value in zip(nums, diff_args):
                full[a] = value
            return fun(*full, **kwargs)

        result = vjp(partial_fun, *(args[a] for a in nums), has_aux=has_aux)
        out, f_vjp = result[0], result[1]
        out_leaves = pytrees.tree_leaves(out)
        out_aval = aval_of(out) if len(out_leaves) == 1 and out_leaves[0] is out else None
        if out_aval is None or out_aval.shape != ():
            shape = "a non-array value" if out_aval is None else f"shape {out_aval.shape}"
            raise TypeError(f"grad requires scalar-valued function output, got {shape}. Use vjp or jacobians "
                            "for vector-valued outputs.")
        check_output_dtype_revderiv(what, holomorphic, out)
        # A cotangent that only passed through (d(x*y)/dy is x) can come back as the numpy value it
        # was computed from; JAX's grad always returns arrays, so every gradient leaf is made one.
        grad_leaves, grad_tree = pytrees.tree_flatten(f_vjp(np.ones((), out_aval.dtype)))
        grad_leaves = [_as_array(leaf) for leaf in grad_leaves]
        primal_leaves = pytrees.tree_leaves(tuple(args[a] for a in nums))
        if len(primal_leaves) == len(grad_leaves):  # a gradient is weakly typed where its primal is (JAX)
            grad_leaves = [_weak_like(g, p) for g, p in zip(grad_leaves, primal_leaves)]
        grads = pytrees.tree_unflatten(grad_tree, grad_leaves)
        gradient = grads[0] if isinstance(argnums, (int, np.integer)) else tuple(grads)
        value = (out, result[2]) if has_aux else out
        return value, gradient

    return _named_after(wrapped, fun)


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False, reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The gradient of the real scalar function ``fun`` with respect to its arguments ``argnums``.

    Returns ``gradient`` (or ``(gradient, aux)`` with ``has_aux``), with the
    structure of the differentiated arguments.

    Example::

        df = toolkit.grad(lambda x: tnp.sum(x ** 2))
        df(np.arange(3.0, dtype=np.float32))   # [0, 2, 4]
        toolkit.jit(toolkit.grad(df_scalar))   # transformations compose

    ``reduce_axes``: removed from JAX; anything but empty is JAX's ``NotImplementedError``.
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        value, gradient = value_and_grad_fun(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return _named_after(wrapped, fun)


def _named_after(wrapped: Callable[..., Any], fun: Callable[..., Any]) -> Callable[..., Any]:
    """``wrapped`` named as ``fun`` (``__name__``, ``__qualname__``, ``__wrapped__``), as JAX's transformations
    name theirs: ``jit(grad(f))`` lowers to ``@jit_f`` with ops named ``jit(f)/...``."""
    for attribute in ("__name__", "__qualname__", "__module__"):
        if hasattr(fun, attribute):
            setattr(wrapped, attribute, getattr(fun, attribute))
    wrapped.__wrapped__ = fun  # type: ignore[attr-defined]  # a function attribute, as functools.wraps sets it
    return wrapped
