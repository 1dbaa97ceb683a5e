"""XLA tokens as values: ``create_token`` and ``after_all``, as in JAX 0.10.2 (``jax.lax``'s, experimental there too).

A token carries no data; XLA orders side effects by the tokens they take and return. Its abstract
value is :data:`toolkit.core.avals.abstract_token` (JAX's ``core.abstract_token``), printed ``Tok`` in
a program and lowered to ``!stablehlo.token``:

- ``create_token(_=None)``: a fresh token with no precondition (``stablehlo.create_token``); its
  argument is ignored, as JAX ignores it (kept for backward compatibility there);
- ``after_all(*tokens)``: one token that comes after all of ``tokens`` (``stablehlo.after_all``);
  anything but a token is a ``TypeError``, as in JAX.

A token may be an argument and a result of ``toolkit.jit``; outside a trace it is a ``toolkit.array.Token``
(JAX's ``core.Token``), which crosses the boundary as JAX's does, an empty ``bool`` buffer
(``core.get_token_aval()``) in the token's place. Neither primitive has a derivative or a batching rule in
JAX; see the rule modules for what toolkit does instead.
"""

from __future__ import annotations

from typing import Any

from toolkit.core import tracing
from toolkit.core.avals import ShapedArray, abstract_token, aval_of
from toolkit.core.families import Family

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("tokens")

__all__ = ["after_all", "after_all_p", "create_token", "create_token_p"]


def _create_token_rule() -> ShapedArray:
    return abstract_token


create_token_p = family.primitive("create_token", shape_rule=_create_token_rule)


@family.function(binds=(create_token_p,))
def create_token(_: Any = None) -> Any:
    """A new XLA token with no preconditions for sequencing effects (``jax.lax.create_token``).

    The argument is ignored: JAX keeps it for backward compatibility, and binds the primitive with
    no operands (so nothing is traced for it either).
    """
    return create_token_p.bind()


def _after_all_rule(*operands: ShapedArray) -> ShapedArray:
    if any(x is not abstract_token for x in operands):
        kinds = ", ".join(str(x) for x in operands)
        raise TypeError(f"Arguments to after_all must be tokens, got {kinds}")
    return abstract_token


after_all_p = family.primitive("after_all", shape_rule=_after_all_rule)


@family.function(binds=(after_all_p,))
def after_all(*operands: Any) -> Any:
    """One token that comes after every token of ``operands`` (XLA's AfterAll; ``jax.lax.after_all``).

    With no operands it is a fresh token, as ``stablehlo.after_all`` with none is. An operand that is
    not a token (an array, a Python scalar) is a ``TypeError``.

    Outside a trace the tokens are only checked: a fresh token comes after everything already run
    (a token orders nothing between eager operations), so no executable is built to merge them.
    """
    avals = []
    for i, x in enumerate(operands):
        try:
            avals.append(x.aval if isinstance(x, tracing.Tracer) else aval_of(x))
        except TypeError:
            raise TypeError(f"Error interpreting argument to after_all as a JAX value. The problematic value is "
                            f"of type {type(x)} and was passed to after_all at position {i}.") from None
    if not tracing.is_tracing() and not any(isinstance(x, tracing.Tracer) for x in operands):
        _after_all_rule(*avals)
        return create_token()
    return after_all_p.bind(*operands)
