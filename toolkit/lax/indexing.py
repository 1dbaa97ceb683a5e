"""Gather and scatter: XLA's general indexed reads and writes.

The conventions follow ``jax.lax``: the index vector is always the last
dimension of ``indices``; ``GatherDimensionNumbers``/``ScatterDimensionNumbers``
name the operand dimensions that are sliced, collapsed or written; a ``mode``
says what out-of-bounds indices do:

* ``"clip"`` — indices are clamped so the whole slice/window is in bounds;
* ``"fill"`` / ``"drop"`` (a scatter's default) — a gather returns ``fill_value`` for
  slices that are not fully in bounds, a scatter drops such updates;
* ``"promise_in_bounds"`` (``lax.gather``'s default, as JAX's) — the caller promises in-bounds
  indices (XLA's native behaviour: gather clamps, scatter skips).

Example::

    dnums = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    rows = gather(x, indices[:, None], dnums, slice_sizes=(1, x.shape[1]))   # x[indices]
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray
from toolkit.core.families import Family
from toolkit.core.primitive import Primitive
from toolkit.lax.shape_rules import known_false

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("indexing")


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do in a gather or scatter (see the module docstring)."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(mode: "str | GatherScatterMode | None") -> "GatherScatterMode":
        """``None``, ``"fill"`` and ``"drop"`` mean FILL_OR_DROP; ``"clip"``; ``"promise_in_bounds"``."""
        if isinstance(mode, GatherScatterMode):
            return mode
        if mode is None or mode in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if mode == "clip":
            return GatherScatterMode.CLIP
        if mode == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f"unknown gather/scatter mode {mode!r}; expected 'clip', 'fill', 'drop' or "
                         "'promise_in_bounds'")


class GatherDimensionNumbers(NamedTuple):
    """How a gather maps indices to operand slices (index vector = last dimension of ``indices``).

    ``offset_dims``: output dimensions holding the (non-collapsed) slice dimensions;
    ``collapsed_slice_dims``: operand dimensions whose slice size is 1 and which are dropped;
    ``start_index_map``: the operand dimension each index-vector entry starts;
    ``operand_batching_dims`` / ``start_indices_batching_dims``: paired batch dimensions.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps update elements to operand positions (index vector = last dimension of ``indices``).

    ``update_window_dims``: update dimensions that are window (slice) dimensions;
    ``inserted_window_dims``: operand dimensions with an implicit window size of 1;
    ``scatter_dims_to_operand_dims``: the operand dimension each index-vector entry starts;
    ``operand_batching_dims`` / ``scatter_indices_batching_dims``: paired batch dimensions.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


def _canonical_dnums(cls, dnums: Any):
    if isinstance(dnums, cls):
        return cls(*(tuple(int(v) for v in field) for field in dnums))
    if isinstance(dnums, dict):
        return cls(**{k: tuple(int(v) for v in field) for k, field in dnums.items()})
    raise TypeError(f"dimension_numbers must be a {cls.__name__} (or a dict of its fields), got {dnums!r}")


def _check_dims(name: str, what: str, dims: Sequence[int], rank: int, sorted_required: bool = True) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise ValueError(f"{name}: {what} {tuple(dims)} has {d}, out of bounds for rank {rank}")
    if len(set(dims)) != len(dims):
        raise ValueError(f"{name}: {what} {tuple(dims)} has repeated dimensions")
    if sorted_required and list(dims) != sorted(dims):
        raise ValueError(f"{name}: {what} {tuple(dims)} must be sorted")


def _check_indices(name: str, indices: ShapedArray) -> None:
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"{name}: indices must have an integer dtype, got {indices.dtype.name}")
    if indices.ndim < 1:
        raise TypeError(f"{name}: indices must have at least one dimension (the index vector, last), "
                        f"got shape {indices.shape}")


# --- gather -------------------------------------------------------------------

def _gather_rule(operand: ShapedArray, indices: ShapedArray, *, dimension_numbers: GatherDimensionNumbers,
                 slice_sizes: tuple, indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
                 fill_value: Any) -> ShapedArray:
    dn = dimension_numbers
    _check_indices("gather", indices)
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather: slice_sizes {slice_sizes} needs one entry per dimension of the operand "
                        f"of shape {operand.shape}")
    for axis, (s, d) in enumerate(zip(slice_sizes, operand.shape)):
        if known_false(lambda: 0 <= s <= d):
            raise TypeError(f"gather: slice size {s} does not fit operand dimension {axis} of size {d}")
    _check_dims("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim)
    _check_dims("gather", "operand_batching_dims", dn.operand_batching_dims, operand.ndim)
    _check_dims("gather", "start_index_map", dn.start_index_map, operand.ndim, sorted_required=False)
    batch_rank = indices.ndim - 1
    _check_dims("gather", "start_indices_batching_dims", dn.start_indices_batching_dims, batch_rank,
                sorted_required=False)
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise ValueError("gather: collapsed_slice_dims and operand_batching_dims overlap")
    for d in tuple(dn.collapsed_slice_dims) + tuple(dn.operand_batching_dims):
        if known_false(lambda: slice_sizes[d] <= 1):
            raise TypeError(f"gather: collapsed/batching operand dimension {d} must have slice size <= 1, "
                            f"got {slice_sizes[d]}")
    if indices.shape[-1] != len(dn.start_index_map):
        raise TypeError(f"gather: the index vector (last dimension of indices {indices.shape}) has "
                        f"{indices.shape[-1]} entries but start_index_map {dn.start_index_map} has "
                        f"{len(dn.start_index_map)}")
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise ValueError("gather: operand_batching_dims and start_indices_batching_dims differ in length")
    for od, idd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        if operand.shape[od] != indices.shape[idd]:
            raise TypeError(f"gather: batching dimension {od} of the operand (size {operand.shape[od]}) and "
                            f"{idd} of indices (size {indices.shape[idd]}) differ")
    offset_sizes = [s for d, s in enumerate(slice_sizes)
                    if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out_rank = batch_rank + len(offset_sizes)
    if len(dn.offset_dims) != len(offset_sizes):
        raise TypeError(f"gather: offset_dims {dn.offset_dims} must name {len(offset_sizes)} output dimensions "
                        f"(the slice dimensions that are not collapsed)")
    _check_dims("gather", "offset_dims", dn.offset_dims, out_rank)
    batch_sizes = iter(indices.shape[:-1])
    offsets = iter(offset_sizes)
    shape = tuple(next(offsets) if i in dn.offset_dims else next(batch_sizes) for i in range(out_rank))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


gather_p = family.primitive("gather", shape_rule=_gather_rule)


def default_fill_value(dtype: np.dtype) -> Any:
    """What a FILL gather returns out of bounds: NaN, the minimum signed integer, the maximum unsigned, True."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_bool(dtype):
        return True
    if dtypes.is_unsigned(dtype):
        return np.iinfo(dtype).max
    return np.iinfo(dtype).min


@family.function(binds=(gather_p,))
def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, indices_are_sorted: bool = False, unique_indices: bool = False,
           mode: "str | GatherScatterMode | None" = None, fill_value: Any = None) -> Any:
    """XLA's gather: one slice of ``slice_sizes`` per index vector (the last dimension of ``start_indices``).

    ``mode`` None is ``"promise_in_bounds"`` (JAX's default here: an out-of-bounds start is clamped);
    ``fill_value`` (NaN, the minimum or maximum integer, or True by default) only counts with ``"fill"``.

    Example (``x[idx]`` for a 2-D ``x`` and a 1-D ``idx``)::

        gather(x, idx[:, None], GatherDimensionNumbers((1,), (0,), (0,)), (1, x.shape[1]))
    """
    # JAX's lax.gather: no mode is PROMISE_IN_BOUNDS (XLA clamps), unlike the scatters and GatherScatterMode's
    # own default; a fill_value is ignored unless the mode fills, as JAX documents.
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    if mode is not GatherScatterMode.FILL_OR_DROP:
        fill_value = None
    if fill_value is not None:
        kind = np.dtype(dtypes.dtype_of(operand)).kind
        if type(fill_value) is int and kind in "iu":
            # JAX's conversion of a Python int: through the default int type, wrapping (-2 fills uint8 with 254)
            fill_value = np.asarray(fill_value, dtypes.default_int_dtype()).astype(dtypes.dtype_of(operand))
        fill_value = np.asarray(fill_value).item()
    return gather_p.bind(operand, start_indices, dimension_numbers=_canonical_dnums(GatherDimensionNumbers,
                                                                                  dimension_numbers),
                         slice_sizes=tuple(int(s) if isinstance(s, (int, np.integer)) else s for s in slice_sizes), indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=mode, fill_value=fill_value)


# --- scatter ------------------------------------------------------------------

def _scatter_rule(name: str):
    def rule(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
             mode: GatherScatterMode) -> ShapedArray:
        dn = dimension_numbers
        _check_indices(name, indices)
        if updates.dtype != operand.dtype:
            raise TypeError(f"{name}: updates dtype {updates.dtype.name} differs from the operand's "
                            f"{operand.dtype.name}")
        _check_dims(name, "update_window_dims", dn.update_window_dims, updates.ndim)
        _check_dims(name, "inserted_window_dims", dn.inserted_window_dims, operand.ndim)
        _check_dims(name, "operand_batching_dims", dn.operand_batching_dims, operand.ndim)
        _check_dims(name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, operand.ndim,
                    sorted_required=False)
        if set(dn.inserted_window_dims) & set(dn.operand_batching_dims):
            raise ValueError(f"{name}: inserted_window_dims and operand_batching_dims overlap")
        if indices.shape[-1] != len(dn.scatter_dims_to_operand_dims):
            raise TypeError(f"{name}: the index vector (last dimension of indices {indices.shape}) has "
                            f"{indices.shape[-1]} entries but scatter_dims_to_operand_dims "
                            f"{dn.scatter_dims_to_operand_dims} has {len(dn.scatter_dims_to_operand_dims)}")
        window_operand_dims = [d for d in range(operand.ndim)
                               if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
        if len(window_operand_dims) != len(dn.update_window_dims):
            raise TypeError(f"{name}: update_window_dims {dn.update_window_dims} must name "
                            f"{len(window_operand_dims)} update dimensions (the operand dimensions neither "
                            f"inserted nor batching)")
        for ud, od in zip(dn.update_window_dims, window_operand_dims):
            if known_false(lambda: updates.shape[ud] <= operand.shape[od]):
                raise TypeError(f"{name}: update window dimension {ud} of size {updates.shape[ud]} exceeds "
                                f"operand dimension {od} of size {operand.shape[od]}")
        scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        if tuple(updates.shape[d] for d in scatter_dims) != tuple(indices.shape[:-1]):
            raise TypeError(f"{name}: the update scatter dimensions "
                            f"{tuple(updates.shape[d] for d in scatter_dims)} must equal the index batch "
                            f"shape {tuple(indices.shape[:-1])} (updates {updates.shape}, indices {indices.shape})")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)
    return rule


#: One primitive per combiner; the lowering builds the matching update region.
scatter_p = family.primitive("scatter", shape_rule=_scatter_rule("scatter"))
scatter_add_p = family.primitive("scatter_add", shape_rule=_scatter_rule("scatter_add"))
scatter_mul_p = family.primitive("scatter_mul", shape_rule=_scatter_rule("scatter_mul"))
scatter_min_p = family.primitive("scatter_min", shape_rule=_scatter_rule("scatter_min"))
scatter_max_p = family.primitive("scatter_max", shape_rule=_scatter_rule("scatter_max"))

SCATTER_PRIMITIVES = {"set": scatter_p, "add": scatter_add_p, "mul": scatter_mul_p, "min": scatter_min_p,
                      "max": scatter_max_p}


def _make_scatter(p: Primitive, what: str):
    def fn(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: ScatterDimensionNumbers, *,
           indices_are_sorted: bool = False, unique_indices: bool = False,
           mode: "str | GatherScatterMode | None" = None) -> Any:
        return p.bind(operand, scatter_indices, updates,
                      dimension_numbers=_canonical_dnums(ScatterDimensionNumbers, dimension_numbers),
                      indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                      mode=GatherScatterMode.from_any(mode))
    fn.__name__ = p.name
    fn.__doc__ = (f"XLA scatter that {what} each update into ``operand`` at the window its index vector starts "
                  "(the last dimension of ``scatter_indices``); returns the new array.\n\n"
                  "Example (``x.at[idx].add(y)`` for 1-D ``x``, ``idx``, ``y``)::\n\n"
                  f"    {p.name}(x, idx[:, None], y, ScatterDimensionNumbers((), (0,), (0,)))\n")
    return family.function(fn, binds=(p,))


scatter = _make_scatter(scatter_p, "writes (replacing; order among duplicate indices unspecified)")
scatter_add = _make_scatter(scatter_add_p, "adds")
scatter_mul = _make_scatter(scatter_mul_p, "multiplies")
scatter_min = _make_scatter(scatter_min_p, "takes the minimum of")
scatter_max = _make_scatter(scatter_max_p, "takes the maximum of")
