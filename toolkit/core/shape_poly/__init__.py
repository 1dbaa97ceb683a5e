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

Modules
-------
The package splits as JAX's ``shape_poly.py`` / ``shape_poly_decision.py`` do,
and re-exports every public name here:

* ``expressions`` — factors, terms, :class:`DimExpr` (canonical form,
  arithmetic, printing), evaluation with :class:`DimOps`, and the helpers over
  dimensions and shapes (``max_dim``, ``definitely_equal``, ...);
* ``parsing`` — the spec language: :func:`symbolic_shape`,
  :func:`symbolic_args_specs`;
* ``decision`` — :class:`SymbolicScope` and its constraints, bounds, and the
  ``>=`` decisions behind comparisons and ``max``/``min``;
* ``solving`` — the dimension variables of a call from its argument shapes
  (:func:`solve_dim_vars`, :class:`ShapeCheck`).
"""

from __future__ import annotations

from toolkit.core.shape_poly.decision import SymbolicScope, bounds
from toolkit.core.shape_poly.expressions import (
    DimExpr,
    DimOps,
    DimSize,
    InconclusiveDimensionOperation,
    UnexpectedDimVar,
    core_dim_size_product,
    definitely_equal,
    definitely_equal_shape,
    dilate_dim,
    dim_size_product,
    divide_shape_sizes,
    evaluate_dim,
    is_constant,
    is_constant_dim,
    is_constant_shape,
    is_dim,
    is_empty_shape,
    is_symbolic_dim,
    max_dim,
    min_dim,
    stride_dim,
)
from toolkit.core.shape_poly.expressions import (
    check_same_scope as check_same_scope,  # not in __all__, but used as shape_poly.check_same_scope
)
from toolkit.core.shape_poly.parsing import symbolic_args_specs, symbolic_shape
from toolkit.core.shape_poly.solving import SHAPE_MISMATCH as SHAPE_MISMATCH
from toolkit.core.shape_poly.solving import DimVarSolution, ShapeCheck, solve_dim_vars

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
