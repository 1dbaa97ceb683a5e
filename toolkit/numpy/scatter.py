"""``x.at[idx]``: functional updates of the elements ``x[idx]`` selects (one
``scatter``), and ``.get`` with an explicit out-of-bounds mode.

The index is parsed as ``x[idx]`` parses it (``indexing.py``). Out-of-range
entries of integer-array or traced indices are *dropped* by
``.at[idx].set/add/...`` (``mode="clip"`` clamps them instead) and *clamped* by
``.at[idx].get()`` (``mode="fill"`` returns ``fill_value`` instead), as in JAX.
Updates never alias: ``.at`` returns a new array.

Example::

    x.at[idx].add(1.0)             # scatter-add; duplicate indices accumulate
    x.at[0, 1:].set(5.0)           # a copy with those elements replaced
"""

from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np

from toolkit.core import dtypes, shape_poly, sharding_types
from toolkit.core.avals import format_sharded_shape
from toolkit.core.sharding_types import ShardingTypeError, hooks, out_sharding_override, spec_of
from toolkit.core.tracing import Tracer
from toolkit.lax import control_flow as lax_control_flow
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import indexing as lax_indexing
from toolkit.lax import reductions as lax_reductions
from toolkit.lax import structural as lax_structural
from toolkit.numpy import creation, ufuncs
from toolkit.numpy._core import asarray, broadcast_shapes, broadcast_to, convert, is_array, result_dtype
from toolkit.numpy.indexing import (
    dynamic_window,
    _E, _adjacent, _getitem, _int_index, _known_empty, _parse, _prepare_indices,
)
from toolkit.shard.explicit import out_type_sharding


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
        x = self.array if is_array(self.array) else asarray(self.array)
        promoted, promoted_weak = result_dtype(x, values)
        if op in ("add", "mul") and dtypes.is_bool(promoted):
            raise TypeError(f"{op} does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
                            "subtypes of integer, floating, complexfloating.")  # JAX's (lax.scatter_add/mul)
        # (A real array's min/max with a complex update: JAX's complex min keeps the real part's order, so
        # taking the update's real part first, as below, gives its result without a complex scatter.)
        if promoted != x.dtype and not (op in ("min", "max") and dtypes.is_complex(promoted)):
            # JAX's _scatter_impl: the array and the update are promoted together, scattered, converted back, so
            # ints.at[i].add(2.5) adds 2.5 before truncating and uint8's 255 + 2.5 saturates at 255.
            out = _IndexUpdateRef(convert(x, promoted, promoted_weak), self.index)._update(
                convert(values, promoted, promoted_weak), op, what, mode, indices_are_sorted, unique_indices,
                out_sharding)
            return lax_elementwise.convert_element_type(out, x.dtype, weak_type=bool(x.weak_type))
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
        return self._update(ufuncs.negative(values if is_array(values) else asarray(values)), "add", ".subtract", mode,
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
        divisors = _IndexUpdateRef(creation.ones_like(self.array), self.index)._update(
            values, "mul", ".divide", mode, indices_are_sorted, unique_indices, out_sharding)
        return ufuncs.true_divide(self.array, divisors)

    def power(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: Any = None, out_sharding: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] **= values`` (as JAX: ``x`` to the power of ones multiplied at ``idx``)."""
        exponents = _IndexUpdateRef(creation.ones_like(self.array), self.index)._update(
            values, "mul", ".power", mode, indices_are_sorted, unique_indices, out_sharding)
        return ufuncs.power(self.array, exponents)

    def apply(self, func: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: Any = None) -> Any:
        """A copy of ``x`` with the unary elementwise ``func`` applied at ``idx`` (``func.at(x, idx)``): an
        element selected ``k`` times gets ``func`` applied ``k`` times, as in JAX's ``scatter_apply``.

        toolkit's scatters have fixed combiners, so the selections are counted with a scatter-add and
        ``func`` is applied to the whole array that many rounds, kept where the count is not yet reached.
        Like JAX's, not differentiable in reverse mode.
        """
        if not callable(func):
            raise TypeError(f".apply expects a callable, got {func!r}")
        x = self.array if is_array(self.array) else asarray(self.array)
        counts = _IndexUpdateRef(creation.zeros_like(x, dtype=np.int32), self.index)._update(
            np.int32(1), "add", ".apply", mode, indices_are_sorted, unique_indices, None)
        rounds = lax_reductions.reduce_max(counts, tuple(range(len(x.shape)))) if len(x.shape) else counts

        def one_round(k: Any, value: Any) -> Any:
            applied = asarray(func(value))
            if applied.shape != value.shape:
                raise ValueError(f".apply: func must be elementwise (unary), it turned shape {value.shape} into "
                                 f"{applied.shape}")
            return ufuncs.where(counts > k, applied.astype(value.dtype), value)

        return lax_control_flow.fori_loop(0, rounds, one_round, x)

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
    remaining = iter(arrays)
    items = []
    for entry in template[1:]:
        kind = entry[0]
        items.append(next(remaining) if kind == "array" else slice(*entry[1:]) if kind == "slice" else
                     None if kind == "None" else Ellipsis if kind == "Ellipsis" else entry[1])
    return tuple(items) if template[0] else items[0]


def _templated(*args: Any, fun: Any, template: tuple, n_fixed: int, **kwargs: Any) -> Any:
    return fun(*args[:n_fixed], index=_index_from_template(template, args[n_fixed:]), **kwargs)


def _with_index_out_sharding(fun: Any, x: Any, idx: Any, extra: tuple, out_sharding: Any, what: str,
                             **kwargs: Any) -> Any:
    """``fun(x, *extra, index=idx, **kwargs)`` (``x.at[idx].get/set/...``) typed by ``out_sharding``.

    As JAX 0.10.2's ``.at[]`` does it: the indexing runs with the Explicit axes Auto and its result is
    resharded (``toolkit.resharding.with_out_sharding`` through the ``core.sharding_types`` hook,
    ``how="auto"``); the index's arrays are arguments.
    """
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
    return sharding_types.with_out_sharding(_templated, args, static, out_sharding, what, shape, how="auto")


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
    window = dynamic_window(x, idx)
    if window is not None:  # ds(i, n) items: update the dynamic_slice window, write it back (as JAX's)
        part, inner, starts = window
        updated = _scatter(part, inner, values, op, mode, indices_are_sorted, unique_indices)
        result = lax_structural.clamped_dynamic_update_slice(x, updated, starts)
        if lax_indexing.GatherScatterMode.from_any(mode) is lax_indexing.GatherScatterMode.FILL_OR_DROP:
            # JAX's scatter drops a ds window that does not fit (XLA skips it whole); the write above clamped.
            fits: Any = True
            for start, extent, n in zip(starts, part.shape, x.shape):
                if isinstance(start, (int, np.integer)):
                    fits = fits if 0 <= start and start + extent <= n else False
                else:
                    ok = ufuncs.logical_and(ufuncs.greater_equal(start, 0), ufuncs.less_equal(start, n - extent))
                    fits = ok if fits is True else (fits if fits is False else ufuncs.logical_and(fits, ok))
            if fits is False:
                return x
            if fits is not True:
                result = lax_elementwise.select(broadcast_to(fits, x.shape), result, x)
        return result
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

    # Only newaxis entries have no dimension (dim None): the casts say so to mypy.
    slices = cast("dict[int, _E]", {e.dim: e for e in entries if e.kind == "slice"})
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
    adv_by_dim = cast("dict[int, Any]", {e.dim: v for e, v in zip(adv, adv_values)})
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
    aval = getattr(v, "aval", None)
    return spec_of(aval) if aval is not None else (None,) * np.ndim(v)


def _slice_sharding(x: Any, labels: Sequence[tuple], adv_values: Sequence[Any], nb: int) -> Any:
    """The type sharding of ``x[idx]``'s slice as JAX's indexer gives it (``slice_sharding``), None if ``x`` is untyped.

    Sliced dimensions keep ``x``'s spec (whatever the slice), newaxis dimensions are unsharded and the
    advanced block takes the spec of the broadcast index arrays.
    """
    aval: Any = getattr(x, "aval", None)  # a ShapedArray whenever it has a sharding
    sharding = getattr(aval, "sharding", None)
    if sharding is None:
        return None
    x_spec = spec_of(aval)
    specs = [(None,) * (nb - np.ndim(v)) + _spec_of_value(v) for v in adv_values]
    shapes = [(1,) * (nb - np.ndim(v)) + tuple(np.shape(v)) for v in adv_values]
    block: Sequence[Any]
    if specs and all(sh == shapes[0] for sh in shapes):
        block = specs[0]
    else:
        merged: list[Any] = []
        for k in range(nb):
            named = {s[k] for s, sh in zip(specs, shapes) if s[k] is not None}
            if len(named) > 1:
                raise ShardingTypeError("broadcast_shardings got incompatible shardings for broadcasting: "
                                        + ", ".join(str(s) for s in specs) + ".")
            merged.append(named.pop() if named else None)
        block = merged
    spec = tuple(None if lab == ("new",) else x_spec[lab[1]] if lab[0] == "d" else block[lab[1]] for lab in labels)
    assert hooks.make is not None  # installed by toolkit.shard.explicit (imported above), whose mesh typed x
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


def _strided_positions(e: _E) -> Any:
    """The positions ``start + k * step`` a strided slice selects (run-time values for symbolic sizes)."""
    if all(type(v) is int for v in (e.start, e.length)):
        return np.arange(e.length, dtype=np.int64) * e.step + e.start
    positions = ufuncs.multiply(lax_structural.iota(np.int32, e.length), np.int32(e.step))
    return ufuncs.add(positions, _int_index(e.start) if shape_poly.is_symbolic_dim(e.start) else np.int32(e.start))
