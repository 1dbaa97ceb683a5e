"""Evaluating a ``Program`` by binding its equations again.

Every transformation here is an interpreter of this shape: walk ``eqns`` in
order, read the inputs from an environment, ``bind`` a primitive, write the
outputs. Binding re-traces when a trace is active (the result is a new
program, so transformed functions stay traceable and jittable) and runs
eagerly otherwise.
"""

from __future__ import annotations

from typing import Any, Sequence

from toolkit.core import tracing
from toolkit.core.program import Equation, Literal, Program, Var


class Environment:
    """Values of a program's variables (keyed by the ``Var`` object)."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[Var, Any] = {}

    def read(self, atom: Var | Literal) -> Any:
        if isinstance(atom, Literal):
            return atom.value
        return self.values[atom]

    def write(self, var: Var, value: Any) -> None:
        self.values[var] = value

    def write_all(self, variables: Sequence[Var], values: Sequence[Any]) -> None:
        for var, value in zip(variables, values, strict=True):
            self.values[var] = value


def bind_equation(eqn: Equation, inputs: Sequence[Any]) -> list[Any]:
    out = eqn.primitive.bind(*inputs, **eqn.params)
    return list(out) if eqn.primitive.multiple_results else [out]


def eval_program(program: Program, args: Sequence[Any]) -> list[Any]:
    """``program(*args)``: each equation bound again in the current context."""
    if len(args) != len(program.invars):
        raise TypeError(f"the program takes {len(program.invars)} inputs, got {len(args)}")
    env = Environment()
    env.write_all(program.constvars, program.consts)
    env.write_all(program.invars, args)
    for eqn in program.eqns:
        with tracing.equation_context(eqn.source_info):  # what it makes points at the original's line
            env.write_all(eqn.outputs, bind_equation(eqn, [env.read(a) for a in eqn.inputs]))
    return [env.read(v) for v in program.outvars]


def with_extra_inputs(program: Program, avals: Sequence[Any]) -> Program:
    """``program`` taking (and ignoring) extra trailing inputs of ``avals``."""
    extra = [Var(a) for a in avals]
    return Program(program.constvars, program.consts, program.invars + extra, program.outvars, program.eqns)
