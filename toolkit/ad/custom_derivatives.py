"""``custom_jvp`` and ``custom_vjp``: functions whose derivative the user writes (JAX's API).

A call of a decorated function inside a trace binds ``custom_jvp_call`` /
``custom_vjp_call`` (``toolkit/lax/calls.py``) carrying the traced primal
function; without differentiation it lowers as that function. Forward mode
uses the user's JVP rule, reverse mode linearizes and transposes it
(``custom_jvp``) or runs the user's ``fwd`` then ``bwd`` (``custom_vjp``); the
rules are in ``toolkit/ad/rules/calls.py``. Outside any trace the function
just runs.

Example — a numerically stable log-sum-exp and a straight-through estimator::

    @toolkit.custom_jvp
    def logsumexp(x):
        m = tnp.max(x)
        return m + tnp.log(tnp.sum(tnp.exp(x - m)))

    @logsumexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        y = logsumexp(x)
        return y, tnp.sum(tnp.exp(x - y) * t)

    @toolkit.custom_vjp
    def round_ste(x):
        return tnp.round(x)
    round_ste.defvjp(lambda x: (tnp.round(x), None), lambda _, g: (g,))

Differences from JAX: a JVP rule is traced when the function is called (so
it may close over traced values); with ``symbolic_zeros=True`` it is called
during differentiation instead and must not close over values traced inside
the differentiated function. Values a ``custom_vjp`` function closes over are
constants to it (JAX asks for ``closure_convert``).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from toolkit.ad.values import Zero, instantiate, tangent_aval, value_aval
from toolkit.core import tracing, pytrees
from toolkit.core.avals import ShapedArray, aval_of, leaf_avals
from toolkit.lax import autodiff, calls, control_flow
from toolkit.lax.calls import JVPRule
from toolkit.ad.values import zeros
from toolkit.lax import elementwise

__all__ = ["custom_jvp", "custom_vjp", "SymbolicZero", "zero_from_primal", "CustomVJPPrimal"]


class SymbolicZero:
    """A zero tangent passed to a ``symbolic_zeros=True`` rule for an input that is not being differentiated.

    It has the ``shape`` and ``dtype`` of the tangent it stands for; it is not an
    array (``toolkit.numpy`` does not accept it). A rule may also return it.
    """

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    shape = property(lambda self: self.aval.shape, doc="The shape of the tangent it stands for.")
    dtype = property(lambda self: self.aval.dtype, doc="The dtype of the tangent it stands for.")
    ndim = property(lambda self: len(self.aval.shape), doc="The rank of the tangent it stands for.")

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval.str_short()})"


class CustomVJPPrimal:
    """A primal input given to a ``custom_vjp`` ``fwd`` defined with ``symbolic_zeros=True``."""

    def __init__(self, value: Any, perturbed: bool):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def zero_from_primal(value: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents shaped like the pytree ``value``: ``SymbolicZero``s or zero arrays."""

    def one(x: Any) -> Any:
        aval = tangent_aval(aval_of(x))
        return SymbolicZero(aval) if symbolic_zeros else zeros(aval)
    return pytrees.tree_map(one, value)


# --- shared --------------------------------------------------------------------------------------


def _resolve_args(fun: Callable[..., Any], args: tuple, kwargs: dict, what: str) -> tuple:
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what}: the arguments do not match the function's signature: {exc}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{what}: keyword-only arguments are not supported: {sorted(bound.kwargs)}")
    return tuple(bound.args)


def _check_nondiff_argnums(nondiff_argnums: Sequence[int]) -> tuple[int, ...]:
    nums = tuple(int(i) for i in nondiff_argnums)
    if len(set(nums)) != len(nums):
        raise ValueError(f"nondiff_argnums has duplicates: {nums}")
    return nums


def _split_args(args: tuple, nondiff: tuple[int, ...], what: str) -> tuple[list[int], list[Any]]:
    for i in nondiff:
        if not -len(args) <= i < len(args):
            raise ValueError(f"{what}: nondiff_argnums {nondiff} is out of bounds for a call with {len(args)} "
                             "positional arguments")
    nondiff = tuple(i % len(args) for i in nondiff) if args else nondiff
    diff_positions = [i for i in range(len(args)) if i not in nondiff]
    return diff_positions, [args[i] for i in diff_positions]


def _leaf_avals(leaves: Sequence[Any], what: str) -> list[ShapedArray]:
    return leaf_avals(leaves, what, "; pass non-array arguments through nondiff_argnums")


def _trace_sharing_consts(funs: Sequence[Callable[..., list[Any]]], avals: Sequence[Sequence[ShapedArray]],
                          leaves: Sequence[Any] = ()):
    """Trace each ``funs[k]`` at ``avals[k]``; every program also takes the union of captured values, in order.

    Inside a concrete trace (an eager ``grad`` of a function that needs its arguments' values) the functions are
    traced with the values of ``leaves`` (their first inputs) known too, as JAX runs a custom rule on the values:
    Python control flow in the function or its rule follows them."""
    known = [tracing.known_value(x) for x in leaves] if tracing.values_visible() else []
    if all(k is None for k in known):
        traced = [tracing.trace_flat(f, list(a)) for f, a in zip(funs, avals)]
    else:  # the rule's trailing inputs (tangents) stay unknown
        traced = [tracing.trace_flat(f, list(a), known=known + [None] * (len(a) - len(known)))
                  for f, a in zip(funs, avals)]
    return control_flow.common_captured(traced, [len(a) for a in avals])


def _check_out_leaves(leaves: Sequence[Any], what: str) -> None:
    for i, leaf in enumerate(leaves):
        try:
            aval_of(leaf)
        except TypeError:
            raise TypeError(f"{what}: output leaf {i} of type {type(leaf).__name__} is not an array") from None

class _FlatPrimal:
    """A custom-derivative function as a function of the flat leaves of its differentiable arguments.

    The non-differentiable arguments (``nondiff_argnums``) stay as given;
    ``out_tree`` is the output tree of the first call (the trace of the primal).
    """

    def __init__(self, fun: Callable, args: Sequence[Any], diff_positions: Sequence[int],
                 in_tree: pytrees.PyTreeDef, what: str):
        self.fun, self.args, self.diff_positions, self.in_tree, self.what = fun, args, diff_positions, in_tree, what
        self._out_trees: list[Any] = []

    def full_args(self, diff_values: Sequence[Any]) -> list[Any]:
        """All the arguments, with ``diff_values`` at the differentiable positions."""
        full = list(self.args)
        for position, value in zip(self.diff_positions, diff_values):
            full[position] = value
        return full

    def __call__(self, *xs: Any) -> list[Any]:
        out = self.fun(*self.full_args(pytrees.tree_unflatten(self.in_tree, list(xs))))
        out_leaves, out_tree = pytrees.tree_flatten(out)
        _check_out_leaves(out_leaves, self.what)
        self._out_trees.append(out_tree)
        return out_leaves

    @property
    def out_tree(self) -> pytrees.PyTreeDef:
        return self._out_trees[0]



def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


# --- custom_jvp ----------------------------------------------------------------------------------


class custom_jvp:
    """Set up a JAX-transformable function with a custom JVP rule (``jax.custom_jvp``).

    ``f = custom_jvp(fun, nondiff_argnums=())``, then ``f.defjvp(rule)`` with
    ``rule(primals, tangents) -> (primal_out, tangent_out)`` (with
    ``nondiff_argnums``: ``rule(*nondiff_args, primals, tangents)``), or
    ``f.defjvps(*per_argument)`` with ``per_argument[i](g_i, ans, *primals)``.
    Reverse mode transposes the rule, so its tangent output must be linear in
    the tangents.
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        self._tracing_rule = 0  # > 0 while the JVP rule is traced: calls of the function inside it run inline

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Define the JVP rule; returns ``jvp`` (so it works as a decorator)."""
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per differentiable argument: ``jvps[i](g_i, ans, *primals)``; ``None`` for no dependence."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            ans = self(*primals)
            if len(jvps) != len(primals):
                raise TypeError(f"custom_jvp.defjvps: got {len(jvps)} rules for {len(primals)} arguments")
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                term = rule(t, ans, *primals)
                total = term if total is None else pytrees.tree_map(_add, total, term)
            if total is None:
                total = zero_from_primal(ans)
            return ans, total
        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self.fun, "__name__", "fun")
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_args(self.fun, args, kwargs, f"custom_jvp function {name}")
        if not tracing.is_tracing() or self._tracing_rule:
            # Eagerly nothing can differentiate the value; inside its own JVP rule (``y = f(x)``) the
            # function is its primal computation.
            return self.fun(*args)
        diff_positions, diff_args = _split_args(args, self.nondiff_argnums, f"custom_jvp function {name}")
        # As JAX's: traced non-differentiable arguments pass through stop_gradient, so the rule alone says the
        # derivative (their tangents are not differentiated through the function).
        args = tuple(args[i] if i in diff_positions else pytrees.tree_map(_stop_gradient, args[i])
                     for i in range(len(args)))
        nondiff_args = [args[i] for i in range(len(args)) if i not in diff_positions]
        leaves, in_tree = pytrees.tree_flatten(tuple(diff_args))
        avals = _leaf_avals(leaves, f"custom_jvp function {name}")
        t_avals = [tangent_aval(a) for a in avals]
        flat_fun = _FlatPrimal(self.fun, args, diff_positions, in_tree, f"custom_jvp function {name}")

        def call_rule(primal_leaves: Sequence[Any], tangent_leaves: Sequence[Any]) -> tuple[list[Any], list[Any]]:
            primals = pytrees.tree_unflatten(in_tree, list(primal_leaves))
            tangents = pytrees.tree_unflatten(in_tree, list(tangent_leaves))
            jvp = self.jvp  # read when the rule runs, as before: a later defjvp replaces it
            assert jvp is not None  # __call__ checked that defjvp gave a rule
            out = jvp(*nondiff_args, primals, tangents)
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"Custom JVP rule {getattr(jvp, '__name__', 'jvp')} for function {name} must "
                                f"produce a pair (list or tuple of length two) representing primal and tangent "
                                f"outputs, but got {out!r}.")
            primal_out, tangent_out = out
            p_leaves, p_tree = pytrees.tree_flatten(primal_out)
            t_leaves, t_tree = pytrees.tree_flatten(tangent_out)
            out_tree = flat_fun.out_tree
            if p_tree != out_tree:
                raise TypeError(f"Custom JVP rule must produce primal outputs with the same container (pytree) "
                                f"structure as the custom_jvp-decorated function {name} produces, got {p_tree} "
                                f"and {out_tree}.")
            if t_tree != p_tree:
                raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with equal container "
                                f"(pytree) structures, but got {p_tree} and {t_tree} respectively.")
            for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
                pa = value_aval(p)
                ta = t.aval if isinstance(t, (SymbolicZero, Zero)) else aval_of(t)
                if tuple(pa.shape) != tuple(ta.shape):
                    raise ValueError(f"Custom JVP rule must produce primal and tangent outputs with equal shapes; "
                                     f"output {i} has primal shape {tuple(pa.shape)} and tangent shape "
                                     f"{tuple(ta.shape)}.")
            return list(p_leaves), list(t_leaves)

        if self.symbolic_zeros:
            (call,), consts = _trace_sharing_consts([flat_fun], [avals], leaves)

            def lazy(arg_values: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
                ts = [SymbolicZero(t.aval) if isinstance(t, Zero) else t for t in tangents]
                outs, out_ts = call_rule(arg_values, ts)
                return outs, [Zero(t.aval) if isinstance(t, SymbolicZero) else t for t in out_ts]
            rule = JVPRule(getattr(self.jvp, "__name__", "jvp"), None, lazy)
        else:
            def flat_jvp(*xs: Any) -> list[Any]:
                outs, out_ts = call_rule(xs[:len(avals)], xs[len(avals):])
                return list(outs) + [instantiate(Zero(value_aval(o))) if isinstance(t, SymbolicZero) else t
                                     for o, t in zip(outs, out_ts)]
            # The primal function first: its output tree is what the rule is checked against.
            self._tracing_rule += 1
            try:
                (call, jvp_program), consts = _trace_sharing_consts([flat_fun, flat_jvp], [avals, avals + t_avals],
                                                                  leaves)
            finally:
                self._tracing_rule -= 1
            num_out = len(call.outvars)
            for i, (a, b) in enumerate(zip(call.out_avals, jvp_program.out_avals[:num_out])):
                if not _same_type(a, b):
                    raise TypeError(f"Custom JVP rule must produce primal outputs with the same shapes and dtypes as "
                                    f"the custom_jvp-decorated function {name}: output {i} is {b.str_short()} from "
                                    f"the rule but {a.str_short()} from the function.")
            for i, (a, b) in enumerate(zip(call.out_avals, jvp_program.out_avals[num_out:])):
                expected = tangent_aval(a)
                if b.dtype != expected.dtype and np.dtype(expected.dtype).kind in "fc":
                    raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with corresponding "
                                    f"shapes and dtypes. Expected {expected.str_short()} (tangent type of primal "
                                    f"{a.str_short()}) for tangent output {i} but got {b.str_short()}.")
            rule = JVPRule(getattr(self.jvp, "__name__", "jvp"), jvp_program, None)
        outs = calls.custom_jvp_call_p.bind(*leaves, *consts, call=call, jvp=rule, num_consts=len(consts),
                                            symbolic_zeros=self.symbolic_zeros)
        return pytrees.tree_unflatten(flat_fun.out_tree, list(outs))


def _stop_gradient(x: Any) -> Any:
    return autodiff.stop_gradient(x) if isinstance(x, tracing.Tracer) else x


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, SymbolicZero):
        return b
    if isinstance(b, SymbolicZero):
        return a
    return elementwise.add(a, b)


# --- custom_vjp ----------------------------------------------------------------------------------


class VJPFunctions:
    """What a ``custom_vjp_call`` carries: the user's ``fwd``/``bwd`` adapted to flat leaves."""

    def __init__(self, name: str, fwd: Callable[..., Any], bwd: Callable[..., Any]):
        self.__name__ = name
        self.fwd = fwd      # (leaf_values, perturbed) -> (out_leaves, residuals)
        self.bwd = bwd      # (residuals, out_cotangent_leaves) -> in_cotangent_leaves

    def __repr__(self) -> str:
        return self.__name__


class custom_vjp:
    """Set up a JAX-transformable function with a custom VJP rule (``jax.custom_vjp``).

    ``f = custom_vjp(fun, nondiff_argnums=())``, then ``f.defvjp(fwd, bwd)``:
    ``fwd(*args) -> (out, residuals)`` and ``bwd(*nondiff_args, residuals,
    out_cotangent) -> tuple`` with one cotangent per differentiable argument
    (``None`` for zeros). Forward mode (``jvp``) is refused, as in JAX.
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """Set the forward rule ``fwd(*args) -> (out, residuals)`` and the backward rule
        ``bwd(residuals, out_cotangent) -> input cotangents`` (a tuple, one per argument), as ``jax.custom_vjp``.

        ``symbolic_zeros=True`` passes zero cotangents as such; ``optimize_remat=True`` is not supported
        (``NotImplementedError``).
        """
        if optimize_remat:
            raise NotImplementedError("custom_vjp.defvjp: optimize_remat=True is not supported")
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, bool(symbolic_zeros)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self.fun, "__name__", "fun")
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_args(self.fun, args, kwargs, f"custom_vjp function {name}")
        if not tracing.is_tracing():
            return self.fun(*args)
        diff_positions, diff_args = _split_args(args, self.nondiff_argnums, f"custom_vjp function {name}")
        nondiff_args = [args[i] for i in range(len(args)) if i not in diff_positions]
        for i in range(len(args)):
            if i not in diff_positions and any(isinstance(leaf, tracing.Tracer) for leaf in pytrees.tree_leaves(
                    args[i])):
                raise TypeError(
                    f"Found a traced value passed as an argument to the custom_vjp function {name} in position {i}, "
                    "indicated by nondiff_argnums as non-differentiable. Traced values cannot be passed as "
                    "non-differentiable arguments to custom_vjp functions; instead, nondiff_argnums should only be "
                    "used for arguments that can't be or contain traced values (Python objects, functions).")
        leaves, in_tree = pytrees.tree_flatten(tuple(diff_args))
        avals = _leaf_avals(leaves, f"custom_vjp function {name}")
        flat_fun = _FlatPrimal(self.fun, args, diff_positions, in_tree, f"custom_vjp function {name}")

        (call,), consts = _trace_sharing_consts([flat_fun], [avals], leaves)
        out_tree = flat_fun.out_tree
        out_avals = call.out_avals
        fwd_name = getattr(self.fwd, "__name__", "fwd")
        bwd_name = getattr(self.bwd, "__name__", "bwd")
        symbolic = self.symbolic_zeros

        def fwd(leaf_values: Sequence[Any], perturbed: Sequence[bool]) -> tuple[list[Any], Any]:
            values = list(leaf_values)
            if symbolic:
                values = [CustomVJPPrimal(v, p) for v, p in zip(values, perturbed)]
            fwd_rule = self.fwd  # read when the rule runs, as before: a later defvjp replaces it
            assert fwd_rule is not None  # __call__ checked that defvjp gave the rules
            out = fwd_rule(*flat_fun.full_args(pytrees.tree_unflatten(in_tree, values)))
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair (list or "
                                f"tuple of length two) where the first element represents the primal output "
                                f"(equal to the output of the custom_vjp-decorated function {name}) and the second "
                                f"element represents residuals (i.e. values stored from the forward pass for use "
                                f"on the backward pass), but got {type(out).__name__}.")
            primal_out, residuals = out
            p_leaves, p_tree = pytrees.tree_flatten(primal_out)
            if p_tree != out_tree:
                raise TypeError(f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair (list or "
                                f"tuple of length two) where the first element represents the primal output "
                                f"(equal in value to the output of the custom_vjp-decorated function {name}, and "
                                f"in particular of the same container/pytree structure), but instead the fwd "
                                f"rule output's first element had container/pytree structure {p_tree} while the "
                                f"custom_vjp-decorated function {name} had output container/pytree structure "
                                f"{out_tree}.")
            for i, (p, a) in enumerate(zip(p_leaves, out_avals)):
                if not _same_type(aval_of(p), a):
                    raise TypeError(f"Custom VJP fwd rule {fwd_name} for function {name} must produce primal "
                                    f"outputs of the types the function produces: output {i} is "
                                    f"{aval_of(p).str_short()} from fwd but {a.str_short()} from {name}.")
            return list(p_leaves), residuals

        def bwd(residuals: Any, cotangent_leaves: Sequence[Any]) -> list[Any]:
            cts = [SymbolicZero(c.aval) if symbolic and isinstance(c, Zero) else instantiate(c)
                   for c in cotangent_leaves]
            bwd_rule = self.bwd  # read when the rule runs, as before: a later defvjp replaces it
            assert bwd_rule is not None  # __call__ checked that defvjp gave the rules
            result = bwd_rule(*nondiff_args, residuals, pytrees.tree_unflatten(out_tree, cts))
            if not isinstance(result, (tuple, list)):
                raise TypeError(f"Custom VJP bwd rule must produce a tuple (or list) of length equal to the number "
                                f"of differentiable arguments of the custom_vjp-decorated function {name} "
                                f"({len(diff_args)}), but {bwd_name} produced {type(result).__name__}.")
            if len(result) != len(diff_args):
                raise TypeError(f"Custom VJP bwd rule must produce a tuple of length equal to the primal args "
                                f"tuple, but got length {len(result)} and expected {len(diff_args)}.")
            out_leaves: list[Any] = []
            for k, (arg, ct) in enumerate(zip(diff_args, result)):
                arg_leaves, arg_tree = pytrees.tree_flatten(arg)
                if ct is None:
                    out_leaves += [None] * len(arg_leaves)
                    continue
                ct_leaves, ct_tree = pytrees.tree_flatten(ct, is_leaf=lambda x: x is None)
                if ct_tree != arg_tree:
                    raise TypeError(f"Custom VJP bwd rule {bwd_name} must produce an output with the same container "
                                    f"(pytree) structure as the args tuple of the primal function; argument {k} "
                                    f"has structure {arg_tree} but its cotangent {ct_tree}.")
                for leaf, c in zip(arg_leaves, ct_leaves):
                    if c is None or isinstance(c, SymbolicZero):
                        out_leaves.append(None)
                        continue
                    want, got = tangent_aval(aval_of(leaf)), aval_of(c)
                    if tuple(want.shape) != tuple(got.shape):
                        raise ValueError(f"Custom VJP bwd rule must produce an output with the same shape/dtypes as "
                                         f"the args tuple of the primal function; got a cotangent of shape "
                                         f"{tuple(got.shape)} for an argument of shape {tuple(want.shape)} "
                                         f"(argument {k}).")
                    out_leaves.append(c)
            return out_leaves

        functions = VJPFunctions(f"{fwd_name}/{bwd_name}", fwd, bwd)
        outs = calls.custom_vjp_call_p.bind(*leaves, *consts, call=call, fwd=functions, bwd=functions,
                                            num_consts=len(consts), symbolic_zeros=symbolic)
        return pytrees.tree_unflatten(out_tree, list(outs))
