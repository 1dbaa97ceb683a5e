# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/convolution.py: `stablehlo.convolution`.

from toolkit import lax
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
