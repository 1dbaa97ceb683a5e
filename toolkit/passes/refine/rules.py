"""Result shapes of StableHLO / CHLO ops, computed in Python.

A rule gets the op, its operand types and a ``constant(value)`` lookup (a
numpy array for values known to be constant, else None) and returns one
entry per result: a list of dimension sizes with ``-1`` for "unknown", or
None when it knows nothing about that result. Rules never raise on unknown
shapes; they raise :class:`ShapeError` when operands contradict each other
(the message reads like the op verifier's).

Ops without a rule here fall back to StableHLO's C++ type inference by
building a scratch copy of the op without result types (see
``infer_with_cxx``), which works for every op implementing
``InferTypeOpInterface``.

Example::

    shapes = infer_shapes(op, [v.type for v in op.operands], constant_of)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, stablehlo

Shape = list  # list[int], -1 = unknown size
ConstantLookup = Callable[[ir.Value], "np.ndarray | None"]

DYNAMIC = ir.ShapedType.get_dynamic_size()


class ShapeError(ValueError):
    """Operand shapes contradict each other (the module is ill-formed)."""


#: Type -> its sizes (a tuple, -1 for ``?``) while a refinement runs: reading ``.shape`` through the
#: bindings costs ~2.5 µs, a dict hit ~0.3 µs. Types are uniqued per context, so a Type is a sound key;
#: the driver empties the cache when it finishes (the cached types keep their context alive).
SHAPE_CACHE: dict[ir.Type, tuple[int, ...]] = {}
_SHAPE_CACHE_LIMIT = 1 << 16


def shape_of(type_: ir.Type) -> Shape | None:
    """Dimension sizes of a ranked tensor type (-1 for ``?``), None otherwise (a new list each call)."""
    if not isinstance(type_, ir.RankedTensorType):
        return None
    try:
        return list(SHAPE_CACHE[type_])
    except KeyError:
        pass
    shape = tuple(-1 if d == DYNAMIC else d for d in type_.shape)
    if len(SHAPE_CACHE) < _SHAPE_CACHE_LIMIT:
        SHAPE_CACHE[type_] = shape
    return list(shape)


def is_static(shape: Shape | None) -> bool:
    return shape is not None and all(d >= 0 for d in shape)


def _same_shape(op: ir.Operation, shapes: Sequence[Shape | None], *, allow_scalars: bool = False) -> Shape | None:
    merged: Shape | None = None
    for shape in shapes:
        if shape is None or (allow_scalars and len(shape) == 0):
            continue
        if merged is None:
            merged = list(shape)
            continue
        if len(shape) != len(merged):
            raise ShapeError(f"'{op.name}' op requires the same shape for all operands and results")
        for i, d in enumerate(shape):
            if d >= 0:
                if merged[i] >= 0 and merged[i] != d:
                    raise ShapeError(f"'{op.name}' op requires the same shape for all operands and results")
                merged[i] = d
    if merged is None and allow_scalars and shapes and all(s is not None for s in shapes):
        return []
    return merged


def _elementwise(op, types, constant):
    return [_same_shape(op, [shape_of(t) for t in types])]  # elementwise ops have one result


def _select_or_clamp(op, types, constant):
    return [_same_shape(op, [shape_of(t) for t in types], allow_scalars=True)]  # scalar operands broadcast


def _bitcast_convert(op, types, constant):
    source = types[0]
    result = op.results[0].type
    if not isinstance(source, ir.RankedTensorType) or not isinstance(result, ir.ShapedType):
        return [None]
    source_width = _bit_width(source.element_type)
    result_width = _bit_width(result.element_type)
    if source_width is None or source_width != result_width:
        return [None]
    return [shape_of(source)]


def _bit_width(element_type: ir.Type) -> int | None:
    for attr in ("width",):
        if hasattr(element_type, attr):
            return getattr(element_type, attr)
    if isinstance(element_type, ir.ComplexType):
        inner = _bit_width(element_type.element_type)
        return None if inner is None else 2 * inner
    text = str(element_type)
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(text)


def _const_shape(constant: ConstantLookup, value: ir.Value) -> Shape | None:
    array = constant(value)
    if array is None:
        return None
    return [int(x) for x in np.asarray(array).reshape(-1)]


def _from_shape_operand(index: int) -> Callable:
    def rule(op, types, constant):
        return [_const_shape(constant, op.operands[index])]
    return rule


def _dynamic_pad(op, types, constant):
    source = shape_of(types[0])
    low = _const_shape(constant, op.operands[2])
    high = _const_shape(constant, op.operands[3])
    interior = _const_shape(constant, op.operands[4])
    if source is None or low is None or high is None or interior is None:
        return [None]
    return [_pad_shape(source, low, high, interior)]


def _pad_shape(source, low, high, interior):
    out = []
    for d, lo, hi, inner in zip(source, low, high, interior):
        out.append(-1 if d < 0 else d + lo + hi + max(d - 1, 0) * inner)
    return out


def _pad(op, types, constant):
    source = shape_of(types[0])
    if source is None:
        return [None]
    return [_pad_shape(source, list(op.attributes["edge_padding_low"]),
                       list(op.attributes["edge_padding_high"]), list(op.attributes["interior_padding"]))]


def _real_dynamic_slice(op, types, constant):
    starts = _const_shape(constant, op.operands[1])
    limits = _const_shape(constant, op.operands[2])
    strides = _const_shape(constant, op.operands[3])
    if starts is not None and limits is not None and strides is not None:
        return [[max(0, -(-(lim - st) // step)) for st, lim, step in zip(starts, limits, strides)]]
    # limit = start + c with unit strides: the size is c even if start is unknown.
    if strides is not None and all(s == 1 for s in strides):
        limit_owner = _owner(op.operands[2])
        if limit_owner is not None and limit_owner.name == "stablehlo.add":
            a, b = limit_owner.operands
            for start_side, size_side in ((a, b), (b, a)):
                if start_side == op.operands[1]:
                    sizes = _const_shape(constant, size_side)
                    if sizes is not None:
                        return [sizes]
    return [None]


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        return owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def _dims(attr: Any) -> list[int]:
    return [int(x) for x in attr]


def _dot_general(op, types, constant):
    lhs, rhs = shape_of(types[0]), shape_of(types[1])
    if lhs is None or rhs is None:
        return [None]
    numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lb, rb = _dims(numbers.lhs_batching_dimensions), _dims(numbers.rhs_batching_dimensions)
    lc, rc = _dims(numbers.lhs_contracting_dimensions), _dims(numbers.rhs_contracting_dimensions)
    batch = [lhs[i] if lhs[i] >= 0 else rhs[j] for i, j in zip(lb, rb)]
    lhs_free = [d for i, d in enumerate(lhs) if i not in lb and i not in lc]
    rhs_free = [d for i, d in enumerate(rhs) if i not in rb and i not in rc]
    return [batch + lhs_free + rhs_free]


def _dot(op, types, constant):
    lhs, rhs = shape_of(types[0]), shape_of(types[1])
    if lhs is None or rhs is None:
        return [None]
    if len(lhs) == 1 and len(rhs) == 1:
        return [[]]
    if len(lhs) == 2 and len(rhs) == 1:
        return [[lhs[0]]]
    if len(lhs) == 1 and len(rhs) == 2:
        return [[rhs[1]]]
    return [[lhs[0], rhs[1]]]


def _ragged_dot(op, types, constant):
    lhs, rhs, groups = (shape_of(t) for t in types[:3])
    if lhs is None or rhs is None or groups is None:
        return [None]
    numbers = chlo.RaggedDotDimensionNumbers(op.attributes["ragged_dot_dimension_numbers"])
    lb, rb = _dims(numbers.lhs_batching_dimensions), _dims(numbers.rhs_batching_dimensions)
    lc, rc = _dims(numbers.lhs_contracting_dimensions), _dims(numbers.rhs_contracting_dimensions)
    ragged = _dims(numbers.lhs_ragged_dimensions)
    group_dims = _dims(numbers.rhs_group_dimensions)
    batch = [lhs[i] for i in lb]
    lhs_free = [d for i, d in enumerate(lhs) if i not in lb and i not in lc]
    rhs_free = [d for i, d in enumerate(rhs) if i not in rb and i not in rc and i not in group_dims]
    if ragged and ragged[0] in lc:
        return [[groups[0]] + batch + lhs_free + rhs_free]
    return [batch + lhs_free + rhs_free]


def _transpose(op, types, constant):
    source = shape_of(types[0])
    if source is None:
        return [None]
    return [[source[p] for p in op.attributes["permutation"]]]


def _reduce(op, types, constant):
    dims = set(_dims(op.attributes["dimensions"]))
    count = len(op.results)
    out = []
    for t in types[:count]:
        shape = shape_of(t)
        out.append(None if shape is None else [d for i, d in enumerate(shape) if i not in dims])
    return out


def _concatenate(op, types, constant):
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    shapes = [shape_of(t) for t in types]
    if any(s is None for s in shapes):
        return [None]
    out = list(shapes[0])
    for i in range(len(out)):
        if i == axis:
            out[i] = -1 if any(s[i] < 0 for s in shapes) else sum(s[i] for s in shapes)
        else:
            known = [s[i] for s in shapes if s[i] >= 0]
            out[i] = known[0] if known else -1
    return [out]


def _slice(op, types, constant):
    starts, limits, strides = (list(op.attributes[k]) for k in ("start_indices", "limit_indices", "strides"))
    return [[max(0, -(-(lim - st) // step)) for st, lim, step in zip(starts, limits, strides)]]


def _dynamic_slice(op, types, constant):
    return [list(op.attributes["slice_sizes"])]


def _same_as_operand(index: int = 0) -> Callable:
    def rule(op, types, constant):
        return [shape_of(types[index])] * len(op.results)
    return rule


def _per_operand(op, types, constant):
    return [shape_of(t) for t in types[:len(op.results)]]


def _gather_shape(op, operand: Shape | None, indices: Shape | None, slice_sizes: Shape | None) -> Shape | None:
    if indices is None or slice_sizes is None:
        return None
    numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    offset_dims = _dims(numbers.offset_dims)
    collapsed = set(_dims(numbers.collapsed_slice_dims)) | set(_dims(numbers.operand_batching_dims))
    index_vector_dim = int(numbers.index_vector_dim)
    batch = [d for i, d in enumerate(indices) if i != index_vector_dim]
    offsets = [d for i, d in enumerate(slice_sizes) if i not in collapsed]
    rank = len(batch) + len(offsets)
    out, batch_iter, offset_iter = [], iter(batch), iter(offsets)
    for axis in range(rank):
        out.append(next(offset_iter) if axis in offset_dims else next(batch_iter))
    return out


def _gather(op, types, constant):
    return [_gather_shape(op, shape_of(types[0]), shape_of(types[1]), list(op.attributes["slice_sizes"]))]


def _dynamic_gather(op, types, constant):
    return [_gather_shape(op, shape_of(types[0]), shape_of(types[1]), _const_shape(constant, op.operands[2]))]


def _conv_shape(op, lhs: Shape | None, rhs: Shape | None, padding: list[list[int]] | None) -> Shape | None:
    if lhs is None or rhs is None:
        return None
    numbers = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    in_spatial = _dims(numbers.input_spatial_dimensions)
    k_spatial = _dims(numbers.kernel_spatial_dimensions)
    out_spatial = _dims(numbers.output_spatial_dimensions)
    count = len(in_spatial)

    def attr_list(name: str, default: int) -> list[int]:
        return list(op.attributes[name]) if name in op.attributes else [default] * count

    strides = attr_list("window_strides", 1)
    lhs_dilation = attr_list("lhs_dilation", 1)
    rhs_dilation = attr_list("rhs_dilation", 1)
    if padding is None:
        padding = ([[int(x) for x in row] for row in np.array(op.attributes["padding"]).reshape(count, 2)]
                   if "padding" in op.attributes else [[0, 0]] * count)
    batch_groups = ir.IntegerAttr(op.attributes["batch_group_count"]).value
    out = [-1] * (count + 2)
    batch = lhs[int(numbers.input_batch_dimension)]
    out[int(numbers.output_batch_dimension)] = batch // batch_groups if batch >= 0 else -1
    out[int(numbers.output_feature_dimension)] = rhs[int(numbers.kernel_output_feature_dimension)]
    for i in range(count):
        size, window = lhs[in_spatial[i]], rhs[k_spatial[i]]
        if size < 0 or window < 0:
            continue
        dilated = (size - 1) * lhs_dilation[i] + 1 + padding[i][0] + padding[i][1] if size > 0 else 0
        dilated_window = (window - 1) * rhs_dilation[i] + 1
        out[out_spatial[i]] = 0 if dilated < dilated_window else (dilated - dilated_window) // strides[i] + 1
    return out


def _convolution(op, types, constant):
    return [_conv_shape(op, shape_of(types[0]), shape_of(types[1]), None)]


def _dynamic_conv(op, types, constant):
    padding = constant(op.operands[2])
    if padding is None:
        return [None]
    return [_conv_shape(op, shape_of(types[0]), shape_of(types[1]),
                        [[int(x) for x in row] for row in np.asarray(padding).reshape(-1, 2)])]


def _replica_group_size(op) -> int | None:
    groups = op.attributes["replica_groups"]
    shape = groups.type.shape
    if len(shape) != 2 or shape[1] == 0:
        return None
    # Without a channel (or with flattened ids) the groups are the participants.
    if "channel_handle" in op.attributes and "use_global_device_ids" not in op.attributes:
        return None
    return shape[1]


def _all_gather(op, types, constant):
    size = _replica_group_size(op)
    axis = ir.IntegerAttr(op.attributes["all_gather_dim"]).value
    out = []
    for t in types:
        shape = shape_of(t)
        if shape is None or size is None:
            out.append(None)
            continue
        shape = list(shape)
        shape[axis] = shape[axis] * size if shape[axis] >= 0 else -1
        out.append(shape)
    return out


def _reduce_scatter(op, types, constant):
    size = _replica_group_size(op)
    axis = ir.IntegerAttr(op.attributes["scatter_dimension"]).value
    shape = shape_of(types[0])
    if shape is None or size is None:
        return [None]
    shape = list(shape)
    shape[axis] = shape[axis] // size if shape[axis] >= 0 else -1
    return [shape]


def _broadcast_numpy(op, types, constant):
    lhs, rhs = shape_of(types[0]), shape_of(types[1])
    if lhs is None or rhs is None:
        return [None]
    rank = max(len(lhs), len(rhs))
    lhs = [1] * (rank - len(lhs)) + lhs
    rhs = [1] * (rank - len(rhs)) + rhs
    out = []
    for a, b in zip(lhs, rhs):
        if a == 1:
            out.append(b)
        elif b == 1:
            out.append(a)
        elif a >= 0 and b >= 0:
            if a != b:
                raise ShapeError(f"'{op.name}' op operands are not broadcast compatible")
            out.append(a)
        else:
            out.append(a if a >= 0 else b)
    return [out]


def reduce_window_shape(source: Shape, window: Sequence[int], strides: Sequence[int],
                        base_dilations: Sequence[int], window_dilations: Sequence[int],
                        padding: Sequence[Sequence[int]]) -> Shape:
    """Result shape of a reduce_window over ``source`` (-1 sizes stay unknown).

    Raises :class:`ShapeError` when a window attribute has the wrong length or a non-positive size.
    """
    rank = len(source)
    for name, values in (("window_dimensions", window), ("window_strides", strides),
                         ("base_dilations", base_dilations), ("window_dilations", window_dilations),
                         ("padding", padding)):
        if len(values) != rank:
            raise ShapeError(f"{name} has {len(values)} entries, expected the operand rank {rank}")
    out = []
    for size, w, s, bd, wd, (low, high) in zip(source, window, strides, base_dilations, window_dilations, padding):
        if min(w, s, bd, wd) <= 0:
            raise ShapeError(f"window sizes, strides and dilations must be positive, got window {list(window)}, "
                             f"strides {list(strides)}, base dilations {list(base_dilations)}, "
                             f"window dilations {list(window_dilations)}")
        if size < 0:
            out.append(-1)
            continue
        dilated = (size - 1) * bd + 1 + low + high if size > 0 else low + high
        dilated_window = (w - 1) * wd + 1
        out.append(0 if dilated < dilated_window else (dilated - dilated_window) // s + 1)
    return out


def _reduce_window(op, types, constant):
    count = len(op.results)
    out = []
    for t in types[:count]:
        shape = shape_of(t)
        if shape is None:
            out.append(None)
            continue
        rank = len(shape)
        window = list(op.attributes["window_dimensions"])
        strides = list(op.attributes["window_strides"]) if "window_strides" in op.attributes else [1] * rank
        base = list(op.attributes["base_dilations"]) if "base_dilations" in op.attributes else [1] * rank
        dilations = list(op.attributes["window_dilations"]) if "window_dilations" in op.attributes else [1] * rank
        padding = ([[int(x) for x in row] for row in np.array(op.attributes["padding"]).reshape(rank, 2)]
                   if "padding" in op.attributes else [[0, 0]] * rank)
        out.append(reduce_window_shape(shape, window, strides, base, dilations, padding))
    return out


def _get_dimension_size(op, types, constant):
    return [[]]


#: StableHLO elementwise ops (one result, the operands' shape) but ``select`` and ``clamp``.
ELEMENTWISE_NAMES = """abs add and atan2 cbrt ceil complex cosine count_leading_zeros divide
exponential exponential_minus_one floor imag is_finite log log_plus_one logistic maximum minimum
multiply negate not or popcnt power real reduce_precision remainder round_nearest_afz
round_nearest_even rsqrt shift_left shift_right_arithmetic shift_right_logical sign sine
sqrt subtract tan tanh xor compare convert uniform_quantize uniform_dequantize""".split()

RULES: dict[str, Callable[[ir.Operation, list, ConstantLookup], list]] = {
    **{f"stablehlo.{name}": _elementwise for name in ELEMENTWISE_NAMES},
    "stablehlo.select": _select_or_clamp,
    "stablehlo.clamp": _select_or_clamp,
    "stablehlo.bitcast_convert": _bitcast_convert,
    "stablehlo.dynamic_broadcast_in_dim": _from_shape_operand(1),
    "stablehlo.dynamic_reshape": _from_shape_operand(1),
    "stablehlo.dynamic_iota": _from_shape_operand(0),
    "stablehlo.rng": _from_shape_operand(2),
    "stablehlo.dynamic_pad": _dynamic_pad,
    "stablehlo.pad": _pad,
    "stablehlo.real_dynamic_slice": _real_dynamic_slice,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.dot": _dot,
    "chlo.ragged_dot": _ragged_dot,
    "stablehlo.transpose": _transpose,
    "stablehlo.reduce": _reduce,
    "stablehlo.concatenate": _concatenate,
    "stablehlo.slice": _slice,
    "stablehlo.dynamic_slice": _dynamic_slice,
    "stablehlo.dynamic_update_slice": _same_as_operand(0),
    "stablehlo.reverse": _same_as_operand(0),
    "stablehlo.sort": _per_operand,
    "stablehlo.optimization_barrier": _per_operand,
    "stablehlo.all_reduce": _per_operand,
    "stablehlo.collective_permute": _same_as_operand(0),
    "stablehlo.scatter": _per_operand,
    "stablehlo.map": _same_as_operand(0),
    "stablehlo.select_and_scatter": _same_as_operand(0),
    "stablehlo.reduce_window": _reduce_window,
    "stablehlo.gather": _gather,
    "stablehlo.dynamic_gather": _dynamic_gather,
    "stablehlo.convolution": _convolution,
    "stablehlo.dynamic_conv": _dynamic_conv,
    "stablehlo.all_gather": _all_gather,
    "stablehlo.reduce_scatter": _reduce_scatter,
    "stablehlo.get_dimension_size": _get_dimension_size,
    **{f"chlo.broadcast_{name}": _broadcast_numpy for name in
       "add atan2 compare complex divide maximum minimum multiply next_after polygamma power "
       "remainder shift_left shift_right_arithmetic shift_right_logical subtract zeta and or xor".split()},
}

#: CHLO unary ops keep their operand's shape.
CHLO_UNARY = frozenset(f"chlo.{n}" for n in
                       "acos acosh asin asinh atan atanh bessel_i1e conj cosh digamma erf erf_inv erfc "
                       "is_inf is_neg_inf is_pos_inf lgamma sinh tan square".split())


def infer_shapes(op: ir.Operation, types: list[ir.Type], constant: ConstantLookup, name: str | None = None
                 ) -> list | None:
    """Per-result shapes (lists with -1 for unknown, or None) or None without a rule.

    ``name`` is ``op.name`` when the caller has read it already. Raises
    :class:`ShapeError` when the operands contradict each other.
    """
    if name is None:
        name = op.name
    rule = RULES.get(name)
    if rule is not None:
        return rule(op, types, constant)
    if name in CHLO_UNARY:
        return [shape_of(types[0])]
    return None


def infer_with_cxx(op: ir.Operation) -> list[ir.Type] | None:
    """StableHLO's own inferred result types for ``op`` (None if it has none).

    Builds an unattached copy of the op without result types, which asks the
    op's ``InferTypeOpInterface``; costs ~20 µs, so rules above come first.
    """
    opview = op.opview
    cls = type(opview)
    if cls is ir.OpView or len(op.regions) and op.name not in ("stablehlo.reduce", "stablehlo.reduce_window"):
        return None
    attributes = {name: op.attributes[name] for name in op.attributes}
    try:
        with op.context, op.location:
            scratch = cls.build_generic(results=None, operands=list(op.operands), attributes=attributes,
                                        regions=len(op.regions), ip=ir.InsertionPoint(op))
    except Exception:  # noqa: BLE001 - no inference for this op
        return None
    try:
        return [r.type for r in scratch.operation.results]
    finally:
        scratch.operation.erase()
