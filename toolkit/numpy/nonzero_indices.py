"""Where the nonzero elements are: ``nonzero``, ``argwhere``, ``flatnonzero`` and ``where``'s one-argument
form, as ``jax.numpy`` has them.

Their result's size depends on the data, so outside ``jit`` the concrete array decides it, and under
``jit`` a static ``size=`` is needed (a ``ConcretizationTypeError`` otherwise, as in JAX): the first
``size`` indices are returned, padded with ``fill_value`` (by default 0). Example::

    tnp.nonzero(tnp.asarray([0, 3, 0, 5]))                        # (Array([1, 3]),)
    toolkit.jit(lambda m: tnp.argwhere(m, size=4, fill_value=-1))(mask)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.lax import structural as lax_structural
from toolkit.numpy import reductions, shapes, ufuncs
from toolkit.numpy._core import asarray, check_arraylike
from toolkit.numpy.statistics import bincount


def _static_size(name: str, mask: Any) -> int:
    """The number of nonzero elements of a concrete ``mask``; under ``jit`` JAX's ``ConcretizationTypeError``."""
    mask = known_value(mask)  # a concrete trace (eager grad) knows it
    if mask is None:
        raise ConcretizationTypeError(
            f"The size argument of toolkit.numpy.{name} must be statically specified to use toolkit.numpy.{name} "
            f"within toolkit's transformations (jit, vmap, grad): the number of nonzero elements of "
            "a traced mask is not known when tracing. Pass size= (and fill_value=).")
    return int(np.count_nonzero(np.asarray(mask)))


def _nonzero(name: str, a: Any, size: int | None, fill_value: Any) -> tuple[Any, ...]:
    check_arraylike(name, a)
    arr = asarray(a)
    if arr.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use toolkit.numpy.atleast_1d(scalar)"
                         ".nonzero() instead.")
    mask = arr if dtypes.is_bool(arr.dtype) else ufuncs.not_equal(arr, np.zeros((), arr.dtype))
    size = _static_size(name, mask) if size is None else int(size)
    index_dtype = dtypes.default_int_dtype()
    if size == 0 or arr.size == 0:
        # JAX's: an empty array (or size 0) gives `size` zeros per axis, whatever fill_value says.
        return tuple(lax_structural.full((size,), 0, index_dtype) for _ in arr.shape)
    flat_mask = shapes.ravel(mask)
    # JAX's construction: the k-th entry counts the positions whose running count of nonzeros is at most k,
    # which is the flat index of the (k+1)-th nonzero element (the array's size past the last one).
    flat_indices = reductions.cumsum(bincount(reductions.cumsum(flat_mask), length=size))
    strides = (np.cumprod(arr.shape[::-1])[::-1] // arr.shape).astype(index_dtype)
    out = tuple(ufuncs.remainder(ufuncs.floor_divide(flat_indices, np.asarray(stride, index_dtype)),
                                 np.asarray(dim, index_dtype))
                for stride, dim in zip(strides, arr.shape))
    if fill_value is not None:
        fill = fill_value if isinstance(fill_value, tuple) else arr.ndim * (fill_value,)
        if len(fill) != arr.ndim or any(np.shape(v) != () for v in fill):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {arr.ndim}; got {fill_value}")
        past = ufuncs.greater_equal(lax_structural.iota(index_dtype, size), reductions.sum(flat_mask))
        out = tuple(ufuncs.where(past, v, entry) for v, entry in zip(fill, out))
    return out


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The indices of ``a``'s nonzero elements, one array per dimension, as ``jnp.nonzero``.

    ``size`` (static) fixes the number of indices: the first ``size`` are kept, missing ones are
    ``fill_value`` (a scalar, or one per dimension; 0 by default). Without ``size`` the array must be
    concrete; a 0-d array is a ``ValueError``, a list a ``TypeError``.
    """
    return _nonzero("nonzero", a, size, fill_value)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements of ``ravel(a)``, as ``jnp.flatnonzero`` (``size``/``fill_value``
    as :func:`nonzero`)."""
    check_arraylike("ravel", a)  # JAX's flatnonzero is nonzero(ravel(a)): ravel's check
    return _nonzero("flatnonzero", shapes.ravel(asarray(a)), size, fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of ``a``'s nonzero elements as rows of an ``(N, a.ndim)`` array, as ``jnp.argwhere``
    (``size``/``fill_value`` as :func:`nonzero`)."""
    check_arraylike("argwhere", a)
    a = asarray(a)
    columns = _nonzero("argwhere", shapes.atleast_1d(a), size, fill_value)
    result = shapes.transpose(shapes.vstack(columns))
    if a.ndim == 0:
        return shapes.reshape(result[:0], (result.shape[0], 0))
    return shapes.reshape(result, (result.shape[0], a.ndim))


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """``x`` where ``condition`` else ``y`` (numpy broadcasting), as ``jnp.where``; with ``condition`` alone,
    :func:`nonzero` of it (``size``/``fill_value`` apply only there)."""
    if x is None and y is None:
        check_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    check_arraylike("where", condition, x, y)  # one of x and y alone (None) is JAX's TypeError
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where function.")
    return ufuncs.where(condition, x, y)
