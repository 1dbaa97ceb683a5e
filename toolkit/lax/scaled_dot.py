"""``scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` with block scales, as one ``xla.scaled_dot`` composite.

JAX 0.10.2 lowers ``jax.lax.scaled_dot`` to a ``stablehlo.composite "xla.scaled_dot"`` whose decomposition
broadcasts each scale over its operand's contracting dimensions (a scale's contracting size divides the
operand's: one scale per block of "subchannel" elements), multiplies in bfloat16 and contracts with
``dot_general`` in ``preferred_element_type`` (bfloat16 by default). A backend that knows the name may run a
native block-scaled matmul; XLA:CPU inlines the decomposition. toolkit writes the same composite (same
attributes, same decomposition ops) with ``toolkit.lax.composite``. A missing scale is JAX's dummy one (ones in
``float8_e8m0fnu``, size 1 along the contracting dimensions). As in JAX it is not differentiable (the
composite refuses); it batches through its decomposition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise
from toolkit.lax.composites import composite
from toolkit.lax.linalg import dot_general
from toolkit.lax.structural import broadcast_in_dim, full, reshape

__all__ = ["scaled_dot"]

DimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


def scaled_dot(lhs: Any, rhs: Any, *, lhs_scale: Any = None, rhs_scale: Any = None,
               dimension_numbers: DimensionNumbers | None = None, preferred_element_type: Any = None) -> Any:
    """``dot_general(lhs * lhs_scale, rhs * rhs_scale)`` in ``preferred_element_type`` (``jax.lax.scaled_dot``).

    Operands and scales have one rank; a scale matches its operand's size on every dimension but the
    contracting ones, where the operand's size is a multiple (at least 2) of the scale's. Without
    ``dimension_numbers`` the last dimension of ``lhs`` contracts with the second-to-last of ``rhs`` and the
    leading ones are batch dimensions. Shapes that do not fit are a ``TypeError`` with JAX's message.
    """
    la, ra = aval_of(lhs), aval_of(rhs)
    if dimension_numbers is None:
        if la.ndim in (0, 1):
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        n = la.ndim
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ((tuple(lhs_contracting), tuple(rhs_contracting)), (tuple(lhs_batch), tuple(rhs_batch)))
    if lhs_scale is None:
        lhs_scale = _dummy_scale(la.shape, dims[0][0])
    if rhs_scale is None:
        rhs_scale = _dummy_scale(ra.shape, dims[0][1])
    element_type = dtypes.canonicalize_explicit_dtype(
        preferred_element_type if preferred_element_type is not None else dtypes.bfloat16, "scaled_dot")
    _check(la.shape, ra.shape, aval_of(lhs_scale).shape, aval_of(rhs_scale).shape, dims)
    return _scaled_dot_composite(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers=dims,
                                 preferred_element_type=element_type)


def _dummy_scale(shape: tuple, contracting: Sequence[int]) -> Any:
    """JAX's stand-in for a missing scale: ones, size 1 along the contracting dimensions, in float8_e8m0fnu."""
    scale_shape = tuple(1 if i in contracting else d for i, d in enumerate(shape))
    ones = full(scale_shape, 1.0, dtypes.bfloat16)
    return elementwise.convert_element_type(ones, np.dtype(ml_dtypes.float8_e8m0fnu))


def _check(lhs: tuple, rhs: tuple, lhs_scale: tuple, rhs_scale: tuple, dims: DimensionNumbers) -> None:
    """JAX's ``_scaled_dot_validate_inputs``, its checks in its order and its messages."""
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dims
    ranks = (len(lhs), len(rhs), len(lhs_scale), len(rhs_scale))
    if max(ranks) != min(ranks):
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {ranks[0]} rhs rank: {ranks[1]} "
                        f"lhs_scale rank: {ranks[2]} rhs_scale rank: {ranks[3]}.")
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lhs_batch)} and {len(rhs_batch)}.")
    if len(lhs_contracting) != len(rhs_contracting):
        raise TypeError("LHS and RHS must have the same number of contracting dimensions, got "
                        f"{len(lhs_contracting)} and {len(rhs_contracting)}.")
    for i, j in zip(lhs_batch, rhs_batch):
        if len({lhs[i], rhs[j], lhs_scale[i], rhs_scale[j]}) != 1:
            raise TypeError(f"All input tensors must have the same batch dimension size for batch dims ({i}, {j}).")
    for i, j in zip(lhs_contracting, rhs_contracting):
        if lhs[i] != rhs[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs[i]} does not match RHS contracting dim {j} of "
                            f"size {rhs[j]}.")
    _check_scale("LHS", lhs, lhs_scale, lhs_contracting)
    _check_scale("RHS", rhs, rhs_scale, rhs_contracting)


def _check_scale(side: str, shape: tuple, scale: tuple, contracting: Sequence[int]) -> None:
    for i, size in enumerate(shape):
        if i in contracting:
            if size % scale[i] != 0:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible by its scale's dim size "
                                f"{scale[i]}.")
            if size // scale[i] < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim size ({size // scale[i]}) "
                                "must be at least 2.")
        elif scale[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size {scale[i]}.")


def _scale_broadcast(scale: Any, operand_shape: tuple, contracting: Sequence[int]) -> Any:
    """Each scale entry repeated over its block of the operand's contracting dimension (JAX's ops: an inserted
    axis, a broadcast along it, a reshape merging the two)."""
    for i in contracting:
        shape = aval_of(scale).shape
        if shape[i] != operand_shape[i]:
            multiplier = operand_shape[i] // shape[i]
            expanded = (*shape[:i + 1], 1, *shape[i + 1:])
            kept = tuple(d for d in range(len(expanded)) if d != i + 1)
            scale = broadcast_in_dim(scale, expanded, kept)
            wide = (*shape[:i + 1], multiplier, *shape[i + 1:])
            scale = broadcast_in_dim(scale, wide, tuple(range(len(wide))))
            scale = reshape(scale, (*shape[:i], shape[i] * multiplier, *shape[i + 1:]))
    return scale


def _decomposition(lhs: Any, rhs: Any, lhs_scale: Any, rhs_scale: Any, *, dimension_numbers: DimensionNumbers,
                   preferred_element_type: Any) -> Any:
    (lhs_contracting, rhs_contracting), _ = dimension_numbers
    lhs_scale = _scale_broadcast(lhs_scale, aval_of(lhs).shape, lhs_contracting)
    lhs_scaled = elementwise.mul(elementwise.convert_element_type(lhs, dtypes.bfloat16),
                                 elementwise.convert_element_type(lhs_scale, dtypes.bfloat16))
    rhs_scale = _scale_broadcast(rhs_scale, aval_of(rhs).shape, rhs_contracting)
    rhs_scaled = elementwise.mul(elementwise.convert_element_type(rhs, dtypes.bfloat16),
                                 elementwise.convert_element_type(rhs_scale, dtypes.bfloat16))
    return dot_general(lhs_scaled, rhs_scaled, dimension_numbers, preferred_element_type=preferred_element_type)


_scaled_dot_composite = composite(_decomposition, name="xla.scaled_dot")
