"""``toolkit.scipy.ndimage``: ``jax.scipy.ndimage``'s ``map_coordinates`` (orders 0 and 1).

The boundary modes are JAX's, not SciPy's: ``'constant'`` is SciPy's ``'grid-constant'`` and ``'wrap'`` SciPy's
``'grid-wrap'`` (JAX fixed SciPy's old boundary bug, jax-ml/jax#11097, by changing what the names mean).
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core.compiled_whole import check_static_hashable, compiled_whole

__all__ = ["map_coordinates"]


def _mirror_index(index: Any, size: int) -> Any:
    # |x - round(x)| as an integer triangular wave of half-period size - 1: mirrored about the edge samples.
    s = size - 1
    return tnp.abs((index + s) % (2 * s) - s)


def _reflect_index(index: Any, size: int) -> Any:
    # Reflection about the half-sample edges is mirroring on the grid of doubled indices.
    return tnp.floor_divide(_mirror_index(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: tnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


def _round_half_away_from_zero(a: Any) -> Any:
    return a if np.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nearest_nodes(coordinate: Any) -> list[tuple[Any, Any]]:
    index = _round_half_away_from_zero(coordinate).astype(np.int32)
    # A NumPy scalar, as JAX's: a strongly typed weight (an int input with float coordinates computes in float).
    return [(index, coordinate.dtype.type(1))]


def _linear_nodes(coordinate: Any) -> list[tuple[Any, Any]]:
    lower = tnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


@compiled_whole(static_argnames=("order", "mode", "cval"))
def _map_coordinates(input: Any, coordinates: Sequence[Any], order: int, mode: str, cval: Any) -> Any:
    input_arr = tnp.asarray(input)
    coordinate_arrs = [tnp.asarray(c) for c in coordinates]
    cval = tnp.asarray(cval, input_arr.dtype)
    if len(coordinates) != input_arr.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input_arr.ndim}")
    index_fixer = _INDEX_FIXERS.get(mode)
    if index_fixer is None:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
                                  f"Currently supported modes are {set(_INDEX_FIXERS)}.")
    if order == 0:
        interpolation_nodes = _nearest_nodes
    elif order == 1:
        interpolation_nodes = _linear_nodes
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis = []
    for coordinate, size in zip(coordinate_arrs, input_arr.shape):
        nodes = []
        for index, weight in interpolation_nodes(coordinate):
            valid = (0 <= index) & (index < size) if mode == "constant" else True
            nodes.append((index_fixer(index, size), valid, weight))
        per_axis.append(nodes)

    outputs = []
    for corner in itertools.product(*per_axis):
        indices, validities, weights = zip(*corner)
        if all(valid is True for valid in validities):
            contribution = input_arr[indices]
        else:
            contribution = tnp.where(functools.reduce(operator.and_, validities), input_arr[indices], cval)
        outputs.append(functools.reduce(operator.mul, weights) * contribution)
    result = sum(outputs[1:], outputs[0])
    if np.issubdtype(input_arr.dtype, np.integer):
        result = _round_half_away_from_zero(result)
    return result.astype(input_arr.dtype)


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int, mode: str = "constant",
                    cval: Any = 0.0) -> Any:
    """``input`` interpolated at ``coordinates`` (one array per axis): nearest-neighbour (``order=0``) or
    multilinear (``order=1``), points outside filled by ``mode`` (``cval`` for ``'constant'``)."""
    # JAX's order, mode and cval are static arguments of a jit, hashed in every context (under a trace too).
    check_static_hashable(order, mode, cval)
    return _map_coordinates(input, coordinates, order, mode, cval)
