"""Sorting: ``sort`` (several operands sorted together by their first ``num_keys``),

``top_k`` and the ``argsort`` and ``sort_key_val`` helpers built on ``sort``.

Floating-point keys sort in numpy's order: NaNs last, ``-0.0`` and ``0.0``
equal (a stable sort keeps their input order); complex keys compare by real
part, then imaginary part.

Example::

    values, perm = sort((keys, iota), dimension=0, num_keys=1)   # perm is argsort(keys)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.lax.shape_rules import known_false, same_shapes
from toolkit.lax import structural
from toolkit.lax.structural import broadcasted_iota

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("sorting")


def _sort_rule(*operands: ShapedArray, dimension: int, is_stable: bool, num_keys: int) -> list[ShapedArray]:
    if not operands:
        raise TypeError("sort needs at least one operand")
    shape = same_shapes("sort", *operands)
    if not 0 <= dimension < max(len(shape), 1) or not shape:
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of shape {shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of operands "
                         f"({len(operands)})")
    return list(operands)


sort_p = family.primitive("sort", shape_rule=_sort_rule, multiple_results=True)


@family.function(binds=(sort_p,))
def sort(operand: Any | Sequence[Any], dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort ``operand`` (or a sequence of equally shaped operands, permuted together) along ``dimension``.

    The first ``num_keys`` operands are the lexicographic keys. A single operand
    returns a single array, a sequence returns a tuple.

    Example::

        sort(x)                                 # ascending along the last axis
        keys, vals = sort((keys, vals), 0)      # vals follow keys
    """
    single = not isinstance(operand, (tuple, list))
    operands: list[Any] = [operand] if single else list(operand)
    if not operands:
        raise TypeError("sort needs at least one operand")
    ndim = len(operands[0].shape)
    if not -ndim <= dimension < max(ndim, 1) or ndim == 0:
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of rank {ndim}")
    outs = sort_p.bind(*operands, dimension=int(dimension) % ndim, is_stable=bool(is_stable),
                       num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def argsort(operand: Any, dimension: int = -1, is_stable: bool = True, index_dtype: Any = dtypes.int32) -> Any:
    """Indices that sort ``operand`` along ``dimension`` (ties in input order when ``is_stable``)."""
    ndim = len(operand.shape)
    if ndim == 0:
        raise ValueError("argsort needs an operand of rank at least 1")
    dimension = int(dimension) % ndim
    # Typed like the operand when it is explicitly sharded (as JAX's argsort), so sort sees equal shardings.
    iota = broadcasted_iota(index_dtype, operand.shape, dimension, out_sharding=aval_of(operand).sharding)
    return sort((operand, iota), dimension, is_stable=is_stable, num_keys=1)[1]


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> tuple[Any, Any]:
    """``keys`` sorted along ``dimension`` and ``values`` permuted the same way."""
    k, v = sort((keys, values), dimension, is_stable=is_stable, num_keys=1)
    return k, v


def _top_k_rule(operand: ShapedArray, *, k: int) -> list[ShapedArray]:
    if dtypes.is_complex(operand.dtype):  # JAX's checks first and errors
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if operand.ndim < 1:
        raise TypeError(f"top_k operand must have >= 1 dimension, got {operand.shape}")
    if known_false(lambda: 0 <= k <= operand.shape[-1]):
        raise ValueError(f"top_k: k={k} must be between 0 and the last dimension's size {operand.shape[-1]}")
    shape = tuple(operand.shape[:-1]) + (k,)
    return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, dtypes.int32)]


top_k_p = family.primitive("top_k", shape_rule=_top_k_rule, multiple_results=True)


@family.function(binds=(top_k_p,))
def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """The ``k`` largest entries along ``axis`` (the last by default), in descending order, and their int32 indices.

    Example::

        values, indices = top_k(scores, 5)
    """
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"top_k: k must be a Python int, got {k!r}")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    ndim = np.ndim(operand)
    axis = structural.canonicalize_axis(axis, ndim)
    if axis == ndim - 1:
        return tuple(top_k_p.bind(operand, k=k))
    # Along another axis: that axis moved last and back (what JAX's lowering of its axis parameter does).
    order = tuple(d for d in range(ndim) if d != axis) + (axis,)
    back = tuple(int(i) for i in np.argsort(order))
    values, indices = top_k_p.bind(structural.transpose(operand, order), k=k)
    return structural.transpose(values, back), structural.transpose(indices, back)
