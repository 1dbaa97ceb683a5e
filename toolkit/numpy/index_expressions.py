"""numpy's index-expression objects as ``jax.numpy`` has them: ``r_`` and ``c_`` (concatenation by
indexing), ``mgrid`` and ``ogrid`` (dense and open grids from slices), ``s_`` and ``index_exp``
(numpy's, building index tuples), and ``mask_indices``.

Example::

    tnp.r_[1:4, 0, tnp.asarray([7, 8])]    # [1, 2, 3, 0, 7, 8]
    tnp.mgrid[0:2, 0:3].shape              # (2, 2, 3)
    tnp.ogrid[0:1:5j]                      # linspace(0, 1, 5): a complex step is a count
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import Tracer
from toolkit.numpy import creation, index_tricks, nonzero_indices, shapes, spaced_values
from toolkit.numpy._core import asarray, convert, stack

#: numpy's ``s_`` and ``index_exp``: ``s_[1:3, ::2]`` is ``(slice(1, 3), slice(None, None, 2))`` (JAX's are numpy's).
s_ = np.s_
index_exp = np.index_exp


def _static(value: Any, what: str, op_name: str) -> Any:
    if isinstance(value, Tracer):
        raise TypeError(f"the {what} of jnp.{op_name} must be static (a Python number), not a traced value")
    return value


def _grid_from_slice(s: slice, op_name: str) -> Any:
    start = _static(s.start, "slice start", op_name) or 0
    stop = _static(s.stop, "slice stop", op_name)
    step = _static(s.step, "slice step", op_name) or 1
    if np.iscomplex(step):  # numpy's rule: an imaginary step is the number of points, stop included
        return spaced_values.linspace(start, stop, int(abs(step)))
    return creation.arange(start, stop, step)


def _promoted(arrays: list[Any]) -> list[Any]:
    if not arrays:
        return arrays
    dtype, weak = dtypes.result_type_with_weak(*[(a.dtype, a.weak_type) for a in arrays])
    return [convert(a, dtype, weak) for a in arrays]


class _Mgrid:
    """``mgrid[s0, s1, ...]``: the dense ``ij`` grid of the slices, stacked on a new first axis."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        grids = _promoted([_grid_from_slice(k, "mgrid") for k in key])
        if not grids:
            return creation.arange(0)
        return stack(index_tricks.meshgrid(*grids, indexing="ij", sparse=False), 0)


class _Ogrid:
    """``ogrid[s0, s1, ...]``: the open (sparse, broadcastable) ``ij`` grid of the slices, a list."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        grids = _promoted([_grid_from_slice(k, "ogrid") for k in key])
        return index_tricks.meshgrid(*grids, indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


def _with_ndmin(a: Any, ndmin: int) -> Any:
    return shapes.reshape(a, (1,) * (ndmin - a.ndim) + tuple(a.shape)) if a.ndim < ndmin else a


class _AxisConcat:
    """numpy's ``AxisConcatenator`` (``r_``, ``c_``): items (arrays, scalars, slices as ranges) joined along
    ``axis``, each given at least ``ndmin`` dimensions; an optional leading string directive
    ``"axis,ndmin,trans1d"`` (or ``"r"``/``"c"``: a row/column matrix) overrides the defaults."""

    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError as e:
                    raise ValueError(f"could not understand directive {directive!r}") from e
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in items:
            if isinstance(item, slice):
                obj, item_ndim = _grid_from_slice(item, self.op_name), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                obj = asarray(item)
                item_ndim = obj.ndim
            obj = _with_ndmin(obj, ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                obj = shapes.transpose(obj, order[shifts:] + order[:shifts])
            output.append(obj)
        result = shapes.concatenate(output, axis=axis)
        if matrix != -1 and result.ndim == 1:
            result = shapes.expand_dims(result, matrix)
        return result

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """The type of ``r_``: concatenation along the first axis (1-D at least)."""
    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
    """The type of ``c_``: concatenation along the last axis, 1-D items becoming columns."""
    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


r_ = RClass()
c_ = CClass()


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """The ``(rows, cols)`` indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``triu``), as
    ``jnp.mask_indices``; ``size`` as ``nonzero``'s (static under ``jit``)."""
    i, j = nonzero_indices.nonzero(mask_func(creation.ones((n, n)), k), size=size)
    return i, j
