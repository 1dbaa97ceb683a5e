"""numpy indexing of toolkit arrays: ``x[idx]`` (``x.at[idx]`` updates are ``scatter.py``, parsing
their index here; ``take`` is ``take.py``).

Indices may mix ints (negative ones count from the end), slices (any step,
negative ones included), ``None``/``newaxis``, one ``Ellipsis``, bool scalars,
integer arrays (numpy's advanced indexing, including where the advanced
dimensions go when the array indices are not adjacent), concrete boolean masks
and traced integer scalars.

What each index lowers to:

* static ints and slices: ``slice`` (plus ``rev`` for negative steps) and one
  ``reshape`` — no gather;
* traced integer scalars: ``dynamic_slice`` (start clamped into bounds, as XLA does);
* integer arrays: one ``gather`` (after the static slices are applied).

Out-of-bounds behaviour (as in JAX): static int indices, out-of-range entries of
integer-array and traced indices are *clamped* by ``x[idx]`` (``x[5]`` of a
3-element array is ``x[2]``) and ``.at[idx].get()`` (``mode="fill"`` returns
``fill_value`` instead); only an index into an empty axis raises ``IndexError``.

Example::

    x[1:, ::-1, None]              # slice + rev + reshape
    x[idx]                         # gather
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Sequence

import numpy as np

from toolkit.core import dtypes, shape_poly
from toolkit.core.dynamic_slices import Slice
from toolkit.core.error_classes import NonConcreteBooleanIndexError
from toolkit.core.tracing import Tracer, known_value
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import indexing as lax_indexing
from toolkit.lax import structural as lax_structural
from toolkit.numpy._core import asarray, broadcast_shapes, broadcast_to, is_array
from toolkit.numpy.creation import zeros

_INT32_MAX = np.iinfo(np.int32).max


class _E(NamedTuple):
    """One parsed index entry. ``dim`` is the operand dimension it consumes (None for newaxis)."""

    kind: str            # "new" | "slice" | "int" | "dyn" | "array"
    dim: int | None
    start: int = 0       # slice: first element; int: the (normalized) index
    step: int = 1
    length: Any = 0      # slice: number of elements
    value: Any = None    # dyn/array: the index value (numpy array or toolkit array/tracer)


# --- parsing ------------------------------------------------------------------

def _is_traced_or_device(x: Any) -> bool:
    return is_array(x)


def _index_error_types() -> str:
    return ("only integers, slices (`:`), ellipsis (`...`), None (newaxis) and integer or boolean arrays are "
            "valid indices")


def _static_int(v: Any, what: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"slice {what} must be an integer or None, got a bool")
    if isinstance(v, (int, np.integer)):
        return int(v)
    if shape_poly.is_symbolic_dim(v):
        return v
    if isinstance(v, Tracer):
        raise IndexError(f"slice {what} must be static (a Python int or None), got {v._describe()}; "
                         "use toolkit.lax.dynamic_slice for a traced start with a static size")
    if hasattr(v, "__index__"):
        return int(v.__index__())
    raise TypeError(f"slice {what} must be an integer or None, got {type(v).__name__}")


def _as_index_array(item: Any) -> Any:
    """Lists become arrays; returns a numpy array or a toolkit array/tracer."""
    if isinstance(item, list):
        if any(is_array(e) for e in _flatten(item)):
            return asarray(item)
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)  # numpy treats [] as an empty integer index
        return arr
    return item


def _flatten(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flatten(e)
        else:
            yield e


def _parse(shape: Sequence[Any], idx: Any, check_static_bounds: bool = True) -> tuple[list[_E], list[int]]:
    """Expand ``idx`` into one entry per consumed dimension (ellipsis expanded, trailing dims filled).

    Returns ``(entries, false_positions)`` where ``false_positions`` are entries
    (newaxis) that came from a ``False`` index and must end up empty.
    """
    if not isinstance(idx, tuple):
        idx = (idx,)
    ndim = len(shape)
    items: list[tuple[str, Any]] = []
    ellipsis_seen = False
    for item in idx:
        item = _as_index_array(item)
        if item is None:
            items.append(("new", None))
        elif item is Ellipsis:
            if ellipsis_seen:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_seen = True
            items.append(("ellipsis", None))
        elif isinstance(item, slice):
            items.append(("slice", (_static_int(item.start, "start"), _static_int(item.stop, "stop"),
                                    _static_int(item.step, "step"))))
        elif isinstance(item, (bool, np.bool_)):
            items.append(("bool", bool(item)))
        elif isinstance(item, (int, np.integer)):
            items.append(("int", int(item)))
        elif isinstance(item, np.ndarray) or is_array(item):
            dtype = item.dtype
            if dtype == np.bool_:
                known = known_value(item)  # a concrete trace's mask (an eager grad's) is known
                if known is None:
                    raise NonConcreteBooleanIndexError(  # an IndexError, as JAX's
                        "boolean-mask indexing needs a concrete mask: the result's shape would depend on traced "
                        f"data ({item._describe()}); use toolkit.numpy.where to select values instead")
                mask = np.asarray(known)
                if mask.ndim == 0:
                    items.append(("bool", bool(mask)))
                else:
                    items.append(("mask", mask))
            elif dtypes.is_integer(dtype):
                if item.ndim == 0 and isinstance(item, np.ndarray):
                    items.append(("int", int(item)))
                elif item.ndim == 0:
                    items.append(("dyn", item))
                else:
                    items.append(("array", item))
            else:  # JAX's TypeError and words
                raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                                f"{np.dtype(dtype).name}")
        elif isinstance(item, str):
            raise TypeError(f"toolkit does not support string indexing; got idx={item!r}")
        elif isinstance(item, (float, complex, np.inexact)):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                            f"{np.asarray(item).dtype.name}")
        else:
            raise TypeError(f"{_index_error_types()}; got {type(item).__name__} {item!r}")

    consumed = sum(item[1].ndim if item[0] == "mask" else 1 for item in items
                   if item[0] in ("slice", "int", "dyn", "array", "mask"))
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")
    if not ellipsis_seen:
        items.append(("ellipsis", None))

    entries: list[_E] = []
    false_positions: list[int] = []
    dim = 0
    for kind, value in items:
        if kind == "ellipsis":
            for _ in range(ndim - consumed):
                entries.append(_full_slice(dim, shape[dim]))
                dim += 1
        elif kind == "new":
            entries.append(_E("new", None))
        elif kind == "bool":
            if not value:
                false_positions.append(len(entries))
            entries.append(_E("new", None))
        elif kind == "slice":
            entries.append(_slice_entry(dim, shape[dim], *value))
            dim += 1
        elif kind == "int":
            n = shape[dim]
            try:
                in_bounds = -n <= value < n
            except shape_poly.InconclusiveDimensionOperation:
                # ``x[2]`` on a symbolic dimension: an index clamped at run time, as a traced one is.
                entries.append(_E("dyn", dim, value=asarray(np.asarray(value, np.int32))))
                dim += 1
                continue
            if in_bounds:
                entries.append(_E("int", dim, start=value % n))
            elif check_static_bounds and n == 0:
                raise IndexError(f"index {value} is out of bounds for axis {dim} with size {n}")
            elif check_static_bounds:
                # JAX clamps a static out-of-bounds index as it clamps a traced one (x[5] of 3 is x[2],
                # x[-5] is x[0]): no error, as documented in JAX's sharp bits.
                entries.append(_E("int", dim, start=builtins.min(builtins.max(value + n if value < 0 else value, 0),
                                                                 n - 1)))
            else:
                entries.append(_E("array", dim, value=np.asarray(value)))
            dim += 1
        elif kind == "dyn":
            entries.append(_E("dyn", dim, value=value))
            dim += 1
        elif kind == "array":
            entries.append(_E("array", dim, value=value))
            dim += 1
        elif kind == "mask":
            mask = value
            for k, (m, n) in enumerate(zip(mask.shape, shape[dim:dim + mask.ndim])):
                if m != n:
                    raise IndexError(f"boolean index did not match indexed array along axis {dim + k}; size of "
                                     f"axis is {n} but size of corresponding boolean axis is {m}")
            for k, positions in enumerate(np.nonzero(mask)):
                entries.append(_E("array", dim + k, value=positions))
            dim += mask.ndim
    if any(kind == "bool" for kind, _ in items) and any(e.kind in ("array", "dyn") for e in entries):
        raise NotImplementedError("a bool scalar index combined with array indices is not supported")
    return entries, false_positions


def _full_slice(dim: int, n: Any) -> _E:
    return _E("slice", dim, 0, 1, n)


def _slice_entry(dim: int, n: Any, start: int | None, stop: int | None, step: int | None) -> _E:
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if start is None and stop is None and (step is None or step == 1):
        return _full_slice(dim, n)
    if type(n) is int and type(start) in (int, type(None)) and type(stop) in (int, type(None)):
        start, stop, step = slice(start, stop, step).indices(n)
        return _E("slice", dim, start, step, len(range(start, stop, step)))
    return _symbolic_slice_entry(dim, n, start, stop, 1 if step is None else step)


def _symbolic_slice_entry(dim: int, n: Any, start: Any, stop: Any, step: int) -> _E:
    """``slice.indices`` for a symbolic size ``n`` (or symbolic bounds): clamped bounds as max/min expressions.

    The span is ``max(min(stop, n) - max(start, 0), 0)`` (mirrored for negative
    steps), so ``x[1:]`` and ``x[:-1]`` both get ``max(n - 1, 0)`` elements and
    their shapes agree. Bounds whose sign cannot be decided (a symbolic bound
    that may be negative) raise ``InconclusiveDimensionOperation``.
    """
    def unclamped(bound: Any) -> Any:
        return bound if bound >= 0 else n + bound

    def clamp(bound: Any, low: Any, high: Any) -> Any:
        return shape_poly.min_dim(bound, high) if bound >= 0 else shape_poly.max_dim(n + bound, low)

    min_dim, max_dim = shape_poly.min_dim, shape_poly.max_dim
    if step > 0:
        first = 0 if start is None else clamp(start, 0, n)
        low = 0 if start is None else max_dim(unclamped(start), 0)
        high = n if stop is None else min_dim(unclamped(stop), n)
    else:
        first = n - 1 if start is None else clamp(start, -1, n - 1)
        high = n - 1 if start is None else min_dim(unclamped(start), n - 1)
        low = -1 if stop is None else max_dim(unclamped(stop), -1)
    span = max_dim(high - low, 0)
    count = span if abs(step) == 1 else (span + abs(step) - 1) // abs(step)
    return _E("slice", dim, first, step, count, value=span)


def _int_index(position: Any) -> Any:
    """A normalized int index as an index array: numpy when static, a run-time value when symbolic (``b - 1``)."""
    if shape_poly.is_symbolic_dim(position):
        return lax_structural.dimension_as_value(position, np.int32)
    return np.asarray(position)


def _has_advanced(entries: Sequence[_E]) -> bool:
    return any(e.kind == "array" for e in entries)


# --- x[idx] -------------------------------------------------------------------

def getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` with numpy semantics (see the module docstring for how each index lowers).

    Example::

        x[0, 1:3]          # slice + reshape
        x[:, [2, 0]]       # gather
    """
    return _getitem(x, idx, lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS, None, check_static_bounds=True)


def _getitem(x: Any, idx: Any, mode: Any, fill_value: Any, check_static_bounds: bool) -> Any:
    x = x if is_array(x) else asarray(x)
    window = dynamic_window(x, idx)
    if window is not None:  # ds(i, n) items: a dynamic_slice first, then the rest of the index on the window
        x, idx, _ = window
    entries, false_positions = _parse(x.shape, idx, check_static_bounds)
    if _has_advanced(entries):
        return _advanced_get(x, entries, mode, fill_value)
    out = _basic(x, entries)
    if false_positions:
        # A False index adds an empty dimension where it stands.
        out_positions = [i for i, e in enumerate(entries) if e.kind in ("new", "slice")]
        starts = [0] * out.ndim
        limits = list(out.shape)
        for p in false_positions:
            limits[out_positions.index(p)] = 0
        out = lax_structural.slice(out, starts, limits)
    return out


def dynamic_window(x: Any, idx: Any) -> "tuple[Any, tuple, list] | None":
    """For an index holding ``ds(...)`` items (:class:`Slice`): ``(window, inner_index, starts)`` where
    ``window = dynamic_slice(x, starts, sizes)`` spans every ``Slice`` (start clamped, as ``dynamic_slice``
    clamps) and ``inner_index`` is ``idx`` with each ``Slice`` replaced by ``::stride``; ``None`` otherwise."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not any(isinstance(item, Slice) for item in items):
        return None
    converted = [_as_index_array(item) for item in items]
    widths = [0 if (item is None or item is Ellipsis or isinstance(item, (bool, np.bool_)))
              else (item.ndim if getattr(item, "dtype", None) == np.bool_ else 1) for item in converted]
    if sum(widths) > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {sum(widths)} were "
                         "indexed")
    starts: list[Any] = [0] * x.ndim
    sizes = list(x.shape)
    inner: list[Any] = []
    dim = 0
    for item, width in zip(items, widths):
        if item is Ellipsis:
            dim += x.ndim - sum(widths)
        elif isinstance(item, Slice):
            if item.extent > x.shape[dim]:
                raise IndexError(f"ds(start={item.start!r}, size={item.size}, stride={item.stride}) spans "
                                 f"{item.extent} elements, more than axis {dim} has ({x.shape[dim]})")
            starts[dim], sizes[dim] = item.start, item.extent
            item = slice(None, None, item.stride)
        dim += width
        inner.append(item)
    window = lax_structural.clamped_dynamic_slice(x, starts, sizes)
    return window, tuple(inner), starts


def _normalize_dynamic(i: Any, n: Any) -> Any:
    """``i + n`` where ``i < 0`` (numpy's negative indices) for a traced integer index."""
    if dtypes.is_unsigned(i.dtype):
        return i
    if i.weak_type:
        i = lax_elementwise.convert_element_type(i, i.dtype)
    zero = np.zeros(i.shape, i.dtype) if i.ndim == 0 else broadcast_to(np.asarray(0, i.dtype), i.shape)
    size = _dim_as_value(n, i.dtype)
    size = size if i.ndim == 0 else broadcast_to(size, i.shape)
    return lax_elementwise.select(lax_elementwise.lt(i, zero), lax_elementwise.add(i, size), i)


def _dim_as_value(n: Any, dtype: np.dtype) -> Any:
    """A dimension size as a scalar of ``dtype``; a symbolic size becomes a traced value."""
    if isinstance(n, (int, np.integer)):
        return np.asarray(n, dtype)
    return lax_structural.dimension_as_value(n, dtype)


def _basic(x: Any, entries: Sequence[_E]) -> Any:
    """Ints, slices, newaxis and traced scalars: rev + slice + dynamic_slice + reshape."""
    shape = tuple(x.shape)
    ndim = len(shape)
    starts, limits, strides = [0] * ndim, list(shape), [1] * ndim
    reversed_dims: list[int] = []
    dynamic: dict[int, Any] = {}
    out_shape: list[Any] = []
    for e in entries:
        if e.dim is None:  # newaxis, the one entry that consumes no dimension (the test narrows e.dim for mypy)
            out_shape.append(1)
        elif e.kind == "slice":
            d, n, length = e.dim, shape[e.dim], e.length
            out_shape.append(length)
            if e.step == 1 and e.start == 0 and (length is n or length == n):
                continue
            start, step = e.start, e.step
            if not all(type(v) is int for v in (n, start, length)):
                # Symbolic: the entry keeps the span, so the limit needs no case split on an empty slice.
                if step < 0:
                    reversed_dims.append(d)
                    start, step = n - 1 - start, -step
                starts[d], limits[d], strides[d] = start, start + e.value, step
                continue
            if step < 0:
                # Reversed, the elements n-1-start, ... are taken with the positive step -step.
                reversed_dims.append(d)
                start, step = n - 1 - start, -step
            if length == 0:
                starts[d] = limits[d] = 0
            else:
                starts[d], limits[d], strides[d] = start, start + (length - 1) * step + 1, step
        elif e.kind == "int":
            starts[e.dim], limits[e.dim] = e.start, e.start + 1
        elif e.kind == "dyn":
            dynamic[e.dim] = _normalize_dynamic(e.value, shape[e.dim])
    if reversed_dims:
        x = lax_structural.rev(x, reversed_dims)
    if any(s != 0 for s in starts) or any(lim is not n and lim != n for lim, n in zip(limits, shape)) \
            or any(s != 1 for s in strides):
        x = lax_structural.slice(x, starts, limits, strides if any(s != 1 for s in strides) else None)
    if dynamic:
        index_dtype = _common_index_dtype([v for v in dynamic.values()])
        start_indices = [lax_elementwise.convert_element_type(dynamic[d], index_dtype) if d in dynamic and
                         dynamic[d].dtype != index_dtype else dynamic.get(d, np.asarray(0, index_dtype))
                         for d in range(ndim)]
        sizes = [1 if d in dynamic else x.shape[d] for d in range(ndim)]
        x = lax_structural.clamped_dynamic_slice(x, start_indices, sizes)
    if tuple(x.shape) != tuple(out_shape):
        x = lax_structural.reshape(x, tuple(out_shape))
    return x


def _common_index_dtype(values: Sequence[Any]) -> np.dtype:
    """int32 unless a traced index needs 64 bits."""
    for v in values:
        if is_array(v) and (v.dtype.itemsize == 8 or v.dtype == np.uint32):
            return dtypes.int64
    return dtypes.int32


def _prepare_indices(components: Sequence[tuple[Any, Any]], batch_shape: tuple, placements: Sequence[tuple]) -> Any:
    """Stack index components into one ``batch_shape + (k,)`` integer array.

    ``components[i] = (value, dim_size)``; ``placements[i]`` are the batch
    dimensions the (already broadcast-ready) value spans. Static components are
    normalized and stacked in numpy, so fully static indices become one constant.
    """
    index_dtype = _common_index_dtype([v for v, _ in components])
    pieces = []
    for (value, n), dims in zip(components, placements):
        if isinstance(value, np.ndarray) and n is not None and not isinstance(n, int) and (value < 0).any():
            value = asarray(value.astype(np.int32))  # negative entries wrap by a symbolic size: normalize traced
        if isinstance(value, np.ndarray):
            if n is not None and not isinstance(n, int):
                n = None  # all entries are non-negative: nothing to wrap
            v = value.astype(np.int64)
            v = np.where(v < 0, v + n, v) if n is not None else v
            if index_dtype == dtypes.int32:
                v = np.clip(v, -_INT32_MAX - 1, _INT32_MAX)
            v = v.astype(index_dtype)
            expanded = v.reshape(tuple(v.shape[list(dims).index(k)] if k in dims else 1
                                       for k in range(len(batch_shape))))
            if all(type(d) is int for d in batch_shape):
                pieces.append(np.broadcast_to(expanded, batch_shape))
            else:  # a symbolic batch shape: broadcast at run time
                pieces.append(broadcast_to(asarray(np.ascontiguousarray(expanded)), batch_shape))
        else:
            v = value if value.dtype == index_dtype and not value.weak_type else \
                lax_elementwise.convert_element_type(value, index_dtype)
            if n is not None:
                v = _normalize_dynamic(v, n)
            pieces.append(lax_structural.broadcast_in_dim(v, batch_shape, tuple(dims)) if tuple(v.shape) != batch_shape
                          else v)
    if all(isinstance(p, np.ndarray) for p in pieces):
        return np.ascontiguousarray(np.stack(pieces, axis=-1))
    columns = [lax_structural.reshape(asarray(p) if isinstance(p, np.ndarray) else p, batch_shape + (1,)) for p in pieces]
    return columns[0] if len(columns) == 1 else lax_structural.concatenate(columns, len(batch_shape))


def _known_empty(shape: Sequence[Any]) -> bool:
    # Symbolic dimensions are never known to be 0 (they are at least 1).
    return any(type(d) is int and d == 0 for d in shape)


def _adjacent(positions: Sequence[int]) -> bool:
    return list(positions) == list(range(positions[0], positions[-1] + 1))


def _advanced_get(x: Any, entries: Sequence[_E], mode: Any, fill_value: Any) -> Any:
    """Integer-array indexing: static slices first, then one gather over the advanced dimensions."""
    # Apply slices/newaxis directly; advanced and int entries keep their whole dimension for the gather.
    pre = [e if e.dim is None or e.kind == "slice" else _full_slice(e.dim, x.shape[e.dim]) for e in entries]
    x = _basic(x, pre)
    adv = [j for j, e in enumerate(entries) if e.kind in ("int", "dyn", "array")]
    values = [_int_index(e.start) if e.kind == "int" else e.value for e in (entries[j] for j in adv)]
    batch_shape = broadcast_shapes(*[tuple(v.shape) for v in values])
    rest = [j for j in range(x.ndim) if j not in adv]
    nb = len(batch_shape)
    if _adjacent(adv):
        p = adv[0]
        offset_dims = tuple(range(p)) + tuple(range(p + nb, nb + len(rest)))
    else:
        offset_dims = tuple(range(nb, nb + len(rest)))
    out_shape = [0] * (nb + len(rest))
    for k, j in zip(offset_dims, rest):
        out_shape[k] = x.shape[j]
    batch_positions = [k for k in range(len(out_shape)) if k not in offset_dims]
    for k, size in zip(batch_positions, batch_shape):
        out_shape[k] = size
    if _known_empty(out_shape) or _known_empty([x.shape[j] for j in adv]):
        return zeros(tuple(out_shape), x.dtype)
    placements = [tuple(range(nb - v.ndim, nb)) for v in values]
    indices = _prepare_indices([(v, x.shape[j]) for v, j in zip(values, adv)], batch_shape, placements)
    dnums = lax_indexing.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(adv),
                                          start_index_map=tuple(adv))
    slice_sizes = [1 if j in adv else x.shape[j] for j in range(x.ndim)]
    if isinstance(indices, np.ndarray):
        indices = asarray(indices)
    return lax_indexing.gather(x, indices, dnums, slice_sizes, mode=mode, fill_value=fill_value)
