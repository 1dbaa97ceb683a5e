"""Contractions: ``dot_general``, and ``dot`` and ``batch_matmul`` built on it."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes, sharding_types
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.shape_poly import definitely_equal
from toolkit.lax.convolution import _canonical_precision  # JAX's precision names
from toolkit.lax.shape_rules import check_axes

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("linalg")

DotDimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]


def _dot_general_rule(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers: DotDimensionNumbers,
                      precision: Any = None, preferred_element_type: np.dtype | None = None) -> ShapedArray:
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dot_general: contracting {lc}/{rc} and batch {lb}/{rb} dimensions must pair up")
    check_axes("dot_general", tuple(lc) + tuple(lb), lhs.ndim, "lhs dimension")
    check_axes("dot_general", tuple(rc) + tuple(rb), rhs.ndim, "rhs dimension")
    for a, b in zip(lc, rc):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"dot_general: contracting dimension {a} of lhs {lhs.shape} (size {lhs.shape[a]}) does not "
                            f"match dimension {b} of rhs {rhs.shape} (size {rhs.shape[b]})")
    for a, b in zip(lb, rb):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"dot_general: batch dimension {a} of lhs {lhs.shape} does not match dimension {b} of "
                            f"rhs {rhs.shape}")
    if lhs.dtype != rhs.dtype and preferred_element_type is None:
        raise TypeError(f"dot_general requires operands of equal dtypes, got {lhs.dtype.name} and {rhs.dtype.name}")
    batch = tuple(lhs.shape[a] for a in lb)
    lfree = tuple(d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb)
    rfree = tuple(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    dtype = preferred_element_type or lhs.dtype
    return ShapedArray(batch + lfree + rfree, dtype, lhs.weak_type and rhs.weak_type)


dot_general_p = family.primitive("dot_general", shape_rule=_dot_general_rule)


@family.function(binds=(dot_general_p,))
def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Any:
    """XLA's DotGeneral: ``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``.

    The result's dimensions are batch, then lhs free, then rhs free. ``out_sharding`` (a ``NamedSharding``,
    or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the result's type on Explicit mesh axes, as JAX's:
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
