"""Batching rules for ``toolkit.lax.elementwise``.

Unary operations keep the batch dimension where it is. N-ary operations
(whose operands have equal shapes) bring every batched operand's batch
dimension to one position and broadcast the unbatched operands along it.
``select_n`` and ``clamp`` also accept scalar selectors/bounds: an unbatched
scalar stays a scalar, a batched one is broadcast to the operand's shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolkit.batching.interpret import AxisData, broadcast_batched, moveaxis, ndim_of
from toolkit.batching.registry import register_batching
from toolkit.lax import elementwise
from toolkit.lax import structural
from toolkit.core.avals import aval_of


def align(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None]) -> tuple[list[Any], int]:
    """Operands of equal unbatched shapes, all given the batch dimension at one position (returned)."""
    target = next(d for d in dims if d is not None)
    out = []
    for x, d in zip(args, dims):
        if d is None:
            out.append(broadcast_batched(x, axis.size, target))
        else:
            out.append(moveaxis(x, d, target))
    return out, target


def _unary(prim):
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        return prim.bind(args[0], **params), dims[0]
    rule.__name__ = f"{prim.name}_batch"
    return rule


def _nary(prim):
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        if all(d == dims[0] for d in dims):
            return prim.bind(*args, **params), dims[0]
        args, d = align(axis, args, dims)
        return prim.bind(*args, **params), d
    rule.__name__ = f"{prim.name}_batch"
    return rule


def _with_scalars(prim, full: Sequence[int]):
    """Operands at positions ``full`` have the result's shape; the others may be scalars."""
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        rank = ndim_of(args[full[0]]) - (dims[full[0]] is not None)
        full_dims = [d for d in (dims[i] for i in full) if d is not None]
        target = full_dims[0] if full_dims else 0
        out = []
        for i, (x, d) in enumerate(zip(args, dims)):
            x_rank = ndim_of(x) - (d is not None)
            if i not in full and x_rank == 0 and rank > 0:
                if d is None:
                    out.append(x)  # an unbatched scalar stays a scalar
                else:
                    shape = list(structural_shape(args, dims, full, axis, target))
                    out.append(structural.broadcast_in_dim(x, tuple(shape), (target,)))
            elif d is None:
                out.append(broadcast_batched(x, axis.size, target))
            else:
                out.append(moveaxis(x, d, target))
        return prim.bind(*out, **params), target
    rule.__name__ = f"{prim.name}_batch"
    return rule


def structural_shape(args, dims, full, axis, target) -> tuple:
    """The batched result shape: the full operands' unbatched shape with the batch size at ``target``."""
    i = full[0]
    shape = list(aval_of(args[i]).shape)
    if dims[i] is not None:
        del shape[dims[i]]
    shape.insert(target, axis.size)
    return tuple(shape)


@elementwise.family.derive
def _derive(primitive: Any) -> None:
    """Unary ops keep the batch dimension; binary ops and comparisons align their operands'."""
    kind = primitive.traits.get("kind")
    if kind == "unary":
        register_batching(primitive, _unary(primitive))
    elif kind in ("binary", "compare"):
        register_batching(primitive, _nary(primitive))


register_batching(elementwise.select_n_p, _with_scalars(elementwise.select_n_p, full=(1,)))
register_batching(elementwise.clamp_p, _with_scalars(elementwise.clamp_p, full=(1,)))


def _bitcast_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *, new_dtype: Any) -> Any:
    (x,), (d,) = args, dims
    if d == ndim_of(x) - 1:  # the last dimension may be consumed by a narrower-to-wider bitcast
        x, d = moveaxis(x, d, 0), 0
    return elementwise.bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


register_batching(elementwise.bitcast_convert_type_p, _bitcast_batch)
