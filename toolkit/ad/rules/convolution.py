"""Rules for ``toolkit/lax/convolution.py``: ``conv_general_dilated`` is bilinear.

The transposes are again convolutions (the standard construction JAX uses):
the input cotangent convolves the output cotangent with the spatially
reversed kernel, the kernel cotangent convolves the input with the output
cotangent, with paddings derived from the forward one. Grouped convolutions
transpose as JAX's do: for the input, the kernel's output-feature groups move
into its input features (a batch-grouped one's cotangent then moves its groups
back into the batch); for the kernel, feature groups become batch groups and
batch groups feature groups.
"""

from __future__ import annotations

from toolkit.ad.jvp import defjvp
from toolkit.ad.registry import TRANSPOSE_RULES
from toolkit.ad.values import Zero, is_undefined, value_aval
from toolkit.lax import elementwise
from toolkit.lax import structural
from toolkit.lax.convolution import ConvDimensionNumbers, conv_general_dilated_p


def _dilated(sizes, dilations):
    return [0 if s == 0 else 1 + d * (s - 1) for s, d in zip(sizes, dilations)]


def _swap_features(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _conv(lhs, rhs, params, **changes):
    merged = dict(params, **changes)
    return conv_general_dilated_p.bind(lhs, rhs, **merged)


def _reshape_axis_out_of(axis, size, x):
    """``x`` with dimension ``axis`` split into ``(size, rest)`` (JAX's ``_reshape_axis_out_of``)."""
    shape = list(value_aval(x).shape)
    shape[axis:axis + 1] = [size, shape[axis] // size]
    return structural.reshape(x, tuple(shape))


def _reshape_axis_into(source, target, x):
    """``x`` with dimension ``source`` merged into dimension ``target`` (numbered without ``source``), as its major
    part (JAX's ``_reshape_axis_into``)."""
    shape = value_aval(x).shape
    order = [d for d in range(len(shape)) if d != source]
    order.insert(target, source)
    merged = [n for d, n in enumerate(shape) if d != source]
    merged[target] *= shape[source]
    return structural.reshape(structural.transpose(x, tuple(order)), tuple(merged))


def _transpose_lhs(ct, lhs_aval, rhs, params):
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    rhs_shape = value_aval(rhs).shape
    ct_shape = value_aval(ct).shape
    in_spatial = [lhs_aval.shape[d] for d in lhs_spec[2:]]
    window = [rhs_shape[d] for d in rhs_spec[2:]]
    out_spatial = [ct_shape[d] for d in out_spec[2:]]
    lhs_dilated = _dilated(in_spatial, params["lhs_dilation"])
    rhs_dilated = _dilated(window, params["rhs_dilation"])
    out_dilated = _dilated(out_spatial, params["window_strides"])
    before = [r - lo - 1 for r, (lo, _) in zip(rhs_dilated, params["padding"])]
    after = [lhs + r - 1 - o - b for lhs, r, o, b in zip(lhs_dilated, rhs_dilated, out_dilated, before)]
    groups = max(params["feature_group_count"], params["batch_group_count"])
    if groups > 1:  # the kernel's output-feature groups move into its input features
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], _reshape_axis_out_of(rhs_spec[0], groups, rhs))
    flipped = structural.rev(rhs, tuple(rhs_spec[2:]))
    dnums = ConvDimensionNumbers(tuple(out_spec), _swap_features(rhs_spec), tuple(lhs_spec))
    out = _conv(ct, flipped, params, window_strides=tuple(params["lhs_dilation"]),
                padding=tuple(zip(before, after)), lhs_dilation=tuple(params["window_strides"]),
                dimension_numbers=dnums, preferred_element_type=None, feature_group_count=groups,
                batch_group_count=1)
    if params["batch_group_count"] > 1:  # the groups, now features, go back into the batch
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], _reshape_axis_out_of(lhs_spec[1], groups, out))
    return out if value_aval(out).dtype == lhs_aval.dtype else elementwise.convert_element_type(out, lhs_aval.dtype)


def _transpose_rhs(ct, lhs, rhs_aval, params):
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    lhs_shape = value_aval(lhs).shape
    ct_shape = value_aval(ct).shape
    in_spatial = [lhs_shape[d] for d in lhs_spec[2:]]
    window = [rhs_aval.shape[d] for d in rhs_spec[2:]]
    out_spatial = [ct_shape[d] for d in out_spec[2:]]
    lhs_dilated = _dilated(in_spatial, params["lhs_dilation"])
    rhs_dilated = _dilated(window, params["rhs_dilation"])
    out_dilated = _dilated(out_spatial, params["window_strides"])
    lows = [lo for lo, _ in params["padding"]]
    highs = [o - lhs + r - lo - 1 for o, lhs, r, lo in zip(out_dilated, lhs_dilated, rhs_dilated, lows)]
    dnums = ConvDimensionNumbers(_swap_features(lhs_spec), _swap_features(out_spec), _swap_features(rhs_spec))
    # Feature groups become batch groups and batch groups feature groups (at most one of them is above 1).
    out = _conv(lhs, ct, params, window_strides=tuple(params["rhs_dilation"]), padding=tuple(zip(lows, highs)),
                rhs_dilation=tuple(params["window_strides"]), dimension_numbers=dnums, preferred_element_type=None,
                feature_group_count=params["batch_group_count"], batch_group_count=params["feature_group_count"])
    return out if value_aval(out).dtype == rhs_aval.dtype else elementwise.convert_element_type(out, rhs_aval.dtype)


def _conv_transpose(ct, lhs, rhs, **params):
    if isinstance(ct, Zero):
        return [None, None]
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("conv_general_dilated is not linear in both operands at once")
    if is_undefined(lhs):
        return [_transpose_lhs(ct, lhs.aval, rhs, params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, params)]


defjvp(conv_general_dilated_p,
       lambda t, ans, lhs, rhs, **params: _conv(t, rhs, params),
       lambda t, ans, lhs, rhs, **params: _conv(lhs, t, params))
TRANSPOSE_RULES[conv_general_dilated_p] = _conv_transpose
