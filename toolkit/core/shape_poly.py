"""Symbolic dimensions: polynomial dimension expressions with a decision procedure.

This implements the semantics of JAX's shape polymorphism (``jax.export``)
without depending on JAX: the spec language of :func:`symbolic_shape`, the
canonical form and printing of expressions, the arithmetic, and the partial
decision procedure for comparisons.

Expressions
-----------
A :class:`DimExpr` is a canonical polynomial over *factors* with integer
coefficients::

    expr   = sum of  coeff * term          (terms distinct, coeff != 0)
    term   = product of  factor ^ exponent (exponent >= 1)
    factor = variable | floordiv(e1, e2) | mod(e1, e2) | max(e1, e2) | min(e1, e2)

Dimension variables range over integers ``>= 1``. An expression that
simplifies to a constant is returned as a plain ``int``, so code can always
test ``type(d) is int`` (or :func:`is_constant_dim`) for static sizes.

>>> b, c = symbolic_shape("b, c")
>>> 2 * b + 1
2*b + 1
>>> (2 * b + 1) // 2, (2 * b + 1) % 2
(b, 1)
>>> c // 2
floordiv(c, 2)
>>> b >= 1
True

Arithmetic (``+ - * // % **`` with ints and with each other) is exact;
``//`` and ``%`` stay symbolic (``floordiv``/``mod`` factors) unless the
polynomial division is exact. Equality is structural on the canonical form
(after the substitutions implied by equality constraints), as in JAX:
``b == 3`` is ``False`` because ``b - 3`` is not the constant 0.

Comparisons ``>= > <= <`` are decided by computing lower and upper bounds,
using the implicit facts (variables ``>= 1``, ``0 <= mod(e, k) < k``,
``max(a, b) >= a``, ...) and the scope's constraints; when the bounds do not
decide, :class:`InconclusiveDimensionOperation` is raised.

Scopes and constraints
----------------------
Every expression belongs to a :class:`SymbolicScope`, which holds the
user constraints (``"b >= 4"``, ``"a == 2*b"``, ``"mod(c, 2) == 0"``).
Equality constraints whose left side is a single term act as rewrite rules.
Combining expressions of different scopes raises ``ValueError``.
:func:`symbolic_shape` creates a fresh scope unless one is passed, so
parse all related dimensions in one call or share a scope.

Evaluation
----------
``e.evaluate(env)`` substitutes integers (or other expressions) for the
variables. ``e.evaluate(env, ops)`` evaluates into any value domain given a
:class:`DimOps` object — the lowering uses it to emit StableHLO for dimension
expressions. The evaluation order is fixed and follows JAX: terms in canonical
order, each term as the product of its factor powers (a power as repeated
multiplication) times its coefficient (skipped when 1), summed left to right.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

__all__ = [
    "DimExpr",
    "DimOps",
    "DimSize",
    "InconclusiveDimensionOperation",
    "SymbolicScope",
    "UnexpectedDimVar",
    "symbolic_shape",
    "symbolic_args_specs",
    "is_symbolic_dim",
    "is_constant_dim",
    "is_constant",
    "is_constant_shape",
    "is_dim",
    "max_dim",
    "min_dim",
    "definitely_equal",
    "definitely_equal_shape",
    "dim_size_product",
    "core_dim_size_product",
    "divide_shape_sizes",
    "dilate_dim",
    "stride_dim",
    "is_empty_shape",
    "evaluate_dim",
    "bounds",
    "ShapeCheck",
    "DimVarSolution",
    "solve_dim_vars",
]

DimSize = Any  # int | DimExpr

_INF = math.inf


class InconclusiveDimensionOperation(Exception):
    """A symbolic dimension operation whose result differs across variable values."""

    _help = (
        "\nThis error arises for comparison operations with shapes that are non-constant, "
        "when the result cannot be represented as a single boolean for all values of the "
        "dimension variables involved. Add constraints to the symbolic scope "
        "(e.g. symbolic_shape(..., constraints=['b >= 4'])) or restructure the code so the "
        "comparison is not needed."
    )

    def __init__(self, message: str):
        super().__init__(message + self._help)


class UnexpectedDimVar(Exception):
    """Evaluating an expression needs a variable the environment does not bind."""


_FLOORDIV = "floordiv"
_MOD = "mod"
_MAX = "max"
_MIN = "min"
_OPERATIONS = (_FLOORDIV, _MOD, _MAX, _MIN)


# ---------------------------------------------------------------------------
# Factors and terms
#
# Each object carries a `key`: a nested tuple giving the total order JAX uses
# to sort factors, terms and expressions (by size first, then
# lexicographically). The order fixes the canonical form and how it prints.
# ---------------------------------------------------------------------------


def _operand_key(operand: DimSize) -> tuple:
    if type(operand) is int:
        return (1, ((_ONE_KEY, operand),))
    return operand._key


def _operand_size(operand: DimSize) -> int:
    return 1 if type(operand) is int else operand._size


def _operand_str(operand: DimSize) -> str:
    if type(operand) is int:
        return f"- {-operand}" if operand < 0 else str(operand)
    return str(operand)


class _Factor:
    __slots__ = ("var", "operation", "operands", "size", "key", "_hash")

    def __init__(self, var: str | None = None, operation: str | None = None, operands: tuple = ()):
        self.var = var
        self.operation = operation
        self.operands = operands
        if var is not None:
            self.size = 1
            self.key = (1, var)
        else:
            self.size = 1 + sum(_operand_size(o) for o in operands)
            self.key = (self.size, operation, tuple(_operand_key(o) for o in operands))
        self._hash = hash(self.key)

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is _Factor and self.key == other.key)

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        if self.var is not None:
            return self.var
        return f"{self.operation}({', '.join(_operand_str(o) for o in self.operands)})"

    __repr__ = __str__

    def get_vars(self) -> set[str]:
        if self.var is not None:
            return {self.var}
        result: set[str] = set()
        for o in self.operands:
            if type(o) is not int:
                result |= o.get_vars()
        return result


class _Term:
    """A product of factor powers; ``factors`` sorted with the largest factor first."""

    __slots__ = ("factors", "size", "key", "_hash")

    def __init__(self, factors: tuple[tuple[_Factor, int], ...]):
        self.factors = factors
        self.size = sum(1 + exp * f.size for f, exp in factors)
        self.key = (self.size, tuple((f.key, exp) for f, exp in factors))
        self._hash = hash(self.key)

    @staticmethod
    def of(exponents: dict[_Factor, int]) -> _Term:
        if not any(exponents.values()):
            return _ONE
        return _Term(tuple(sorted(((f, e) for f, e in exponents.items() if e), key=lambda p: p[0].key, reverse=True)))

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is _Term and self.key == other.key)

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return "*".join(
            str(f) if exp == 1 else f"{f}^{exp}" for f, exp in sorted(self.factors, key=lambda p: (p[0].key, p[1]))
        )

    __repr__ = __str__

    def single_factor(self) -> _Factor | None:
        if len(self.factors) == 1 and self.factors[0][1] == 1:
            return self.factors[0][0]
        return None

    def mul(self, other: _Term) -> _Term:
        exps = dict(self.factors)
        for f, e in other.factors:
            exps[f] = exps.get(f, 0) + e
        return _Term.of(exps)

    def divide(self, divisor: _Term) -> _Term | None:
        """``self / divisor`` if it is a term (all exponents stay >= 0), else None."""
        exps = dict(self.factors)
        for f, e in divisor.factors:
            remaining = exps.get(f, 0) - e
            if remaining < 0:
                return None
            exps[f] = remaining
        return _Term.of(exps)

    def get_vars(self) -> set[str]:
        result: set[str] = set()
        for f, _ in self.factors:
            result |= f.get_vars()
        return result


_ONE = _Term(())
_ONE_KEY = _ONE.key

# A linear combination of terms: tuple of (term, coeff), sorted largest term first.
_Terms = tuple


def _sort_terms(coeffs: dict[_Term, int]) -> _Terms:
    return tuple(sorted(((t, c) for t, c in coeffs.items() if c), key=lambda p: p[0].key, reverse=True))


def _combine(terms1: Iterable, k1: int, terms2: Iterable, k2: int) -> _Terms:
    """``k1 * terms1 + k2 * terms2`` as sorted terms (no normalization rules)."""
    coeffs: dict[_Term, int] = {}
    for t, c in terms1:
        coeffs[t] = coeffs.get(t, 0) + c * k1
    for t, c in terms2:
        coeffs[t] = coeffs.get(t, 0) + c * k2
    return _sort_terms(coeffs)


def _terms_of(d: DimSize) -> _Terms:
    if type(d) is int:
        return ((_ONE, d),) if d else ()
    return d._terms


# ---------------------------------------------------------------------------
# DimExpr
# ---------------------------------------------------------------------------


class DimExpr:
    """A symbolic dimension: a canonical polynomial over dimension variables.

    Not constructed directly: use :func:`symbolic_shape`. Constant results of
    arithmetic are returned as ``int``; a ``DimExpr`` is never constant.

    >>> a, b = symbolic_shape("a, b")
    >>> str(3 * a * b + a - 1), (a * b).get_vars() == {"a", "b"}
    ('3*a*b + a - 1', True)
    """

    __slots__ = ("_terms", "_scope", "_size", "_key", "_hash")
    _is_symbolic_dim = True
    # Make numpy defer to our reflected operators (e.g. np.int64(2) * b).
    __array_priority__ = 1000

    def __init__(self, terms: _Terms, scope: SymbolicScope):
        self._terms = terms
        self._scope = scope
        self._size = sum(1 + abs(c) * t.size for t, c in terms)
        self._key = (self._size, tuple((t.key, c) for t, c in terms))
        self._hash = None

    # -- construction helpers ---------------------------------------------

    @staticmethod
    def _normalized(coeffs: dict[_Term, int], scope: SymbolicScope) -> DimSize:
        if scope._rules:
            coeffs = scope._apply_rules(coeffs)
        terms = _sort_terms(coeffs)
        if not terms:
            return 0
        if terms[0][0] is _ONE:
            return terms[0][1]
        return DimExpr(terms, scope)

    @staticmethod
    def _from_var(name: str, scope: SymbolicScope) -> DimSize:
        return DimExpr._normalized({_Term(((_Factor(var=name), 1),)): 1}, scope)

    @staticmethod
    def _from_operation(operation: str, operands: tuple, scope: SymbolicScope) -> DimSize:
        return DimExpr._normalized({_Term(((_Factor(operation=operation, operands=operands), 1),)): 1}, scope)

    # -- introspection --------------------------------------------------

    @property
    def scope(self) -> SymbolicScope:
        """The :class:`SymbolicScope` this expression belongs to."""
        return self._scope

    @property
    def is_constant(self) -> bool:
        """Always False: constant expressions are represented as ``int``."""
        return False

    def get_vars(self) -> set[str]:
        """The names of the dimension variables occurring in the expression."""
        result: set[str] = set()
        for t, _ in self._terms:
            result |= t.get_vars()
        return result

    def _leading_term(self) -> tuple[_Term, int]:
        return self._terms[0]

    # -- printing -------------------------------------------------------

    def __str__(self) -> str:
        parts = []
        for t, c in self._terms:
            sign = "+" if c > 0 else "-"
            if t is _ONE:
                parts.append(f"{sign} {abs(c)}")
            elif abs(c) == 1:
                parts.append(f"{sign} {t}")
            else:
                parts.append(f"{sign} {abs(c)}*{t}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else text

    __repr__ = __str__

    # -- hashing and equality -------------------------------------------

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self._terms, id(self._scope)))
        return self._hash

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, DimExpr):
            if other._scope is not self._scope:
                return False
        elif not is_constant_dim(other):
            return False
        difference = self - other
        return type(difference) is int and difference == 0

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    # -- arithmetic -----------------------------------------------------

    def _coerce(self, other: Any, what: str) -> DimSize | None:
        if isinstance(other, DimExpr):
            self._scope._check_same_scope(other, what)
            return other
        try:
            return operator.index(other)
        except TypeError:
            return None

    def _linear(self, k1: int, other: DimSize, k2: int) -> DimSize:
        return DimExpr._normalized(dict(_combine(self._terms, k1, _terms_of(other), k2)), self._scope)

    def __add__(self, other):
        other = self._coerce(other, "in addition")
        if other is None:
            return NotImplemented
        if type(other) is int and other == 0:
            return self
        return self._linear(1, other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        other = self._coerce(other, "in subtraction")
        if other is None:
            return NotImplemented
        if type(other) is int and other == 0:
            return self
        return self._linear(1, other, -1)

    def __rsub__(self, other):
        other = self._coerce(other, "in subtraction")
        if other is None:
            return NotImplemented
        return self._linear(-1, other, 1)

    def __neg__(self) -> DimSize:
        return self._linear(-1, 0, 0)

    def __pos__(self) -> DimExpr:
        return self

    def __mul__(self, other):
        other = self._coerce(other, "in multiplication")
        if other is None:
            return NotImplemented
        if type(other) is int:
            if other == 1:
                return self
            if other == 0:
                return 0
            return self._linear(other, 0, 0)
        coeffs: dict[_Term, int] = {}
        for t1, c1 in self._terms:
            for t2, c2 in other._terms:
                t = t1.mul(t2)
                coeffs[t] = coeffs.get(t, 0) + c1 * c2
        return DimExpr._normalized(coeffs, self._scope)

    __rmul__ = __mul__

    def __pow__(self, power, modulo=None):
        if modulo is not None:
            raise NotImplementedError("pow with a modulus is not supported for symbolic dimensions")
        if isinstance(power, DimExpr):
            raise ValueError(f"Symbolic dimension cannot be raised to a symbolic power: '{self}' ** '{power}'")
        try:
            power = operator.index(power)
        except TypeError:
            raise ValueError(f"Symbolic dimension cannot be raised to non-integer powers: '{self}' ** '{power}'") from None
        if power < 0:
            raise ValueError(f"Symbolic dimension cannot be raised to negative powers: '{self}' ** '{power}'")
        result: DimSize = 1
        for _ in range(power):
            result = result * self
        return result

    def __floordiv__(self, divisor):
        divisor = self._coerce(divisor, "in floordiv")
        if divisor is None:
            return NotImplemented
        return _divmod(self, divisor, self._scope)[0]

    def __rfloordiv__(self, dividend):
        dividend = self._coerce(dividend, "in floordiv")
        if dividend is None:
            return NotImplemented
        return _divmod(dividend, self, self._scope)[0]

    def __mod__(self, divisor):
        divisor = self._coerce(divisor, "in mod")
        if divisor is None:
            return NotImplemented
        return _divmod(self, divisor, self._scope)[1]

    def __rmod__(self, dividend):
        dividend = self._coerce(dividend, "in mod")
        if dividend is None:
            return NotImplemented
        return _divmod(dividend, self, self._scope)[1]

    def __divmod__(self, divisor):
        divisor = self._coerce(divisor, "in divmod")
        if divisor is None:
            return NotImplemented
        return _divmod(self, divisor, self._scope)

    def __rdivmod__(self, dividend):
        dividend = self._coerce(dividend, "in divmod")
        if dividend is None:
            return NotImplemented
        return _divmod(dividend, self, self._scope)

    def __truediv__(self, other):
        raise TypeError(f"True division of the symbolic dimension '{self}' is not supported; use '//' for floor division.")

    __rtruediv__ = __truediv__

    def __int__(self) -> int:
        raise InconclusiveDimensionOperation(f"Symbolic dimension '{self}' used in a context that requires a constant")

    # -- comparisons ----------------------------------------------------

    def __ge__(self, other: DimSize) -> bool:
        return _geq_decision(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other: DimSize) -> bool:
        return _geq_decision(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other: DimSize) -> bool:
        return not _geq_decision(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other: DimSize) -> bool:
        return not _geq_decision(self, other, lambda: f"'{self}' < '{other}'")

    # -- evaluation ------------------------------------------------------

    def evaluate(self, env: Mapping[str, Any], ops: DimOps | None = None) -> Any:
        """The value of the expression with variables bound by ``env``.

        Without ``ops``, values combine with Python operators (ints give an
        int; symbolic values give an expression). With ``ops``, everything goes
        through its methods, so values can be e.g. MLIR SSA values.
        Raises :class:`UnexpectedDimVar` for an unbound variable.

        >>> b, = symbolic_shape("b")
        >>> (3 * b + b // 2).evaluate({"b": 5})
        17
        """
        return _evaluate_terms(self._terms, env, ops or _PYTHON_OPS)

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __reduce__(self):
        raise TypeError("DimExpr does not support pickling; serialize it with str() and symbolic_shape().")


def _divmod(dividend: DimSize, divisor: DimSize, scope: SymbolicScope) -> tuple[DimSize, DimSize]:
    """Floor division with remainder, exact when polynomial division is exact.

    With a symbolic divisor the remainder must be 0; with a constant divisor a
    constant remainder is allowed (``(2*b + 1) // 2 == b``, remainder 1).
    Otherwise the result is the ``floordiv``/``mod`` factors.
    """
    if type(divisor) is int and divisor == 0:
        raise ZeroDivisionError(f"Division by zero: '{dividend}' // 0")
    quotient: DimSize = 0
    rest: DimSize = dividend
    exact = True
    # Each step removes the leading term of `rest`; the cap guards against
    # orderings where the divisor's lower terms keep reintroducing terms.
    for _ in range(1000):
        if not isinstance(rest, DimExpr):
            break
        lead_term, lead_coeff = rest._terms[0]
        if isinstance(divisor, DimExpr):
            divisor_term, divisor_coeff = divisor._terms[0]
            quotient_term = lead_term.divide(divisor_term)
        else:
            quotient_term, divisor_coeff = lead_term, divisor
        if quotient_term is None or lead_coeff % divisor_coeff:
            exact = False
            break
        step = DimExpr._normalized({quotient_term: lead_coeff // divisor_coeff}, scope)
        quotient = quotient + step
        rest = rest - step * divisor
    else:
        exact = False
    if exact:
        if isinstance(divisor, DimExpr):
            if rest == 0:
                return quotient, 0
        else:
            q, r = divmod(rest, divisor)
            return quotient + q, r
    return (
        DimExpr._from_operation(_FLOORDIV, (dividend, divisor), scope),
        DimExpr._from_operation(_MOD, (dividend, divisor), scope),
    )


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


class DimOps(Protocol):
    """The operations :meth:`DimExpr.evaluate` uses to build a value.

    Integer semantics: ``floordiv`` rounds toward negative infinity and ``mod``
    has the sign of the divisor (Python's ``//`` and ``%``). ``evaluate`` emits
    what JAX's lowering emits: ``mul(term, constant(k))`` for a coefficient
    ``k != 1`` (so negation is ``mul(x, constant(-1))``), ``constant(k)`` for
    integer operands, and a left-to-right chain of ``add``; ``neg`` is part of
    the protocol for other clients.
    """

    def constant(self, value: int) -> Any: ...
    def add(self, x: Any, y: Any) -> Any: ...
    def mul(self, x: Any, y: Any) -> Any: ...
    def neg(self, x: Any) -> Any: ...
    def floordiv(self, x: Any, y: Any) -> Any: ...
    def mod(self, x: Any, y: Any) -> Any: ...
    def max(self, x: Any, y: Any) -> Any: ...
    def min(self, x: Any, y: Any) -> Any: ...


class _PythonOps:
    """Evaluate with Python operators: ints, or expressions for substitution."""

    def constant(self, value):
        return value

    def add(self, x, y):
        return x + y

    def mul(self, x, y):
        return x * y

    def neg(self, x):
        return -x

    def floordiv(self, x, y):
        return x // y

    def mod(self, x, y):
        return x % y

    def max(self, x, y):
        return max_dim(x, y)

    def min(self, x, y):
        return min_dim(x, y)


_PYTHON_OPS = _PythonOps()


def _evaluate_operand(operand: DimSize, env, ops) -> Any:
    if type(operand) is int:
        return ops.constant(operand)
    return _evaluate_terms(operand._terms, env, ops)


def _evaluate_factor(factor: _Factor, env, ops) -> Any:
    if factor.var is not None:
        try:
            return env[factor.var]
        except KeyError:
            raise UnexpectedDimVar(
                f"Encountered dimension variable '{factor.var}' that is not bound; the bound dimension "
                f"variables are {sorted(env)}. Every dimension variable must be solvable from the shapes "
                "of the function arguments."
            ) from None
    x, y = (_evaluate_operand(o, env, ops) for o in factor.operands)
    return getattr(ops, factor.operation)(x, y)


def _evaluate_terms(terms: _Terms, env, ops) -> Any:
    total = None
    for term, coeff in terms:
        if term is _ONE:
            value = ops.constant(coeff)
        else:
            value = None
            for factor, exponent in term.factors:
                base = _evaluate_factor(factor, env, ops)
                power = base
                for _ in range(exponent - 1):
                    power = ops.mul(power, base)
                value = power if value is None else ops.mul(value, power)
            if coeff != 1:
                value = ops.mul(value, ops.constant(coeff))
        total = value if total is None else ops.add(total, value)
    return ops.constant(0) if total is None else total


def evaluate_dim(d: DimSize, env: Mapping[str, Any], ops: DimOps | None = None) -> Any:
    """Evaluate an ``int`` or :class:`DimExpr` (see :meth:`DimExpr.evaluate`)."""
    if isinstance(d, DimExpr):
        return d.evaluate(env, ops)
    d = operator.index(d)
    return d if ops is None else ops.constant(d)


# ---------------------------------------------------------------------------
# Scopes and constraints
# ---------------------------------------------------------------------------


def _location_outside_toolkit() -> str:
    """``file:line (function)`` of the innermost caller outside the toolkit package, or ``unknown``."""
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    if frame is None:
        return "unknown"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


class SymbolicScope:
    """The shared context of related symbolic dimensions, with their constraints.

    ``constraints`` are strings ``"e1 >= e2"``, ``"e1 <= e2"`` or
    ``"e1 == e2"``. For an equality the left side must be a single term with
    a coefficient (``"a == 2*b"``, ``"2*n == m"``, ``"mod(c, 2) == 0"``); it is
    used as a rewrite rule left side -> right side. Raises ``ValueError`` for
    malformed or unsatisfiable constraints.

    >>> scope = SymbolicScope(["b >= 4"])
    >>> b, = symbolic_shape("b", scope=scope)
    >>> b >= 3
    True
    """

    def __init__(self, constraints: Sequence[str] = ()):
        if isinstance(constraints, str):
            raise ValueError(f"The symbolic constraints should be a sequence of strings. Got {constraints!r}")
        self._constraint_strs: list[str] = []
        self._rules: dict[_Term, tuple[DimSize, int]] = {}
        self._explicit: list[tuple[bool, DimSize, str]] = []  # (is_equality, e1 - e2, text)
        self._initial_facts: _Facts | None = None
        self._bounds_cache: dict[DimExpr, tuple[float, float, int]] = {}
        self._created_at = _location_outside_toolkit()  # tells two scopes apart in mixing errors
        for text in constraints:
            self._add_constraint(text)
        if self._explicit:
            self._facts()  # report unsatisfiable constraint combinations now

    def explicit_constraints(self) -> list[tuple[bool, DimSize, str]]:
        """The user's constraints as ``(is_equality, lhs - rhs, text)``: each means
        ``lhs - rhs == 0`` or ``lhs - rhs >= 0``. Lowering turns them into shape assertions."""
        return list(self._explicit)

    @property
    def constraints(self) -> tuple[str, ...]:
        """The constraint strings, as given."""
        return tuple(self._constraint_strs)

    def __repr__(self) -> str:
        return f"SymbolicScope({self._constraint_strs!r})"

    __str__ = __repr__

    def _describe(self) -> str:
        """``<id> created at file:line (function)`` and the constraints: which scope this is."""
        text = f"{id(self)} created at {self._created_at}"
        if self._constraint_strs:
            text += " with constraints:" + "".join(f"\n  {c}" for c in self._constraint_strs)
        return text

    def _check_same_scope(self, other: DimExpr, when: str, self_descr: str = "",
                          other_descr: str = "unknown") -> None:
        # JAX's wording (its tests match it); each scope is named by where it was created,
        # since two scopes usually print the same variables ("sizes b and b differ").
        if other._scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\n"
                f"Expected {self_descr}scope {self._describe()}\n"
                f"and found for '{other}' ({other_descr}) scope {other._scope._describe()}\n"
                "Every symbolic_shape call without scope= creates a new scope: parse related dimensions "
                "in one symbolic_shape call, or pass scope= (e.g. scope=a.scope)."
            )

    def _add_constraint(self, text: str) -> None:
        if not isinstance(text, str):
            raise ValueError(f"SymbolicScope constraint must be a string: got {text!r}")
        for symbol, is_equality, swap in (("==", True, False), (">=", False, False), ("<=", False, True)):
            position = text.find(symbol)
            if position >= 0:
                break
        else:
            raise ValueError(f"Constraint parsing error in {text!r}: must contain one of '==' or '>=' or '<='")
        left = _parse_single(text[:position], self, text)
        right = _parse_single(text[position + 2 :], self, text)
        if swap:
            left, right = right, left
        difference = left - right
        self._constraint_strs.append(text)
        # Parsing may have computed bounds (e.g. in max_dim) without this constraint.
        self._initial_facts = None
        self._bounds_cache.clear()
        if type(difference) is int:
            if (is_equality and difference != 0) or (not is_equality and difference < 0):
                raise ValueError(f"Unsatisfiable explicit constraint: {text}")
            return
        if is_equality:
            self._add_rule(left, right, text)
        self._explicit.append((is_equality, difference, text))

    def _add_rule(self, left: DimSize, right: DimSize, text: str) -> None:
        if not isinstance(left, DimExpr) or len(left._terms) != 1:
            raise ValueError(
                f"Invalid equality constraint: {text}. The left-hand side must be of the form "
                "`coefficient * term` (e.g. 'a == 2*b', 'mod(c, 2) == 0')."
            )
        (term, coeff), = left._terms
        if term in dict(_terms_of(right)):
            raise ValueError(f"Invalid equality constraint: {text}. The right-hand side must not contain the left-hand side term.")
        if term in self._rules:
            raise ValueError(f"Found multiple equality constraints with the same left-hand side: {term} (in {text!r})")
        self._rules[term] = (right, coeff)
        factor = term.single_factor()
        # mod(e, k) == 0 also means k*floordiv(e, k) == e.
        if (
            coeff == 1
            and type(right) is int
            and right == 0
            and factor is not None
            and factor.operation == _MOD
            and type(factor.operands[1]) is int
        ):
            divisor = factor.operands[1]
            quotient_term = _Term(((_Factor(operation=_FLOORDIV, operands=factor.operands), 1),))
            if quotient_term not in self._rules:
                self._rules[quotient_term] = (factor.operands[0], divisor)

    def _apply_rules(self, coeffs: dict[_Term, int]) -> dict[_Term, int]:
        """Rewrite terms with the equality rules until none applies."""
        coeffs = {t: c for t, c in coeffs.items() if c}
        for _ in range(100):
            changed = False
            for term, coeff in list(coeffs.items()):
                replacement = self._rewrite_term(term, coeff)
                if replacement is not None:
                    del coeffs[term]
                    for t, c in replacement:
                        coeffs[t] = coeffs.get(t, 0) + c
                    coeffs = {t: c for t, c in coeffs.items() if c}
                    changed = True
                    break
            if not changed:
                return coeffs
        return coeffs

    def _rewrite_term(self, term: _Term, coeff: int) -> list[tuple[_Term, int]] | None:
        rule = self._rules.get(term)
        if rule is not None and coeff % rule[1] == 0:
            after, after_coeff = rule
            return [(t, c * (coeff // after_coeff)) for t, c in _terms_of(after)]
        if len(term.factors) <= 1:
            return None
        for factor, exponent in term.factors:
            part = _Term(((factor, exponent),))
            rule = self._rules.get(part)
            if rule is not None and coeff % rule[1] == 0:
                after, after_coeff = rule
                remaining = term.divide(part)
                return [(t.mul(remaining), c * (coeff // after_coeff)) for t, c in _terms_of(after)]
        return None

    def _facts(self) -> _Facts:
        if self._initial_facts is None:
            facts = _Facts()
            for is_equality, difference, text in self._explicit:
                facts.add_implicit_for_terms(difference._terms)
                facts.add(is_equality, difference._terms, text)
            self._initial_facts = facts
        return self._initial_facts.copy()


# ---------------------------------------------------------------------------
# The decision procedure
#
# Facts are constraints `expr >= 0` or `expr == 0`. Single-term facts are kept
# as integer bounds of the term; others are indexed by each of their terms.
# When a fact is added it is combined once with existing facts sharing a term,
# eliminating that term (Fourier-Motzkin style), so chains like a >= b >= c
# give a >= c. To bound an expression we eliminate its leading (largest) term
# with each fact whose leading term it is, and bound the rest recursively; the
# rest only has smaller terms, so the recursion terminates.
# ---------------------------------------------------------------------------

_PREC_BEST = 0  # compute the tightest bounds we can
_PREC_GEQ = 1  # enough to decide e >= 0: lb >= 0 or ub < 0
_PREC_SIGN = 2  # enough to decide max/min: lb >= 0 or ub <= 0


def _sufficient(prec: int, lb: float, ub: float) -> bool:
    if prec == _PREC_GEQ:
        return lb >= 0 or ub < 0
    if prec == _PREC_SIGN:
        return lb >= 0 or ub <= 0
    return False


def _ceil_div(a: float, b: int) -> float:
    if math.isinf(a):
        return a if b > 0 else -a
    return -((-int(a)) // b)


def _floor_div(a: float, b: int) -> float:
    if math.isinf(a):
        return a if b > 0 else -a
    return int(a) // b


def _interval_mul(x: tuple[float, float], y: tuple[float, float]) -> tuple[float, float]:
    def mul(a, b):
        return 0 if a == 0 or b == 0 else a * b

    candidates = [mul(a, b) for a in x for b in y]
    return min(candidates), max(candidates)


def _interval_pow(x: tuple[float, float], exponent: int) -> tuple[float, float]:
    lb, ub = x
    if lb >= 0:
        return lb**exponent, ub**exponent
    if ub <= 0:
        return (ub**exponent, lb**exponent) if exponent % 2 == 0 else (lb**exponent, ub**exponent)
    if exponent % 2 == 0:
        return 0, max(lb**exponent, ub**exponent)
    return lb**exponent, ub**exponent


def _floor_div_bound(a: float, b: float) -> float:
    if not math.isinf(b):
        if not math.isinf(a):
            return int(a) // int(b)
        return -_INF if (a >= 0) != (b >= 0) else _INF
    if not math.isinf(a):
        return -1 if (a >= 0) != (b >= 0) and a != 0 else 0
    return -_INF if (a >= 0) != (b >= 0) else _INF


class _Facts:
    __slots__ = ("term_bounds", "by_term", "processed")

    def __init__(self):
        self.term_bounds: dict[_Term, tuple[float, float]] = {}
        # term -> list of (is_equality, terms) of multi-term facts containing it
        self.by_term: dict[_Term, list[tuple[bool, _Terms]]] = {}
        self.processed: set[_Term] = set()

    def copy(self) -> _Facts:
        other = _Facts()
        other.term_bounds = dict(self.term_bounds)
        other.by_term = {t: list(facts) for t, facts in self.by_term.items()}
        other.processed = set(self.processed)
        return other

    # -- adding facts ---------------------------------------------------

    def add(self, is_equality: bool, terms: _Terms, text: str | None = None) -> None:
        """Record ``terms >= 0`` (or ``== 0``), combined once with existing facts."""
        if not self._record(is_equality, terms, text):
            return
        derived = []
        for term, coeff in terms:
            if term is _ONE:
                continue
            for other_is_eq, other_terms in self._facts_about(term):
                other_coeff = dict(other_terms).get(term)
                combined = _eliminate(is_equality, terms, coeff, other_is_eq, other_terms, other_coeff)
                if combined is not None:
                    derived.append(combined)
        for combined_is_eq, combined_terms in derived:
            self._record(combined_is_eq, combined_terms, text)

    def _facts_about(self, term: _Term) -> list[tuple[bool, _Terms]]:
        facts = list(self.by_term.get(term, ()))
        lb, ub = self.term_bounds.get(term, (-_INF, _INF))
        if lb == ub:
            facts.append((True, _combine(((term, 1),), 1, ((_ONE, int(lb)),), -1)))
        else:
            if lb > -_INF:
                facts.append((False, _combine(((term, 1),), 1, ((_ONE, int(lb)),), -1)))
            if ub < _INF:
                facts.append((False, _combine(((term, -1),), 1, ((_ONE, int(ub)),), 1)))
        return facts

    def _record(self, is_equality: bool, terms: _Terms, text: str | None) -> bool:
        """Store one fact; False if it is trivially true. Raises if unsatisfiable."""
        non_constant = [(t, c) for t, c in terms if t is not _ONE]
        constant = sum(c for t, c in terms if t is _ONE)
        if not non_constant:
            if constant < 0 or (is_equality and constant != 0):
                raise ValueError(f"Unsatisfiable constraint{'s' if text is None else ''}: {text or _terms_str(terms)}")
            return False
        if len(non_constant) == 1:
            (term, coeff), = non_constant
            lb, ub = self.term_bounds.get(term, (-_INF, _INF))
            if is_equality:
                if constant % coeff:
                    raise ValueError(f"Unsatisfiable constraint: {text or _terms_str(terms)}")
                value = -constant // coeff
                lb, ub = max(lb, value), min(ub, value)
            elif coeff > 0:  # coeff*t + constant >= 0  ->  t >= ceil(-constant/coeff)
                lb = max(lb, _ceil_div(-constant, coeff))
            else:  # t <= floor(constant / -coeff)
                ub = min(ub, _floor_div(constant, -coeff))
            if lb > ub:
                raise ValueError(f"Unsatisfiable constraint: {text or _terms_str(terms)}")
            self.term_bounds[term] = (lb, ub)
            return True
        for term, _ in non_constant:
            self.by_term.setdefault(term, []).append((is_equality, terms))
        return True

    # -- implicit facts ---------------------------------------------------

    def add_implicit_for_terms(self, terms: _Terms) -> None:
        for term, _ in terms:
            if term is not _ONE:
                self.add_implicit_for_term(term)

    def add_implicit_for_operand(self, operand: DimSize) -> None:
        if type(operand) is not int:
            self.add_implicit_for_terms(operand._terms)

    def add_implicit_for_term(self, term: _Term) -> None:
        if term in self.processed:
            return
        self.processed.add(term)
        factor = term.single_factor()
        if factor is None:  # a product (or power): interval product of its factors
            bounds = (1, 1)
            for f, exponent in term.factors:
                single = _Term(((f, 1),))
                self.add_implicit_for_term(single)
                bounds = _interval_mul(bounds, _interval_pow(self.bounds_terms(((single, 1),), _PREC_BEST), exponent))
            self._add_bounds(term, *bounds)
            return
        if factor.var is not None:
            self._add_bounds(term, 1, _INF)
            return
        for operand in factor.operands:
            self.add_implicit_for_operand(operand)
        t = ((term, 1),)
        op1, op2 = factor.operands
        b1 = self.bounds_terms(_terms_of(op1), _PREC_BEST)
        b2 = self.bounds_terms(_terms_of(op2), _PREC_BEST)
        if factor.operation == _MOD:
            if b2[0] > 0:  # 0 <= mod < op2
                self._add_bounds(term, 0, b2[1] - 1)
                self.add(False, _combine(_combine(_terms_of(op2), 1, ((_ONE, 1),), -1), 1, t, -1))
            elif b2[1] < 0:  # op2 < mod <= 0
                self._add_bounds(term, b2[0] + 1, 0)
                self.add(False, _combine(t, 1, _combine(_terms_of(op2), 1, ((_ONE, 1),), 1), -1))
        elif factor.operation == _FLOORDIV:
            if b2[0] <= 0 <= b2[1]:
                return  # possible division by zero: nothing to add
            corners = [_floor_div_bound(a, b) for a in b1 for b in b2]
            self._add_bounds(term, min(corners), max(corners))
            if b2[0] > 0:
                if b1[0] >= 0:
                    self._add_bounds(term, 0, _INF)
                # op1 == op2 * floordiv + mod
                mod_term = _Term(((_Factor(operation=_MOD, operands=factor.operands), 1),))
                self.add_implicit_for_term(mod_term)
                product_coeffs: dict[_Term, int] = {}
                for t2, c2 in _terms_of(op2):
                    product_coeffs[t2.mul(term)] = product_coeffs.get(t2.mul(term), 0) + c2
                for t2 in product_coeffs:
                    self.add_implicit_for_term(t2)
                product = _sort_terms(product_coeffs)
                self.add(True, _combine(_combine(_terms_of(op1), 1, product, -1), 1, ((mod_term, 1),), -1))
        elif factor.operation == _MAX:
            self._add_bounds(term, max(b1[0], b2[0]), max(b1[1], b2[1]))
            self.add(False, _combine(t, 1, _terms_of(op1), -1))
            self.add(False, _combine(t, 1, _terms_of(op2), -1))
        elif factor.operation == _MIN:
            self._add_bounds(term, min(b1[0], b2[0]), min(b1[1], b2[1]))
            self.add(False, _combine(_terms_of(op1), 1, t, -1))
            self.add(False, _combine(_terms_of(op2), 1, t, -1))

    def _add_bounds(self, term: _Term, lb: float, ub: float) -> None:
        if lb > -_INF:
            self.add(False, ((term, 1), (_ONE, -int(lb))) if lb else ((term, 1),))
        if ub < _INF:
            self.add(False, ((term, -1), (_ONE, int(ub))) if ub else ((term, -1),))

    # -- bounds -----------------------------------------------------------

    def bounds_terms(self, terms: _Terms, prec: int) -> tuple[float, float]:
        if not terms:
            return 0, 0
        term, coeff = terms[0]
        if term is _ONE:
            return coeff, coeff
        lb, ub = -_INF, _INF
        for fact_is_eq, fact_terms in self._facts_about(term):
            if fact_terms[0][0] != term:
                continue  # only facts led by `term`: the rest then has smaller terms
            fact_coeff = dict(fact_terms)[term]
            # |fc| * e = s * fact + rest, with s = sgn(fc) * coeff
            scale = abs(fact_coeff)
            s = coeff if fact_coeff > 0 else -coeff
            rest = _combine(terms, scale, fact_terms, -s)
            rest_lb, rest_ub = self.bounds_terms(rest, _PREC_BEST)
            # fact >= 0: s > 0 gives |fc|*e >= rest, s < 0 gives |fc|*e <= rest; fact == 0 gives both.
            if s > 0 or fact_is_eq:
                lb = max(lb, _ceil_div(rest_lb, scale))
            if s < 0 or fact_is_eq:
                ub = min(ub, _floor_div(rest_ub, scale))
            if _sufficient(prec, lb, ub):
                return lb, ub
        factor = term.single_factor()
        if factor is not None and factor.operation in (_MAX, _MIN):
            op1, op2 = factor.operands
            lb1, ub1 = self.bounds_terms(_combine(terms[1:], 1, _terms_of(op1), coeff), _PREC_BEST)
            lb2, ub2 = self.bounds_terms(_combine(terms[1:], 1, _terms_of(op2), coeff), _PREC_BEST)
            if (coeff > 0) == (factor.operation == _MAX):
                lb, ub = max(lb, max(lb1, lb2)), min(ub, max(ub1, ub2))
            else:
                lb, ub = max(lb, min(lb1, lb2)), min(ub, min(ub1, ub2))
        return lb, ub


def _eliminate(
    is_eq1: bool, terms1: _Terms, coeff1: int, is_eq2: bool, terms2: _Terms, coeff2: int
) -> tuple[bool, _Terms] | None:
    """A positive combination of two facts that cancels their shared term, if sound."""
    # alpha*coeff1 + beta*coeff2 == 0; a fact >= 0 may only be scaled by a positive factor.
    alpha, beta = abs(coeff2), -coeff1 if coeff2 > 0 else coeff1
    if beta < 0:
        if is_eq2:
            pass
        elif is_eq1:
            alpha, beta = -alpha, -beta
        else:
            return None
    return is_eq1 and is_eq2, _combine(terms1, alpha, terms2, beta)


def _terms_str(terms: _Terms) -> str:
    coeffs = dict(terms)
    if not any(t is not _ONE for t in coeffs):
        return f"{sum(coeffs.values())} >= 0"
    return f"{DimExpr(_sort_terms(coeffs), SymbolicScope())} >= 0"


def _bounds(e: DimSize, prec: int) -> tuple[float, float]:
    if not isinstance(e, DimExpr):
        return e, e
    scope = e._scope
    cached = scope._bounds_cache.get(e)
    if cached is not None:
        lb, ub, cached_prec = cached
        if cached_prec == _PREC_BEST or _sufficient(prec, lb, ub):
            return lb, ub
    facts = scope._facts()
    facts.add_implicit_for_terms(e._terms)
    lb, ub = facts.bounds_terms(e._terms, prec)
    # Without an early exit the search ran to the end: the bounds are the best we get.
    scope._bounds_cache[e] = (lb, ub, prec if _sufficient(prec, lb, ub) else _PREC_BEST)
    return lb, ub


def bounds(e: DimSize) -> tuple[float, float]:
    """Sound lower and upper bounds of ``e`` (``±math.inf`` when unknown).

    >>> b, = symbolic_shape("b", constraints=["b <= 8"])
    >>> bounds(2 * b + 1)
    (3, 17)
    """
    return _bounds(e, _PREC_BEST)


def _geq_decision(e1: DimSize, e2: DimSize, describe: Callable[[], str]) -> bool:
    if isinstance(e1, DimExpr):
        scope = e1._scope
        if isinstance(e2, DimExpr):
            scope._check_same_scope(e2, f"when comparing {describe()}")
    elif isinstance(e2, DimExpr):
        scope = e2._scope
    else:
        return operator.index(e1) >= operator.index(e2)
    try:
        if not isinstance(e1, DimExpr):
            operator.index(e1)
        if not isinstance(e2, DimExpr):
            operator.index(e2)
    except TypeError:
        raise TypeError(f"Cannot compare a symbolic dimension with a non-integer: {describe()}") from None
    lb, ub = _bounds(e1 - e2, _PREC_GEQ)
    if lb >= 0:
        return True
    if ub < 0:
        return False
    scope_text = f"\nUsing symbolic scope with constraints {list(scope.constraints)}." if scope.constraints else ""
    raise InconclusiveDimensionOperation(f"Symbolic dimension comparison {describe()} is inconclusive.{scope_text}")


# ---------------------------------------------------------------------------
# Helpers over dimensions and shapes (ints or DimExpr)
# ---------------------------------------------------------------------------


def check_same_scope(d1: DimSize, d2: DimSize, when: str) -> None:
    """``ValueError`` explaining both scopes if ``d1`` and ``d2`` are expressions of different scopes.

    Two scopes usually print the same variables, so shape errors such as
    "sizes b and b differ" call this first to say what is really wrong.
    """
    if isinstance(d1, DimExpr) and isinstance(d2, DimExpr):
        d1._scope._check_same_scope(d2, when)


def is_symbolic_dim(d: Any) -> bool:
    """True iff ``d`` is a :class:`DimExpr`."""
    return isinstance(d, DimExpr)


def is_constant_dim(d: Any) -> bool:
    """True iff ``d`` is an integer dimension (anything ``operator.index`` accepts)."""
    if isinstance(d, DimExpr):
        return False
    try:
        operator.index(d)
        return True
    except TypeError:
        return False


is_constant = is_constant_dim


def is_dim(d: Any) -> bool:
    """True iff ``d`` is a constant or symbolic dimension."""
    return isinstance(d, DimExpr) or is_constant_dim(d)


def is_constant_shape(shape: Sequence[DimSize]) -> bool:
    """True iff all dimensions are constants."""
    return all(is_constant_dim(d) for d in shape)


def max_dim(d1: DimSize, d2: DimSize) -> DimSize:
    """``max(d1, d2)`` for constant or symbolic dimensions (``max(a, b)`` factor when undecidable).

    >>> b, = symbolic_shape("b")
    >>> max_dim(b, 1), max_dim(b, 3)
    (b, max(b, 3))
    """
    if not isinstance(d1, DimExpr) and not isinstance(d2, DimExpr):
        return max(d1, d2)
    return _max_min(_MAX, d1, d2)


def min_dim(d1: DimSize, d2: DimSize) -> DimSize:
    """``min(d1, d2)`` for constant or symbolic dimensions (``min(a, b)`` factor when undecidable)."""
    if not isinstance(d1, DimExpr) and not isinstance(d2, DimExpr):
        return min(d1, d2)
    return _max_min(_MIN, d1, d2)


def _max_min(operation: str, d1: DimSize, d2: DimSize) -> DimSize:
    scope = d1._scope if isinstance(d1, DimExpr) else d2._scope
    if isinstance(d1, DimExpr) and isinstance(d2, DimExpr):
        scope._check_same_scope(d2, f"in {operation}")
    d1 = d1 if isinstance(d1, DimExpr) else operator.index(d1)
    d2 = d2 if isinstance(d2, DimExpr) else operator.index(d2)
    lb, ub = _bounds(d1 - d2, _PREC_SIGN)
    if lb >= 0:
        return d1 if operation == _MAX else d2
    if ub <= 0:
        return d2 if operation == _MAX else d1
    return DimExpr._from_operation(operation, (d1, d2), scope)


def definitely_equal(d1: DimSize, d2: DimSize) -> bool:
    """True iff the two dimensions are equal for all variable values (structurally)."""
    if d1 is d2:
        return True
    try:
        return bool(d1 == d2)
    except InconclusiveDimensionOperation:
        return False


def definitely_equal_shape(s1: Sequence[DimSize], s2: Sequence[DimSize]) -> bool:
    """True iff the shapes have the same rank and definitely equal dimensions."""
    return len(s1) == len(s2) and all(definitely_equal(a, b) for a, b in zip(s1, s2))


def dim_size_product(shape: Iterable[DimSize]) -> DimSize:
    """The number of elements of ``shape`` (an ``int`` or a :class:`DimExpr`).

    >>> b, = symbolic_shape("b")
    >>> dim_size_product((b, 3, 2))
    6*b
    """
    result: DimSize = 1
    for d in shape:
        result = result * d
    return result


core_dim_size_product = dim_size_product


def divide_shape_sizes(s1: Sequence[DimSize], s2: Sequence[DimSize]) -> DimSize:
    """The ``q`` with ``q * size(s2) == size(s1)``; raises InconclusiveDimensionOperation if none.

    >>> b, = symbolic_shape("b")
    >>> divide_shape_sizes((b, 6), (3,))
    2*b
    """
    size1 = dim_size_product(s1)
    size2 = dim_size_product(s2)
    if definitely_equal(size1, size2):
        return 1
    if isinstance(size2, int) and size2 == 0:
        raise InconclusiveDimensionOperation(
            f"Cannot divide evenly the sizes of shapes {tuple(s1)} and {tuple(s2)}: the second has size 0."
        )
    q, r = divmod(size1, size2)
    if not (type(r) is int and r == 0):
        raise InconclusiveDimensionOperation(
            f"Cannot divide evenly the sizes of shapes {tuple(s1)} and {tuple(s2)}. The remainder {r} should be 0."
        )
    return q


def dilate_dim(d: DimSize, dilation: DimSize) -> DimSize:
    """``max(0, 1 + dilation * (d - 1))``; assumes ``dilation >= 1``."""
    if definitely_equal(dilation, 1):
        return d
    return max_dim(1 + dilation * (d - 1), 0)


def stride_dim(d: DimSize, window_size: DimSize, window_stride: DimSize) -> DimSize:
    """``max(0, (d - window_size) // window_stride + 1)``; assumes window size and stride >= 1."""
    return max_dim((d - window_size) // window_stride + 1, 0)


def is_empty_shape(shape: Sequence[DimSize]) -> bool:
    """True iff some dimension is definitely 0."""
    return any(definitely_equal(d, 0) for d in shape)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<number>\d+)|(?P<name>[^\W\d]\w*)|(?P<op>\.\.\.|//|\*\*|[-+*%^(),]))"
)


class _Token:
    __slots__ = ("kind", "text", "start")

    def __init__(self, kind: str, text: str, start: int):
        self.kind = kind  # "number" | "name" | operator text | "end"
        self.text = text
        self.start = start


class _Parser:
    """Recursive descent over JAX's spec grammar, plus ``//`` and ``%``::

        shape  := '(' shape ')' | [dim (',' dim)* [',']]
        dim    := '_' | '...' | expr
        expr   := ['+' | '-'] term (('+' | '-') term)*
        term   := power (('*' | '//' | '%') power)*
        power  := factor ['^' INT]
        factor := NAME | INT | '-' INT | op '(' expr ',' expr ')'   (op: floordiv, mod, max, min)
    """

    def __init__(self, spec: str, like: Sequence[int | None] | None, spec_repr: str, scope: SymbolicScope):
        self.spec = spec
        self.like = like
        self.spec_repr = spec_repr
        self.scope = scope
        self.dimensions: list[DimSize] = []
        self.tokens = self._tokenize()
        self.position = 0

    def _tokenize(self) -> list[_Token]:
        tokens = []
        index = 0
        text = self.spec
        while True:
            while index < len(text) and text[index].isspace():
                index += 1
            if index >= len(text):
                tokens.append(_Token("end", "", index))
                return tokens
            match = _TOKEN_RE.match(text, index)
            if match is None or match.end() == index:
                self.position = 0
                raise self._error(index, f"unexpected character {text[index]!r}")
            kind = match.lastgroup
            value = match.group(kind)
            start = match.start(kind)
            tokens.append(_Token(value if kind == "op" else kind, value, start))
            index = match.end()

    def _error(self, start: int, detail: str) -> ValueError:
        return ValueError(
            f"syntax error in symbolic shape {self.spec_repr} in dimension {len(self.dimensions)}: {detail}. "
            f"Parsed '{self.spec[:start]}', remaining '{self.spec[start:]}'."
        )

    @property
    def token(self) -> _Token:
        return self.tokens[self.position]

    def advance(self) -> _Token:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, *kinds: str) -> _Token:
        token = self.token
        if token.kind not in kinds:
            found = "end of string" if token.kind == "end" else repr(token.text)
            raise self._error(token.start, f"expecting one of {{{', '.join(repr(k) for k in kinds)}}} but found {found}")
        return self.advance()

    def parse_shape(self) -> tuple[DimSize, ...]:
        if self.token.kind == "(":
            self.advance()
            self.parse_dims(")")
            self.expect(")")
        else:
            self.parse_dims("end")
        self.expect("end")
        return tuple(self.dimensions)

    def parse_single(self) -> DimSize:
        value = self.parse_expr()
        self.expect("end")
        return value

    def parse_dims(self, closing: str) -> None:
        while self.token.kind != closing:
            token = self.token
            if token.kind == "..." or (token.kind == "name" and token.text == "_"):
                if self.like is None:
                    raise self._error(token.start, f"spec contains {token.text} but no 'like' shape was given")
                self.advance()
                if token.kind == "...":
                    for d in self.like[len(self.dimensions) :]:
                        self.add_dim(d, token)
                    break
                if len(self.like) <= len(self.dimensions):
                    raise self._error(
                        token.start,
                        f"cannot resolve placeholder '_' because we parsed {len(self.dimensions)} already "
                        f"and 'like' shape has only {len(self.like)} dimensions",
                    )
                self.add_dim(self.like[len(self.dimensions)], token)
            else:
                self.add_dim(self.parse_expr(), token)
            if self.token.kind == closing:
                break
            self.expect(",")

    def add_dim(self, d: DimSize | None, token: _Token) -> None:
        if d is None:
            raise self._error(token.start, f"unexpected placeholder for unknown dimension; like={self.like}")
        if self.like is not None and not isinstance(d, DimExpr):
            if len(self.like) <= len(self.dimensions):
                raise self._error(token.start, f"more dimensions than the 'like' shape {tuple(self.like)}")
            like_dim = self.like[len(self.dimensions)]
            if like_dim is not None and like_dim != d:
                raise self._error(token.start, f"different size {d} for known dimension; like={tuple(self.like)}")
        self.dimensions.append(d)

    def parse_expr(self) -> DimSize:
        negate = False
        if self.token.kind in ("-", "+"):
            negate = self.advance().kind == "-"
        total: DimSize = 0
        while True:
            term = self.parse_term()
            total = total - term if negate else total + term
            if self.token.kind not in ("+", "-"):
                return total
            negate = self.advance().kind == "-"

    def parse_term(self) -> DimSize:
        value = self.parse_power()
        while self.token.kind in ("*", "//", "%"):
            operator_kind = self.advance().kind
            operand = self.parse_power()
            if operator_kind == "*":
                value = value * operand
            elif operator_kind == "//":
                value = _floordiv_any(value, operand, self.scope)
            else:
                value = _mod_any(value, operand, self.scope)
        return value

    def parse_power(self) -> DimSize:
        value = self.parse_factor()
        if self.token.kind in ("^", "**"):
            self.advance()
            exponent = int(self.expect("number").text)
            value = value**exponent
        return value

    def parse_factor(self) -> DimSize:
        token = self.token
        if token.kind == "name":
            self.advance()
            if token.text in _OPERATIONS and self.token.kind == "(":
                self.advance()
                first = self.parse_expr()
                self.expect(",")
                second = self.parse_expr()
                self.expect(")")
                return self.operation(token.text, first, second)
            if token.text == "_":
                raise self._error(token.start, "'_' is only allowed as a whole dimension")
            return DimExpr._from_var(token.text, self.scope)
        sign = 1
        if token.kind == "-":
            self.advance()
            sign = -1
            token = self.token
            if token.kind != "number":
                raise self._error(token.start, "expecting a number after unary '-' in a product")
        if token.kind == "number":
            self.advance()
            return sign * int(token.text)
        found = "end of string" if token.kind == "end" else repr(token.text)
        raise self._error(token.start, f"expecting a dimension variable, an integer or an operation but found {found}")

    def operation(self, name: str, first: DimSize, second: DimSize) -> DimSize:
        if name == _MAX:
            return max_dim(first, second)
        if name == _MIN:
            return min_dim(first, second)
        if not isinstance(first, DimExpr) and not isinstance(second, DimExpr):
            return divmod(first, second)[0 if name == _FLOORDIV else 1]
        # As in JAX, an explicit floordiv/mod in a spec stays a factor.
        return DimExpr._from_operation(name, (first, second), self.scope)


def _floordiv_any(x: DimSize, y: DimSize, scope: SymbolicScope) -> DimSize:
    if isinstance(x, DimExpr) or isinstance(y, DimExpr):
        return _divmod(x, y, scope)[0]
    return x // y


def _mod_any(x: DimSize, y: DimSize, scope: SymbolicScope) -> DimSize:
    if isinstance(x, DimExpr) or isinstance(y, DimExpr):
        return _divmod(x, y, scope)[1]
    return x % y


def _parse_single(text: str, scope: SymbolicScope, context: str) -> DimSize:
    return _Parser(text, None, repr(context), scope).parse_single()


def symbolic_shape(
    shape_spec: str | None,
    *,
    constraints: Sequence[str] = (),
    scope: SymbolicScope | None = None,
    like: Sequence[int | None] | None = None,
) -> tuple[DimSize, ...]:
    """Parse a shape spec into a tuple of ints and :class:`DimExpr` s.

    The spec is a comma-separated list of dimension expressions (optionally in
    parentheses): integers, variables (identifiers), ``e1 + e2``, ``e1 - e2``,
    ``e1 * e2``, ``e ^ k``, ``floordiv(e1, e2)``, ``mod(e1, e2)``,
    ``max(e1, e2)``, ``min(e1, e2)`` (and, beyond JAX, ``e1 // e2`` and
    ``e1 % e2`` with Python's precedence). ``_`` (one dimension) and ``...``
    (the rest) are filled from ``like``. ``None`` means ``"..."``.

    A fresh :class:`SymbolicScope` with ``constraints`` is created unless
    ``scope`` is given (then ``constraints`` must be empty).
    Raises ``ValueError`` with the position of a syntax error.

    >>> symbolic_shape("b, 2*b + 1, floordiv(c, 2), max(a, b)")
    (b, 2*b + 1, floordiv(c, 2), max(a, b))
    >>> symbolic_shape("b, _, ...", like=(None, 3, 4, 5))
    (b, 3, 4, 5)
    """
    spec_repr = repr(shape_spec)
    if shape_spec is None:
        shape_spec = "..."
    elif not isinstance(shape_spec, str):
        raise ValueError(f"polymorphic shape spec should be None or a string. Found {spec_repr}.")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    return _Parser(shape_spec, like, spec_repr, scope).parse_shape()


def symbolic_args_specs(
    args: Any,
    shapes_specs: Any,
    constraints: Sequence[str] = (),
    scope: SymbolicScope | None = None,
) -> Any:
    """A pytree of ``ShapeDtypeStruct`` like ``args`` with symbolic shapes from ``shapes_specs``.

    ``args`` is a pytree of arrays or ``ShapeDtypeStruct`` s (anything with
    ``shape`` and ``dtype``); ``shapes_specs`` is ``None`` (static), one spec
    string for all arguments, or a pytree prefix of ``args`` with a spec (or
    ``None``) per subtree. All specs share one scope.

    >>> import numpy as np
    >>> specs = symbolic_args_specs((np.zeros((3, 4)), np.zeros(4)), ("b, _", "_"))
    >>> [s.shape for s in specs]
    [(b, 4), (4,)]
    """
    from toolkit.core import tree_util
    from toolkit.core.avals import ShapeDtypeStruct

    args_leaves, args_treedef = tree_util.tree_flatten(args)
    if isinstance(args, tuple) and isinstance(shapes_specs, list):
        shapes_specs = tuple(shapes_specs)
    spec_leaves, spec_treedef = tree_util.tree_flatten(shapes_specs, is_leaf=lambda x: x is None)
    try:
        subtrees = spec_treedef.flatten_up_to(args)
    except ValueError as error:
        raise ValueError(f"symbolic_args_specs: shapes_specs must be a pytree prefix of args: {error}") from None
    per_leaf_specs = []
    for spec, subtree in zip(spec_leaves, subtrees):
        per_leaf_specs.extend([spec] * len(tree_util.tree_leaves(subtree)))
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    result = []
    for arg, spec in zip(args_leaves, per_leaf_specs):
        try:
            shape, dtype = tuple(arg.shape), arg.dtype
        except AttributeError:
            raise TypeError(f"symbolic_args_specs: arguments must have .shape and .dtype, got {arg!r}") from None
        result.append(ShapeDtypeStruct(symbolic_shape(spec, like=shape, scope=scope), dtype))
    return args_treedef.unflatten(result)


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
