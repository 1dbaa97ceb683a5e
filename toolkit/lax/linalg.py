"""Contractions: ``dot_general``, and ``dot`` and ``batch_matmul`` built on it."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from toolkit.core import dtypes, sharding_types
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.shape_poly import definitely_equal, definitely_equal_shape
from toolkit.lax import dot_algorithms
from toolkit.lax.convolution import _canonical_precision  # JAX's precision names

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("linalg")

DotDimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]


def _dot_general_rule(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers: DotDimensionNumbers,
                      precision: Any = None, preferred_element_type: np.dtype | None = None) -> ShapedArray:
    check_dot_dimension_numbers(lhs, rhs, dimension_numbers)
    (lc, rc), (lb, rb) = dimension_numbers
    batch = tuple(lhs.shape[a] for a in lb)
    lfree = tuple(d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb)
    rfree = tuple(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    dtype = dot_result_dtype(lhs.dtype, rhs.dtype, precision, preferred_element_type, "lax.dot_general")
    return ShapedArray(batch + lfree + rfree, dtype, lhs.weak_type and rhs.weak_type)


def check_dot_dimension_numbers(lhs: ShapedArray, rhs: ShapedArray, dimension_numbers: Any) -> None:
    """JAX's ``dot_general`` shape checks, in its order and with its ``TypeError``s (``ragged_dot_general``'s too)."""
    (lc, rc), (lb, rb) = dimension_numbers
    for side, aval, contracting, batch in (("lhs", lhs, lc, lb), ("rhs", rhs, rc, rb)):
        if not all(0 <= d < aval.ndim for d in tuple(contracting) + tuple(batch)):
            raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative and less than the number "
                            f"of axes of the {side} value, got {side}_batch of {batch} and {side}_contracting of "
                            f"{contracting} for {side} of rank {aval.ndim}")
    if len(lb) != len(rb):
        raise TypeError(f"dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch {lb} "
                        f"and rhs_batch {rb}.")
    for side, dims in (("lhs", lb), ("rhs", rb)):
        if len(set(dims)) != len(dims):
            raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got {side}_batch {dims}.")
    for side, dims in (("lhs", lc), ("rhs", rc)):
        if len(set(dims)) != len(dims):
            raise TypeError(f"dot_general requires {side} contracting dimensions to be distinct, got "
                            f"{side}_contracting {dims}.")
    for side, batch, contracting in (("lhs", lb, lc), ("rhs", rb, rc)):
        if set(batch) & set(contracting):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from contracting dimensions, "
                            f"got {side}_batch {batch} and {side}_contracting {contracting}.")
    for what, lhs_dims, rhs_dims in (("lhs batch dimensions and rhs batch dimensions", lb, rb),
                                     ("contracting dimensions", lc, rc)):
        lhs_sizes, rhs_sizes = tuple(lhs.shape[d] for d in lhs_dims), tuple(rhs.shape[d] for d in rhs_dims)
        if not definitely_equal_shape(lhs_sizes, rhs_sizes):
            raise TypeError(f"dot_general requires {what} to have the same shape, got {lhs_sizes} and {rhs_sizes}.")


def _type_properties(dtype: np.dtype) -> tuple:
    """XLA's order of operand types (shape_inference.cc, primitive_util's HigherPrecisionType), as JAX ranks them:
    complex above real, then the exponent range, the mantissa, the width, signed above unsigned."""
    real = np.dtype(ml_dtypes.finfo(dtype).dtype) if dtypes.is_complex(dtype) else dtype
    floating = dtypes.is_float(real)
    return (dtypes.is_complex(dtype), ml_dtypes.finfo(real).maxexp if floating else -1,
            ml_dtypes.finfo(real).nmant if floating else -1, _bit_width(real), dtypes.kind_of(real) != "u")


def _bit_width(dtype: np.dtype) -> int:
    """JAX's ``_bit_width``: a complex type counts its parts' width (``finfo(complex64).bits`` is 32)."""
    return ml_dtypes.finfo(dtype).bits if dtypes.is_inexact(dtype) else dtypes.bit_width(dtype)


def dot_result_dtype(lhs: np.dtype, rhs: np.dtype, precision: Any, preferred: np.dtype | None, name: str) -> np.dtype:
    """JAX's dtype rule of a dot (``name``: ``lax.dot_general`` or ``lax.ragged_dot_general``, for its message):
    operands of two types multiply in the higher one (XLA's rule), as ``preferred_element_type`` when given (an
    integer result may not be narrowed, unless an algorithm is named)."""
    lhs_rank, rhs_rank = _type_properties(lhs), _type_properties(rhs)
    if lhs_rank == rhs_rank and lhs != rhs:
        raise TypeError(f"{name} argument type error: {lhs}, {rhs}")
    result = lhs if lhs_rank >= rhs_rank else rhs
    if preferred is None or preferred == result:
        return result
    named_algorithm = isinstance(precision, (dot_algorithms.DotAlgorithm, dot_algorithms.DotAlgorithmPreset))
    if not named_algorithm and not dtypes.is_float(result) and _bit_width(preferred) < _bit_width(result):
        raise TypeError("`preferred_element_type` must not be narrower than the original type, got "
                        f"preferred_element_type of {preferred} for result type of {result}.")
    return preferred


dot_general_p = family.primitive("dot_general", shape_rule=_dot_general_rule)


@family.function(binds=(dot_general_p,))
def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Any:
    """XLA's DotGeneral: ``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``.

    The result's dimensions are batch, then lhs free, then rhs free. Operands of two dtypes multiply in the
    higher-precision one (XLA's rule, as JAX 0.10's: f32 x f16 is f32), or in ``preferred_element_type``.
    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the result's
    type on Explicit mesh axes, as JAX's:
    it replaces what the sharding rule infers, and decides the products it finds ambiguous (contracting
    dimensions sharded on both sides).
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(a) for a in lc), tuple(int(a) for a in rc)), (tuple(int(a) for a in lb), tuple(int(a) for a in rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    params = dict(dimension_numbers=dn, precision=_canonical_precision(precision), preferred_element_type=pet)
    if out_sharding is not None:
        shape = _dot_general_rule(aval_of(lhs), aval_of(rhs), **params).shape  # also JAX's shape errors first
        return sharding_types.with_out_sharding(_bind_dot_general, (lhs, rhs), params, out_sharding, "dot_general",
                                                shape, primitive="dot_general")
    return dot_general_p.bind(lhs, rhs, **params)


def _bind_dot_general(lhs: Any, rhs: Any, **params: Any) -> Any:
    return dot_general_p.bind(lhs, rhs, **params)


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """``dot_general`` of ``lhs`` and ``rhs`` over ``dimension_numbers``, as ``jax.lax.dot``.

    Without ``dimension_numbers``, the vector/matrix products of ranks 1 and 2 (``lhs @ rhs``: the last
    dimension of ``lhs`` with the first of ``rhs``); other shapes are JAX's ``ValueError``. ``precision``,
    ``preferred_element_type`` and ``out_sharding``: as :func:`dot_general`'s.
    """
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    if dimension_numbers is None:
        if 1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2 and definitely_equal(lhs_shape[-1], rhs_shape[0]):
            dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
        else:
            raise ValueError("jax.lax.dot: dimension_numbers must be specified when not performing simple "
                             "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                             f"lhs_shape={tuple(lhs_shape)} rhs_shape={tuple(rhs_shape)}")
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type, out_sharding=out_sharding)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over the leading (batch) dimensions of two arrays of equal rank >= 2."""
    ldim, rdim = aval_of(lhs).ndim, aval_of(rhs).ndim
    if min(ldim, rdim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ldim}, {rdim}")
    if ldim != rdim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {ldim}, {rdim}")
    batch = tuple(range(ldim - 2))
    return dot_general(lhs, rhs, (((ldim - 1,), (rdim - 2,)), (batch, batch)), precision=precision)


# jax.lax.linalg's decompositions live in their own family (toolkit/lax/decompositions.py); this module is
# toolkit.lax.linalg, so it names them too.
from toolkit.lax.decompositions import (  # noqa: E402,F401
    EigImplementation, EighImplementation, SvdAlgorithm, cholesky, cholesky_p, cholesky_update, cholesky_update_p,
    eig, eig_p, eigh, eigh_p, geqrf,
    geqrf_p, hessenberg, hessenberg_p, householder_product, householder_product_p, lu, lu_p, lu_pivots_to_permutation,
    lu_pivots_to_permutation_p, ormqr, ormqr_p, qr, qr_p, schur, schur_p, svd, svd_p, symmetric_product,
    symmetric_product_p, symmetrize, triangular_solve,
    triangular_solve_p, tridiagonal, tridiagonal_p, tridiagonal_solve, tridiagonal_solve_p,
)
# QDWH polar decomposition: its own module (toolkit/lax/qdwh.py imports dot_general from here inside a function).
from toolkit.lax.qdwh import qdwh  # noqa: E402,F401
