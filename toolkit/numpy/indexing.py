"""numpy indexing of toolkit arrays: ``x[idx]`` and ``x.at[idx].set/add/multiply/min/max/get``.

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

Out-of-bounds behaviour (as in JAX): a static int index out of range raises
``IndexError`` naming the axis; out-of-range entries of integer-array or traced
indices are *clamped* by ``x[idx]`` and ``.at[idx].get()`` (``mode="fill"``
returns ``fill_value`` instead), and *dropped* by ``.at[idx].set/add/...``
(``mode="clip"`` clamps them instead). Updates never alias: ``.at`` returns a
new array.

Example::

    x[1:, ::-1, None]              # slice + rev + reshape
    x[idx]                         # gather
    x.at[idx].add(1.0)             # scatter-add; duplicate indices accumulate
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from toolkit.core import dtypes, shape_poly
from toolkit.core.tracing import Tracer
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import indexing as lax_indexing
from toolkit.lax import structural as lax_structural
from toolkit.numpy._core import asarray, broadcast_shapes, broadcast_to, convert, is_array

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
                if isinstance(item, Tracer):
                    raise IndexError(
                        "boolean-mask indexing needs a concrete mask: the result's shape would depend on traced "
                        f"data ({item._describe()}); use toolkit.numpy.where to select values instead")
                mask = np.asarray(item)
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
            else:
                raise IndexError(f"{_index_error_types()}; got an array of dtype {np.dtype(dtype).name}")
        else:
            raise IndexError(f"{_index_error_types()}; got {type(item).__name__} {item!r}")

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
            elif check_static_bounds:
                raise IndexError(f"index {value} is out of bounds for axis {dim} with size {n}")
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


def _strided_positions(e: _E) -> Any:
    """The positions ``start + k * step`` a strided slice selects (run-time values for symbolic sizes)."""
    if all(type(v) is int for v in (e.start, e.length)):
        return np.arange(e.length, dtype=np.int64) * e.step + e.start
    from toolkit.numpy import ufuncs
    positions = ufuncs.multiply(lax_structural.iota(np.int32, e.length), np.int32(e.step))
    return ufuncs.add(positions, _int_index(e.start) if shape_poly.is_symbolic_dim(e.start) else np.int32(e.start))


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
        if e.kind == "new":
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
        x = lax_structural.dynamic_slice(x, start_indices, sizes)
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
    expanded = [lax_structural.reshape(asarray(p) if isinstance(p, np.ndarray) else p, batch_shape + (1,)) for p in pieces]
    return expanded[0] if len(expanded) == 1 else lax_structural.concatenate(expanded, len(batch_shape))


def _known_empty(shape: Sequence[Any]) -> bool:
    # Symbolic dimensions are never known to be 0 (they are at least 1).
    return any(type(d) is int and d == 0 for d in shape)


def _adjacent(positions: Sequence[int]) -> bool:
    return list(positions) == list(range(positions[0], positions[-1] + 1))


def _advanced_get(x: Any, entries: Sequence[_E], mode: Any, fill_value: Any) -> Any:
    """Integer-array indexing: static slices first, then one gather over the advanced dimensions."""
    # Apply slices/newaxis directly; advanced and int entries keep their whole dimension for the gather.
    pre = [e if e.kind in ("slice", "new") else _full_slice(e.dim, x.shape[e.dim]) for e in entries]
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
        from toolkit.numpy.creation import zeros
        return zeros(tuple(out_shape), x.dtype)
    placements = [tuple(range(nb - v.ndim, nb)) for v in values]
    indices = _prepare_indices([(v, x.shape[j]) for v, j in zip(values, adv)], batch_shape, placements)
    dnums = lax_indexing.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(adv),
                                          start_index_map=tuple(adv))
    slice_sizes = [1 if j in adv else x.shape[j] for j in range(x.ndim)]
    if isinstance(indices, np.ndarray):
        indices = asarray(indices)
    return lax_indexing.gather(x, indices, dnums, slice_sizes, mode=mode, fill_value=fill_value)


# --- x.at[idx] ----------------------------------------------------------------

class _AtIndexer:
    """``x.at``: indexing it gives an ``_IndexUpdateRef``."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, idx: Any) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self) -> str:
        return f"_AtIndexer({self.array!r})"


def at_property(x: Any) -> _AtIndexer:
    """The ``x.at`` helper: ``x.at[idx].set(v)`` etc. return updated copies (JAX semantics).

    Example::

        y = x.at[0, 1:].set(5.0)
        counts = zeros(4).at[labels].add(1.0)    # duplicates accumulate
    """
    return _AtIndexer(x)


class _IndexUpdateRef:
    """``x.at[idx]``: functional updates of the selected elements.

    ``mode``: ``None``/``"drop"`` (default for updates: out-of-range indices are
    ignored), ``"clip"`` (clamped), ``"promise_in_bounds"``; for ``get``:
    ``None``/``"promise_in_bounds"`` (clamped), ``"clip"``, ``"fill"`` (returns ``fill_value``).
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None,
            fill_value: Any = None, out_sharding: Any = None) -> Any:
        """``x[idx]``, with an explicit out-of-bounds ``mode``.

        ``out_sharding`` (as in JAX 0.10.2): the result's type on Explicit mesh axes, for a gather whose
        sharding cannot be inferred; the indexing runs with the Explicit axes Auto, its result is resharded.
        """
        if out_sharding is not None:
            return _with_index_out_sharding(_get_call, self.array, self.index, (), out_sharding, ".get",
                                            mode=mode, fill_value=fill_value)
        return _get_call(self.array, index=self.index, mode=mode, fill_value=fill_value)

    def _update(self, values: Any, op: str, what: str, mode: Any, indices_are_sorted: bool, unique_indices: bool,
                out_sharding: Any) -> Any:
        if out_sharding is not None:
            return _with_index_out_sharding(_scatter_call, self.array, self.index, (values,), out_sharding, what,
                                            op=op, mode=mode, indices_are_sorted=indices_are_sorted,
                                            unique_indices=unique_indices)
        return _scatter(self.array, self.index, values, op, mode, indices_are_sorted, unique_indices)

    def set(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] = values`` (which duplicate wins is unspecified).

        ``out_sharding`` (here and in the other updates, as in JAX 0.10.2): the result's type on Explicit mesh
        axes, for a scatter whose sharding cannot be inferred (run with the Explicit axes Auto, then resharded).
        """
        return self._update(values, "set", ".set", mode, indices_are_sorted, unique_indices, out_sharding)

    def add(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] += values`` (duplicate indices accumulate)."""
        return self._update(values, "add", ".add", mode, indices_are_sorted, unique_indices, out_sharding)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                 mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] -= values``."""
        from toolkit.numpy.ufuncs import negative
        return self._update(negative(values if is_array(values) else asarray(values)), "add", ".subtract", mode,
                            indices_are_sorted, unique_indices, out_sharding)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                 mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] *= values`` (duplicate indices multiply)."""
        return self._update(values, "mul", ".multiply", mode, indices_are_sorted, unique_indices, out_sharding)

    mul = multiply

    def min(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] = minimum(x[idx], values)``."""
        return self._update(values, "min", ".min", mode, indices_are_sorted, unique_indices, out_sharding)

    def max(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] = maximum(x[idx], values)``."""
        return self._update(values, "max", ".max", mode, indices_are_sorted, unique_indices, out_sharding)

    def divide(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
               mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] /= values`` (as JAX: ``x`` divided by ones multiplied at ``idx``)."""
        from toolkit.numpy.creation import ones_like
        from toolkit.numpy.ufuncs import true_divide
        divisors = _IndexUpdateRef(ones_like(self.array), self.index)._update(
            values, "mul", ".divide", mode, indices_are_sorted, unique_indices, out_sharding)
        return true_divide(self.array, divisors)

    def power(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] **= values`` (as JAX: ``x`` to the power of ones multiplied at ``idx``)."""
        from toolkit.numpy.creation import ones_like
        from toolkit.numpy.ufuncs import power
        exponents = _IndexUpdateRef(ones_like(self.array), self.index)._update(
            values, "mul", ".power", mode, indices_are_sorted, unique_indices, out_sharding)
        return power(self.array, exponents)

    def apply(self, func: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: Any = None) -> Any:
        """A copy of ``x`` with the unary elementwise ``func`` applied at ``idx`` (``func.at(x, idx)``): an
        element selected ``k`` times gets ``func`` applied ``k`` times, as in JAX's ``scatter_apply``.

        toolkit's scatters have fixed combiners, so the selections are counted with a scatter-add and
        ``func`` is applied to the whole array that many rounds, kept where the count is not yet reached.
        Like JAX's, not differentiable in reverse mode.
        """
        from toolkit.lax.control_flow import fori_loop
        from toolkit.lax.reductions import reduce_max
        from toolkit.numpy.creation import zeros_like
        from toolkit.numpy.ufuncs import where
        if not callable(func):
            raise TypeError(f".apply expects a callable, got {func!r}")
        x = self.array if is_array(self.array) else asarray(self.array)
        counts = _IndexUpdateRef(zeros_like(x, dtype=np.int32), self.index)._update(
            np.int32(1), "add", ".apply", mode, indices_are_sorted, unique_indices, None)
        rounds = reduce_max(counts, tuple(range(len(x.shape)))) if len(x.shape) else counts

        def one_round(k: Any, value: Any) -> Any:
            applied = asarray(func(value))
            if applied.shape != value.shape:
                raise ValueError(f".apply: func must be elementwise (unary), it turned shape {value.shape} into "
                                 f"{applied.shape}")
            return where(counts > k, applied.astype(value.dtype), value)

        return fori_loop(0, rounds, one_round, x)

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"


def _get_call(x: Any, *, index: Any, mode: Any, fill_value: Any) -> Any:
    mode = lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
        lax_indexing.GatherScatterMode.from_any(mode)
    return _getitem(x, index, mode, fill_value, check_static_bounds=False)


def _scatter_call(x: Any, values: Any, *, index: Any, op: str, mode: Any, indices_are_sorted: bool,
                  unique_indices: bool) -> Any:
    return _scatter(x, index, values, op, mode, indices_are_sorted, unique_indices)


def _index_template(idx: Any) -> tuple[tuple, list]:
    """``idx`` split into a static template (hashable when it holds no numpy array) and its array entries."""
    items = idx if isinstance(idx, tuple) else (idx,)
    template: list = [isinstance(idx, tuple)]
    arrays = []
    for item in items:
        if is_array(item) and item.dtype == np.bool_ and not isinstance(item, Tracer):
            template.append(("value", np.asarray(item)))  # a concrete mask stays concrete (it decides the shape)
        elif is_array(item):
            template.append(("array",))
            arrays.append(item)
        elif isinstance(item, slice):
            template.append(("slice", item.start, item.stop, item.step))
        elif item is None or item is Ellipsis:
            template.append((repr(item),))
        else:
            template.append(("value", item))
    return tuple(template), arrays


def _index_from_template(template: tuple, arrays: Sequence[Any]) -> Any:
    arrays = iter(arrays)
    items = []
    for entry in template[1:]:
        kind = entry[0]
        items.append(next(arrays) if kind == "array" else slice(*entry[1:]) if kind == "slice" else
                     None if kind == "None" else Ellipsis if kind == "Ellipsis" else entry[1])
    return tuple(items) if template[0] else items[0]


def _templated(*args: Any, fun: Any, template: tuple, n_fixed: int, **kwargs: Any) -> Any:
    return fun(*args[:n_fixed], index=_index_from_template(template, args[n_fixed:]), **kwargs)


def _with_index_out_sharding(fun: Any, x: Any, idx: Any, extra: tuple, out_sharding: Any, what: str,
                             **kwargs: Any) -> Any:
    """``fun(x, *extra, index=idx, **kwargs)`` (``x.at[idx].get/set/...``) typed by ``out_sharding``.

    As JAX 0.10.2's ``.at[]`` does it: the indexing runs with the Explicit axes Auto and its result is
    resharded (``toolkit.shard.explicit.with_out_sharding``, ``how="auto"``); the index's arrays are arguments.
    """
    from toolkit.shard.explicit import with_out_sharding
    x = x if is_array(x) else asarray(x)
    if fun is _scatter_call:
        shape = tuple(x.shape)
        extra = tuple(convert(v, x.dtype, x.weak_type) for v in extra)
    else:
        entries, false_positions = _parse(x.shape, idx, check_static_bounds=False)
        shape = _indexed_shape(entries, false_positions)
    template, arrays = _index_template(idx)
    args = (x,) + tuple(extra) + tuple(arrays)
    static = dict(fun=fun, template=template, n_fixed=1 + len(extra), **kwargs)
    return with_out_sharding(_templated, args, static, out_sharding, what, shape, how="auto")


def _indexed_shape(entries: Sequence[_E], false_positions: Sequence[int]) -> tuple:
    """The shape of ``x[idx]`` (numpy's order of the result dimensions)."""
    adv = [e for e in entries if e.kind in ("int", "dyn", "array")]
    adv_values = [_int_index(e.start) if e.kind == "int" else e.value for e in adv]
    batch_shape = broadcast_shapes(*[tuple(v.shape) for v in adv_values]) if adv else ()
    sizes = {("d", e.dim): e.length for e in entries if e.kind == "slice"}
    sizes.update({("B", k): n for k, n in enumerate(batch_shape)})
    shape = [1 if lab == ("new",) else sizes[lab] for lab in _result_labels(entries, len(batch_shape))]
    if false_positions:  # no advanced entries: the labels are the newaxis and slice entries in order
        positions = [i for i, e in enumerate(entries) if e.kind in ("new", "slice")]
        for p in false_positions:
            shape[positions.index(p)] = 0
    return tuple(shape)


def _result_labels(entries: Sequence[_E], batch_rank: int) -> list[tuple]:
    """numpy's order of the result dimensions of ``x[idx]``: ("new",), ("d", dim) or ("B", k)."""
    adv = [i for i, e in enumerate(entries) if e.kind in ("int", "dyn", "array")]
    block = [("B", k) for k in range(batch_rank)]
    labels: list[tuple] = []
    if adv and not _adjacent(adv):
        labels += block
    for i, e in enumerate(entries):
        if e.kind == "new":
            labels.append(("new",))
        elif e.kind == "slice":
            labels.append(("d", e.dim))
        elif adv and _adjacent(adv) and i == adv[0]:
            labels += block
    return labels


def _scatter(x: Any, idx: Any, values: Any, op: str, mode: Any, indices_are_sorted: bool,
             unique_indices: bool) -> Any:
    x = x if is_array(x) else asarray(x)
    mode = lax_indexing.GatherScatterMode.from_any(mode)
    entries, false_positions = _parse(x.shape, idx, check_static_bounds=False)
    values = convert(values, x.dtype, x.weak_type)
    if not is_array(values) and not (isinstance(values, np.ndarray) and values.ndim == 0):
        values = asarray(values)  # a 0-d numpy value stays an inline literal

    adv = [e for e in entries if e.kind in ("int", "dyn", "array")]
    adv_values = [_int_index(e.start) if e.kind == "int" else e.value for e in adv]
    batch_shape = broadcast_shapes(*[tuple(v.shape) for v in adv_values]) if adv else ()
    labels = _result_labels(entries, len(batch_shape))
    sizes = {("d", e.dim): e.length for e in entries if e.kind == "slice"}
    sizes.update({("B", k): n for k, n in enumerate(batch_shape)})
    result_shape = tuple(1 if lab == ("new",) else sizes[lab] for lab in labels)
    if false_positions:
        return x  # a False index selects nothing
    values = _broadcast_update(values, result_shape, _slice_sharding(x, labels, adv_values, len(batch_shape)))
    if _known_empty(result_shape) or _known_empty(x.shape):
        return x

    slices = {e.dim: e for e in entries if e.kind == "slice"}
    strided = [d for d in sorted(slices) if slices[d].step != 1]
    windows = [d for d in sorted(slices) if slices[d].step == 1]
    # JAX's layout: the update keeps the slice's order (newaxis dimensions dropped); its scatter dimensions are
    # the advanced block and the strided slices in that order, the others its window dimensions.
    kept = [lab for lab in labels if lab != ("new",)]
    values = lax_structural.reshape(values, tuple(sizes[lab] for lab in kept)) if len(kept) != len(labels) else values
    scatter_labels = [lab for lab in kept if lab[0] == "B" or lab[1] in strided]
    update_window_dims = tuple(i for i, lab in enumerate(kept) if lab not in scatter_labels)

    full_batch = tuple(sizes[lab] for lab in scatter_labels)
    nb = len(batch_shape)
    components: list[tuple[Any, Any]] = []
    placements: list[tuple] = []
    component_dims: list[int] = []
    adv_by_dim = {e.dim: v for e, v in zip(adv, adv_values)}
    for d in range(x.ndim):
        if d in adv_by_dim:
            v = adv_by_dim[d]
            components.append((v if isinstance(v, np.ndarray) or is_array(v) else np.asarray(v), x.shape[d]))
            placements.append(tuple(scatter_labels.index(("B", k)) for k in range(nb - v.ndim, nb)))
            component_dims.append(d)
        elif d in strided:
            e = slices[d]
            components.append((_strided_positions(e), None))
            placements.append((scatter_labels.index(("d", d)),))
            component_dims.append(d)
        elif d in windows and (slices[d].start != 0 or not (slices[d].length is x.shape[d] or
                                                            slices[d].length == x.shape[d])):
            components.append((np.asarray(slices[d].start), None))
            placements.append(())
            component_dims.append(d)

    if not components:
        return _combine_whole(x, values, op)
    indices = _prepare_indices(components, full_batch, placements)
    if isinstance(indices, np.ndarray):
        indices = asarray(indices)
    inserted = tuple(sorted(list(adv_by_dim) + strided))
    dnums = lax_indexing.ScatterDimensionNumbers(
        update_window_dims=update_window_dims,
        inserted_window_dims=inserted, scatter_dims_to_operand_dims=tuple(component_dims))
    if not any(e.kind == "array" for e in entries):
        unique_indices = True  # ints and slices select each element at most once
    scatter_fn = {"set": lax_indexing.scatter, "add": lax_indexing.scatter_add, "mul": lax_indexing.scatter_mul,
                  "min": lax_indexing.scatter_min, "max": lax_indexing.scatter_max}[op]
    return scatter_fn(x, indices, values, dnums, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode)


def _spec_of_value(v: Any) -> tuple:
    """The explicit sharding of ``v``'s type, one entry per dimension (numpy values: unsharded)."""
    from toolkit.core.sharding_rules import spec_of
    aval = getattr(v, "aval", None)
    return spec_of(aval) if aval is not None else (None,) * np.ndim(v)


def _slice_sharding(x: Any, labels: Sequence[tuple], adv_values: Sequence[Any], nb: int) -> Any:
    """The type sharding of ``x[idx]``'s slice as JAX's indexer gives it (``slice_sharding``), None if ``x`` is untyped.

    Sliced dimensions keep ``x``'s spec (whatever the slice), newaxis dimensions are unsharded and the
    advanced block takes the spec of the broadcast index arrays.
    """
    from toolkit.core.sharding_rules import ShardingTypeError, hooks, spec_of
    aval = getattr(x, "aval", None)
    sharding = getattr(aval, "sharding", None)
    if sharding is None:
        return None
    x_spec = spec_of(aval)
    specs = [(None,) * (nb - np.ndim(v)) + _spec_of_value(v) for v in adv_values]
    shapes = [(1,) * (nb - np.ndim(v)) + tuple(np.shape(v)) for v in adv_values]
    if specs and all(sh == shapes[0] for sh in shapes):
        block = specs[0]
    else:
        block = []
        for k in range(nb):
            named = {s[k] for s, sh in zip(specs, shapes) if s[k] is not None}
            if len(named) > 1:
                raise ShardingTypeError("broadcast_shardings got incompatible shardings for broadcasting: "
                                        + ", ".join(str(s) for s in specs) + ".")
            block.append(named.pop() if named else None)
    spec = tuple(None if lab == ("new",) else x_spec[lab[1]] if lab[0] == "d" else block[lab[1]] for lab in labels)
    return hooks.make(sharding.mesh, spec)


def _broadcast_update(values: Any, shape: tuple, sharding: Any) -> Any:
    """``values`` broadcast to the slice's ``shape``, typed by the slice's ``sharding`` as JAX's ``.at[]`` types it.

    An update sharded unlike the slice (a dimension over other mesh axes) is JAX's "Incompatible types for
    broadcasting" error; an unsharded dimension takes the slice's spec.
    """
    vshape = tuple(np.shape(values))
    lead = len(shape) - len(vshape)
    if lead < 0 or any(not (v == 1 or v is s or v == s) for v, s in zip(vshape, shape[lead:])):
        raise ValueError(f"cannot broadcast update values of shape {vshape} to the indexed shape {shape}")
    if sharding is None:
        return broadcast_to(values, shape)
    from toolkit.core.avals import format_sharded_shape
    from toolkit.core.sharding_rules import out_sharding_override
    from toolkit.shard.explicit import out_type_sharding
    vspec, spec = _spec_of_value(values), tuple(sharding.spec)
    if vshape == shape and vspec == spec:
        return values
    if any(e is not None and e != spec[lead + i] for i, e in enumerate(vspec)):
        dtype = np.dtype(values.dtype).name
        raise ValueError(f"Incompatible types for broadcasting: input type={dtype}[{format_sharded_shape(vshape, vspec)}]"
                         f" and requested type={dtype}[{format_sharded_shape(shape, spec)}]")
    out_type_sharding(sharding, shape)  # its axes must divide the slice (JAX's message)
    with out_sharding_override("broadcast_in_dim", sharding):
        return lax_structural.broadcast_in_dim(values, shape, tuple(range(lead, len(shape))))


def _combine_whole(x: Any, values: Any, op: str) -> Any:
    """An update of every element (``x.at[...]``): plain elementwise ops."""
    if op == "set":
        return values
    if op == "add":
        return lax_elementwise.bitwise_or(x, values) if dtypes.is_bool(x.dtype) else lax_elementwise.add(x, values)
    if op == "mul":
        return lax_elementwise.bitwise_and(x, values) if dtypes.is_bool(x.dtype) else lax_elementwise.mul(x, values)
    return (lax_elementwise.min if op == "min" else lax_elementwise.max)(x, values)
