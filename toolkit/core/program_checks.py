"""The type check of a traced program (``jax_enable_checks``, as JAX's ``core.check_jaxpr``).

Every atom an equation reads must be defined before it (a constant, an input, an earlier equation's output,
or — in a sub-program — one of its own), and every equation's output types must be those its primitive's
shape rule gives for its input types and parameters. A failure is a :class:`JaxprTypeError` naming the
equation. Used by ``jit`` after each trace while ``toolkit.config.jax_enable_checks`` is on.
"""

from __future__ import annotations

from toolkit.core.error_classes import JaxprTypeError
from toolkit.core.program import Literal, Program, subprograms

__all__ = ["check_program"]


def check_program(program: Program, name: str = "program") -> None:
    """Raise :class:`JaxprTypeError` when ``program`` (and its sub-programs) is not well typed and scoped."""
    _check(program, name)


def _check(program: Program, where: str) -> None:
    defined = {id(v) for v in (*program.constvars, *program.invars)}
    for i, eqn in enumerate(program.eqns):
        label = f"equation {i} (`{eqn.primitive.name}`) of {where}"
        for atom in eqn.inputs:
            if not isinstance(atom, Literal) and id(atom) not in defined:
                raise JaxprTypeError(f"{label} reads a variable of type {atom.aval.str_short()} that is not "
                                     "defined before it")
        try:
            expected = eqn.primitive.abstract_eval(*[a.aval for a in eqn.inputs], **eqn.params)
        except Exception as error:  # noqa: BLE001 - any rule failure means the equation is ill-typed
            raise JaxprTypeError(f"{label}: its shape rule rejects its inputs: {type(error).__name__}: "
                                 f"{error}") from error
        got = [v.aval for v in eqn.outputs]
        if len(expected) != len(got) or any(e.shape != g.shape or e.dtype != g.dtype
                                            for e, g in zip(expected, got)):
            raise JaxprTypeError(f"{label} outputs {[g.str_short() for g in got]}, but its primitive gives "
                                 f"{[e.str_short() for e in expected]} for these inputs")
        for sub in subprograms(eqn):
            _check(sub, f"a sub-program of {label}")
        defined.update(id(v) for v in eqn.outputs)
    for atom in program.outvars:
        if not isinstance(atom, Literal) and id(atom) not in defined:
            raise JaxprTypeError(f"an output of {where} ({atom.aval.str_short()}) is not defined in it")
