"""Transposing a program that is linear in some of its inputs.

``backward_pass(program, num_linear, nonlinear_args, cotangents)`` takes a
program whose first ``num_linear`` inputs are the linear ones (their values
unknown) and whose other inputs are known. Equations that do not depend on
a linear input are evaluated forward (they compute coefficients such as
``cos(x)``); the remaining ones are linear and are walked in reverse, each
calling its primitive's transpose rule.

Only the forward equations whose values a linear equation (or an output)
reads are evaluated, and a value the caller already has (``known``: a
primal output the forward pass computed) is used instead of recomputing it.
Under ``jit`` every evaluated equation becomes an op of the lowered module,
so this is what keeps a training step's backward pass from repeating its
forward matmuls and transcendentals for XLA to merge again.

A transpose rule is ``TRANSPOSE_RULES[prim](cotangent_out, *operands, **params) ->
cotangents_in``: the operands the equation is linear in are
``UndefinedPrimal``s, the others are values; it returns one cotangent (or
``None``/``Zero``) per operand. ``cotangent_out`` is a list for
multiple-result primitives and may be a ``Zero``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from toolkit.ad.interpret import Environment, bind_equation
from toolkit.ad.jvp import missing_rule
from toolkit.ad.registry import TRANSPOSE_RULES
from toolkit.ad.values import UndefinedPrimal, Zero, add_any, tangent_aval
from toolkit.core import tracing
from toolkit.core.program import Program, Var


def backward_pass(program: Program, num_linear: int, nonlinear_args: Sequence[Any],
                  cotangents: Sequence[Any], known: Mapping[Var, Any] | None = None,
                  transpose_names: bool = False) -> list[Any]:
    """Cotangents of the first ``num_linear`` inputs of ``program`` given those of its outputs.

    ``known`` maps some of the program's variables to values already computed;
    the equations producing them are not evaluated again. What each equation's
    evaluation or transposition makes is located at the equation's source;
    ``transpose_names``: the transpositions' ops are named under ``transpose``
    (JAX's ``transpose(jvp())/mul``).
    """
    if len(cotangents) != len(program.outvars):
        raise TypeError(f"backward_pass: {len(program.outvars)} outputs but {len(cotangents)} cotangents")
    env = Environment()
    env.write_all(program.constvars, program.consts)
    env.write_all(program.invars[num_linear:], nonlinear_args)
    linear: set[Var] = set(program.invars[:num_linear])
    linear_eqns, forward_eqns = [], []
    for eqn in program.eqns:
        if any(isinstance(a, Var) and a in linear for a in eqn.inputs):
            linear.update(eqn.outputs)
            linear_eqns.append(eqn)
        else:
            forward_eqns.append(eqn)
    # The forward values the transposition reads, and transitively what they are computed from.
    needed: set[Var] = {a for eqn in linear_eqns for a in eqn.inputs if isinstance(a, Var) and a not in linear}
    needed.update(v for v in program.outvars if isinstance(v, Var) and v not in linear)
    evaluate = []
    for eqn in reversed(forward_eqns):
        if not any(v in needed for v in eqn.outputs):
            continue
        if known and all(v in known for v in eqn.outputs):
            env.write_all(eqn.outputs, [known[v] for v in eqn.outputs])
            continue
        evaluate.append(eqn)
        needed.update(a for a in eqn.inputs if isinstance(a, Var))
    for eqn in reversed(evaluate):
        with tracing.equation_context(eqn.source_info):
            env.write_all(eqn.outputs, bind_equation(eqn, [env.read(a) for a in eqn.inputs]))

    cotangent_env: dict[Var, Any] = {}

    def accumulate(var: Var, ct: Any) -> None:
        if ct is None or isinstance(ct, Zero):
            return
        cotangent_env[var] = add_any(cotangent_env[var], ct) if var in cotangent_env else ct

    for var, ct in zip(program.outvars, cotangents):
        if isinstance(var, Var) and var in linear:
            accumulate(var, ct)
    transform = ("transpose",) if transpose_names else ()
    for eqn in reversed(linear_eqns):
        cts_out = [cotangent_env.pop(v, None) for v in eqn.outputs]
        if all(ct is None for ct in cts_out):
            continue
        cts_out = [Zero(tangent_aval(v.aval)) if ct is None else ct for v, ct in zip(eqn.outputs, cts_out)]
        prim = eqn.primitive
        rule = TRANSPOSE_RULES.lookup(prim)
        if rule is None:
            raise missing_rule(prim, "transpose")
        operands = [UndefinedPrimal(a.aval) if isinstance(a, Var) and a in linear else env.read(a)
                    for a in eqn.inputs]
        with tracing.equation_context(eqn.source_info, *transform):
            cts_in = rule(cts_out if prim.multiple_results else cts_out[0], *operands, **eqn.params)
        for atom, ct in zip(eqn.inputs, cts_in, strict=True):
            if isinstance(atom, Var) and atom in linear:
                accumulate(atom, ct)
    return [cotangent_env.get(v, Zero(tangent_aval(v.aval))) for v in program.invars[:num_linear]]
