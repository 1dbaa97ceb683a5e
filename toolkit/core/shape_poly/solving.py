"""Solving dimension variables from actual argument shapes, and the shape checks the solution assumes."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from toolkit.core.shape_poly.decision import SymbolicScope
from toolkit.core.shape_poly.expressions import (
    _PYTHON_OPS,
    DimExpr,
    DimOps,
    DimSize,
    InconclusiveDimensionOperation,
    UnexpectedDimVar,
    _evaluate_terms,
    evaluate_dim,
)

# ---------------------------------------------------------------------------
# Solving dimension variables from argument shapes
#
# A caller of a polymorphic function knows the *actual* argument shapes and
# must find the values of the function's dimension variables. JAX's approach
# (carried over here): name every symbolic argument dimension by a synthetic
# variable ("args[0].shape[1]"), read each as an equation
# `specification == synthetic variable`, and solve the equations that are
# linear in one unknown variable, repeatedly, substituting what is solved.
# The solution is itself symbolic (in the synthetic variables), so one
# solution serves every way of evaluating it: with ints (a call with concrete
# shapes), with another scope's expressions (a call from polymorphic code), or
# with MLIR values (the wrapper ``@main`` of an export). What the solution
# takes for granted — exact divisions, variables >= 1, the equations not used
# to solve, the scope's constraints — becomes a list of ShapeChecks.
# ---------------------------------------------------------------------------

#: Start of every shape-check error message (JAX's wording, which JAX's own tests match).
SHAPE_MISMATCH = "Input shapes do not match the polymorphic shapes specification."


class ShapeCheck:
    """One condition on the argument shapes that a :class:`DimVarSolution` assumes.

    ``left == right`` (``comparison="=="``) or ``left >= right`` (``">="``),
    both in the solution's synthetic variables; ``message`` is a sequence of
    strings and dimensions, the dimensions printed with their values when the
    check fails.
    """

    __slots__ = ("comparison", "left", "right", "message")

    def __init__(self, comparison: str, left: DimSize, right: DimSize, message: Sequence[str | DimSize]):
        if comparison not in ("==", ">="):
            raise ValueError(f"ShapeCheck comparison must be '==' or '>=', got {comparison!r}")
        self.comparison = comparison
        self.left = left
        self.right = right
        self.message = tuple(message)

    def __repr__(self) -> str:
        return f"ShapeCheck({self.left} {self.comparison} {self.right})"

    def check(self, env: Mapping[str, DimSize]) -> None:
        """Raise ``ValueError`` with the filled-in message unless the condition holds for ``env``.

        ``env`` binds the synthetic variables to ints or to symbolic
        dimensions; a condition that the symbolic values do not decide fails
        too (JAX discharges every check when the call is traced).
        """
        left, right = evaluate_dim(self.left, env), evaluate_dim(self.right, env)
        try:
            ok = left == right if self.comparison == "==" else left >= right
        except InconclusiveDimensionOperation as error:
            raise ValueError(f"{self.error_text(env)} (undecided for symbolic shapes: {error})") from None
        if not ok:
            raise ValueError(self.error_text(env))

    def message_template(self, env: Mapping[str, Any],
                         ops: DimOps | None = None) -> tuple[str, list[Any]]:
        """The message with ``{0}``, ``{1}``, ... for its dimensions, and their values (JAX's shape_assertion form).

        The same dimension reuses its placeholder; at most 32 values (the
        limit of the shape-assertion checker), the rest print ``N/A``.
        """
        placeholders: dict[str, str] = {}
        values: list[Any] = []
        text: list[str] = []
        for piece in self.message:
            if isinstance(piece, str):
                text.append(piece.replace("{", "{{").replace("}", "}}"))
                continue
            key = str(piece)
            if key not in placeholders:
                if len(values) >= 32:
                    text.append("N/A")
                    continue
                placeholders[key] = "{" + str(len(values)) + "}"
                values.append(evaluate_dim(piece, env, ops))
            text.append(placeholders[key])
        return "".join(text), values

    def error_text(self, env: Mapping[str, DimSize]) -> str:
        template, values = self.message_template(env)
        return template.format(*values)


class DimVarSolution:
    """The dimension variables of some avals, solved in terms of the argument shapes.

    Attributes:
      dim_vars: the variables, sorted (JAX's order of dimension arguments).
      solution: each variable as an expression in the synthetic variables.
      checks: the :class:`ShapeCheck` s the solution assumes, in the order
        JAX emits its shape assertions.
      dimensions: ``(synthetic variable, argument index, axis)`` for every
        symbolic argument dimension.

    Example::

        >>> k, = symbolic_shape("k")
        >>> from toolkit.core.avals import ShapedArray
        >>> sol = solve_dim_vars([ShapedArray((2 * k + 4,), "float32")], ["args[0]"])
        >>> sol.solution["k"]
        floordiv(args[0].shape[0] - 4, 2)
        >>> sol.values([(10,)])
        {'k': 3}
    """

    __slots__ = ("dim_vars", "solution", "checks", "dimensions")

    def __init__(self, dim_vars: Sequence[str], solution: Mapping[str, DimSize], checks: Sequence[ShapeCheck],
                 dimensions: Sequence[tuple[str, int, int]]):
        self.dim_vars = tuple(dim_vars)
        self.solution = dict(solution)
        self.checks = tuple(checks)
        self.dimensions = tuple(dimensions)

    def synthetic_env(self, shapes: Sequence[Sequence[Any]]) -> dict[str, Any]:
        """The synthetic variables bound to the dimensions of ``shapes`` (one shape, or value, per argument)."""
        return {name: shapes[arg][axis] for name, arg, axis in self.dimensions}

    def values(self, shapes: Sequence[Sequence[DimSize]], *, check: bool = True) -> dict[str, DimSize]:
        """The variables' values for arguments of ``shapes`` (ints, or another scope's symbolic dimensions).

        With ``check``, every :class:`ShapeCheck` is discharged first, in
        order; the first that fails raises ``ValueError`` with its message.
        """
        env = self.synthetic_env(shapes)
        if check:
            for shape_check in self.checks:
                shape_check.check(env)
        return {v: evaluate_dim(self.solution[v], env) for v in self.dim_vars}

    def evaluate(self, env: Mapping[str, Any], ops: DimOps) -> dict[str, Any]:
        """The variables' values from synthetic-variable values ``env`` in another domain (e.g. MLIR values)."""
        return {v: evaluate_dim(self.solution[v], env, ops) for v in self.dim_vars}


def solve_dim_vars(avals: Sequence[Any], arg_names: Sequence[str]) -> DimVarSolution:
    """Solve the dimension variables of ``avals``' shapes from the argument shapes (JAX's ``solve_dim_vars``).

    ``arg_names[i]`` names argument ``i`` in messages and synthetic variables
    (``"args[0]"``, ``"kwargs['x']"``). Each symbolic dimension is an
    equation; an equation whose terms are all known except one variable
    ``v`` (with coefficient ``k``) gives ``v = (size - known) // k``, with a
    check that the division is exact; repeated until nothing changes. Raises
    ``ValueError`` naming the unsolved variables and their dimensions when
    some variable never occurs in such an equation (``a*b``, ``a^2``, or
    only inside ``floordiv``/``mod``/``max``/``min``).

    >>> a, b = symbolic_shape("a, b")
    >>> from toolkit.core.avals import ShapedArray
    >>> sol = solve_dim_vars([ShapedArray((a, a + b), "float32")], ["args[0]"])
    >>> sol.values([(3, 10)])
    {'a': 3, 'b': 7}
    """
    equations: list[tuple[DimExpr, str, DimSize]] = []  # (specification, dimension name, synthetic variable)
    dimensions: list[tuple[str, int, int]] = []
    specs: list[str] = []
    scope: SymbolicScope | None = None
    for index, (aval, name) in enumerate(zip(avals, arg_names)):
        if not any(isinstance(d, DimExpr) for d in aval.shape):
            continue
        specs.append(f"{name}.shape = ({', '.join(str(d) for d in aval.shape)}{',' if len(aval.shape) == 1 else ''})")
        for axis, d in enumerate(aval.shape):
            if not isinstance(d, DimExpr):
                continue
            if scope is None:
                scope = d.scope
            else:
                scope._check_same_scope(d, f"when solving the dimension variables of {name}")
            synthetic = f"{name}.shape[{axis}]"
            dimensions.append((synthetic, index, axis))
            equations.append((d, synthetic, DimExpr._from_var(synthetic, d.scope)))
    dim_vars = sorted({v for d, _, _ in equations for v in d.get_vars()})
    if not equations:
        return DimVarSolution([], {}, [], [])
    assert scope is not None  # set by the first equation
    specs_text = " Using the following polymorphic shapes specifications: " + ", ".join(specs) + "."
    solution: dict[str, DimSize] = {}
    solved_from: list[list[str | DimSize]] = []  # message pieces saying where each solved variable came from
    checks: list[ShapeCheck] = []

    def obtained() -> list[str | DimSize]:
        # What was solved so far, for messages (a copy: later solutions do not change earlier messages).
        if not solved_from:
            return []
        pieces: list[str | DimSize] = [" Obtained dimension variables: "]
        for i, origin in enumerate(solved_from):
            pieces += ([", "] if i else []) + origin
        return pieces + ["."]

    def use(spec: DimExpr, where: str, size: DimSize) -> bool:
        # spec == size, i.e. k*var + (terms known already) == size: solve for var, or check the equation.
        unknown: tuple[str, int] | None = None
        rest: DimSize = size
        for term, coeff in spec._terms:
            try:
                known = _evaluate_terms(((term, 1),), solution, _PYTHON_OPS)
            except UnexpectedDimVar:
                factor = term.single_factor()
                if factor is None or factor.var is None or unknown is not None:
                    return False  # not (yet) linear in one unknown variable
                unknown = (factor.var, coeff)
                continue
            rest = rest - known * coeff
        if unknown is None:
            # Every variable is known: the dimension must agree with the solution.
            expected = _evaluate_terms(spec._terms, solution, _PYTHON_OPS)
            checks.append(ShapeCheck("==", size, expected, [
                f"{SHAPE_MISMATCH} Found inconsistency between dimension size {where} (= ", size,
                f") and the specification '{spec}' (= ", expected, ")." + specs_text, *obtained()]))
            return True
        var, k = unknown
        if k == 1:
            value = rest
        else:
            value, remainder = divmod(rest, k)
            checks.append(ShapeCheck("==", remainder, 0, [
                f"{SHAPE_MISMATCH} Division had remainder ", remainder, f" when computing the value of '{var}' "
                f"from {where} (= ", size, f") with specification '{spec}': ", rest, f" is not a multiple of {k}."
                + specs_text, *obtained()]))
        solution[var] = value
        solved_from.append([f"'{var}' = ", value, f" from specification '{spec}' for dimension {where} (= ", size, ")"])
        checks.append(ShapeCheck(">=", value, 1, [
            f"{SHAPE_MISMATCH} Expected value >= 1 for dimension variable '{var}'." + specs_text, *obtained()]))
        return True

    pending = equations
    while pending:
        remaining = [eq for eq in pending if not use(*eq)]
        if len(remaining) == len(pending):
            unsolved = sorted(set(dim_vars) - set(solution))
            raise ValueError(
                f"Cannot solve for the dimension variable{'s' if len(unsolved) > 1 else ''} "
                f"{', '.join(repr(v) for v in unsolved)} from the argument shapes: only equations linear in one "
                "unknown variable (like 'b', '2*b + 4', 'a + b' once 'a' is known) can be solved."
                + specs_text + " Unused specifications: "
                + ", ".join(f"'{spec}' for dimension {where}" for spec, where, _ in remaining) + ".")
        pending = remaining
    for is_equality, difference, text in scope.explicit_constraints():
        value = evaluate_dim(difference, solution)
        checks.append(ShapeCheck("==" if is_equality else ">=", value, 0, [
            f"{SHAPE_MISMATCH} Constraint '{text}' is not satisfied: expected '{difference}' to "
            f"be {'equal' if is_equality else 'greater or equal'} to 0, but found ", value, "." + specs_text,
            *obtained()]))
    return DimVarSolution(dim_vars, solution, checks, dimensions)
