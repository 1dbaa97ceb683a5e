# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/convolution.py: `stablehlo.convolution` (a complex one on CPU: three real ones).

import numpy as np

from toolkit import export, jit, lax
from toolkit.testing import lowered_text, run, spec


@run
def conv_nchw_valid():
    # CHECK-LABEL: TEST: conv_nchw_valid
    # CHECK: stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 1], pad = {{\[}}[0, 0], [0, 0]]}
    # CHECK-SAME: batch_group_count = 1 : i64, feature_group_count = 1 : i64
    # CHECK-SAME: (tensor<2x3x9x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x6xf32>
    print(lowered_text(lambda x, w: lax.conv(x, w, (2, 1), "VALID"), spec((2, 3, 9, 8)), spec((4, 3, 3, 3))))


@run
def conv_nhwc_same_dilated_grouped():
    # CHECK-LABEL: TEST: conv_nhwc_same_dilated_grouped
    # CHECK: stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
    # CHECK-SAME: pad = {{\[}}[2, 2], [2, 2]], rhs_dilate = [2, 2]
    # CHECK-SAME: feature_group_count = 2 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
    # CHECK-SAME: -> tensor<1x8x8x6xf32>
    print(lowered_text(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=2, precision="highest"), spec((1, 8, 8, 4)), spec((3, 3, 2, 6))))


@run
def conv_transposed_lhs_dilation():
    # CHECK-LABEL: TEST: conv_transposed_lhs_dilation
    # CHECK: stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = {{\[}}[1, 1]], lhs_dilate = [2]}
    # CHECK-SAME: -> tensor<1x1x9xf32>
    print(lowered_text(lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 1),), lhs_dilation=(2,)),
                       spec((1, 1, 5)), spec((1, 1, 3))))


@run
def conv_complex_on_cpu_is_three_real_convs():
    # JAX's CPU/GPU lowering (Gauss's trick): k1 = conv(re x + im x, re w), k2 = conv(re x, im w - re w),
    # k3 = conv(im x, re w + im w); the result is complex(k1 - k3, k1 + k2).
    # CHECK-LABEL: TEST: conv_complex_on_cpu_is_three_real_convs
    # CHECK: %[[XR:.*]] = stablehlo.real %arg0
    # CHECK: %[[XI:.*]] = stablehlo.imag %arg0
    # CHECK: %[[WR:.*]] = stablehlo.real %arg1
    # CHECK: %[[WI:.*]] = stablehlo.imag %arg1
    # CHECK: %[[S:.*]] = stablehlo.add %[[XR]], %[[XI]]
    # CHECK: %[[K1:.*]] = stablehlo.convolution(%[[S]], %[[WR]]) {{.*}} -> tensor<1x1x3xf32>
    # CHECK: %[[D:.*]] = stablehlo.subtract %[[WI]], %[[WR]]
    # CHECK: %[[K2:.*]] = stablehlo.convolution(%[[XR]], %[[D]])
    # CHECK: %[[T:.*]] = stablehlo.add %[[WR]], %[[WI]]
    # CHECK: %[[K3:.*]] = stablehlo.convolution(%[[XI]], %[[T]])
    # CHECK: %[[RE:.*]] = stablehlo.subtract %[[K1]], %[[K3]]
    # CHECK: %[[IM:.*]] = stablehlo.add %[[K1]], %[[K2]]
    # CHECK: stablehlo.complex %[[RE]], %[[IM]] : tensor<1x1x3xcomplex<f32>>
    # CHECK-NOT: stablehlo.convolution
    print(lowered_text(lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID"),
                       spec((1, 1, 5), np.complex64), spec((1, 1, 3), np.complex64)))


@run
def conv_complex_on_tpu_stays_one():
    # CHECK-LABEL: TEST: conv_complex_on_tpu_stays_one
    # CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}} -> tensor<1x1x3xcomplex<f32>>
    # CHECK-NOT: stablehlo.convolution
    f = jit(lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID"))
    print(export.export(f, platforms=["tpu"])(np.zeros((1, 1, 5), np.complex64),
                                              np.zeros((1, 1, 3), np.complex64)).mlir_module())
