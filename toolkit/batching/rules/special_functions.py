"""Batching rules for ``toolkit.lax.special_functions``: elementwise, so every batched operand's batch
dimension is brought to one position and unbatched operands are broadcast along it."""

from __future__ import annotations

from typing import Any

from toolkit.batching.registry import register_batching
from toolkit.batching.rules.elementwise import align
from toolkit.lax import special_functions as sf


def _elementwise(prim: Any):
    def rule(axis, args, dims, **params):
        if all(d == dims[0] for d in dims):
            return prim.bind(*args, **params), dims[0]
        args, d = align(axis, args, dims)
        return prim.bind(*args, **params), d
    rule.__name__ = f"{prim.name}_batch"
    return rule


@sf.family.derive
def _derive(prim: Any) -> None:
    register_batching(prim, _elementwise(prim))
