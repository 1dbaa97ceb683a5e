"""``ragged_dot``: a matrix product whose lhs rows fall into groups, each group with its own rhs matrix.

JAX 0.10.2 lowers ``ragged_dot`` off TPU/GPU through its dense expansion (``_ragged_dot_general_impl``):
each group's rows are masked out of ``lhs`` into a ``(g, m, k)`` array and contracted with
``rhs`` over the group and ``k`` dimensions. toolkit writes that composition directly (no
primitive), so the values agree with JAX's up to summation order. ``ragged_dot_general`` is not
done.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise
from toolkit.lax.linalg import dot_general
from toolkit.lax.structural import broadcast_in_dim, broadcasted_iota, concatenate, full, slice
from toolkit.lax.windowed import cumsum

__all__ = ["ragged_dot"]


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None, preferred_element_type: Any = None,
               group_offset: Any = None, out_sharding: Any = None) -> Any:
    """``out[i] = lhs[i] @ rhs[group(i)]`` for ``lhs (m, k)``, ``rhs (g, k, n)`` and integer ``group_sizes (g,)``
    (``jax.lax.ragged_dot``): consecutive groups of ``group_sizes[j]`` rows use ``rhs[j]``; rows past the
    groups' total are zero. Shapes that do not fit are a ``TypeError``; ``group_offset`` and
    ``out_sharding`` are not supported (``NotImplementedError``; JAX's CPU lowering refuses ``group_offset`` too).
    """
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot: out_sharding is not supported")
    la, ra, ga = aval_of(lhs), aval_of(rhs), aval_of(group_sizes)
    if la.ndim != 2 or ra.ndim != 3 or ga.ndim != 1:
        raise TypeError(f"ragged_dot: expected lhs (m, k), rhs (g, k, n) and group_sizes (g,), got shapes "
                        f"{la.shape}, {ra.shape} and {ga.shape}")
    (m, k), (g, rk, _) = la.shape, ra.shape
    if rk != k:
        raise TypeError(f"ragged_dot: the contracting dimensions differ: lhs {la.shape} and rhs {ra.shape}")
    if ga.shape[0] != g:
        raise TypeError(f"ragged_dot: group_sizes has {ga.shape[0]} entries for {g} groups of rhs {ra.shape}")
    if not dtypes.is_integer(ga.dtype):
        raise TypeError(f"ragged_dot: group_sizes must have an integer dtype, got {ga.dtype.name}")
    shape = (g, m, k)
    dense = broadcast_in_dim(lhs, shape, (1, 2))
    rows = broadcasted_iota(ga.dtype, shape, 1)
    ends = cumsum(group_sizes, 0)
    starts = concatenate([full((1,), 0, ga.dtype), slice(ends, (0,), (g - 1,))], 0) if g > 1 \
        else full((1,), 0, ga.dtype)
    in_group = elementwise.bitwise_and(elementwise.le(broadcast_in_dim(starts, shape, (0,)), rows),
                                       elementwise.lt(rows, broadcast_in_dim(ends, shape, (0,))))
    dense = elementwise.select(in_group, dense, full(shape, np.zeros((), la.dtype)))
    return dot_general(dense, rhs, (((0, 2), (0, 1)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type)
