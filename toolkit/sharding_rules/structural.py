"""Sharding rules of ``toolkit.lax.structural``: broadcast_in_dim keeps operand dimension ``i``'s spec at
``broadcast_dimensions[i]``; reshape keeps the spec of a split dimension's major part and of merged
dimensions whose minor parts are unsharded (else JAX's "This reshape is not supported"); transpose permutes;
rev, pad, slice and dynamic_update_slice keep the operand's spec.
"""

from __future__ import annotations

from typing import Any, Sequence

from toolkit.core.avals import ShapedArray
from toolkit.core.sharding_types import NO_SHARDING_RULE, ShardingTypeError, Spec, register_sharding_rule
from toolkit.lax import structural
from toolkit.sharding_rules import spec_algebra


@register_sharding_rule(structural.broadcast_in_dim_p)
def _broadcast_in_dim_rule(specs_in: list[Spec], avals_in: list[ShapedArray], avals_out: list[ShapedArray], *,
                           shape: Sequence[int], broadcast_dimensions: Sequence[int], **params: Any) -> list[Spec]:
    out: list[Any] = [None] * len(shape)
    operand = avals_in[0]
    for i, d in enumerate(broadcast_dimensions):
        entry = specs_in[0][i]
        if entry is not None and operand.shape[i] != shape[d]:
            raise ShardingTypeError(f"broadcast_in_dim: dimension {i} of the operand is sharded {entry!r} but is "
                                    f"broadcast from size {operand.shape[i]} to {shape[d]}")
        out[d] = entry
    return [tuple(out)]


def _reshape_groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list[int], list[int]]] | None:
    groups: list[tuple[list[int], list[int]]] = []
    i, j = 0, 0
    while i < len(old) or j < len(new):
        if i < len(old) and old[i] == 1:
            groups.append(([i], []))
            i += 1
            continue
        if j < len(new) and new[j] == 1:
            groups.append(([], [j]))
            j += 1
            continue
        if i >= len(old) or j >= len(new):
            return None
        gi, gj, po, pn = [i], [j], old[i], new[j]
        i, j = i + 1, j + 1
        while po != pn:
            if po < pn:
                if i >= len(old):
                    return None
                po *= old[i]
                gi.append(i)
                i += 1
            else:
                if j >= len(new):
                    return None
                pn *= new[j]
                gj.append(j)
                j += 1
        groups.append((gi, gj))
    return groups


@register_sharding_rule(structural.reshape_p)
def _reshape_rule(specs_in: list[Spec], avals_in: list[ShapedArray], avals_out: list[ShapedArray], *,
                  new_sizes: Sequence[int], **params: Any) -> list[Spec]:
    spec, operand = specs_in[0], avals_in[0]
    if all(e is None for e in spec):
        return [(None,) * len(new_sizes)]

    def unsupported() -> ShardingTypeError:
        return ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via the `out_sharding` "
            f"argument of toolkit.lax.reshape. Got operand type: {operand}, new sizes: {tuple(new_sizes)}")

    if not all(type(d) is int for d in operand.shape + tuple(new_sizes)) or 0 in operand.shape:
        raise unsupported()
    groups = _reshape_groups(operand.shape, new_sizes)
    if groups is None:
        raise unsupported()
    sizes = spec_algebra.mesh_sizes(avals_in)
    out: list[Any] = [None] * len(new_sizes)
    for gi, gj in groups:
        entries = [spec[i] for i in gi]
        if all(e is None for e in entries):
            continue
        if not gj or any(e is not None for e in entries[1:]):
            raise unsupported()
        if len(gi) > 1 and len(gj) > 1:
            raise unsupported()
        if new_sizes[gj[0]] % spec_algebra.axes_size(entries[0], sizes):
            raise unsupported()
        out[gj[0]] = entries[0]
    return [tuple(out)]


@register_sharding_rule(structural.transpose_p)
def _transpose_rule(specs_in, avals_in, avals_out, *, permutation, **params):
    return [tuple(specs_in[0][p] for p in permutation)]


for _p in (structural.rev_p, structural.pad_p, structural.slice_p, structural.dynamic_update_slice_p):
    register_sharding_rule(_p)(spec_algebra.same_as_operand)


@register_sharding_rule(structural.split_p)
def _split_rule(specs_in, avals_in, avals_out, *, axis, **params):
    # Every piece keeps the operand's sharding; a sharded split axis would need uneven pieces (JAX refuses too).
    spec = tuple(specs_in[0])
    if axis < len(spec) and spec[axis] is not None:
        raise ShardingTypeError(f"split: dimension {axis} is sharded {spec[axis]!r}; reshard it to replicated "
                                f"before splitting along it")
    return [spec] * len(avals_out)


@register_sharding_rule(structural.dynamic_slice_p)
def _dynamic_slice_rule(specs_in, avals_in, avals_out, *, slice_sizes, **params):
    spec, operand = specs_in[0], avals_in[0]
    for i, (entry, size) in enumerate(zip(spec, slice_sizes)):
        if entry is not None and size != operand.shape[i]:
            raise ShardingTypeError(f"dynamic_slice: dimension {i} is sharded {entry!r} and sliced from size "
                                    f"{operand.shape[i]} to {size}; reshard it to replicated first")
    return [spec]


@register_sharding_rule(structural.concatenate_p)
def _concatenate_rule(specs_in, avals_in, avals_out, *, dimension, **params):
    specs = [tuple(s) for s in specs_in]
    if any(s != specs[0] for s in specs[1:]):
        raise ShardingTypeError(f"All operands should have the same sharding. Got {spec_algebra.specs_text(specs)}")
    return [specs[0]]


@register_sharding_rule(structural.dimension_size_p)
def _dimension_size_rule(specs_in, avals_in, avals_out, **params):
    return [()]  # a scalar: replicated


NO_SHARDING_RULE[structural.iota_p] = ("no operands: rules are consulted only when an operand is typed; an iota is "
                                       "typed by out_sharding= of lax.broadcasted_iota / numpy.arange")
