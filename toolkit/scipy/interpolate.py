"""``toolkit.scipy.interpolate``: ``jax.scipy.interpolate``'s ``RegularGridInterpolator`` (linear and nearest).

As JAX's (after SciPy's, after Johannes Buchner's), each grid axis must be strictly increasing (a decreasing axis
gives wrong values silently, as in JAX), ``bounds_error=True`` is refused (no check can run under ``jit``), and the
interpolator is a pytree: grid, values and fill value are its children, method and ``bounds_error`` its aux data.
"""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

from toolkit import numpy as tnp
from toolkit.numpy._core import check_arraylike
from toolkit.scipy._special_arguments import promote_dtypes_inexact
from toolkit.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _ndim_coords_from_arrays(points: Any, ndim: int | None = None) -> Any:
    """A tuple of coordinate arrays (broadcast together) or an array, as a ``(..., ndim)`` array."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]  # a tuple of arguments holding one array
    if isinstance(points, tuple):
        broadcast = tnp.broadcast_arrays(*points)
        for other in broadcast[1:]:
            if other.shape != broadcast[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        stacked = tnp.empty(broadcast[0].shape + (len(points),), dtype=float)
        for j, item in enumerate(broadcast):
            stacked = stacked.at[..., j].set(item)
        return stacked
    check_arraylike("_ndim_coords_from_arrays", points)
    points = tnp.asarray(points)
    if points.ndim == 1:
        points = points.reshape(-1, 1) if ndim is None else points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Interpolation of ``values`` given on the rectangular grid ``points`` (one strictly increasing array per
    axis), linear or nearest, ``fill_value`` outside the grid (``None``: extrapolate)."""

    def __init__(self, points: Any, values: Any, method: str = "linear", bounds_error: bool = False,
                 fill_value: Any = np.nan) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has {values.ndim} dimensions")
        (values,) = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = tnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(tnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """The interpolated values at the points ``xi`` (``(..., ndim)``, or a tuple of coordinate arrays)."""
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim=ndim)
        if xi.shape[-1] != ndim:
            # xi.shape[1] (not -1) in the message, as JAX's and SciPy's.
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, but this "
                             f"RegularGridInterpolator has dimension {ndim}")
        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])
        indices, norm_distances, out_of_bounds = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, norm_distances)
        else:
            result = self._evaluate_nearest(indices, norm_distances)
        if not self.bounds_error and self.fill_value is not None:
            shape = result.shape[:1] + (1,) * (result.ndim - 1)
            result = tnp.where(out_of_bounds.reshape(shape), self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices: list[Any], norm_distances: list[Any]) -> Any:
        # Broadcast the weights over the trailing (non-grid) axes of the values.
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        values = tnp.asarray(0.0)
        for corner in product(*[[i, i + 1] for i in indices]):
            weight = tnp.asarray(1.0)
            for ci, i, yi in zip(corner, indices, norm_distances):
                weight = weight * tnp.where(ci == i, 1 - yi, yi)
            values = values + self.values[corner] * weight[trailing]
        return values

    def _evaluate_nearest(self, indices: list[Any], norm_distances: list[Any]) -> Any:
        nearest = [tnp.where(yi <= 0.5, i, i + 1) for i, yi in zip(indices, norm_distances)]
        return self.values[tuple(nearest)]

    def _find_indices(self, xi: Any) -> tuple[list[Any], list[Any], Any]:
        indices = []
        norm_distances = []
        out_of_bounds = tnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            # The cell [g[i], g[i + 1]] holding x, the first or last cell outside the grid.
            i = tnp.searchsorted(g, x) - 1
            i = tnp.where(i < 0, 0, i)
            i = tnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
            if not self.bounds_error:
                out_of_bounds = out_of_bounds + (x < g[0])
                out_of_bounds = out_of_bounds + (x > g[-1])
        return indices, norm_distances, out_of_bounds


def _unflatten(aux: Any, children: Any) -> RegularGridInterpolator:
    grid, values, fill_value = children
    method, bounds_error = aux
    return RegularGridInterpolator(grid, values, method, bounds_error, fill_value)  # JAX's: the constructor


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    _unflatten,
)
