"""Forward mode: the JVP interpreter and helpers to write JVP rules.

``jvp_program(program, primals, tangents)`` walks the program once, keeping
a primal and a tangent for every variable. A tangent is an array or a
symbolic ``Zero``: an equation whose inputs all have zero tangents is just
bound again (no rule runs), and integer or boolean results always get a zero
tangent.

A JVP rule is ``JVP_RULES[prim](primals, tangents, **params) -> (primal_out,
tangent_out)`` (lists for multiple-result primitives); ``tangents`` may hold
``Zero``s, and a rule may return ``Zero`` for an output. Rules bind
primitives, so they trace, run eagerly or nest exactly like user code.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from toolkit.ad.interpret import Environment, bind_equation
from toolkit.ad.registry import JVP_RULES, TRANSPOSE_RULES
from toolkit.ad.values import Zero, add_any, is_differentiable, tangent_aval, value_aval
from toolkit.core import tracing
from toolkit.core.avals import aval_of
from toolkit.core.primitive import Primitive
from toolkit.core.program import Equation, Literal, Program
from toolkit.ad.values import instantiate


class DifferentiationError(NotImplementedError):
    """A primitive has no rule for the requested kind of differentiation."""


def missing_rule(primitive: Primitive, kind: str, advice: str = "") -> DifferentiationError:
    return DifferentiationError(
        f"toolkit.ad: the primitive `{primitive.name}` has no {kind} rule, so it cannot be differentiated "
        f"{'in forward mode' if kind == 'JVP' else 'in reverse mode'}.{(' ' + advice) if advice else ''}")


def jvp_equation(eqn: Equation, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Primal and tangent outputs of one equation."""
    prim = eqn.primitive
    out_avals = [v.aval for v in eqn.outputs]
    if all(isinstance(t, Zero) for t in tangents) or not any(is_differentiable(a) for a in out_avals):
        outs = bind_equation(eqn, primals)
        return outs, [Zero(tangent_aval(a)) for a in out_avals]
    rule = JVP_RULES.lookup(prim)
    if rule is None:
        raise missing_rule(prim, "JVP")
    outs, out_tangents = rule(list(primals), list(tangents), **eqn.params)
    if not prim.multiple_results:
        outs, out_tangents = [outs], [out_tangents]
    out_tangents = [t if is_differentiable(a) else Zero(tangent_aval(a)) for t, a in zip(out_tangents, out_avals)]
    return list(outs), out_tangents


def jvp_program(program: Program, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Evaluate ``program`` at ``primals`` and push ``tangents`` (arrays or ``Zero``) forward."""
    if len(primals) != len(program.invars) or len(tangents) != len(program.invars):
        raise TypeError(f"jvp_program: the program takes {len(program.invars)} inputs, got {len(primals)} primals "
                        f"and {len(tangents)} tangents")
    env, tangent_env = Environment(), Environment()
    env.write_all(program.constvars, program.consts)
    tangent_env.write_all(program.constvars, [Zero(tangent_aval(v.aval)) for v in program.constvars])
    env.write_all(program.invars, primals)
    tangent_env.write_all(program.invars, [t if is_differentiable(v.aval) else Zero(tangent_aval(v.aval))
                                           for v, t in zip(program.invars, tangents)])

    def read_tangent(atom: Any) -> Any:
        if isinstance(atom, Literal):
            return Zero(tangent_aval(atom.aval))
        return tangent_env.read(atom)

    for eqn in program.eqns:
        with tracing.equation_context(eqn.source_info):  # what it makes points at the original's line
            outs, out_tangents = jvp_equation(eqn, [env.read(a) for a in eqn.inputs],
                                              [read_tangent(a) for a in eqn.inputs])
        env.write_all(eqn.outputs, outs)
        tangent_env.write_all(eqn.outputs, out_tangents)
    return [env.read(v) for v in program.outvars], [read_tangent(v) for v in program.outvars]


# --- helpers for writing rules -------------------------------------------------------


def defjvp(primitive: Primitive, *per_operand: Callable[..., Any] | None) -> None:
    """A JVP rule that sums one term per operand with a nonzero tangent.

    ``per_operand[i](tangent_i, answer, *primals, **params)`` is operand ``i``'s
    contribution (linear in ``tangent_i``); ``None`` means the output does not
    depend differentiably on operand ``i``.

    Example::

        defjvp(sin_p, lambda t, ans, x: t * cos(x))
    """
    def rule(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        answer = primitive.bind(*primals, **params)
        total: Any = Zero(tangent_aval(aval_of(answer)))
        for term, tangent in zip(per_operand, tangents):
            if term is None or isinstance(tangent, Zero):
                continue
            total = add_any(total, term(tangent, answer, *primals, **params))
        return answer, total
    rule.__name__ = f"{primitive.name}_jvp"
    JVP_RULES[primitive] = rule


def deflinear(primitive: Primitive, transpose: Callable[..., Any] | None = None) -> None:
    """Mark ``primitive`` linear in all its operands: its JVP is itself applied to the tangents.

    Zero tangents are materialized (a linear primitive of one zero and one
    nonzero operand still needs both).
    """

    def rule(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        answer = primitive.bind(*primals, **params)
        return answer, primitive.bind(*(instantiate(t) for t in tangents), **params)
    rule.__name__ = f"{primitive.name}_jvp"
    JVP_RULES[primitive] = rule
    if transpose is not None:
        TRANSPOSE_RULES[primitive] = transpose


def zero_tangent_jvp(primitive: Primitive) -> None:
    """The output is piecewise constant in the operands (comparisons, rounding, sign...): zero tangent."""
    def rule(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        answer = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return answer, [Zero(tangent_aval(aval_of(a))) for a in answer]
        return answer, Zero(tangent_aval(aval_of(answer)))
    rule.__name__ = f"{primitive.name}_jvp"
    rule.zero_tangent = True  # type: ignore[attr-defined]  # reverse mode reads it: outputs that need no cotangent
    JVP_RULES[primitive] = rule


def has_zero_tangent(primitive: Primitive) -> bool:
    """Whether ``primitive``'s outputs have a zero tangent whatever its inputs' (``zero_tangent_jvp``: comparisons,
    rounding, ``stop_gradient``): reverse mode does not make them depend on the differentiated inputs."""
    rule = JVP_RULES.lookup(primitive)
    return getattr(rule, "zero_tangent", False)


def tangent_like(value: Any) -> Any:
    return Zero(tangent_aval(value_aval(value)))
