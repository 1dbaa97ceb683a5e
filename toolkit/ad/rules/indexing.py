"""Rules for ``toolkit/lax/indexing.py``: ``gather`` and ``scatter_add`` are linear in their array
operands and transpose into each other; ``scatter`` (set) is linear in operand and updates.

Indices are never differentiated. A gather's tangent is gathered with a fill
value of 0 (out-of-bounds rows of a ``fill`` gather have zero derivative).
``scatter`` with duplicate indices assumes the tangent scatter picks the
same winner as the primal one (XLA's deterministic CPU/GPU order);
``scatter_mul`` is JAX's: linear in the operand (transposed by the same multiplication), and differentiable in the
updates only with ``unique_indices`` (JAX's ``NotImplementedError`` otherwise). ``scatter_min/max`` have
JAX's JVP: the tangent at each written position is the average of the tangents of the values tied for the
winning extremum there (the operand's own value and every update equal to the result), built from gathers and
scatter-adds, so their transposes give reverse mode.
"""

from __future__ import annotations

import numpy as np

from toolkit.ad.registry import JVP_RULES, TRANSPOSE_RULES
from toolkit.ad.values import Zero, instantiate, is_undefined, tangent_aval, value_aval, zeros
from toolkit.lax import elementwise, indexing, structural


def _gather_jvp(primals, tangents, **params):
    x, indices = primals
    out = indexing.gather_p.bind(x, indices, **params)
    if isinstance(tangents[0], Zero):
        return out, Zero(tangent_aval(value_aval(out)))
    fill = 0 if params.get("fill_value") is not None or params["mode"] is indexing.GatherScatterMode.FILL_OR_DROP else None
    return out, indexing.gather_p.bind(tangents[0], indices, **dict(params, fill_value=fill))


def _scatter_dnums_for(gather_dnums: indexing.GatherDimensionNumbers) -> indexing.ScatterDimensionNumbers:
    return indexing.ScatterDimensionNumbers(
        update_window_dims=gather_dnums.offset_dims, inserted_window_dims=gather_dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=gather_dnums.start_index_map,
        operand_batching_dims=gather_dnums.operand_batching_dims,
        scatter_indices_batching_dims=gather_dnums.start_indices_batching_dims)


def _gather_transpose(ct, x, indices, *, dimension_numbers, slice_sizes, indices_are_sorted, unique_indices,
                      mode, fill_value):
    if isinstance(ct, Zero):
        return [None, None]
    out = indexing.scatter_add_p.bind(zeros(x.aval), indices, ct, dimension_numbers=_scatter_dnums_for(dimension_numbers),
                                indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    return [out, None]


def _gather_dnums_for(dnums: indexing.ScatterDimensionNumbers) -> indexing.GatherDimensionNumbers:
    return indexing.GatherDimensionNumbers(
        offset_dims=dnums.update_window_dims, collapsed_slice_dims=dnums.inserted_window_dims,
        start_index_map=dnums.scatter_dims_to_operand_dims, operand_batching_dims=dnums.operand_batching_dims,
        start_indices_batching_dims=dnums.scatter_indices_batching_dims)


def _inverse_slice_sizes(operand_rank, updates_shape, dnums):
    """The slice sizes of the gather that reads back what a scatter with ``dnums`` wrote: its update windows."""
    slice_sizes, position = [], 0
    for d in range(operand_rank):
        if d in dnums.inserted_window_dims or d in dnums.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates_shape[dnums.update_window_dims[position]])
            position += 1
    return tuple(slice_sizes)


def _updates_gather(ct, indices, updates_shape, dnums, indices_are_sorted, unique_indices, mode):
    """The part of ``ct`` each update element was written to: a gather with the scatter's geometry."""
    slice_sizes = _inverse_slice_sizes(len(value_aval(ct).shape), updates_shape, dnums)
    return indexing.gather_p.bind(ct, indices, dimension_numbers=_gather_dnums_for(dnums), slice_sizes=slice_sizes,
                            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
                            fill_value=0 if mode is indexing.GatherScatterMode.FILL_OR_DROP else None)


def _scatter_linear_jvp(primitive):
    def rule(primals, tangents, **params):
        x, indices, updates = primals
        out = primitive.bind(x, indices, updates, **params)
        tx, tu = tangents[0], tangents[2]
        if isinstance(tx, Zero) and isinstance(tu, Zero):
            return out, Zero(tangent_aval(value_aval(out)))
        return out, primitive.bind(instantiate(tx), indices, instantiate(tu), **params)
    return rule


def _scatter_add_transpose(ct, x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
    if isinstance(ct, Zero):
        return [None, None, None]
    ct_updates = None
    if is_undefined(updates):
        ct_updates = _updates_gather(ct, indices, updates.aval.shape, dimension_numbers, indices_are_sorted,
                                     unique_indices, mode)
    return [ct if is_undefined(x) else None, None, ct_updates]


def _scatter_transpose(ct, x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
    if isinstance(ct, Zero):
        return [None, None, None]
    update_aval = value_aval(updates)
    ct_x = None
    if is_undefined(x):  # the overwritten positions receive nothing
        ct_x = indexing.scatter_p.bind(ct, indices, zeros(update_aval), dimension_numbers=dimension_numbers,
                                 indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    ct_updates = None
    if is_undefined(updates):
        ct_updates = _updates_gather(ct, indices, update_aval.shape, dimension_numbers, indices_are_sorted,
                                     unique_indices, mode)
    return [ct_x, None, ct_updates]


JVP_RULES[indexing.gather_p] = _gather_jvp
TRANSPOSE_RULES[indexing.gather_p] = _gather_transpose
JVP_RULES[indexing.scatter_add_p] = _scatter_linear_jvp(indexing.scatter_add_p)
TRANSPOSE_RULES[indexing.scatter_add_p] = _scatter_add_transpose
JVP_RULES[indexing.scatter_p] = _scatter_linear_jvp(indexing.scatter_p)
TRANSPOSE_RULES[indexing.scatter_p] = _scatter_transpose

_UNIQUE_ONLY = "scatter_mul gradients are only implemented if `unique_indices=True`"


def _scatter_mul_jvp(primals, tangents, **params):
    x, indices, updates = primals
    out = indexing.scatter_mul_p.bind(x, indices, updates, **params)
    tx, tu = tangents[0], tangents[2]
    tangent = None
    if not isinstance(tx, Zero):  # linear in the operand: the same multiplication of its tangent
        tangent = indexing.scatter_mul_p.bind(tx, indices, updates, **params)
    if not isinstance(tu, Zero):
        if not params["unique_indices"]:
            raise NotImplementedError(_UNIQUE_ONLY)
        # Each written element is x * u: its derivative in u is x there (JAX's mul of a scatter_add of the tangent).
        spread = indexing.scatter_add_p.bind(zeros(value_aval(x)), indices, tu, **params)
        part = elementwise.mul(x, spread)
        tangent = part if tangent is None else elementwise.add(tangent, part)
    if tangent is None:
        return out, Zero(tangent_aval(value_aval(out)))
    return out, tangent


def _scatter_mul_transpose(ct, x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
    if isinstance(ct, Zero):
        return [None, None, None]
    if is_undefined(updates):  # the JVP above keeps the updates primal; nothing linear in them reaches here
        raise NotImplementedError(_UNIQUE_ONLY)
    ct_x = indexing.scatter_mul_p.bind(ct, indices, updates, dimension_numbers=dimension_numbers,
                                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                                       mode=mode) if is_undefined(x) else None
    return [ct_x, None, None]


JVP_RULES[indexing.scatter_mul_p] = _scatter_mul_jvp
TRANSPOSE_RULES[indexing.scatter_mul_p] = _scatter_mul_transpose

def _filled_like(x, value):
    """An array of ``x``'s shape and (strong) dtype holding ``value``: JAX's ``lax._ones``/``_zeros`` and scalars."""
    aval = value_aval(x)
    return structural.broadcast_in_dim(np.asarray(value, aval.dtype), aval.shape, ())


def _scatter_extremal_jvp(primitive):
    """JAX's ``_scatter_extremal_jvp`` for ``scatter_min``/``scatter_max``.

    At each position the scatter wrote, the result is some extremum; the values equal to it (the operand's if it
    was retained, and each update equal to it) share the tangent equally: ``num_updates`` updates won there, and
    the operand counts once more when retained. The tangent is the operand's tangent plus a scatter-add, per
    update, of ``g_operand * operand_coef + g_updates * updates_coef``: ``operand_coef`` is spread over the
    ``num_refs`` updates aimed at the position, so together they replace the operand's tangent by its share.
    The bookkeeping ignores the primitive's mode as JAX's does (the gathers are ``promise_in_bounds``, XLA's
    clamping; the counting scatter-adds ``drop``); only the final scatter-add takes the primitive's parameters.
    So an out-of-bounds index gets JAX's tangent under every mode, not one derived anew.
    """
    def rule(primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
        x, indices, updates = primals
        params = dict(dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode)
        out = primitive.bind(x, indices, updates, **params)
        tx, tu = tangents[0], tangents[2]
        if isinstance(tx, Zero) and isinstance(tu, Zero):
            return out, Zero(tangent_aval(value_aval(out)))
        tx, tu = instantiate(tx), instantiate(tu)
        promise, drop = indexing.GatherScatterMode.PROMISE_IN_BOUNDS, indexing.GatherScatterMode.FILL_OR_DROP
        gather_dnums = _gather_dnums_for(dimension_numbers)
        slice_sizes = _inverse_slice_sizes(len(value_aval(x).shape), value_aval(updates).shape, dimension_numbers)

        def at_targets(array):  # the operand window each update element aims at
            return indexing.gather_p.bind(array, indices, dimension_numbers=gather_dnums, slice_sizes=slice_sizes,
                                          indices_are_sorted=False, unique_indices=False, mode=promise,
                                          fill_value=None)

        def count_at_targets(per_update):  # per update: the sum of ``per_update`` over updates aimed at its target
            totals = indexing.scatter_add_p.bind(_filled_like(x, 0), indices, per_update,
                                                 dimension_numbers=dimension_numbers, indices_are_sorted=False,
                                                 unique_indices=False, mode=drop)
            return at_targets(totals)

        initial_vals, target_vals = at_targets(x), at_targets(out)
        successful_updates = elementwise.eq(updates, target_vals)
        retained_values = elementwise.eq(initial_vals, target_vals)
        ones, no_updates = _filled_like(updates, 1), _filled_like(updates, 0)
        num_updates = count_at_targets(elementwise.select(successful_updates, ones, no_updates))
        num_refs = count_at_targets(ones)
        one = _filled_like(num_updates, 1)
        share_with_operand = elementwise.div(one, elementwise.add(num_updates, one))
        updates_normalizer = elementwise.select(retained_values, share_with_operand, elementwise.div(one, num_updates))
        updates_coef = elementwise.select(successful_updates, updates_normalizer, no_updates)
        operand_normalizer = elementwise.select(retained_values, share_with_operand, _filled_like(num_updates, 0))
        operand_coef = elementwise.div(elementwise.add(_filled_like(num_updates, -1), operand_normalizer), num_refs)
        tangent_updates = elementwise.add(elementwise.mul(at_targets(tx), operand_coef),
                                          elementwise.mul(tu, updates_coef))
        return out, indexing.scatter_add_p.bind(tx, indices, tangent_updates, **params)
    rule.__name__ = f"_{primitive.name}_jvp"
    return rule


JVP_RULES[indexing.scatter_min_p] = _scatter_extremal_jvp(indexing.scatter_min_p)
JVP_RULES[indexing.scatter_max_p] = _scatter_extremal_jvp(indexing.scatter_max_p)
