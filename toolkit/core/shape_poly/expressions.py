"""Symbolic dimension expressions: factors, terms, :class:`DimExpr` (arithmetic, printing), evaluation.

Also the helpers over dimensions and shapes (``max_dim``, ``definitely_equal``, ``dim_size_product``, ...).

Comparisons are decided by :mod:`toolkit.core.shape_poly.decision`; see the package docstring for the semantics.
"""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol, Sequence

if TYPE_CHECKING:  # annotations only (the package's modules import one another)
    from toolkit.core.shape_poly.decision import SymbolicScope


class _Decision:
    """The decision procedure comparisons call, installed by ``decision.py`` when it loads.

    ``decision`` builds on the expressions defined here, so this module reaches it through this slot
    rather than an import (no import cycle; ``shape_poly/__init__`` imports both).
    """
    geq: Callable[[Any, Any, Callable[[], str]], bool]
    sign_bounds: Callable[[Any], tuple[float, float]]


_DECISION = _Decision()

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

    key: tuple  # (1, var) or (size, operation, operand keys)

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
        self._hash: int | None = None  # computed on the first hash()

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

    def __mul__(self, other: Any) -> DimSize:
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

    def __pow__(self, power: Any, modulo: Any = None) -> DimSize:
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
        return _DECISION.geq(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other: DimSize) -> bool:
        return _DECISION.geq(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other: DimSize) -> bool:
        return not _DECISION.geq(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other: DimSize) -> bool:
        return not _DECISION.geq(self, other, lambda: f"'{self}' < '{other}'")

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
    assert factor.operation is not None  # a factor is a variable or an operation
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
    # JAX asks the symbolic operand first (rmax/rmin when the constant comes first), so where both answers hold
    # (max(-1, floordiv(-1, a)) with a >= 1) the same one is kept: max keeps the expression, min the constant.
    first, second = (d1, d2) if isinstance(d1, DimExpr) else (d2, d1)
    lb, ub = _DECISION.sign_bounds(first - second)
    if lb >= 0:
        return first if operation == _MAX else second
    if ub <= 0:
        return second if operation == _MAX else first
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

