"""Batching of ``toolkit.lax.tokens``: a token carries no data, so a batch of tokens is one token.

``vmap`` asks for a rule only when an operand is batched. ``create_token`` has no operands; an
``after_all`` whose operand came out of the batched computation merges the tokens as they are and
its result is unbatched (a token orders effects, and the batched effects are one program's). JAX 0.10.2
has neither rule and fails with an ``AttributeError``; toolkit runs them.
"""

from __future__ import annotations

from typing import Any, Sequence

from toolkit.batching.registry import register_batching
from toolkit.lax import tokens


def _create_token(axis: Any, args: Sequence[Any], dims: Sequence[int | None]) -> tuple[Any, None]:
    return tokens.create_token_p.bind(), None


def _after_all(axis: Any, args: Sequence[Any], dims: Sequence[int | None]) -> tuple[Any, None]:
    return tokens.after_all_p.bind(*args), None


register_batching(tokens.create_token_p, _create_token)
register_batching(tokens.after_all_p, _after_all)
