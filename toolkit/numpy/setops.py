"""Set operations of ``jax.numpy``: ``isin`` (an all-pairs comparison) and ``unique`` (static output shape
under ``jit`` with ``size=``).

Example::

    tnp.isin(labels, tnp.asarray([1, 3]))      # True where a label is 1 or 3
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import structural as lax_structural
from toolkit.numpy import creation, reductions, scatter, shapes, sorting, statistics, take, ufuncs
from toolkit.numpy import nonzero_indices
from toolkit.numpy._core import asarray, check_arraylike


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Any:
    """True where ``element`` occurs in ``test_elements`` (all-pairs comparison)."""
    element, test = asarray(element), shapes.ravel(asarray(test_elements))
    hit = reductions.any(ufuncs.equal(shapes.expand_dims(element, -1), test), -1)
    return ufuncs.logical_not(hit) if invert else hit


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None, fill_value: Any = None,
           sorted: bool = True) -> Any:
    """The sorted unique elements of the flattened ``ar``, as ``jnp.unique``; with ``return_index``,
    ``return_inverse``, ``return_counts`` a tuple adding first indices, the inverse (``ar``'s shape) and counts.

    Without ``size`` the array must be concrete (the count depends on the data); under ``jit`` pass a static
    ``size``: the first ``size`` unique values, padded with ``fill_value`` (by default the smallest value).
    NaNs count as one value when ``equal_nan``. ``axis`` is not supported (``NotImplementedError``).
    """
    check_arraylike("unique", ar)
    if axis is not None:
        raise NotImplementedError("toolkit.numpy.unique: axis= is not supported; unique of the flattened array only")
    del sorted  # the result is always sorted, as JAX's
    flat = shapes.ravel(asarray(ar))
    perm = sorting.argsort(flat, stable=True)
    aux = take.take(flat, perm)
    n = aux.shape[0]
    if n:
        differs = ufuncs.not_equal(aux[1:], aux[:-1])
        if equal_nan and dtypes.is_inexact(aux.dtype):
            differs = ufuncs.logical_and(differs, ufuncs.logical_not(
                ufuncs.logical_and(ufuncs.isnan(aux[1:]), ufuncs.isnan(aux[:-1]))))
        mask = shapes.concatenate([asarray(np.ones((1,), bool)), differs])
    else:
        mask = asarray(np.zeros((0,), bool))
    ind = nonzero_indices.nonzero(mask, size=size)[0] if n else lax_structural.iota(dtypes.default_int_dtype(), 0)
    count = ind.shape[0]
    result = take.take(aux, ind) if n else aux
    if size is not None and fill_value is not None:
        fill = asarray(fill_value, result.dtype)
        if n:
            valid = ufuncs.less(lax_structural.iota(dtypes.default_int_dtype(), count), reductions.sum(mask))
            result = ufuncs.where(valid, result, fill)
        else:
            result = creation.full((count,), fill, result.dtype)
    extras = []
    if return_index:
        extras.append(take.take(perm, ind) if n else ind)
    if return_inverse or return_counts:
        group = ufuncs.subtract(reductions.cumsum(mask), np.asarray(1, dtypes.default_int_dtype())) if n else ind
        inverse = scatter.at_property(creation.zeros((n,), group.dtype))[perm].set(group) if n else ind
        if return_inverse:
            extras.append(shapes.reshape(inverse, np.shape(ar) if not hasattr(ar, "shape") else ar.shape))
        if return_counts:
            extras.append(statistics.bincount(inverse, length=count) if n else ind)
    return (result, *extras) if extras else result
