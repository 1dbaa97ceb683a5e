"""The traced program: toolkit's typed SSA IR between Python and StableHLO.

A ``Program`` is a list of ``Equation``s over ``Var``s. Each equation applies
one primitive to inputs (variables or literals), has typed outputs, static
parameters and the user's source location. Control-flow primitives carry
sub-programs in their parameters. Transformations (lowering, evaluation,
later differentiation) are interpreters that walk ``eqns`` in order.

Printed form::

    { lambda ; a:f32[2,3] b:f32[3]. let
        c:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=(1,)] b
        d:f32[2,3] = add a c    # model.py:12
      in (d,) }
"""

from __future__ import annotations

import itertools
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from toolkit.core.avals import ShapedArray, is_static_shape

_var_ids = itertools.count()


class Var:
    """An SSA value of a program, typed by its abstract value."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var({self.id}:{self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in an equation (Python scalars and 0-d numpy values)."""

    __slots__ = ("value", "aval")

    def __init__(self, value: Any, aval: ShapedArray):
        self.value = value
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.value!r}:{self.aval.str_short()})"


Atom = Var | Literal


class SourceInfo(NamedTuple):
    """Where in the user's code an equation was traced.

    ``function`` is the frame's qualified name; ``column``/``end_line``/``end_column``
    the call's span (Python's 0-based ``co_positions``; 0 when unknown); ``callers``
    the user's frames that led there inside the trace, innermost first (each a
    ``SourceInfo`` without callers). The lowering makes them MLIR call-site
    locations, which XLA keeps as each HLO op's stack frames. ``name_stack``:
    the transformations and scopes the equation was made under
    (``toolkit.core.tracing.Scope``/``Transform`` entries, as JAX's
    ``NameStack``), which the lowering puts before the primitive's name.
    ``compute_type``: the ``toolkit.compute_on`` type it was made under
    (``"device_host"``...; None: the default), as JAX's ``eqn.ctx.compute_type``.
    """

    file: str
    line: int
    function: str
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    callers: tuple["SourceInfo", ...] = ()
    name_stack: tuple = ()
    compute_type: str | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Equation:
    __slots__ = ("primitive", "inputs", "outputs", "params", "source_info")

    def __init__(self, primitive: Any, inputs: Sequence[Atom], outputs: Sequence[Var],
                 params: dict[str, Any], source_info: SourceInfo | None):
        self.primitive = primitive
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.params = params
        self.source_info = source_info

    def __repr__(self) -> str:
        return f"Equation({self.primitive.name}, {self.inputs} -> {self.outputs})"


class Program:
    """A closed, typed SSA program: ``outputs = f(*inputs)`` given the constants.

    ``constvars[i]`` is bound to ``consts[i]`` (numpy arrays or device arrays
    captured while tracing); ``invars`` are the explicit inputs.
    """

    __slots__ = ("constvars", "consts", "invars", "outvars", "eqns", "source_info", "__weakref__")

    def __init__(self, constvars: Sequence[Var], consts: Sequence[Any], invars: Sequence[Var],
                 outvars: Sequence[Atom], eqns: Sequence[Equation], source_info: SourceInfo | None = None):
        self.constvars = list(constvars)
        self.consts = list(consts)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        #: Where a top-level trace was started (the user's frames outside it), for the lowering's
        #: ``jit(f)`` location; None for sub-programs.
        self.source_info = source_info

    @property
    def in_avals(self) -> list[ShapedArray]:
        """The types of the program's inputs, in order."""
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        """The types of the program's outputs, in order."""
        return [v.aval for v in self.outvars]

    def walk(self) -> Iterator[Equation]:
        """Every equation, including those of nested sub-programs, outermost first."""
        for eqn in self.eqns:
            yield eqn
            for sub in subprograms(eqn):
                yield from sub.walk()

    def pretty(self, *, source_info: bool = False) -> str:
        """The program as text, jaxpr-like (``source_info=True``: each equation's Python source line too)."""
        return _Printer(source_info).program(self, indent=0)

    def __str__(self) -> str:
        return self.pretty()

    def __repr__(self) -> str:
        return self.pretty()


def subprograms(eqn: Equation) -> Iterator[Program]:
    for value in eqn.params.values():
        if isinstance(value, Program):
            yield value
        elif isinstance(value, tuple):
            for v in value:
                if isinstance(v, Program):
                    yield v


# --- printing -----------------------------------------------------------------


def _letters() -> Iterator[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    for size in itertools.count(1):
        for combo in itertools.product(alphabet, repeat=size):
            yield "".join(combo)


class _Printer:
    def __init__(self, source_info: bool):
        self.names: dict[int, str] = {}
        self.fresh = _letters()
        self.source_info = source_info

    def name(self, atom: Atom) -> str:
        if isinstance(atom, Literal):
            value = atom.value
            if isinstance(value, np.ndarray):
                value = value.item()
            return f"{value!r}:{atom.aval.str_short()}"
        name = self.names.get(atom.id)
        if name is None:
            name = self.names[atom.id] = next(self.fresh)
        return name

    def binder(self, var: Var) -> str:
        return f"{self.name(var)}:{var.aval.str_short()}"

    def param(self, value: Any, indent: int) -> str:
        if isinstance(value, Program):
            return self.program(value, indent + 4)
        if isinstance(value, tuple) and value and all(isinstance(v, Program) for v in value):
            return "(" + ", ".join(self.program(v, indent + 4) for v in value) + ")"
        if isinstance(value, np.dtype):
            return value.name
        if isinstance(value, str):
            return value  # as JAX prints them: name=g, not name='g'
        return repr(value) if not callable(value) else getattr(value, "__name__", repr(value))

    def program(self, program: Program, indent: int) -> str:
        pad = " " * indent
        consts = " ".join(self.binder(v) for v in program.constvars)
        ins = " ".join(self.binder(v) for v in program.invars)
        lines = [f"{{ lambda {consts}; {ins}. let"]
        for eqn in program.eqns:
            outs = " ".join(self.binder(v) for v in eqn.outputs) or "_"
            params = " ".join(f"{k}={self.param(v, indent)}" for k, v in eqn.params.items())
            params = f"[{params}]" if params else ""
            args = " ".join(self.name(a) for a in eqn.inputs)
            line = f"{pad}    {outs} = {eqn.primitive.name}{params} {args}".rstrip()
            if self.source_info and eqn.source_info is not None and eqn.source_info.file:
                line += f"    # {eqn.source_info}"
            lines.append(line)
        outs = ", ".join(self.name(v) for v in program.outvars)
        lines.append(f"{pad}  in ({outs}{',' if len(program.outvars) == 1 else ''}) }}")
        return "\n".join(lines)


def kept_inputs(program: Program, keep_unused: bool) -> list[int]:
    """The positions of ``program``'s inputs the lowered ``@main`` keeps.

    All of them with ``keep_unused``; else those the program uses, and those with symbolic dimensions (the
    dimension variables are read from their shapes).
    """
    if keep_unused:
        return list(range(len(program.invars)))
    used = {a.id for eqn in program.walk() for a in eqn.inputs if hasattr(a, "id")}
    used |= {a.id for a in program.outvars if hasattr(a, "id")}
    # Inputs with symbolic dimensions stay: the dimension variables are computed from their shapes.
    return [i for i, v in enumerate(program.invars) if v.id in used or not is_static_shape(v.aval.shape)]


class ClosedProgram:
    """A traced program with its constants, shaped like JAX's ``ClosedJaxpr`` (``jaxpr``, ``consts``, avals)."""

    def __init__(self, program: Program):
        self.program = program

    jaxpr = property(lambda self: self.program, doc="The program itself (JAX's ``ClosedJaxpr.jaxpr``).")
    consts = property(lambda self: list(self.program.consts), doc="The values the program closes over.")
    eqns = property(lambda self: self.program.eqns, doc="The program's equations, in order.")
    in_avals = property(lambda self: self.program.in_avals, doc="The abstract values of the program's inputs.")
    out_avals = property(lambda self: self.program.out_avals, doc="The abstract values of the program's results.")

    def pretty(self, *, source_info: bool = False) -> str:
        """The program printed like a jaxpr (``source_info=True`` adds file:line per equation)."""
        return self.program.pretty(source_info=source_info)

    def __str__(self) -> str:
        return self.program.pretty()

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))
