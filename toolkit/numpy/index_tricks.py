"""Index and coordinate arrays: ``indices``, ``meshgrid``, ``ix_``,
``unravel_index``/``ravel_multi_index`` and the index tuples of diagonals and
triangles (``diag_indices``, ``tril_indices``, ``triu_indices`` and their
``*_from`` forms). Example::

    rows, cols = tnp.triu_indices(4, k=1)
    x[tnp.ix_(rows_wanted, cols_wanted)]
    xx, yy = tnp.meshgrid(tnp.arange(3), tnp.arange(2))
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes, shape_poly
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.lax import structural as lax_structural
from toolkit.numpy import ufuncs
from toolkit.numpy._core import asarray, check_arraylike, is_array
from toolkit.numpy.shapes import ravel, reshape, stack


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Any]:
    """Coordinate arrays from 1-D vectors (``indexing="xy"``: the first two outputs' axes are swapped)."""
    check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [ravel(asarray(x)) for x in xi]
    n = len(arrays)
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        if sparse:
            shape = [1] * n
            shape[pos] = a.shape[0]
            out.append(reshape(a, tuple(shape)))
        else:
            out.append(lax_structural.broadcast_in_dim(a, tuple(sizes), (pos,)))
    return out


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """A grid of index arrays, stacked (or, with ``sparse``, a tuple of broadcastable arrays)."""
    dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
    dimensions = tuple(int(d) for d in dimensions)
    n = len(dimensions)
    out = []
    for i, d in enumerate(dimensions):
        shape = tuple(d if j == i else (1 if sparse else dimensions[j]) for j in range(n))
        out.append(lax_structural.broadcasted_iota(dtype, shape, i))
    if sparse:
        return tuple(out)
    if not out:
        return asarray(np.zeros((0,), dtype))
    return stack(out, 0)


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays: ``x[ix_(rows, cols)]`` selects the cross product."""
    check_arraylike("ix", *args)  # JAX's name for the check
    out = []
    n = len(args)
    for i, a in enumerate(args):
        a = a if is_array(a) else np.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"ix_: argument {i} must be 1-D, got shape {tuple(a.shape)}")
        if a.dtype == np.bool_:
            if is_array(a) and not hasattr(a, "_impl"):
                raise IndexError("ix_: a boolean argument must be concrete")
            a = np.nonzero(np.asarray(a))[0]
        shape = [1] * n
        shape[i] = a.shape[0]
        out.append(a.reshape(shape) if isinstance(a, np.ndarray) else reshape(a, tuple(shape)))
    return tuple(out)


def unravel_index(indices: Any, shape: Sequence[int] | int) -> tuple[Any, ...]:
    """Flat indices to coordinate arrays for ``shape`` (one size or a sequence of them), as JAX's: successive
    ``divmod``s in the indices' dtype promoted with the sizes', then out-of-range flat indices clamped (above the
    end to the last element, below ``-1`` to the first; unsigned indices are never below)."""
    check_arraylike("unravel_index", indices)
    # One size (an int, a 0-d array) as numpy and JAX take it; else a sequence of sizes.
    sizes: tuple[Any, ...] = (shape,) if np.ndim(shape) == 0 and not isinstance(shape, Sequence) else tuple(
        shape)  # type: ignore[arg-type]
    if any(np.ndim(d) != 0 for d in sizes):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    rest = asarray(indices)
    coords: list[Any] = [0] * len(sizes)
    for i in reversed(range(len(sizes))):
        rest, coords[i] = ufuncs.divmod(rest, sizes[i])
    above = ufuncs.greater(rest, 0)
    below = asarray(False) if dtypes.kind_of(rest.dtype) == "u" else ufuncs.less(rest, -1)
    return tuple(ufuncs.where(above, ufuncs.subtract(size, 1), ufuncs.where(below, 0, coord))
                 for size, coord in zip(sizes, coords))


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise", order: str = "C", *,
                      dtype: Any = None) -> Any:
    """Coordinate arrays to flat indices into an array of shape ``dims`` (``jnp.ravel_multi_index``).

    ``mode``: ``"raise"`` checks the coordinates (concrete values only: under ``jit`` use another mode), ``"clip"``
    or ``"wrap"`` bring them into range, ``"ignore"`` trusts them. ``order``: ``"C"`` (row-major) or ``"F"``.
    ``dtype``: the result's integer type (default: the indices' promoted with the default int).
    """
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(d if shape_poly.is_symbolic_dim(d) else int(d) for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    indices = [asarray(i) for i in multi_index]
    if dtype is None:
        dtype = dtypes.result_type(0, *indices)  # a weak int: int8 and uint8 indices give int16, as JAX's
    else:
        dtype = dtypes.canonicalize_explicit_dtype(dtype, "ravel_multi_index")
    if not dtypes.is_integer(dtype):
        raise ValueError(f"dtype={dtype!r} is not an integer type.")
    size = int(np.prod([d for d in dims if isinstance(d, int)], dtype=object))
    if size - 1 > np.iinfo(dtype).max:
        raise ValueError(f"toolkit.numpy.ravel_multi_index: dtype={dtype!r} not large enough to hold flattened index "
                         f"for dims={dims}. Use the dtype argument to pass a suitable dtype (e.g. "
                         "dtype=np.min_scalar_type(prod(dims))).")
    for index in indices:
        if mode == "raise" and known_value(index) is None:
            raise ConcretizationTypeError(
                "ravel_multi_index with mode='raise' needs concrete indices (it checks them): the error occurred "
                "because ravel_multi_index was jit-compiled with mode='raise'. Use mode='wrap' or mode='clip' "
                "instead.")
        if not dtypes.is_integer(index.dtype):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for index, d in zip(indices, dims):
            values = np.asarray(known_value(index))
            if np.any((values < 0) | (values >= d)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        indices = [ufuncs.clip(i, 0, d - 1) for i, d in zip(indices, dims)]
    elif mode == "wrap":
        indices = [ufuncs.remainder(i, d) for i, d in zip(indices, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = [int(np.prod(dims[:k], dtype=object)) for k in range(len(dims))]
    elif order == "C":
        strides = [int(np.prod(dims[k + 1:], dtype=object)) for k in range(len(dims))]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = asarray(np.zeros((), dtype))
    for index, stride in zip(indices, strides):
        result = ufuncs.add(result, ufuncs.multiply(index.astype(dtype), stride))
    return result


def _tri_indices(n: int, k: int, m: int | None, lower: bool) -> tuple[Any, Any]:
    m = n if m is None else m
    mask = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    rows, cols = np.nonzero(mask)  # static sizes: computed in numpy
    return asarray(rows.astype(dtypes.default_int_dtype())), asarray(cols.astype(dtypes.default_int_dtype()))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle (on and below diagonal ``k``) of an ``n x m`` array."""
    return _tri_indices(int(n), int(k), None if m is None else int(m), True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle (on and above diagonal ``k``) of an ``n x m`` array."""
    return _tri_indices(int(n), int(k), None if m is None else int(m), False)


def _shape_of(arr: Any) -> tuple:
    return tuple(arr.shape) if hasattr(arr, "shape") else np.shape(arr)


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``tril_indices`` for the shape of the 2-D ``arr``."""
    check_arraylike("tril_indices_from", arr)
    shape = _shape_of(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``triu_indices`` for the shape of the 2-D ``arr``."""
    check_arraylike("triu_indices_from", arr)
    shape = _shape_of(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(shape[0], k, shape[1])


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """``ndim`` copies of ``arange(n)``: the indices of the main diagonal."""
    n, ndim = int(n), int(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax_structural.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """``diag_indices`` of the square array ``arr``."""
    check_arraylike("diag_indices_from", arr)
    shape = _shape_of(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))
