"""StableHLO for ``toolkit.lax.convolution``: ``stablehlo.convolution``; on CPU and GPU a complex convolution is
three real ones (JAX's lowering there: XLA's CPU complex convolution is a slow loop, GPUs have none)."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.core.avals import is_static_shape
from toolkit.lax import convolution, elementwise
from toolkit.lax.dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.decompositions import lower_traced


def precision_config(precision) -> ir.ArrayAttr | None:
    """The ``precision_config`` attribute for ``None``, one precision name or a (lhs, rhs) pair."""
    if precision is None:
        return None
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return ir.ArrayAttr.get([stablehlo.PrecisionAttr.get("DEFAULT")] * 2)  # JAX's, beside the algorithm
    pair = precision if isinstance(precision, tuple) else (precision, precision)
    return ir.ArrayAttr.get([stablehlo.PrecisionAttr.get(p) for p in pair])


@register_lowering(convolution.conv_general_dilated_p)
def _conv(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
          feature_group_count, batch_group_count, precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    dnums = stablehlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0], kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]))
    lhs_dilation = list(lhs_dilation) if any(d != 1 for d in lhs_dilation) else None
    rhs_dilation = list(rhs_dilation) if any(d != 1 for d in rhs_dilation) else None
    i64 = ir.IntegerType.get_signless(64)
    flat_padding = [p for pair in padding for p in pair]
    if not is_static_shape(flat_padding):
        # 'SAME' padding of a symbolic size: dynamic_conv takes the padding as a tensor<Nx2xi64> (as JAX emits).
        pads = stablehlo.ReshapeOp(ir.RankedTensorType.get([len(padding), 2], i64),
                                   ctx.shape_value(flat_padding)).result
        return stablehlo.DynamicConvOp(
            ctx.out_type, lhs, rhs, pads, dnums, feature_group_count, batch_group_count,
            window_strides=list(window_strides), lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
            precision_config=precision_config(precision)).result
    pads = ir.DenseIntElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(len(padding), 2),
                                       type=ir.RankedTensorType.get([len(padding), 2], i64))
    return stablehlo.ConvolutionOp(
        ctx.out_type, lhs, rhs, dnums, feature_group_count, batch_group_count,
        window_strides=list(window_strides), padding=pads, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        precision_config=precision_config(precision)).result


@register_lowering(convolution.conv_general_dilated_p, platforms=("cpu", "cuda", "rocm"))
def _conv_of_reals(ctx, lhs, rhs, **params):
    """JAX's CPU and GPU lowering: a complex convolution as three real ones by Gauss's trick
    (``k1 = conv(re x + im x, re y)``, ``k2 = conv(re x, im y - re y)``, ``k3 = conv(im x, re y + im y)``;
    the result is ``(k1 - k3) + (k1 + k2)i``), so values round, and an infinity spreads NaN, as in JAX."""
    if not dtypes.is_complex(ctx.avals_in[0].dtype):
        return _conv(ctx, lhs, rhs, **params)
    preferred = params["preferred_element_type"]
    real_params = dict(params, preferred_element_type=None if preferred is None else dtypes.finfo(preferred).dtype)

    def gauss(x, y):
        def conv(a, b):
            return convolution.conv_general_dilated_p.bind(a, b, **real_params)
        x_re, x_im, y_re, y_im = elementwise.real(x), elementwise.imag(x), elementwise.real(y), elementwise.imag(y)
        k1 = conv(elementwise.add(x_re, x_im), y_re)
        k2 = conv(x_re, elementwise.sub(y_im, y_re))
        k3 = conv(x_im, elementwise.add(y_re, y_im))
        return [elementwise.complex(elementwise.sub(k1, k3), elementwise.add(k1, k2))]
    return lower_traced(ctx, gauss, [lhs, rhs], ctx.avals_in)[0]
