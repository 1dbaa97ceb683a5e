"""The decision procedure for symbolic dimensions: scopes with their constraints, bounds, and ``>=`` decisions.

See the package docstring (:mod:`toolkit.core.shape_poly`) for the semantics.
"""

from __future__ import annotations

import math
import operator
from types import FrameType
from typing import Any, Callable, Sequence

from toolkit.core.shape_poly.expressions import (
    _FLOORDIV,
    _INF,
    _MAX,
    _MIN,
    _MOD,
    _ONE,
    DimExpr,
    DimSize,
    InconclusiveDimensionOperation,
    _combine,
    _Factor,
    _sort_terms,
    _Term,
    _Terms,
    _terms_of,
    _DECISION,
)

# ---------------------------------------------------------------------------
# Scopes and constraints
# ---------------------------------------------------------------------------


def _location_outside_toolkit() -> str:
    """``file:line (function)`` of the innermost caller outside the toolkit package, or ``unknown``."""
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
    frame: FrameType | None = sys._getframe(1)
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
        left = PARSER.parse_single(text[:position], self, text)
        right = PARSER.parse_single(text[position + 2 :], self, text)
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

    def __init__(self) -> None:
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
                other_coeff = dict(other_terms)[term]  # every fact about `term` mentions it
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
            bounds: tuple[float, float] = (1, 1)
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


# The expressions' comparisons decide through these (see ``expressions._Decision``).
_DECISION.geq = _geq_decision
_DECISION.sign_bounds = lambda e: _bounds(e, _PREC_SIGN)


class _Parser:
    """``parsing._parse_single``, installed by ``parsing.py`` (which imports this module) when it loads."""
    parse_single: Callable[..., Any]


PARSER = _Parser()
