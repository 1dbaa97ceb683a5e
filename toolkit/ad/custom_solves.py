"""The implementations of ``toolkit.lax.custom_linear_solve`` and ``custom_root`` (see that module).

Each is a ``custom_vjp`` over the floating values its function closes over (``closure_convert``)
and its right-hand side / initial guess, whose backward rule is JAX's implicit differentiation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolkit.ad.api import linearize, vjp
from toolkit.ad.closures import _maybe_perturbed, _Traced, linear_transpose
from toolkit.ad.interpret import eval_program
from toolkit.ad.custom_derivatives import custom_vjp
from toolkit.core import pytrees
from toolkit.core.avals import aval_of, leaf_avals
from toolkit.lax import custom_solves, elementwise


def _structure(x: Any) -> tuple[Any, list[tuple[tuple[int, ...], Any]]]:
    leaves, tree = pytrees.tree_flatten(x)
    return tree, [(tuple(aval_of(v).shape), aval_of(v).dtype) for v in leaves]


def _check_like(what: str, got: Any, want: Any, has_aux: bool = False) -> None:
    """``got`` (``what``'s output) has the tree, shapes and dtypes of ``want``, as JAX's ``_check_tree``."""
    if has_aux:
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            raise TypeError(f"{what}() with has_aux=True must return a pair (output, aux), got {type(got).__name__}")
        got = got[0]
    got_tree, got_types = _structure(got)
    want_tree, want_types = _structure(want)
    if got_tree != want_tree or got_types != want_types:
        raise TypeError(f"{what}() output pytree structure must match the input's, got {got_tree} with "
                        f"{got_types} and {want_tree} with {want_types}")


def _convert(fun: Callable[..., Any], what: str, *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``fun`` traced now at ``example_args``' types: ``converted(*args, *captured)`` and the ``captured`` values.

    Unlike ``closure_convert`` every captured value of an enclosing trace is returned (integer ones too), so
    a rule run later, in another trace, never reads a tracer of this one.
    """
    flat, in_tree = pytrees.tree_flatten(example_args)
    traced = _Traced(fun, in_tree, leaf_avals(flat, what), what)
    count = len(traced.captured)

    def converted(*args_and_captured: Any) -> Any:
        split = len(args_and_captured) - count
        leaves, tree = pytrees.tree_flatten(tuple(args_and_captured[:split]))
        traced.check_inputs(tree, what)
        outs = eval_program(traced.program, list(leaves) + list(args_and_captured[split:]))
        return pytrees.tree_unflatten(traced.out_tree, outs)

    return converted, list(traced.captured)


def _split_perturbed(values: list[Any]) -> tuple[list[Any], list[Any], Callable[[list[Any], list[Any]], list[Any]]]:
    """(differentiable values, the others, merge(diff, others) -> the original order)."""
    mask = [_maybe_perturbed(v) for v in values]

    def merge(diff: list[Any], others: list[Any]) -> list[Any]:
        d, o = iter(diff), iter(others)
        return [next(d) if m else next(o) for m in mask]

    return [v for v, m in zip(values, mask) if m], [v for v, m in zip(values, mask) if not m], merge


def _negate(tree: Any) -> Any:
    return pytrees.tree_map(elementwise.neg, tree)


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any, solve: Callable[..., Any],
                        transpose_solve: Callable[..., Any] | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """See :func:`toolkit.lax.custom_linear_solve`."""
    for name, fn in (("matvec", matvec), ("solve", solve)):
        if not callable(fn):
            raise TypeError(f"custom_linear_solve: {name} must be callable, got {type(fn).__name__}")
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError(f"custom_linear_solve: transpose_solve must be callable or None, got "
                        f"{type(transpose_solve).__name__}")
    matvec_converted, captured = _convert(matvec, "custom_linear_solve", b)
    hoisted, fixed, merge = _split_perturbed(captured)

    def converted(v: Any, *diff: Any) -> Any:
        return matvec_converted(v, *merge(list(diff), fixed))

    _check_like("matvec", converted(b, *hoisted), b)

    def operator_at(consts: list[Any]) -> Callable[[Any], Any]:
        return lambda v: converted(v, *consts)

    # solve and transpose_solve are traced now (as JAX traces them to jaxprs): what they close over becomes
    # explicit inputs, so the backward rule never touches values of the trace that called us.
    def solve_with(rhs: Any, consts: list[Any]) -> Any:
        out = solve(operator_at(consts), rhs)
        _check_like("solve", out, rhs, has_aux)
        return out

    solve_converted, solve_consts = _convert(solve_with, "custom_linear_solve", b, hoisted)
    ts_converted: Callable[..., Any] | None = None
    ts_consts: list[Any] = []
    if transpose_solve is not None:
        user_transpose_solve = transpose_solve

        def transpose_solve_with(ct: Any, consts: list[Any]) -> Any:
            forward = operator_at(consts)
            if symmetric:
                vecmat = forward
            else:
                transposed = linear_transpose(forward, b)
                vecmat = lambda y: transposed(y)[0]  # noqa: E731
            out = user_transpose_solve(vecmat, ct)
            _check_like("transpose_solve", out, b, has_aux)  # with has_aux it returns (x, aux) too, as in JAX
            return out[0] if has_aux else out

        ts_converted, ts_consts = _convert(transpose_solve_with, "custom_linear_solve", b, hoisted)

    def run(consts: list[Any], rhs: Any, others: list[Any], s_consts: list[Any], t_consts: list[Any]) -> Any:
        return solve_converted(rhs, consts, *s_consts)

    def fwd(consts: list[Any], rhs: Any, others: list[Any], s_consts: list[Any],
            t_consts: list[Any]) -> tuple[Any, Any]:
        out = run(consts, rhs, others, s_consts, t_consts)
        return out, (consts, out[0] if has_aux else out, others, t_consts)

    def bwd(residuals: Any, cotangent: Any) -> tuple[Any, ...]:
        consts, x, others, t_consts = residuals
        ct_x = cotangent[0] if has_aux else cotangent
        if ts_converted is None:
            raise TypeError("transpose_solve required for backwards mode automatic differentiation of "
                            "custom_linear_solve")
        ct_b = ts_converted(ct_x, consts, *t_consts)
        # x = A⁻¹ b: the cotangent of A's parameters θ is -(∂(A x)/∂θ)ᵀ b̄ (JAX's rule).
        _, pullback = vjp(lambda *c: matvec_converted(x, *merge(list(c), others)), *consts)
        ct_consts = list(pullback(_negate(ct_b))) if consts else []
        return ct_consts, ct_b, None, None, None

    solver = custom_vjp(run)
    solver.defvjp(fwd, bwd)
    return solver(list(hoisted), b, list(fixed), list(solve_consts), list(ts_consts))


def custom_root(f: Callable[[Any], Any], initial_guess: Any, solve: Callable[..., Any],
                tangent_solve: Callable[..., Any], has_aux: bool = False) -> Any:
    """See :func:`toolkit.lax.custom_root`."""
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise TypeError(f"custom_root: {name} must be callable, got {type(fn).__name__}")
    f_converted, captured = _convert(f, "custom_root", initial_guess)
    hoisted, fixed, merge = _split_perturbed(captured)

    def converted(x: Any, *diff: Any) -> Any:
        return f_converted(x, *merge(list(diff), fixed))

    _check_like("f", converted(initial_guess, *hoisted), initial_guess)

    def function_at(consts: list[Any]) -> Callable[[Any], Any]:
        return lambda x: converted(x, *consts)

    def solve_with(guess: Any, consts: list[Any]) -> Any:
        out = solve(function_at(consts), guess)
        _check_like("solve", out, guess, has_aux)
        return out

    def transposed_tangent_solve(ct_root: Any, consts: list[Any], root: Any) -> Any:
        # ẋ = -tangent_solve(∂ₓf, ∂_θf θ̇) at the root (JAX's JVP): the transpose of tangent_solve in its
        # right-hand side, applied to the root's cotangent.
        _, f_jvp = linearize(function_at(consts), root)
        out = tangent_solve(f_jvp, root)
        _check_like("tangent_solve", out, root)
        (ct_rhs,) = linear_transpose(lambda rhs: tangent_solve(f_jvp, rhs), root)(ct_root)
        return ct_rhs

    solve_converted, solve_consts = _convert(solve_with, "custom_root", initial_guess, hoisted)
    ts_converted, ts_consts = _convert(transposed_tangent_solve, "custom_root", initial_guess, hoisted, initial_guess)

    def run(consts: list[Any], guess: Any, others: list[Any], s_consts: list[Any], t_consts: list[Any]) -> Any:
        return solve_converted(guess, consts, *s_consts)

    def fwd(consts: list[Any], guess: Any, others: list[Any], s_consts: list[Any],
            t_consts: list[Any]) -> tuple[Any, Any]:
        out = run(consts, guess, others, s_consts, t_consts)
        return out, (consts, out[0] if has_aux else out, others, t_consts)

    def bwd(residuals: Any, cotangent: Any) -> tuple[Any, ...]:
        consts, root, others, t_consts = residuals
        ct_root = cotangent[0] if has_aux else cotangent
        ct_rhs = ts_converted(ct_root, consts, root, *t_consts)
        _, pullback = vjp(lambda *c: f_converted(root, *merge(list(c), others)), *consts)
        ct_consts = list(pullback(_negate(ct_rhs))) if consts else []
        return ct_consts, None, None, None, None

    solver = custom_vjp(run)
    solver.defvjp(fwd, bwd)
    return solver(list(hoisted), initial_guess, list(fixed), list(solve_consts), list(ts_consts))


custom_solves.set_custom_solve_handlers(custom_linear_solve, custom_root)
