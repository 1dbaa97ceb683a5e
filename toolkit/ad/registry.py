"""The differentiation rule tables, keyed by primitive.

``toolkit.core`` knows no transformation: a ``Primitive`` has a shape rule and
nothing else. Every differentiation rule lives in one of these plain
dictionaries, filled by the family modules in ``toolkit/ad/rules/`` (one per
``toolkit/lax`` family) the same way everywhere::

    JVP_RULES[sin_p] = _sin_jvp                 # or the helpers defjvp / deflinear / zero_tangent_jvp
    TRANSPOSE_RULES[neg_p] = _neg_transpose
    VJP_RULES[scan_p] = (_scan_vjp_forward, _scan_vjp_backward)

* ``JVP_RULES[prim](primals, tangents, **params) -> (primal_out, tangent_out)``
  (lists for multiple-result primitives; tangents may be symbolic ``Zero``s).
* ``TRANSPOSE_RULES[prim](cotangent_out, *operands, **params) -> cotangents_in``
  for primitives linear in some operands (those are ``UndefinedPrimal``s).
* ``VJP_RULES[prim] = (forward, backward)``: a reverse-mode rule of its own, used
  instead of linearizing the JVP and transposing it (control flow, custom
  derivatives, calls of exported functions):
  ``forward(primals, active, **params) -> (outs, residuals)`` and
  ``backward(residuals, active, cotangents_out, **params) -> cotangents_in``.

The interpreters (``ad/jvp.py``, ``ad/transpose.py``, ``ad/vjp.py``) read only
these tables, through ``RuleTable.lookup``, which imports ``toolkit/ad/rules/<family>.py``
the first time a primitive of that family is differentiated (``toolkit/core/families.py``);
a missing entry is a ``DifferentiationError`` naming the primitive.
A primitive deliberately without a JVP rule is listed in ``NO_JVP`` with the
reason (``tests/test_rule_coverage.py`` fails on one missing without a reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from toolkit.core.registries import RuleTable
from toolkit.core.primitive import Primitive

class JvpRule(Protocol):
    """``rule(primals, tangents, **params) -> (primal_out, tangent_out)`` (lists for multiple results)."""

    def __call__(self, primals: list[Any], tangents: list[Any], /, *args: Any, **params: Any) -> tuple[Any, Any]: ...


class TransposeRule(Protocol):
    """``rule(cotangent_out, *operands, **params) -> cotangents_in`` (None for an operand that is no ``UndefinedPrimal``)."""

    def __call__(self, cotangent: Any, /, *operands: Any, **params: Any) -> Sequence[Any]: ...


class VjpForward(Protocol):
    """``forward(primals, active, **params) -> (outs, residuals)``."""

    def __call__(self, primals: list[Any], active: list[bool], /, *args: Any,
                 **params: Any) -> tuple[Sequence[Any], Any]: ...


class VjpBackward(Protocol):
    """``backward(residuals, active, cotangents_out, **params) -> cotangents_in``."""

    def __call__(self, residuals: Any, active: list[bool], cotangents: list[Any], /, *args: Any,
                 **params: Any) -> Sequence[Any]: ...


_RULES_PACKAGE = "toolkit.ad.rules"
JVP_RULES: RuleTable[JvpRule] = RuleTable("jvp", _RULES_PACKAGE)
TRANSPOSE_RULES: RuleTable[TransposeRule] = RuleTable("transpose", _RULES_PACKAGE)
VJP_RULES: RuleTable[tuple[VjpForward, VjpBackward | None]] = RuleTable("vjp", _RULES_PACKAGE)

#: primitive -> why it has no JVP rule (read by the rule-coverage test and by nothing else).
NO_JVP: dict[Primitive, str] = {}

__all__ = ["JVP_RULES", "NO_JVP", "TRANSPOSE_RULES", "VJP_RULES", "JvpRule", "TransposeRule", "VjpBackward",
           "VjpForward"]
