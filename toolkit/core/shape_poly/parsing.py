"""Parsing symbolic dimensions: the spec language of :func:`symbolic_shape` and :func:`symbolic_args_specs`."""

from __future__ import annotations

import re
from typing import Any, Sequence

from toolkit.core.shape_poly.decision import PARSER, SymbolicScope
from toolkit.core.shape_poly.expressions import (
    _FLOORDIV,
    _MAX,
    _MIN,
    _OPERATIONS,
    DimExpr,
    DimSize,
    _divmod,
    max_dim,
    min_dim,
)
from toolkit.core import pytrees
from toolkit.core.avals import ShapeDtypeStruct

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
            assert kind is not None  # a non-empty match is one of the three named groups
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

    args_leaves, args_treedef = pytrees.tree_flatten(args)
    if isinstance(args, tuple) and isinstance(shapes_specs, list):
        shapes_specs = tuple(shapes_specs)
    spec_leaves, spec_treedef = pytrees.tree_flatten(shapes_specs, is_leaf=lambda x: x is None)
    try:
        subtrees = spec_treedef.flatten_up_to(args)
    except ValueError as error:
        raise ValueError(f"symbolic_args_specs: shapes_specs must be a pytree prefix of args: {error}") from None
    per_leaf_specs = []
    for spec, subtree in zip(spec_leaves, subtrees):
        per_leaf_specs.extend([spec] * len(pytrees.tree_leaves(subtree)))
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


PARSER.parse_single = _parse_single  # constraints of a SymbolicScope are parsed here
