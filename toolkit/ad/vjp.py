"""Reverse mode: the VJP interpreter.

``vjp_program(program, primals, active)`` evaluates the program forward,
keeping every primal value, and returns the outputs and a ``backward``
function mapping output cotangents to the cotangents of the ``active``
inputs. ``backward`` walks the equations in reverse; for each equation that
depends on an active input and receives a nonzero cotangent it

* uses the primitive's *VJP rule* when it has one (``VJP_RULES``: control
  flow, whose reverse mode needs its own loop or branches), else
* *linearizes* the equation locally — traces its JVP rule with fresh tangent
  inputs into a small program that is linear in them — and transposes that
  program with the primitives' transpose rules (``transpose.backward_pass``).

Transposing equation by equation never has to split a mixed
primal/tangent program (no partial evaluation), so control flow only needs
a VJP rule. The equation's own outputs, which its JVP rule computes again,
are the forward pass's values (never recomputed); coefficients such as
``cos(x)`` for ``sin`` are computed in the backward pass, and only those the
transposition reads (``transpose.backward_pass``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from toolkit.ad.interpret import Environment, bind_equation
from toolkit.ad.jvp import has_zero_tangent, missing_rule
from toolkit.ad.registry import JVP_RULES, VJP_RULES
from toolkit.ad.transpose import backward_pass
from toolkit.ad.values import Zero, add_any, instantiate, is_differentiable, tangent_aval
from toolkit.core import tracing
from toolkit.core.primitive import Primitive
from toolkit.core.program import Equation, Program, Var
from toolkit.core.avals import aval_of


def linearized_vjp(eqn_primitive: Primitive, params: dict[str, Any], primals: Sequence[Any],
                   active: Sequence[bool], cotangents: Sequence[Any],
                   primal_outputs: Sequence[Any] | None = None, source: Any = None,
                   transform_names: bool = False) -> list[Any]:
    """Cotangents of one primitive application by transposing its traced JVP.

    ``primal_outputs``: the application's outputs as the forward pass computed
    them. The JVP rule computes them again (``exp``'s tangent is ``t * exp(x)``);
    given, that computation is replaced by these values instead of repeated.
    ``source``: the equation's ``SourceInfo``, where what this makes is located;
    ``transform_names``: its ops are named under ``jvp`` and ``transpose`` (JAX's
    ``jvp()/cos``, ``transpose(jvp())/mul``), as ``vjp`` names them.
    """
    jvp_rule = JVP_RULES.lookup(eqn_primitive)
    if jvp_rule is None:
        raise missing_rule(eqn_primitive, "JVP", "Reverse mode linearizes the JVP rule, so it needs one too.")
    active_positions = [i for i, a in enumerate(active) if a]
    tangent_avals = [tangent_aval(aval_of(primals[i])) for i in active_positions]

    def linear_fun(*tangent_inputs: Any) -> list[Any]:
        tangents: list[Any] = [Zero(tangent_aval(aval_of(p))) for p in primals]
        for position, t in zip(active_positions, tangent_inputs):
            tangents[position] = t
        with tracing.equation_context(source, *(("jvp",) if transform_names else ())):
            out_primals, out_tangents = jvp_rule(list(primals), tangents, **params)
        if not eqn_primitive.multiple_results:
            out_primals, out_tangents = [out_primals], [out_tangents]
        # The primal outputs ride along as extra outputs, so the variables computing them can be named below.
        return [instantiate(t) for t in out_tangents] + list(out_primals)

    program, captured = tracing.trace_flat(linear_fun, tangent_avals)
    num_outputs = len(program.outvars) // 2
    known: dict[Var, Any] = {}
    if primal_outputs is not None and len(primal_outputs) == num_outputs:
        produced = {v for eqn in program.eqns for v in eqn.outputs}
        known = {v: value for v, value in zip(program.outvars[num_outputs:], primal_outputs)
                 if isinstance(v, Var) and v in produced}
    program = Program(program.constvars, program.consts, program.invars, program.outvars[:num_outputs],
                      program.eqns)
    cts_active = backward_pass(program, len(active_positions), captured, cotangents, known,
                               transpose_names=transform_names)
    cts: list[Any] = [None] * len(primals)
    for position, ct in zip(active_positions, cts_active):
        cts[position] = ct
    return cts


#: primitive -> ``rule(active_in, **params) -> [output depends on an active input differentiably]``, for primitives
#: whose outputs may not depend on their active inputs (a while loop whose carries only count: JAX's binomial
#: sampler). Rule modules register them; reverse mode then leaves such an equation out of the backward pass.
OUTPUT_ACTIVITY: dict[Any, Callable[..., list[bool]]] = {}


def output_activity(eqn: Equation, active_in: Sequence[bool]) -> list[bool]:
    """Which of ``eqn``'s outputs depend differentiably on its ``active_in`` inputs: none through a zero-tangent
    primitive (comparisons, rounding, stop_gradient: JAX's symbolic zero), what an ``OUTPUT_ACTIVITY`` rule says
    (a while loop's fixed point), else all of them once an input is active."""
    if not any(active_in) or has_zero_tangent(eqn.primitive):
        return [False] * len(eqn.outputs)
    VJP_RULES.lookup(eqn.primitive)  # loads the family's rules, which register OUTPUT_ACTIVITY
    rule = OUTPUT_ACTIVITY.get(eqn.primitive)
    return list(rule(active_in, **eqn.params)) if rule is not None else [True] * len(eqn.outputs)


def active_outputs(program: Program, active_in: Sequence[bool]) -> list[bool]:
    """Which of ``program``'s outputs depend differentiably on the ``active_in`` inputs (:func:`output_activity`
    equation by equation), as JAX's JVP finds nonzero tangents."""
    active = {v for v, a in zip(program.invars, active_in) if a and is_differentiable(v.aval)}
    for eqn in program.eqns:
        outs = output_activity(eqn, [isinstance(a, Var) and a in active for a in eqn.inputs])
        active.update(v for v, o in zip(eqn.outputs, outs) if o and is_differentiable(v.aval))
    return [isinstance(v, Var) and v in active for v in program.outvars]


def vjp_program(program: Program, primals: Sequence[Any], active: Sequence[bool],
                known: dict[Var, Any] | None = None,
                transform_names: bool = False) -> tuple[list[Any], Callable[[Sequence[Any]], list[Any]]]:
    """Outputs of ``program(*primals)`` and ``backward(cotangents) -> input cotangents``.

    ``transform_names`` (``toolkit.vjp`` and ``grad``, not rules re-tracing a
    body): the forward pass's ops are named under ``jvp``, the backward pass's
    under ``transpose(jvp(...))``, as JAX's. Either way what each equation
    makes is located at the user's line that made it.

    Inputs that are not ``active`` (or not floating point) get ``Zero`` cotangents.
    ``known`` gives values of some of the program's variables already computed
    (the residuals a ``checkpoint`` policy saved): equations producing only known
    values are not evaluated again (their derivatives still flow).
    """
    if len(primals) != len(program.invars) or len(active) != len(program.invars):
        raise TypeError(f"vjp_program: the program takes {len(program.invars)} inputs, got {len(primals)}")
    env = Environment()
    env.write_all(program.constvars, program.consts)
    env.write_all(program.invars, primals)
    depends: set[Var] = {v for v, a in zip(program.invars, active) if a and is_differentiable(v.aval)}
    tape: list[tuple[Equation, list[bool], Any]] = []
    forward = ("jvp",) if transform_names else ()
    for eqn in program.eqns:
        inputs = [env.read(a) for a in eqn.inputs]
        active_in = [isinstance(a, Var) and a in depends for a in eqn.inputs]
        if any(active_in) and not any(output_activity(eqn, active_in)):
            # Nothing flows back through it (stop_gradient, comparisons, a loop whose carries only count): what it
            # computes does not depend on the differentiated inputs, as JAX's symbolic zeros (a custom_jvp's
            # stop_gradient'ed non-differentiable arguments stay out of its derivative this way).
            active_in = [False] * len(active_in)
        rule = VJP_RULES.lookup(eqn.primitive)
        with tracing.equation_context(eqn.source_info, *forward):
            if any(active_in) and rule is not None:
                outs, residuals = rule[0](inputs, active_in, **eqn.params)
                outs = list(outs)
            elif known and eqn.outputs and all(v in known for v in eqn.outputs):
                outs, residuals = [known[v] for v in eqn.outputs], None
            else:
                outs, residuals = bind_equation(eqn, inputs), None
        env.write_all(eqn.outputs, outs)
        if any(active_in):
            depends.update(v for v in eqn.outputs if is_differentiable(v.aval))
            tape.append((eqn, active_in, residuals))
    outputs = [env.read(v) for v in program.outvars]

    def backward(cotangents: Sequence[Any]) -> list[Any]:
        if len(cotangents) != len(program.outvars):
            raise TypeError(f"expected {len(program.outvars)} cotangents, got {len(cotangents)}")
        cotangent_env: dict[Var, Any] = {}

        def accumulate(var: Any, ct: Any) -> None:
            if not isinstance(var, Var) or var not in depends or ct is None or isinstance(ct, Zero):
                return
            cotangent_env[var] = add_any(cotangent_env[var], ct) if var in cotangent_env else ct

        for var, ct in zip(program.outvars, cotangents):
            accumulate(var, ct)
        for eqn, active_in, residuals in reversed(tape):
            cts_out = [cotangent_env.pop(v, None) for v in eqn.outputs]
            if all(ct is None for ct in cts_out):
                continue
            cts_out = [Zero(tangent_aval(v.aval)) if ct is None else ct for v, ct in zip(eqn.outputs, cts_out)]
            rule = VJP_RULES.get(eqn.primitive)
            if rule is not None:
                backward_rule = rule[1]
                assert backward_rule is not None  # a rule without one (while_p) raised in its forward, off the tape
                with tracing.equation_context(eqn.source_info, *(("transpose", "jvp") if transform_names else ())):
                    cts_in = backward_rule(residuals, active_in, cts_out, **eqn.params)
            else:
                cts_in = linearized_vjp(eqn.primitive, eqn.params, [env.read(a) for a in eqn.inputs], active_in,
                                        cts_out, [env.read(v) for v in eqn.outputs], eqn.source_info,
                                        transform_names)
            for atom, active_one, ct in zip(eqn.inputs, active_in, cts_in, strict=True):
                if active_one:
                    accumulate(atom, ct)
        return [cotangent_env.get(v, Zero(tangent_aval(v.aval))) if isinstance(v, Var) else Zero(v.aval)
                for v in program.invars]

    return outputs, backward
