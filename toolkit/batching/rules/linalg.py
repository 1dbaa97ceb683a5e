"""Batching rule for ``dot_general``.

Both operands batched: the batch dimension becomes a new leading batch
dimension of the contraction (the result's first dimension). One operand
batched: its batch dimension becomes its first free dimension, which lands
after the batch dimensions (lhs) or after the lhs free dimensions (rhs).
"""

from __future__ import annotations

from toolkit.batching.interpret import moveaxis, ndim_of
from toolkit.batching.registry import register_batching
from toolkit.lax import linalg


def _plus1(dims):
    return tuple(d + 1 for d in dims)


def _dot_general(axis, args, dims, *, dimension_numbers, precision=None, preferred_element_type=None):
    (lhs, rhs), (dl, dr) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    params = {"precision": precision, "preferred_element_type": preferred_element_type}
    if dl is not None and dr is not None:
        lhs, rhs = moveaxis(lhs, dl, 0), moveaxis(rhs, dr, 0)
        dn = ((_plus1(lc), _plus1(rc)), ((0,) + _plus1(lb), (0,) + _plus1(rb)))
        return linalg.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), 0
    if dl is not None:
        lhs = moveaxis(lhs, dl, 0)
        dn = ((_plus1(lc), rc), (_plus1(lb), rb))
        return linalg.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), len(lb)
    rhs = moveaxis(rhs, dr, 0)
    dn = ((lc, _plus1(rc)), (lb, _plus1(rb)))
    lhs_free = ndim_of(lhs) - len(lc) - len(lb)
    return linalg.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), len(lb) + lhs_free


register_batching(linalg.dot_general_p, _dot_general)
