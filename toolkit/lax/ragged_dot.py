"""``ragged_dot`` and ``ragged_dot_general``: matrix products whose ragged dimension falls into groups.

JAX 0.10.2 lowers ``ragged_dot_general`` off TPU/GPU through its dense expansion
(``_ragged_dot_general_impl``): the ragged dimension of an operand is expanded into a new leading
group axis of size ``g``, each group keeping only its own rows (the rest zeroed), and one
``dot_general`` contracts or batches over that axis. toolkit writes that composition directly
(no primitive), so values agree with JAX's up to summation order, and gradients and ``vmap`` are
those of the composed ops. ``ragged_dot`` is ``ragged_dot_general`` with
``RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])``, as in JAX.

The three modes, by the kind of the lhs ragged dimension (``x...`` are the prefix dimensions
``group_sizes`` carries before its group axis; a ``(g,)`` ``group_sizes`` is broadcast to them):

1. non-contracting ``m``: ``[b..,m..,k..], [g,b..,k..,n..], [b..,x..,g] -> [b..,m..,n..]``;
2. contracting ``k``: ``[b..,m..,k..], [b..,k..,n..], [b..,x..,g] -> [g,b..,m..,n..]``;
3. batch ``b``: ``[b..,m..,k..], [b..,k..,n..], [x..,g] -> [b..,m..,n..]`` (on CPU JAX ignores the
   group sizes here: the result is the plain ``dot_general``).
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

import ml_dtypes
import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.shape_poly import definitely_equal, definitely_equal_shape, is_symbolic_dim
from toolkit.lax import elementwise
from toolkit.lax.convolution import _canonical_precision  # JAX's precision names
from toolkit.lax.dot_algorithms import RaggedDotDimensionNumbers
from toolkit.lax.linalg import check_dot_dimension_numbers, dot_general, dot_result_dtype
from toolkit.lax.structural import broadcast, broadcast_in_dim, broadcasted_iota, full, transpose
from toolkit.lax.windowed import cumsum

__all__ = ["ragged_dot", "ragged_dot_general"]

#: ``lax.ragged_dot``'s dimension numbers: ``lhs (m, k)`` ragged in ``m``, ``rhs (g, k, n)`` grouped in ``g``.
_BASIC_RAGGED_DOT_DIMENSION_NUMBERS = RaggedDotDimensionNumbers(
    dot_dimension_numbers=(([1], [1]), ([], [])), lhs_ragged_dimensions=[0], rhs_group_dimensions=[0])

#: fp8 types: XLA multiplies mixed pairs of them as they are (JAX's ``_handle_dot_precision``).
_FP8_DTYPES = frozenset(np.dtype(t) for t in (
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3, ml_dtypes.float8_e8m0fnu))


class RaggedDotMode(enum.Enum):
    """Which kind of lhs dimension is ragged (JAX's ``RaggedDotMode``, same values)."""

    RAGGED_NONCONTRACTING = 1
    RAGGED_CONTRACTING = 2
    RAGGED_BATCH = 3


def _remaining(rank: int, *taken: Sequence[int]) -> list[int]:
    """The dimensions ``0..rank-1`` in none of ``taken``, in order."""
    used = {d for dims in taken for d in dims}
    return [d for d in range(rank) if d not in used]


def _mode_and_dim(lhs_ndim: int, numbers: RaggedDotDimensionNumbers) -> tuple[RaggedDotMode, int]:
    ragged = numbers.lhs_ragged_dimensions[0]
    (lhs_contracting, _), (lhs_batch, _) = numbers.dot_dimension_numbers
    noncontracting = _remaining(lhs_ndim, lhs_contracting, lhs_batch)
    if ragged in noncontracting:
        return RaggedDotMode.RAGGED_NONCONTRACTING, ragged
    if ragged in lhs_contracting:
        return RaggedDotMode.RAGGED_CONTRACTING, ragged
    if ragged in lhs_batch:
        return RaggedDotMode.RAGGED_BATCH, ragged
    raise TypeError(f"lhs_ragged_dim {ragged} not found in lhs_noncontracting {noncontracting}, "
                    f"lhs_contracting {lhs_contracting}, or lhs_batch {lhs_batch}.")


def _prefix_dims(mode: RaggedDotMode, rank: int, ragged: int, batch: Sequence[int],
                 contracting: Sequence[int]) -> list[int]:
    """The operand dimensions ``group_sizes`` has before its group axis, in ``group_sizes``' order."""
    batch, contracting = list(batch), list(contracting)
    if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
        noncontracting = _remaining(rank, contracting, batch)
        return batch + noncontracting[:noncontracting.index(ragged)]
    if mode is RaggedDotMode.RAGGED_CONTRACTING:
        return batch + contracting[:contracting.index(ragged)]
    return batch[:batch.index(ragged)]


def _check_in_range(dim: int, rank: int, dim_name: str, arg_name: str) -> None:
    if dim < 0 or dim >= rank:
        raise TypeError(f"ragged_dot_general requires {dim_name} numbers to be nonnegative and less than the "
                        f"number of axes of the {arg_name} value, got {dim} for {arg_name} of rank {rank}.")


def _result_shape(lhs: ShapedArray, rhs: ShapedArray, group_sizes: ShapedArray,
                  numbers: RaggedDotDimensionNumbers) -> tuple:
    """JAX's ``_ragged_dot_general_shape_rule``: the checks in its order and with its messages, then the shape."""
    if len(numbers.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    ragged = numbers.lhs_ragged_dimensions[0]
    _check_in_range(ragged, lhs.ndim, "lhs ragged dimension", "lhs")
    mode, _ = _mode_and_dim(lhs.ndim, numbers)
    (lc, rc), (lb, rb) = numbers.dot_dimension_numbers
    if group_sizes.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.ndim != 1:
        expected = tuple(lhs.shape[d] for d in _prefix_dims(mode, lhs.ndim, ragged, lb, lc))
        expected += (group_sizes.shape[-1],)
        if not definitely_equal_shape(group_sizes.shape, expected):
            raise TypeError(f"expected group_sizes to have shape {expected}, got {group_sizes.shape}.")
    num_groups = group_sizes.shape[-1]
    if mode is not RaggedDotMode.RAGGED_BATCH and is_symbolic_dim(num_groups):
        raise TypeError("ragged_dot_general requires the group count (last dimension of group_sizes) to be static "
                        "in Mode 1 (non-contracting) and Mode 2 (contracting).")
    group_dims = numbers.rhs_group_dimensions
    if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
        if len(group_dims) != 1:
            raise TypeError("ragged_dot_general requires exactly one rhs group dimension when lhs ragged dimension "
                            "is noncontracting.")
        _check_in_range(group_dims[0], rhs.ndim, "rhs group dimension", "rhs")
        if group_dims[0] in rb or group_dims[0] in rc:
            raise TypeError("ragged_dot_general requires rhs group dimension numbers to be distinct from "
                            "contracting and batch dimensions.")
        if not definitely_equal(rhs.shape[group_dims[0]], num_groups):
            raise TypeError(f"expected rhs group dimension size to be {num_groups}, got "
                            f"{rhs.shape[group_dims[0]]}.")
    elif len(group_dims) != 0:
        raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when lhs ragged dimension is "
                        "contracting or batch.")
    check_dot_dimension_numbers(lhs, rhs, numbers.dot_dimension_numbers)
    batch = tuple(lhs.shape[d] for d in lb)
    lhs_free = tuple(lhs.shape[d] for d in _remaining(lhs.ndim, lc, lb))
    rhs_free = tuple(rhs.shape[d] for d in _remaining(rhs.ndim, rc, rb, group_dims))
    group = (num_groups,) if mode is RaggedDotMode.RAGGED_CONTRACTING else ()
    return group + batch + lhs_free + rhs_free


def _result_dtype(lhs: ShapedArray, rhs: ShapedArray, group_sizes: ShapedArray, precision: Any,
                  preferred_element_type: np.dtype | None) -> np.dtype:
    """JAX's ``_ragged_dot_general_dtype_rule``: integer group sizes; XLA's type of a dot, maybe upcast."""
    if not dtypes.is_integer(group_sizes.dtype):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of np.integer.")
    return dot_result_dtype(lhs.dtype, rhs.dtype, precision, preferred_element_type, "lax.ragged_dot_general")


def _ragged_to_dense(x: Any, group_sizes: Any, ragged: int, prefix: Sequence[int]) -> Any:
    """``x`` with a new leading group axis: entry ``j`` keeps the positions of ``x``'s ``ragged`` dimension that
    fall in group ``j`` and zeroes the rest.

    ``group_sizes`` has shape ``[x.shape[d] for d in prefix] + [g]``: separate sizes per index of the ``prefix``
    dimensions (JAX vmaps its one-dimensional expansion over them; broadcasting the group bounds is the same mask).
    """
    xa, ga = aval_of(x), aval_of(group_sizes)
    shape = (ga.shape[-1],) + tuple(xa.shape)
    dense = broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
    positions = broadcasted_iota(ga.dtype, shape, ragged + 1)
    ends = cumsum(group_sizes, ga.ndim - 1)
    starts = elementwise.sub(ends, group_sizes)  # exclusive prefix sums: the same integers as JAX's shifted ends
    # Where each axis of group_sizes lands in `shape`; broadcast_in_dim wants them increasing, so sort the axes.
    targets = [d + 1 for d in prefix] + [0]
    order = tuple(int(i) for i in np.argsort(targets))
    placed = tuple(sorted(targets))

    def spread(bounds: Any) -> Any:
        return broadcast_in_dim(transpose(bounds, order), shape, placed)

    in_group = elementwise.bitwise_and(elementwise.le(spread(starts), positions),
                                       elementwise.lt(positions, spread(ends)))
    return elementwise.select(in_group, dense, full(shape, np.zeros((), xa.dtype)))


def ragged_dot_general(lhs: Any, rhs: Any, group_sizes: Any, ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision: Any = None, preferred_element_type: Any = None, group_offset: Any = None,
                       out_sharding: Any = None) -> Any:
    """A ``dot_general`` with one ragged lhs dimension split into consecutive groups of ``group_sizes`` entries
    (``jax.lax.ragged_dot_general``; the modes are in this module's docstring).

    * ragged non-contracting dimension: group ``j``'s positions are multiplied by slice ``j`` of the rhs group
      dimension; positions past the groups' total give zeros;
    * ragged contracting dimension: the result has a leading axis of size ``g``, entry ``j`` contracting only
      group ``j``'s positions;
    * ragged batch dimension: the plain ``dot_general`` (JAX's CPU expansion ignores ``group_sizes`` there).

    ``group_sizes`` is ``(g,)`` or carries the prefix dimensions before its last (group) axis. The result dtype
    is XLA's for a dot of the operands, upcast to ``preferred_element_type``; mixed operand types are converted
    to it before the product, as JAX's CPU lowering does. Invalid dimension numbers, shapes or dtypes raise
    ``TypeError`` with JAX's messages; ``group_offset`` (which JAX's CPU lowering refuses too) and
    ``out_sharding`` raise ``NotImplementedError``.
    """
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot_general: out_sharding is not supported")
    numbers = RaggedDotDimensionNumbers(ragged_dot_dimension_numbers.dot_dimension_numbers,
                                        ragged_dot_dimension_numbers.lhs_ragged_dimensions,
                                        ragged_dot_dimension_numbers.rhs_group_dimensions)
    precision = _canonical_precision(precision)
    preferred = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    la, ra, ga = aval_of(lhs), aval_of(rhs), aval_of(group_sizes)
    _result_shape(la, ra, ga, numbers)
    out_dtype = _result_dtype(la, ra, ga, precision, preferred)
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    if la.dtype != ra.dtype and not (la.dtype in _FP8_DTYPES and ra.dtype in _FP8_DTYPES):
        lhs = elementwise.convert_element_type(lhs, out_dtype)
        rhs = elementwise.convert_element_type(rhs, out_dtype)

    mode, ragged = _mode_and_dim(la.ndim, numbers)
    (lc, rc), (lb, rb) = ([list(dims) for dims in pair] for pair in numbers.dot_dimension_numbers)
    lhs_prefix = _prefix_dims(mode, la.ndim, ragged, lb, lc)
    if ga.ndim == 1:
        group_sizes = broadcast(group_sizes, [la.shape[d] for d in lhs_prefix])

    def shifted(dims: Sequence[int]) -> list[int]:
        return [d + 1 for d in dims]

    if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
        # The group axis of the expanded lhs contracts with rhs's group dimension (zeros outside each group).
        dense_lhs = _ragged_to_dense(lhs, group_sizes, ragged, lhs_prefix)
        return dot_general(dense_lhs, rhs, ((shifted(lc) + [0], rc + [numbers.rhs_group_dimensions[0]]),
                                            (shifted(lb), rb)),
                           precision=precision, preferred_element_type=preferred)
    if mode is RaggedDotMode.RAGGED_CONTRACTING:
        # Both operands are expanded along the ragged contracting dimension; the group axis is a batch axis.
        rhs_ragged = rc[lc.index(ragged)]
        rhs_prefix = _prefix_dims(mode, ra.ndim, rhs_ragged, rb, rc)
        dense_lhs = _ragged_to_dense(lhs, group_sizes, ragged, lhs_prefix)
        dense_rhs = _ragged_to_dense(rhs, group_sizes, rhs_ragged, rhs_prefix)
        return dot_general(dense_lhs, dense_rhs, ((shifted(lc), shifted(rc)), ([0] + shifted(lb), [0] + shifted(rb))),
                           precision=precision, preferred_element_type=preferred)
    return dot_general(lhs, rhs, ((lc, rc), (lb, rb)), precision=precision, preferred_element_type=preferred)


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None, preferred_element_type: Any = None,
               group_offset: Any = None, out_sharding: Any = None) -> Any:
    """``out[i] = lhs[i] @ rhs[group(i)]`` for ``lhs (m, k)``, ``rhs (g, k, n)`` and integer ``group_sizes (g,)``
    (``jax.lax.ragged_dot``): consecutive groups of ``group_sizes[j]`` rows use ``rhs[j]``; rows past the
    groups' total are zero. It is ``ragged_dot_general`` with lhs dimension 0 ragged and rhs dimension 0 the
    groups, as in JAX. Shapes that do not fit are a ``TypeError`` (checked first, with messages naming
    ``ragged_dot``'s own shapes); ``group_offset`` and ``out_sharding`` are not supported
    (``NotImplementedError``; JAX's CPU lowering refuses ``group_offset`` too).
    """
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot: out_sharding is not supported")
    la, ra, ga = aval_of(lhs), aval_of(rhs), aval_of(group_sizes)
    if la.ndim != 2 or ra.ndim != 3 or ga.ndim != 1:
        raise TypeError(f"ragged_dot: expected lhs (m, k), rhs (g, k, n) and group_sizes (g,), got shapes "
                        f"{la.shape}, {ra.shape} and {ga.shape}")
    if not definitely_equal(ra.shape[1], la.shape[1]):
        raise TypeError(f"ragged_dot: the contracting dimensions differ: lhs {la.shape} and rhs {ra.shape}")
    if not definitely_equal(ga.shape[0], ra.shape[0]):
        raise TypeError(f"ragged_dot: group_sizes has {ga.shape[0]} entries for {ra.shape[0]} groups of rhs "
                        f"{ra.shape}")
    if not dtypes.is_integer(ga.dtype):
        raise TypeError(f"ragged_dot: group_sizes must have an integer dtype, got {ga.dtype.name}")
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC_RAGGED_DOT_DIMENSION_NUMBERS, precision=precision,
                              preferred_element_type=preferred_element_type)
