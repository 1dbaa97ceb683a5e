"""Rules for ``toolkit/lax/indexing.py``: ``gather`` and ``scatter_add`` are linear in their array
operands and transpose into each other; ``scatter`` (set) is linear in operand and updates.

Indices are never differentiated. A gather's tangent is gathered with a fill
value of 0 (out-of-bounds rows of a ``fill`` gather have zero derivative).
``scatter`` with duplicate indices assumes the tangent scatter picks the
same winner as the primal one (XLA's deterministic CPU/GPU order);
``scatter_mul`` is JAX's: linear in the operand (transposed by the same multiplication), and differentiable in the
updates only with ``unique_indices`` (JAX's ``NotImplementedError`` otherwise); ``scatter_min/max`` have no rules.
"""

from __future__ import annotations

from toolkit.ad.registry import JVP_RULES, NO_JVP, TRANSPOSE_RULES
from toolkit.ad.values import Zero, instantiate, is_undefined, tangent_aval, value_aval, zeros
from toolkit.lax import elementwise, indexing


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


def _updates_gather(ct, indices, updates_shape, dnums, indices_are_sorted, unique_indices, mode):
    """The part of ``ct`` each update element was written to: a gather with the scatter's geometry."""
    slice_sizes, position = [], 0
    for d in range(len(value_aval(ct).shape)):
        if d in dnums.inserted_window_dims or d in dnums.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates_shape[dnums.update_window_dims[position]])
            position += 1
    return indexing.gather_p.bind(ct, indices, dimension_numbers=_gather_dnums_for(dnums), slice_sizes=tuple(slice_sizes),
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

for _primitive in (indexing.scatter_min_p, indexing.scatter_max_p):
    NO_JVP[_primitive] = ("not yet: JAX has a JVP for scatter_min/max (through the inverse gather); scatter, "
                          "scatter_add and scatter_mul have rules")
